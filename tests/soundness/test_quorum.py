"""A quorum counts distinct endpoints, checks the block number under
every anchor, labels a quorum of one single-rpc, and decides ``latest`` so that no single
endpoint picks the block. The liars are real endpoints in front of a real anvil that change one
thing in their answers; the honest answers come from anvil itself."""

from __future__ import annotations

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.errors import Unverifiable, UsageError
from recompute.sources.live import LiveSource
from tests.rpcproxy import RpcProxy, unchanged

BLOCKS = 12


@pytest.fixture(scope="module")
def chain(module_anvil):
    for _ in range(BLOCKS):
        module_anvil.rpc("evm_mine")
    return module_anvil


@pytest.fixture(scope="module")
def relay(chain):
    """The same node on another port: a second endpoint of a quorum."""
    with RpcProxy(chain.url, unchanged) as proxy:
        yield proxy


class Behind(LiveSource):
    """Claims its head is ``lag`` blocks older than anvil's (a stale or lying endpoint)."""

    def __init__(self, url, lag=4):
        super().__init__(url)
        self.lag = lag

    def block_by_number(self, number):
        if number == "latest":
            return super().block_by_number(int(super().block_by_number("latest")["number"], 16)
                                           - self.lag)
        return super().block_by_number(number)


class Shifted(LiveSource):
    """Serves block N-4 whenever block N is asked for."""

    def block_by_number(self, number):
        return super().block_by_number(number - 4 if isinstance(number, int) else number)


def honest(node):
    return LiveSource(node.url)


def test_the_same_endpoint_twice_is_not_a_quorum(chain):
    url = chain.url
    for second in (url, url + "/", url.replace("http://", "HTTP://")):
        with pytest.raises(UsageError, match="given twice"):
            anchor_block([LiveSource(url), LiveSource(second)], block=3, quorum=2)


def test_a_quorum_of_one_is_labelled_single_rpc(chain):
    block = anchor_block([honest(chain)], block=3, quorum=1)
    assert block.anchor.method == "single-rpc"


def test_a_header_of_another_number_is_refused_single_rpc(chain):
    with pytest.raises(Unverifiable) as caught:
        anchor_block([Shifted(chain.url)], block=10)
    assert caught.value.reason == "rpc-inconsistent"


def test_a_header_of_another_number_does_not_count_in_a_quorum(chain, relay):
    sources = [Shifted(chain.url), honest(relay)]
    with pytest.raises(Unverifiable) as caught:
        anchor_block(sources, block=10, quorum=2)
    assert caught.value.reason == "quorum-not-met"
    assert anchor_block(sources, block=10, quorum=1).number == 10


def test_one_stale_endpoint_cannot_pick_latest(chain, relay):
    head = int(chain.rpc("eth_blockNumber"), 16)
    with RpcProxy(chain.url, unchanged) as third, \
            pytest.raises(Unverifiable) as caught:  # heads 12, 12, 8: spread 4 > 2
        anchor_block([honest(chain), honest(relay), Behind(third.url)], block="latest",
                     quorum=2)
    assert caught.value.reason == "anchor-disagreement"
    assert str(head - 4) in caught.value.detail and str(head) in caught.value.detail


def test_latest_is_the_highest_head_k_endpoints_reach_and_every_head_is_evidence(chain, relay):
    head = int(chain.rpc("eth_blockNumber"), 16)
    sources = [honest(chain), honest(relay)]
    block = anchor_block(sources, block="latest", quorum=2)
    assert block.number == head
    assert block.anchor.method == "quorum"
    assert sorted(block.anchor.detail["heads"].values()) == [head, head]


def test_latest_is_the_kth_highest_head_when_heads_spread_by_two(chain, relay):
    # README §Trust model: `--block latest` is the highest head K endpoints have reached;
    # heads H, H-1, H-2 spread by 2 (not more): accepted
    head = int(chain.rpc("eth_blockNumber"), 16)
    with RpcProxy(chain.url, unchanged) as third:
        sources = [honest(chain), Behind(relay.url, 1), Behind(third.url, 2)]
        two = anchor_block(sources, block="latest", quorum=2)
        three = anchor_block(sources, block="latest", quorum=3)
    assert (two.number, three.number) == (head - 1, head - 2)
    assert sorted(two.anchor.detail["heads"].values()) == [head - 2, head - 1, head]


def test_the_chain_id_is_labelled_the_nodes_word(chain):
    from recompute.core.outcome import block_evidence

    evidence = block_evidence(anchor_block([honest(chain)], block=3))
    assert evidence["chain_id"] == 31337
    assert "not proven" in evidence["chain_id_from"]


# ---- the endpoints of a quorum are distinct hosts ------------------------------------------


def test_two_names_of_one_host_are_one_endpoint(chain):
    other = chain.url.replace("127.0.0.1", "localhost")  # the same node under two names
    with pytest.raises(UsageError) as caught:
        anchor_block([honest(chain), LiveSource(other)], block=3, quorum=2)
    port = chain.url.rsplit(":", 1)[1]
    # the library words the option as its own (a source); the command line as --rpc (below)
    assert str(caught.value) == (f"source {chain.url} and source {other} are one endpoint "
                                 f"(127.0.0.1 port {port}): a quorum counts distinct hosts; "
                                 "give endpoints of other machines")


def test_two_names_of_one_host_are_refused_on_the_command_line(chain, capsys):
    from recompute.cli import main

    other = chain.url.replace("127.0.0.1", "localhost")
    with pytest.raises(SystemExit) as done:
        main(["proof", "-r", chain.url, "-r", other, "--quorum", "2", "-b", "3",
              "--address", "0x" + "00" * 20])
    err = capsys.readouterr().err
    assert done.value.code == 64
    assert f"--rpc {chain.url} and --rpc {other} are one endpoint" in err
    assert len(err.strip().splitlines()) == 1


def test_a_host_that_does_not_resolve_is_one_line(chain):
    with pytest.raises(UsageError, match="the host 'nowhere.invalid' does not resolve"):
        anchor_block([honest(chain), LiveSource("http://nowhere.invalid:8545")], block=3,
                     quorum=2)


def test_two_ports_of_one_machine_are_two_endpoints(chain, relay):
    block = anchor_block([honest(chain), honest(relay)], block=3, quorum=2)
    assert block.number == 3 and block.anchor.detail["agreeing"] == 2
