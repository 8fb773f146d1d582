"""The op-stack anchor end to end: ``recompute proof`` on an L2 block pinned through L1's
dispute games, on the scripted anvil pair of tests/l2/op_stack_pair.py (real contracts-bedrock
code on L1). Every refusal is UNVERIFIABLE with its own reason, never a verdict."""

from __future__ import annotations

import json
import os

import pytest

from recompute.devnet.anvil import rpc_call
from tests.cli import run_cli
from tests.l2.op_stack_pair import PORTAL, REGISTRY, hx

pytestmark = pytest.mark.anvil



def proof(pair, *args, game=None, block=None):
    extra = ["-b", str(block)] if block is not None else []
    done = run_cli("proof", *pair.args(*extra, game=game), "--address", hx(REGISTRY),
                   "--slot", "0", "--json", *args)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_a_final_game_pins_its_l2_block_and_the_slot_is_proven(pair):
    code, out = proof(pair, "--expect", "0=11", game="final")
    assert (code, out["verdict"], out["reason"]) == (0, "VERIFIED-GOOD", "ok"), out
    anchor = out["evidence"]["anchor"]
    assert anchor["method"] == "op-stack" and anchor["tier"] == "final"
    assert anchor["game"]["address"] == hx(pair.games["final"])
    assert anchor["game"]["status"] == "DEFENDER_WINS"
    assert anchor["game"]["l2_block_number"] == 11 == out["evidence"]["block"]["number"]
    assert anchor["portal"]["implementation"] == "OptimismPortal2 3.10.0"
    assert anchor["factory"]["implementation"] == "DisputeGameFactory 1.0.0"
    assert anchor["finality_delay_s"] == 3600


def test_without_a_game_the_closest_usable_one_above_the_block_is_chosen(pair):
    code, out = proof(pair, "--expect", "0=11", block=11)
    assert code == 0 and out["evidence"]["anchor"]["game"]["address"] == hx(pair.games["final"])
    code, out = proof(pair, "--expect", "0=9", block=9)  # blacklisted at 9: final's, a hop
    assert code == 0 and out["evidence"]["anchor"]["game"]["address"] == hx(pair.games["final"])
    assert out["evidence"]["anchor"]["history_path"]["hops"][0]["from_block"] == 11


def test_the_newest_final_game_with_a_false_root_gives_no_verdict(pair):
    # `wrong` (L2 block 13) is the newest final game: the node's block 13 does not hash to it
    code, out = proof(pair, "--expect", "0=13")
    assert (code, out["reason"]) == (2, "output-root-mismatch")


def test_a_block_below_the_game_is_reached_by_parent_links(pair):
    code, out = proof(pair, "--expect", "0=7", "--history", "walk", game="final", block=7)
    assert code == 0, out
    assert out["evidence"]["block"]["number"] == 7
    assert out["evidence"]["anchor"]["history_path"]["headers_walked"] == 4


def test_the_slot_differing_is_bad(pair):
    code, out = proof(pair, "--expect", "0=10", game="final")
    assert (code, out["verdict"]) == (1, "VERIFIED-BAD")


def test_a_block_above_the_game_is_unproposed(pair):
    code, out = proof(pair, game="final", block=12)
    assert (code, out["reason"]) == (2, "l2-block-unproposed")
    code, out = proof(pair, block=17)
    assert (code, out["reason"]) == (2, "l2-block-unproposed")


@pytest.mark.parametrize(("game", "reason"), [
    ("resolved", "game-not-final"), ("proposed", "game-not-final"),
    ("challenged", "game-challenger-wins"), ("blacklisted", "game-blacklisted"),
    ("retired", "game-retired"), ("wrong", "output-root-mismatch"),
])
def test_an_unusable_game_is_refused_with_its_own_reason(pair, game, reason):
    code, out = proof(pair, "--expect", "0=1", game=game)
    assert (code, out["verdict"], out["reason"]) == (2, "UNVERIFIABLE", reason), out


def test_weaker_tiers_only_when_asked_and_labelled(pair):
    code, out = proof(pair, "--expect", "0=15", "--l2-finality", "resolved", game="resolved")
    assert code == 0 and out["evidence"]["anchor"]["tier"] == "resolved"
    code, out = proof(pair, "--expect", "0=17", "--l2-finality", "proposed", game="proposed")
    assert code == 0 and out["evidence"]["anchor"]["tier"] == "proposed"
    code, out = proof(pair, "--l2-finality", "resolved", game="proposed")
    assert out["reason"] == "game-not-final"


def test_a_vector_captured_on_the_l2_replays_offline(pair, tmp_path):
    env = dict(os.environ, RECOMPUTE_RECIPES="tests/l2/slot_recipes.py")
    vector = tmp_path / "l2.json"
    done = run_cli("vectors", "capture", "probe/slot-at-most", *pair.args(game="final"), "-b",
                   "10", "--address", hx(REGISTRY), "--param", "cap=12", "-o", vector, env=env)
    assert done.returncode == 0, done.stderr
    assert "through L1: game " + hx(pair.games["final"]) + ", tier final" in done.stderr
    pinned = json.loads(vector.read_text())
    l2_hash = rpc_call(pair.l2.url, "eth_getBlockByNumber", [hex(10), False])["hash"]
    assert json.dumps(pinned).count(l2_hash) >= 1
    done = run_cli("vectors", "verify", vector, env=env)  # (a replay asks no node)
    assert done.returncode == 0 and "PASS l2" in done.stdout, done.stdout + done.stderr


def test_the_library_pins_an_l2_block_through_l1(pair):
    from recompute import LiveSource, Unverifiable, anchor_block, anchor_l2_block, prove_account

    l1 = anchor_block([LiveSource(pair.l1.url)], block_hash=pair.l1_head())
    l2 = LiveSource(pair.l2.url)
    block = anchor_l2_block(l1, l2, portal=hx(PORTAL), game=hx(pair.games["final"]), block=7)
    assert block.number == 7 and block.anchor.detail["tier"] == "final"
    assert prove_account(block, REGISTRY, [0]).storage[0] == 7
    with pytest.raises(Unverifiable) as caught:
        anchor_l2_block(l1, l2, portal=hx(PORTAL), game=hx(pair.games["resolved"]))
    assert caught.value.reason == "game-not-final"
    resolved = anchor_l2_block(l1, l2, portal=hx(PORTAL), game=hx(pair.games["resolved"]),
                               finality="resolved")
    assert resolved.anchor.detail["tier"] == "resolved"
