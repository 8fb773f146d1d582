"""A lying L2 node, a lying L1 node, and inputs that are not what they claim: each is
UNVERIFIABLE with its own reason, never VERIFIED-GOOD or VERIFIED-BAD (the scripted anvil pair
of tests/l2/op_stack_pair.py; the lies told by tests/rpcproxy.py)."""

from __future__ import annotations

import json
import time

import pytest

from recompute.devnet.anvil import rpc_call
from recompute.l2.game import IMPLEMENTATION_SLOT
from tests.cli import run_cli
from tests.l2.op_stack_pair import (
    FACTORY_IMPL,
    PORTAL,
    REGISTRY,
    hx,
    runtime,
)
from tests.rpcproxy import RpcProxy

pytestmark = pytest.mark.anvil



def run(args, *more):
    done = run_cli("proof", *args, "--address", hx(REGISTRY), "--slot", "0", "--expect",
                   "0=11", "--json", *more)
    assert done.stdout, done.stderr
    out = json.loads(done.stdout)
    return done.returncode, out


def swap(args, option, value):
    out = list(args)
    out[out.index(option) + 1] = value
    return out


def test_the_honest_pair_gives_the_verdict(pair):
    code, out = run(pair.args(game="final"))
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD")


def test_an_l2_header_that_does_not_hash_to_the_named_block_hash(pair):
    def lie(method, params, reply):
        if method == "eth_getBlockByNumber" and params[0] == hex(11):
            reply["result"]["extraData"] = "0x01"  # its claimed hash kept
        return reply

    with RpcProxy(pair.l2.url, lie) as proxy:
        code, out = run(swap(pair.args(game="final"), "--rpc", proxy.url))
    assert (code, out["reason"]) == (2, "l2-header-mismatch")


def test_an_l2_node_serving_another_block_at_the_number(pair):
    other = rpc_call(pair.l2.url, "eth_getBlockByNumber", [hex(13), False])

    def lie(method, params, reply):
        if method == "eth_getBlockByNumber" and params[0] == hex(11):
            reply["result"] = other
        return reply

    with RpcProxy(pair.l2.url, lie) as proxy:
        code, out = run(swap(pair.args(game="final"), "--rpc", proxy.url))
    assert (code, out["reason"]) == (2, "output-root-mismatch")


@pytest.mark.parametrize("how", ["value", "node"])
def test_an_l2_node_lying_about_the_registry_slot(pair, how):
    def lie(method, params, reply):
        if method == "eth_getProof" and params[0] == hx(REGISTRY):
            entry = reply["result"]["storageProof"][0]
            if how == "value":
                entry["value"] = "0x5"
            else:
                entry["proof"][-1] = entry["proof"][-1][:-2] + "05"
        return reply

    with RpcProxy(pair.l2.url, lie) as proxy:
        code, out = run(swap(pair.args(game="final"), "--rpc", proxy.url))
    assert code == 2 and out["reason"] in ("rpc-inconsistent", "invalid-proof"), out


def test_an_l1_node_serving_other_code_for_the_game(pair):
    def lie(method, params, reply):
        if method == "eth_getCode" and params[0] == hx(pair.games["final"]):
            code = bytes.fromhex(reply["result"][2:])
            reply["result"] = hx(code[:-3] + b"\x0c" + code[-2:])  # another L2 block number
        return reply

    with RpcProxy(pair.l1.url, lie) as proxy:
        code, out = run(swap(pair.args(game="final"), "--l1-rpc", proxy.url))
    assert (code, out["reason"]) == (2, "clone-code-mismatch")


def test_a_copy_of_a_game_the_factory_did_not_make_is_unrecorded(pair):
    copy = bytes.fromhex("77" * 20)
    code = rpc_call(pair.l1.url, "eth_getCode", [hx(pair.games["final"]), "latest"])
    slot0 = rpc_call(pair.l1.url, "eth_getStorageAt", [hx(pair.games["final"]), "0x0",
                                                        "latest"])
    rpc_call(pair.l1.url, "anvil_setCode", [hx(copy), code])
    rpc_call(pair.l1.url, "anvil_setStorageAt", [hx(copy), "0x" + "00" * 32, slot0])
    pair.mine(pair.l1)
    args = pair.args()
    code_, out = run([*args, "--l2-game", hx(copy)])
    assert (code_, out["reason"]) == (2, "game-unrecorded")


