"""What the watch asks of the node, counted by a proxy in front of anvil: a quiet block (no
contract's storageRoot changed) costs one HTTP request, a JSON-RPC batch of its account proofs,
in a range audit and in follow mode; an endpoint that refuses batches is asked one call at a
time and the run says so; a batch answer whose ids do not match the calls is never taken.
Passing trouble is retried, a lie is not: an HTTP 503, 429 (with its Retry-After), 502, 504 or a
connection reset in the middle of a range audit (after its first batch: the header walk, the
account proofs) is asked again within the documented bounds (recompute/sources/rpc.py
RETRY_WAITS, docs/connection.md §Retries), so the audit's verdicts are those of a run without
trouble; trouble that outlasts the retries is node trouble (``rpc-error``), never
``rpc-malformed``; a malformed answer is ``rpc-malformed`` at once, not asked again.

The devnet's history (recompute/devnet/build.py) and QUIET empty blocks after it, on an anvil
of this module (the session devnet is read-only). The bound, 1.2 requests a block, is the
goal the watch is held to (docs/performance.md §Node cost); what is counted is independent of
the watch: the proxy counts the HTTP requests it receives.
"""

from __future__ import annotations

import json

import pytest

from recompute.core.errors import Unverifiable
from recompute.devnet.anvil import Anvil, rpc_call
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build
from recompute.sources import rpc
from recompute.sources.live import LiveSource
from recompute.sources.rpc import MAX_RETRY_AFTER, RETRY_WAITS, RpcClient, retry_wait
from tests import REPO_ROOT
from tests.cli import run_cli
from tests.rpcproxy import RpcProxy
from tests.watch.watchproc import EXAMPLE

QUIET = 250  # empty blocks after the history (the first of a run is cold: amortised)
TROUBLED = 16  # blocks of the audits a proxy troubles


@pytest.fixture(scope="module")
def chain():
    node = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP).start()
    try:
        build(node)
        history = int(rpc_call(node.url, "eth_blockNumber"), 16)
        rpc_call(node.url, "anvil_mine", [hex(QUIET), hex(12)])  # 12 s apart, as mainnet
        yield node, history
    finally:
        node.stop()


def _hash(node: Anvil, number: int) -> str:
    return rpc_call(node.url, "eth_getBlockByNumber", [hex(number), False])["hash"]


def _audit(url: str, node: Anvil, lo: int, hi: int):
    return run_cli("watch", "--rpc", url, "--config", EXAMPLE, "--from", lo, "--to", hi,
                   "--block-hash", _hash(node, hi), "--confirmations", "0", cwd=REPO_ROOT)


@pytest.fixture(scope="module")
def quiet_audit(chain):
    """The audit of the quiet blocks through a counting proxy: (result, HTTP requests)."""
    node, history = chain
    with RpcProxy(node.url) as proxy:
        done = _audit(proxy.url, node, history + 1, history + QUIET)
        return done, proxy.requests, dict(proxy.methods)


def test_a_quiet_block_is_one_request_in_a_range_audit(quiet_audit):
    done, requests, methods = quiet_audit
    assert done.returncode in (0, 1), done.stderr  # the example has BAD checks, no UNVERIFIABLE
    lines = [json.loads(t) for t in done.stdout.splitlines()]
    assert {line["verdict"] for line in lines} <= {"VERIFIED-GOOD", "VERIFIED-BAD"}
    assert requests <= 1.2 * QUIET, (requests, methods)
    assert methods.get("eth_getBlockByHash", 0) < 0.1 * QUIET  # headers in batches, not one by one


def test_a_quiet_block_is_one_request_when_following(chain):
    node, history = chain
    head = rpc_call(node.url, "eth_getBlockByNumber", ["latest", False])
    blocks = QUIET - 1  # after the first quiet block (cold, pinned) up to the head
    with RpcProxy(node.url) as proxy:
        done = run_cli("watch", "--rpc", proxy.url, "--config", EXAMPLE,
                       "--block-hash", _hash(node, history + 1), "--max-blocks", QUIET,
                       "--confirmations", "0", "--poll", "0.05",
                       "--at", int(head["timestamp"], 16), cwd=REPO_ROOT)
        requests = proxy.requests
    assert done.returncode == 0, done.stderr
    lines = [json.loads(t) for t in done.stdout.splitlines()]
    assert {line["block"] for line in lines} == set(range(history + 1, history + QUIET + 1))
    assert requests <= 1.2 * blocks, requests


