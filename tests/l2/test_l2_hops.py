"""An L2 block below the anchored one, proven by hops through the L2's history storage contract
(EIP-2935, on OP-stack chains since Isthmus) in the anchored L2 state, as ``--history`` says:
the evidence names L1 anchor, game, anchored L2 block, hop blocks, the block. The lies (a node
lying about one history slot, another contract's code at the history address, a block the
contract holds no hash for under ``--history hops``) are UNVERIFIABLE with their reasons, never
a verdict (the scripted anvil pair of tests/l2/op_stack_pair.py: its L2 anvil runs Prague, the
contract in its genesis as an Isthmus OP-stack chain has it)."""

from __future__ import annotations

import json

import pytest

from recompute.core.history_window import HISTORY_STORAGE_ADDRESS
from recompute.devnet.anvil import rpc_call
from tests.cli import run_cli
from tests.l2.op_stack_pair import PORTAL, REGISTRY, add_final_game, hx
from tests.rpcproxy import RpcProxy

pytestmark = pytest.mark.anvil

HISTORY = hx(HISTORY_STORAGE_ADDRESS)


def proof(args, block, expect, *more):
    done = run_cli("proof", *args, "-b", block, "--address", hx(REGISTRY), "--slot", "0",
                   "--expect", f"0={expect}", "--json", *more)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def l2_hash(pair, number):
    return rpc_call(pair.l2.url, "eth_getBlockByNumber", [hex(number), False])["hash"]


@pytest.fixture(scope="module")
def changed(pair):
    """Two games above L2 blocks whose history contract cannot prove an old block: ``emptied``
    (L2 block 21: block 3's slot emptied, as for a block before the contract's first entry)
    and ``othercode`` (L2 block 23: other code at the history address). Each write lands in
    the L2 head's state, so every block a game names is mined after the write before it."""
    pair.set_slot(pair.l2, HISTORY_STORAGE_ADDRESS, 3, 0)
    pair.mine(pair.l2)  # 21
    pair.mine(pair.l2)  # 22: the next write lands here, not in 21
    pair.set_code(pair.l2, HISTORY_STORAGE_ADDRESS, bytes.fromhex("6000"))
    pair.mine(pair.l2)  # 23
    pair.mine(pair.l2)  # 24
    add_final_game(pair, "emptied", 21)
    add_final_game(pair, "othercode", 23)
    return pair


def test_a_block_below_the_game_is_proven_by_one_hop_and_the_path_is_named(pair):
    code, out = proof(pair.args(game="final"), 7, 7)
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD"), out
    anchor = out["evidence"]["anchor"]
    assert out["evidence"]["block"]["number"] == 7
    assert out["evidence"]["block"]["hash"] == l2_hash(pair, 7)
    # L1 anchor -> game -> anchored L2 block -> hop blocks -> the block
    assert anchor["l1"]["anchor"]["method"] == "block-hash"
    assert anchor["game"]["address"] == hx(pair.games["final"])
    assert anchor["pinned_number"] == 11 == anchor["game"]["l2_block_number"]
    assert anchor["history_path"] == {
        "via": "history-contract", "contract": HISTORY,
        "hops": [{"from_block": 11, "block": 7, "slot": 7, "hash": l2_hash(pair, 7)}]}
    assert "headers_walked" not in anchor


def test_the_walk_when_asked_is_said(pair):
    code, out = proof(pair.args(game="final"), 7, 7, "--history", "walk")
    assert code == 0, out
    assert out["evidence"]["anchor"]["history_path"] == {
        "via": "header-walk", "headers_walked": 4, "why": "the header walk was asked for"}


def test_the_text_output_names_the_hop(pair):
    done = run_cli("proof", *pair.args(game="final"), "-b", "7", "--address", hx(REGISTRY),
                   "--slot", "0")
    assert done.returncode == 0, done.stderr
    assert "names L2 block 11, block 7 proven from it by 1 history-contract hop(s)" \
        in done.stdout


@pytest.mark.parametrize("how", ["value", "node"])
@pytest.mark.parametrize("mode", ["auto", "hops"])
def test_an_l2_node_lying_about_one_history_slot(pair, how, mode):
    eight = l2_hash(pair, 8)

    def lie(method, params, reply):
        if method == "eth_getProof" and params[0].lower() == HISTORY:
            entry = reply["result"]["storageProof"][0]
            if how == "value":
                entry["value"] = eight  # another block's hash, its proof kept
            else:
                entry["proof"][-1] = entry["proof"][-1][:-64] + eight[2:]
        return reply

    args = pair.args(game="final")
    with RpcProxy(pair.l2.url, lie) as proxy:
        args[args.index("--rpc") + 1] = proxy.url
        code, out = proof(args, 7, 7, "--history", mode)
    assert code == 2 and out["reason"] in ("rpc-inconsistent", "invalid-proof"), out


@pytest.mark.parametrize("mode", ["auto", "hops"])
def test_an_l2_history_contract_with_other_code_is_refused(changed, mode):
    code, out = proof(changed.args(game="othercode"), 5, 5, "--history", mode)
    assert (code, out["verdict"], out["reason"]) == (2, "UNVERIFIABLE",
                                                     "history-contract-mismatch"), out


def test_a_block_the_contract_holds_no_hash_for_with_history_hops(changed):
    code, out = proof(changed.args(game="emptied"), 3, 3, "--history", "hops")
    assert (code, out["verdict"], out["reason"]) == (2, "UNVERIFIABLE",
                                                     "history-unreachable"), out
    assert "hops allows no header walk" in out["detail"]
    code, out = proof(changed.args(game="emptied"), 3, 3)  # auto: the walk, and why
    assert code == 0, out
    path = out["evidence"]["anchor"]["history_path"]
    assert path["via"] == "header-walk" and path["headers_walked"] == 21 - 3
    assert "older than the contract's first entry" in path["why"]


def test_the_library_takes_the_history_mode(pair):
    from recompute import LiveSource, anchor_block, anchor_l2_block

    l1 = anchor_block([LiveSource(pair.l1.url)], block_hash=pair.l1_head())
    l2 = LiveSource(pair.l2.url)
    hop = anchor_l2_block(l1, l2, portal=hx(PORTAL),
                          game=hx(pair.games["final"]), block=7)
    assert hop.anchor.detail["history_path"]["via"] == "history-contract"
    walk = anchor_l2_block(l1, l2, portal=hx(PORTAL), game=hx(pair.games["final"]),
                           block=7, history="walk")
    assert walk.anchor.detail["history_path"]["via"] == "header-walk"
    assert hop.hash == walk.hash == bytes.fromhex(l2_hash(pair, 7)[2:])