def test_a_portal_of_an_unknown_implementation_is_refused_by_name(pair):
    other = bytes.fromhex("13" * 20)  # a Proxy whose implementation is the factory's code
    pair.set_code(pair.l1, other, runtime("Proxy"))
    pair.set_slot(pair.l1, other, IMPLEMENTATION_SLOT, int.from_bytes(FACTORY_IMPL, "big"))
    pair.mine(pair.l1)
    code, out = run(swap(pair.args(game="final"), "--l2-portal", hx(other)))
    assert (code, out["reason"]) == (2, "unknown-contract-version")
    assert "OptimismPortal2 3.10.0" in out["detail"]


def test_a_stale_l1_block_is_refused(pair):
    later = str(int(time.time()) + 7 * 24 * 3600)
    code, out = run(pair.args(game="final"), "--at", later)
    assert (code, out["reason"]) == (2, "stale-anchor")
    assert "L1 block" in out["detail"]


@pytest.mark.parametrize("args", [
    ["--rpc", "http://127.0.0.1:1", "--l2-game", hx(PORTAL), "-b", "1"],
    ["--rpc", "http://127.0.0.1:1", "--l1-rpc", "http://127.0.0.1:2", "-b", "1"],
    ["--rpc", "http://127.0.0.1:1", "--l2-portal", hx(PORTAL), "--l1-rpc",
     "http://127.0.0.1:2", "--block-hash", "0x" + "00" * 32],
    ["--rpc", "http://127.0.0.1:1", "--l2-portal", hx(PORTAL)],
    ["--rpc", "http://127.0.0.1:1", "--l2-portal", hx(PORTAL), "--l1-rpc",
     "http://127.0.0.1:2", "-b", "safe"],
])
def test_options_that_do_not_go_together_are_usage_errors(args):
    done = run_cli("proof", *args, "--address", hx(REGISTRY))
    assert done.returncode == 64, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_text_output_says_the_tier_and_warns_when_not_final(pair):
    done = run_cli("proof", *pair.args(game="final"), "--address", hx(REGISTRY), "--slot", "0")
    assert done.returncode == 0 and "L2 TIER FINAL: game " + hx(pair.games["final"]) in done.stdout
    assert "warning: tier" not in done.stdout
    done = run_cli("proof", *pair.args(game="resolved"), "--address", hx(REGISTRY), "--slot",
                   "0", "--l2-finality", "resolved")
    assert done.returncode == 0 and "L2 TIER RESOLVED" in done.stdout
    assert "warning: tier resolved: the game is not final" in done.stdout


def test_an_unknown_chain_name_and_two_portals_are_usage_errors():
    done = run_cli("proof", "--rpc", "http://127.0.0.1:1", "--chain", "nowhere", "--l1-rpc",
                   "http://127.0.0.1:2", "--address", hx(REGISTRY))
    assert done.returncode == 64 and "base-sepolia" in done.stderr
    done = run_cli("proof", "--rpc", "http://127.0.0.1:1", "--chain", "base", "--l2-portal",
                   hx(PORTAL), "--l1-rpc", "http://127.0.0.1:2", "--address", hx(REGISTRY))
    assert done.returncode == 64 and "give one" in done.stderr


def test_a_preset_chain_names_its_portal_and_is_judged_by_its_code(pair):
    # the anvil L1 has no contract at Base Sepolia's portal address: no verdict
    args = swap(pair.args(game="final"), "--l2-portal", "x")
    at = args.index("--l2-portal")
    args[at:at + 2] = ["--chain", "base-sepolia"]
    code, out = run(args)
    assert (code, out["reason"]) == (2, "no-contract")


def test_a_proxy_whose_implementation_slot_is_no_address_is_refused(pair):
    other = bytes.fromhex("14" * 20)  # a Proxy whose EIP-1967 slot holds more than 20 bytes
    pair.set_code(pair.l1, other, runtime("Proxy"))
    pair.set_slot(pair.l1, other, IMPLEMENTATION_SLOT, 1 << 200)
    pair.mine(pair.l1)
    code, out = run(swap(pair.args(game="final"), "--l2-portal", hx(other)))
    assert (code, out["reason"]) == (2, "unknown-contract-version"), out
