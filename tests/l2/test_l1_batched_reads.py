"""The L1 side of an op-stack anchoring asks together what it can (recompute.l2.l1_reads): the
portal proxy and the named game in one JSON-RPC batch of ``eth_getProof``, their codes in one of
``eth_getCode``, then both implementations the same way; the portal's words and the game's
blacklist entry in one ``eth_getProof``; the factory's record of the game in its proxy's proof.
A node that swaps answers inside a batch is UNVERIFIABLE, never a verdict; one that takes no
batches gets the same verdict, one request a call (the scripted pair of tests/l2/op_stack_pair.py).
"""

from __future__ import annotations

import json

import pytest

from tests.cli import run_cli
from tests.l2.op_stack_pair import REGISTRY, hx
from tests.rpcproxy import RpcProxy

pytestmark = pytest.mark.anvil


def proof(pair, proxy):
    args = pair.args(game="final")
    args[args.index("--l1-rpc") + 1] = proxy.url
    done = run_cli("proof", *args, "--address", hx(REGISTRY), "--slot", "0", "--expect", "0=11",
                   "--json")
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def recording(proxy):
    """The methods of each HTTP request ``proxy`` receives, in order."""
    seen: list[list[str]] = []
    count = proxy._count

    def counting(calls, batch):
        seen.append([call.get("method") for call in calls])
        return count(calls, batch)

    proxy._count = counting
    return seen


def test_what_one_step_needs_is_asked_in_one_request(pair):
    with RpcProxy(pair.l1.url) as proxy:
        seen = recording(proxy)
        code, out = proof(pair, proxy)
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD"), out
    batches = [methods for methods in seen if len(methods) > 1 and "eth_chainId" not in methods]
    # portal proxy + game; their codes; portal implementation + game implementation; theirs
    assert batches == [["eth_getProof"] * 2, ["eth_getCode"] * 2] * 2
    # then the factory proxy (with the game's record) and its implementation, one code each
    assert proxy.methods["eth_getCode"] == 6
    assert seen[-4:] == [["eth_getProof"], ["eth_getCode"]] * 2
    assert out["evidence"]["anchor"]["l1_requests"] == len(seen) - 1  # the anchor's header


def test_a_node_that_takes_no_batches_gives_the_same_verdict(pair):
    with RpcProxy(pair.l1.url, batches=False) as proxy:
        code, out = proof(pair, proxy)
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD"), out
    assert proxy.batches_refused >= 1


@pytest.mark.parametrize("method", ["eth_getProof", "eth_getCode"])
def test_answers_swapped_inside_a_batch_give_no_verdict(pair, method):
    def swap(replies):
        if len(replies) == 2 and all("result" in r for r in replies):
            first, second = replies[0]["result"], replies[1]["result"]
            if method == "eth_getProof" and isinstance(first, dict) and "storageProof" in first \
                    or method == "eth_getCode" and isinstance(first, str):
                replies[0]["result"], replies[1]["result"] = second, first
        return replies

    with RpcProxy(pair.l1.url, batch_rewrite=swap) as proxy:
        code, out = proof(pair, proxy)
    assert (code, out["verdict"]) == (2, "UNVERIFIABLE"), out
    assert out["reason"] == ("rpc-malformed" if method == "eth_getProof"
                             else "clone-code-mismatch"), out


def test_a_game_judged_ahead_but_below_the_one_chosen_does_not_refuse_it(pair):
    """Scanning for L2 block 13 judges games four at a time, the blacklisted game (L2 block 9)
    with them, though the scan stops at the game at block 11: given a status no GameStatus has,
    that game is never reached, so its refusal is not raised; the choice is the one the scan
    makes, the false-root game at block 13 (output-root-mismatch)."""
    pair.set_game("blacklisted", 7, 1, 2)  # status 7: unknown-contract-version when reached
    pair.mine(pair.l1)
    args = pair.args("-b", "13")
    done = run_cli("proof", *args, "--address", hx(REGISTRY), "--slot", "0", "--json")
    out = json.loads(done.stdout)
    assert (done.returncode, out["reason"]) == (2, "output-root-mismatch"), out
    assert hx(pair.games["wrong"])[2:] in out["detail"]
    done = run_cli("proof", *pair.args("-b", "9"), "--address", hx(REGISTRY), "--slot", "0",
                   "--json")  # scanning down to it: refused when reached
    out = json.loads(done.stdout)
    assert (done.returncode, out["reason"]) == (2, "unknown-contract-version"), out
