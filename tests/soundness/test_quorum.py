"""Issue #11 items 3 and 4: a quorum counts distinct endpoints, checks the block number under
every anchor, labels a quorum of one single-rpc, and decides ``latest`` so that no single
endpoint picks the block. The liars are real endpoints in front of a real anvil that change one
thing in their answers; the honest answers come from anvil itself."""

from __future__ import annotations

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.errors import Unverifiable, UsageError
from recompute.sources.live import LiveSource

BLOCKS = 12


@pytest.fixture(scope="module")
def chain(module_anvil):
    for _ in range(BLOCKS):
        module_anvil.rpc("evm_mine")
    return module_anvil


class Behind(LiveSource):
    """Claims its head is 4 blocks older than anvil's (a stale or lying endpoint)."""

    def block_by_number(self, number):
        if number == "latest":
            return super().block_by_number(int(super().block_by_number("latest")["number"], 16)
                                           - 4)
        return super().block_by_number(number)


class Shifted(LiveSource):
    """Serves block N-4 whenever block N is asked for."""

    def block_by_number(self, number):
        return super().block_by_number(number - 4 if isinstance(number, int) else number)


def honest(node, host="127.0.0.1"):
    return LiveSource(node.url.replace("127.0.0.1", host))


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


def test_a_header_of_another_number_does_not_count_in_a_quorum(chain):
    sources = [Shifted(chain.url), honest(chain, "localhost")]
    with pytest.raises(Unverifiable) as caught:
        anchor_block(sources, block=10, quorum=2)
    assert caught.value.reason == "quorum-not-met"
    assert anchor_block(sources, block=10, quorum=1).number == 10


def test_one_stale_endpoint_cannot_pick_latest(chain):
    head = int(chain.rpc("eth_blockNumber"), 16)
    behind = Behind(chain.url)
    behind.endpoint = behind.label = "http://liar.invalid:8545"  # a third endpoint (a test double)
    sources = [honest(chain), honest(chain, "localhost"), behind]
    with pytest.raises(Unverifiable) as caught:  # heads 12, 12, 8: spread 4 > 2
        anchor_block(sources, block="latest", quorum=2)
    assert caught.value.reason == "anchor-disagreement"
    assert str(head - 4) in caught.value.detail and str(head) in caught.value.detail


def test_latest_is_the_highest_head_k_endpoints_reach_and_every_head_is_evidence(chain):
    head = int(chain.rpc("eth_blockNumber"), 16)
    sources = [honest(chain), honest(chain, "localhost")]
    block = anchor_block(sources, block="latest", quorum=2)
    assert block.number == head
    assert block.anchor.method == "quorum"
    assert sorted(block.anchor.detail["heads"].values()) == [head, head]


def test_the_chain_id_is_labelled_the_nodes_word(chain):
    from recompute.core.outcome import block_evidence

    evidence = block_evidence(anchor_block([honest(chain)], block=3))
    assert evidence["chain_id"] == 31337
    assert "not proven" in evidence["chain_id_from"]