def test_an_endpoint_refusing_batches_is_asked_call_by_call_and_the_run_says_so(chain,
                                                                                quiet_audit):
    node, history = chain
    with RpcProxy(node.url, batches=False) as proxy:
        done = _audit(proxy.url, node, history + 1, history + 20)
        refused = proxy.batches_refused
    def unpinned(text: str) -> list[dict]:  # the lines but their anchor (pinned elsewhere)
        lines = [json.loads(t) for t in text.splitlines()]
        return [{k: v for k, v in x.items() if k != "anchor"} for x in lines
                if x["block"] <= history + 20]

    assert unpinned(done.stdout) == unpinned(quiet_audit[0].stdout)
    assert "does not take JSON-RPC batches" in done.stderr
    assert refused == 1  # found out once, then asked call by call


def _swap_ids(replies: list) -> list:
    replies[0]["id"], replies[1]["id"] = replies[1]["id"], replies[0]["id"]
    return replies


def _drop_one(replies: list) -> list:
    return replies[1:]


def _repeat_one(replies: list) -> list:
    replies[1] = dict(replies[1], id=replies[0]["id"])
    return replies


def _extra_id(replies: list) -> list:
    return [*replies, dict(replies[0], id=replies[0]["id"] + 10_000)]


def _proofs_only(mangle):
    """Tamper with the batches of eth_getProof calls (the headers' batches pass)."""

    def rewrite(replies: list) -> list:
        proofs = all(isinstance(r.get("result"), dict) and "accountProof" in r["result"]
                     for r in replies)
        return mangle(replies) if proofs else replies

    return rewrite


@pytest.mark.parametrize("mangle", [_swap_ids, _drop_one, _repeat_one, _extra_id])
def test_a_batch_answer_not_matching_its_calls_is_rpc_malformed(chain, mangle):
    node, history = chain
    lo = history + 1
    with RpcProxy(node.url, batch_rewrite=_proofs_only(mangle)) as proxy:
        done = _audit(proxy.url, node, lo, lo + 2)
    assert done.returncode in (1, 2), done.stderr  # 1: the first block's BAD checks
    lines = [json.loads(t) for t in done.stdout.splitlines()]
    # the first block is cold (its reads asked round by round, one call each); from the next
    # one on, its account proofs are one batch, which the proxy tampers with
    batched = [(x["verdict"], x["reason"]) for x in lines if x["block"] > lo]
    assert batched and set(batched) == {("UNVERIFIABLE", "rpc-malformed")}


@pytest.mark.parametrize("mangle", [_swap_ids, _drop_one, _repeat_one, _extra_id, lambda r: {},
                                    lambda r: [*r[:1], "not a reply", *r[2:]]])
def test_the_source_refuses_a_batch_answer_not_matching_its_calls(chain, mangle):
    node, history = chain
    with RpcProxy(node.url, batch_rewrite=mangle) as proxy:
        source = LiveSource(proxy.url)
        source.client.batches = True  # known to take batches: a lone object is no refusal
        with pytest.raises(Unverifiable) as raised:  # (swapped ids: the blocks' numbers say)
            source.blocks_by_number([1, 2, 3])
    assert raised.value.reason == "rpc-malformed"


def test_one_calls_error_in_a_batch_is_that_calls_alone(chain):
    node, history = chain
    client = RpcClient(node.url)
    answers = client.batch([("eth_getBlockByNumber", ["0x1", False]),
                            ("eth_getProof", ["0x00", [], "latest"]),
                            ("eth_getBlockByNumber", ["0x2", False])])
    assert [a["number"] for a in (answers[0], answers[2])] == ["0x1", "0x2"]
    assert isinstance(answers[1], Unverifiable)
    assert client.calls == 1 and client.batches is True


def _step(url: str, node: Anvil, number: int):
    """One ``recompute step`` (the example's amm/layer-status check) pinned to block
    ``number``, through a counting proxy: (result, HTTP requests, calls by method)."""
    from recompute.watch.config import load_config

    subject = next(c for c in load_config(EXAMPLE) if c.recipe.name == "amm/layer-status")
    params = [f"--param={k}={v}" for k, v in subject.params.items()]
    return run_cli("step", subject.recipe.name, "--rpc", url, "--block-hash", _hash(node, number),
                   "--address", "0x" + subject.address.hex(), *params, cwd=REPO_ROOT)


