"""AMM recipes on the devnet, through the real CLI, at named moments.

Expected results are written from the devnet script (recompute/devnet/history_amm.py) and the
specification by hand: e.g. the pulser enrolled at 1762650024 with layer 0 every 86400 s and a due
window of 3600 s has its deadline at 1762736424, so it is DUE at 1762733000 and OVERDUE from
1762736424 on.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from recompute.devnet.anvil import Anvil
from tests.cli import as_of_head

PULSER_DEADLINE = 1762650024 + 86400
PRE_ROOT = "0x090e63d66e6cdb08331fece350bd0320551287d53d6644d5af158b04d94d149f"
POST_ROOT = "0x9918ebff7f3bc97ca08580033da3aa99b27871d8d57b2b8c9845221fa3dec3de"


def step(devnet, recipe, moment, subject, *extra, registry="AgentMeditationRegistry"):
    node, manifest = devnet
    args = [sys.executable, "-m", "recompute", "step", recipe, "--rpc", node.url,
            "--block-hash", manifest["moments"][moment]["hash"],
            "--address", manifest["contracts"][registry], "--json",
            "--param", f"subject={manifest['amm']['subjects'][subject]['address']}", *extra]
    if registry.startswith("Lying"):
        args += ["--layout", "amm-registry-lying"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout)


@pytest.mark.parametrize("moment,status,code", [
    ("amm.enrolled", "FRESH", 0),
    ("amm.due", "DUE", 0),
    ("amm.overdue", "OVERDUE", 1),
    ("amm.present-overdue", "OVERDUE", 1),
])
def test_pulser_layer_0_status(devnet, moment, status, code):
    exit_code, out = step(devnet, "amm/layer-status", moment, "pulser", "--param", "layer=0")
    assert exit_code == code
    assert out["evidence"]["derived"] == {
        "status": status, "deadline": str(PULSER_DEADLINE), "never_completed": True,
        "clock": str(devnet[1]["moments"][moment]["timestamp"])}
    assert out["evidence"]["anchor"]["method"] == "block-hash"
    # one round for the head, one for policy + floor, one for checkpoint + demand
    assert out["evidence"]["proof_requests"] == 3


def test_expect_fresh_when_overdue_is_bad(devnet):
    code, out = step(devnet, "amm/layer-status", "amm.overdue", "pulser", "--param", "layer=0",
                     "--expect", "status=FRESH")
    assert code == 1 and out["verdict"] == "VERIFIED-BAD"
    assert out["evidence"]["expectations"] == [
        {"key": "status", "expected": "FRESH", "derived": "OVERDUE", "holds": False}]
    code, out = step(devnet, "amm/layer-status", "amm.due", "pulser", "--param", "layer=0",
                     "--expect", "status=DUE")
    assert code == 0 and out["verdict"] == "VERIFIED-GOOD"


def test_silent_and_fresh_then_present_and_overdue(devnet):
    # example: last signal when cycle 1 was recorded (1762654800), pulse interval 21600
    code, out = step(devnet, "amm/signal-status", "amm.silent-fresh", "example")
    assert code == 1
    assert out["evidence"]["derived"]["status"] == "SILENT"
    assert out["evidence"]["derived"]["last_signal_at"] == "1762654800"
    assert out["evidence"]["derived"]["silent_since"] == str(1762654800 + 21600)
    code, out = step(devnet, "amm/layer-status", "amm.silent-fresh", "example", "--param",
                     "layer=3")
    assert code == 0 and out["evidence"]["derived"]["status"] == "FRESH"
    assert out["evidence"]["derived"]["deadline"] == str(1762654500 + 7776000)
    code, out = step(devnet, "amm/signal-status", "amm.present-overdue", "pulser")
    assert code == 0 and out["evidence"]["derived"]["status"] == "PRESENT"


def test_state_root_after_the_worked_example_and_after_the_rollback(devnet):
    code, out = step(devnet, "amm/state-root", "amm.after-cycle-1", "example")
    assert code == 0
    assert out["evidence"]["derived"]["root"] == POST_ROOT
    assert out["evidence"]["derived"]["state_version"] == "2"
    code, out = step(devnet, "amm/state-root", "amm.rollback", "example")
    assert code == 0
    assert out["evidence"]["derived"]["root"] == PRE_ROOT
    assert out["evidence"]["derived"]["state_version"] == "3"


def test_a_true_restore_claim_is_valid(devnet):
    block = str(devnet[1]["moments"]["amm.rollback"]["number"])
    code, out = step(devnet, "amm/restore-claim", "amm.rollback", "example", "--param",
                     f"block={block}")
    assert code == 0
    derived = out["evidence"]["derived"]
    assert derived["restores_version"] == "1" and derived["post_root"] == PRE_ROOT
    assert derived["root_at_restored"] == PRE_ROOT and derived["new_version"] == "3"
    assert out["evidence"]["receipts_proven"] == 1
    assert out["evidence"]["logs"]  # the CycleRecorded log the verdict rests on


def test_the_false_restore_claim_the_liar_accepted_is_bad(devnet):
    block = str(devnet[1]["moments"]["amm.false-restore"]["number"])
    code, out = step(devnet, "amm/restore-claim", "amm.false-restore", "lying-example",
                     "--param", f"block={block}", registry="LyingMeditationRegistry")
    assert code == 1 and out["verdict"] == "VERIFIED-BAD"
    derived = out["evidence"]["derived"]
    assert derived["restores_version"] == "1"
    assert derived["root_at_restored"] == PRE_ROOT != derived["post_root"]
    assert derived["restore_claim_valid"] is False


def test_compare_views_on_the_liar_reports_view_disagrees(devnet):
    # lying-example: last signal at the false restore (1762658000) + 21600 < the overdue moment
    code, out = step(devnet, "amm/signal-status", "amm.overdue", "lying-example",
                     "--compare-views", registry="LyingMeditationRegistry")
    assert code == 1 and out["evidence"]["derived"]["status"] == "SILENT"  # follows storage
    disagreements = [f for f in out["evidence"]["findings"] if f["finding"] == "view-disagrees"]
    assert {(f["value"], f["view_says"], f["storage_says"]) for f in disagreements} >= {
        ("status", "PRESENT", "SILENT")}
    code, out = step(devnet, "amm/signal-status", "amm.overdue", "pulser", "--compare-views")
    assert out["evidence"]["findings"] == []  # the honest registry agrees with its storage
    assert all(v["agrees"] for v in out["evidence"]["views"])


def test_commitment_of_a_disclosed_document(devnet, tmp_path):
    document = tmp_path / "runtime.json"
    document.write_text(json.dumps({"subject": "pulser", "revision": 0, "layer": 0,
                                    "schema": "amm.layer.runtime/1"}))
    code, out = step(devnet, "amm/commitment", "amm.due", "pulser", "--param", "layer=0",
                     "--param", f"document={document}")
    assert code == 0 and out["evidence"]["derived"]["matches"] is True
    document.write_text(json.dumps({"subject": "pulser", "revision": 1, "layer": 0,
                                    "schema": "amm.layer.runtime/1"}))
    code, out = step(devnet, "amm/commitment", "amm.due", "pulser", "--param", "layer=0",
                     "--param", f"document={document}")
    assert code == 1 and out["evidence"]["derived"]["matches"] is False


def test_unknown_block_and_stopped_node_are_unverifiable(devnet):
    node, manifest = devnet
    base = [sys.executable, "-m", "recompute", "step", "amm/layer-status", "--json",
            "--address", manifest["contracts"]["AgentMeditationRegistry"],
            "--param", f"subject={manifest['amm']['subjects']['pulser']['address']}",
            "--param", "layer=0"]
    unknown = subprocess.run(base + ["--rpc", node.url, "--block-hash", "0x" + "ab" * 32],
                             capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and json.loads(unknown.stdout)["reason"] == "block-unknown"
    stopped = Anvil().start()
    url = stopped.url
    stopped.stop()
    gone = subprocess.run(base + ["--rpc", url, "--block", "latest"], capture_output=True,
                          text=True, timeout=60)
    assert gone.returncode == 2 and json.loads(gone.stdout)["reason"] == "rpc-unreachable"


def test_bad_recipe_usage_is_exit_64(devnet):
    node, manifest = devnet
    for args, needle in [
        (["amm/layer-status", "--param", "layer=9"], "layer index is 0..3"),
        (["amm/layer-status", "--param", "lyer=0"], "has no parameter 'lyer'"),
        (["amm/nope"], "unknown recipe"),
        (["amm/layer-status", "--param", "layer=0", "--expect", "colour=red"],
         "derives no 'colour'"),
    ]:
        result = subprocess.run(
            [sys.executable, "-m", "recompute", "step", *args[:1], "--rpc", node.url,
             "--block", "latest", *as_of_head(node.url),
             "--address", manifest["contracts"]["AgentMeditationRegistry"],
             "--param", f"subject={manifest['amm']['subjects']['pulser']['address']}",
             *args[1:]], capture_output=True, text=True, timeout=60)
        assert result.returncode == 64, (args, result.stdout, result.stderr)
        assert needle in result.stderr and "Traceback" not in result.stderr


def test_a_pruned_block_is_state_unavailable():
    """A recipe at a block whose state the node no longer keeps: UNVERIFIABLE, and the line
    says what to do."""
    with Anvil(extra_args=["--prune-history"]) as node:
        for _ in range(300):
            node.rpc("evm_mine")
        result = subprocess.run(
            [sys.executable, "-m", "recompute", "step", "amm/layer-status", "--rpc", node.url,
             "--block", "1", "--address", "0x" + "11" * 20, "--param",
             "subject=0x" + "22" * 20, "--param", "layer=0", "--json"],
            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    out = json.loads(result.stdout)
    assert out["reason"] == "state-unavailable" and "archive node" in out["detail"]