@pytest.mark.parametrize("batches", [True, False])
def test_a_step_asks_its_header_and_chain_id_in_one_request(chain, batches):
    node, history = chain
    with RpcProxy(node.url, batches=batches) as proxy:
        done = _step(proxy.url, node, history)
        requests, methods = proxy.requests, dict(proxy.methods)
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.startswith(("VERIFIED-GOOD", "VERIFIED-BAD"))
    asked = 1 if batches else 2  # the proxy counts the calls of the batch it refused too
    assert methods["eth_getBlockByHash"] == methods["eth_chainId"] == asked
    proofs = methods["eth_getProof"]  # one a round of the recipe's reads (each needs the last)
    assert set(methods) == {"eth_getBlockByHash", "eth_chainId", "eth_getProof"}
    # with batches: the header and the chain id together, then a request a round; without:
    # the refused batch, then each call on its own
    assert requests == (1 + proofs if batches else 1 + 2 + proofs)


def test_an_endpoint_dropping_the_connection_on_a_batch_is_asked_call_by_call(chain):
    """A server that cannot parse a JSON array and closes the connection unanswered (as the
    bundled fixture node did): the first header and the chain id are then asked one by one."""
    node, history = chain
    with RpcProxy(node.url, batches="drop") as proxy:
        source = LiveSource(proxy.url)
        block = source.block_by_number(history)
        chain_id = source.chain_id()
        dropped, methods = proxy.batches_refused, dict(proxy.methods)
    assert block is not None and int(block["number"], 16) == history
    assert chain_id == int(rpc_call(node.url, "eth_chainId"), 16)
    assert source.batches is False and dropped == 1
    assert methods == {"eth_getBlockByNumber": 2, "eth_chainId": 2}  # the dropped batch, then each


def _lines(done) -> list[tuple]:
    return [(x["block"], x["check"], x["verdict"], x["reason"])
            for x in map(json.loads, done.stdout.splitlines())]


@pytest.fixture(scope="module")
def untroubled(chain):
    """The troubled audits' lines without trouble: what they must give."""
    node, history = chain
    done = _audit(node.url, node, history + 1, history + TROUBLED)
    assert done.returncode in (0, 1), done.stderr
    return _lines(done)


@pytest.mark.parametrize("fault", [503, (429, 1), 502, 504, "reset"])
def test_passing_trouble_after_the_first_batch_is_retried(chain, untroubled, fault):
    node, history = chain
    with RpcProxy(node.url) as proxy:
        # the batches: the first answered (the top block and the chain id: the endpoint
        # takes batches), then the header walk's and the next one troubled, later once more
        proxy.faults_on_batches = True
        proxy.faults = [None, fault, fault, None, None, fault]
        done = _audit(proxy.url, node, history + 1, history + TROUBLED)
        faulted = proxy.faulted
    assert faulted == 3
    assert done.returncode in (0, 1), done.stderr
    assert _lines(done) == untroubled
    assert {verdict for _, _, verdict, _ in untroubled} <= {"VERIFIED-GOOD", "VERIFIED-BAD"}


@pytest.mark.parametrize("batches", [True, False])
def test_trouble_past_the_retries_is_node_trouble_not_a_lie(chain, batches, monkeypatch):
    node, history = chain
    monkeypatch.setattr(rpc, "RETRY_WAITS", (0.01,) * len(RETRY_WAITS))  # as many, shorter
    with RpcProxy(node.url) as proxy:
        source = LiveSource(proxy.url)
        source.client.batches = batches  # known to take batches, or asked call by call
        proxy.faults = [503] * (len(RETRY_WAITS) + 1)
        with pytest.raises(Unverifiable) as raised:
            if batches:
                source.blocks_by_number([1, 2, 3])
            else:
                source.block_number()
        asked = proxy.requests
    assert raised.value.reason == "rpc-error"
    assert "HTTP 503 (5 tries)" in raised.value.detail
    assert asked == len(RETRY_WAITS) + 1


def test_a_malformed_answer_is_not_asked_again(chain):
    node, history = chain
    with RpcProxy(node.url, batch_rewrite=lambda replies: {"not": "a list"}) as proxy:
        source = LiveSource(proxy.url)
        source.client.batches = True
        with pytest.raises(Unverifiable) as raised:
            source.blocks_by_number([1, 2, 3])
        asked = proxy.requests
    assert raised.value.reason == "rpc-malformed"
    assert asked == 1


def test_retry_after_is_honoured_within_its_bound():
    assert retry_wait("3", 0.5) == 3.0
    assert retry_wait("86400", 0.5) == MAX_RETRY_AFTER
    assert retry_wait("Wed, 21 Oct 2015 07:28:00 GMT", 0.5) == 0.5  # a date: the backoff's
    assert retry_wait(None, 2.0) == 2.0
    assert retry_wait("-1", 1.0) == 1.0
