"""``recompute devnet up --l2`` brings the L2 up beside the L1 devnet and ``devnet down`` stops
every process it started (the L2 anvil and the lying L2 node too); ``up`` resumes it."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from recompute.devnet.anvil import free_port, rpc_call
from tests.cli import run_cli

pytestmark = pytest.mark.anvil

PID_FILES = ("anvil.pid", "beacon.pid", "l2-anvil.pid", "l2-lie.pid")


def _alive(pid: int) -> bool:
    """Running: an exited process that init has not reaped yet (a zombie) is not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_up_l2_then_down_leaves_no_process(tmp_path):
    state = tmp_path / "dn"
    # a port of its own: the resumed `up` below takes the stopped devnet's port again, and the
    # default one (8545) may be taken meanwhile by another test file's devnet
    result = run_cli("devnet", "up", "--l2", "--port", str(free_port()), "--state-dir", str(state))
    pids = {name: int((state / name).read_text()) for name in PID_FILES
            if (state / name).is_file()}
    try:
        assert result.returncode == 0, result.stderr
        assert set(pids) == set(PID_FILES)
        assert all(_alive(pid) for pid in pids.values())
        manifest = json.loads((state / "manifest.json").read_text())
        l2 = manifest["l2"]
        assert rpc_call(l2["rpc"], "eth_chainId") == hex(901)
        assert rpc_call(l2["lying_rpc"], "eth_chainId") == hex(901)
        assert f"l2 rpc {l2['rpc']} (chain 901, OP stack); lying L2 node {l2['lying_rpc']}" \
            in result.stdout
        assert "    l2.blacklisted           game blacklisted      L2 block  24 -> " \
               "UNVERIFIABLE game-blacklisted" in result.stdout.splitlines()
        # the L1 head is the L2 games' last block: as_of and the beacon cover it
        assert manifest["as_of"]["block"] == l2["settled"]["number"]
        tries = result.stdout.split("try next:\n", 1)[1].splitlines()
        assert "  " + shlex.join(l2["moments"]["l2.final-bad"]["argv"]) in tries
        for moment in l2["moments"].values():
            assert moment["argv"][moment["argv"].index("--l1-rpc") + 1] == manifest["rpc"]
    finally:
        down = run_cli("devnet", "down", "--state-dir", str(state))
    assert down.returncode == 0, down.stderr
    assert [name for name, pid in pids.items() if _alive(pid)] == []
    assert not [name for name in PID_FILES if (state / name).exists()]
    assert (state / "l2-state.json").is_file()  # the L2 anvil dumped its state on SIGTERM

    # `up` (without --l2) resumes the L2 as it was: the same L2 blocks, a new lying node
    again = run_cli("devnet", "up", "--state-dir", str(state), "--json")
    try:
        assert again.returncode == 0, again.stderr
        manifest = json.loads(again.stdout)
        resumed = manifest["l2"]
        game = resumed["games"]["final-good"]
        block = rpc_call(resumed["rpc"], "eth_getBlockByNumber", [hex(game["l2_block"]), False])
        assert block["hash"] == game["output_root"]["block_hash"]
        settled = rpc_call(manifest["rpc"], "eth_getBlockByNumber",
                           [hex(resumed["settled"]["number"]), False])
        assert settled["hash"] == resumed["settled"]["hash"]
        lying = resumed["moments"]["l2.lying-node"]["argv"]
        assert lying[lying.index("--rpc") + 1] == resumed["lying_rpc"]
        pids = {name: int((state / name).read_text()) for name in PID_FILES}
    finally:
        run_cli("devnet", "down", "--state-dir", str(state))
    assert [name for name, pid in pids.items() if _alive(pid)] == []

    # an L2 whose state dump is gone would serve an empty chain: refused, nothing left running
    (state / "l2-state.json").unlink()
    lost = run_cli("devnet", "up", "--state-dir", str(state))
    try:
        assert lost.returncode == 2
        assert lost.stderr.startswith(f"error: the L2 in {state} lost its chain ("), lost.stderr
        assert not [name for name in PID_FILES if (state / name).exists()]
    finally:
        run_cli("devnet", "down", "--state-dir", str(state))  # (nothing, unless refused late)


def test_up_l2_on_a_stopped_devnet_without_one_says_what_to_do(tmp_path):
    state = tmp_path / "dn"
    state.mkdir()
    (state / "state.json").write_text("{}")
    (state / "manifest.json").write_text(json.dumps(
        {"format": "recompute-devnet/1", "rpc": "http://127.0.0.1:1", "chain_id": 31337,
         "contracts": {}, "moments": {}}))
    result = run_cli("devnet", "up", "--l2", "--state-dir", str(state))
    assert result.returncode == 2
    assert result.stderr.strip() == (f"error: the stopped devnet in {state} has no L2: "
                                      "`recompute devnet up --l2 --fresh` builds one")


def test_l2_and_live_do_not_go_together(tmp_path):
    result = run_cli("devnet", "up", "--l2", "--live", "--state-dir", str(tmp_path / "dn"))
    assert result.returncode == 64
    assert "--l2 and --live do not go together" in result.stderr


def test_a_tampered_l2_section_is_refused_before_it_is_printed(tmp_path):
    """``devnet up`` prints the L2's moments from the manifest in the state dir: a text with a
    terminal escape there is one usage line naming the field, never printed."""
    from recompute.core.errors import UsageError
    from recompute.devnet.lifecycle import read_manifest

    l2 = {"rpc": "http://127.0.0.1:9545", "lying_rpc": "http://127.0.0.1:9546", "port": 9545,
          "chain_id": 901, "contracts": {}, "games": {},
          "l1": {"package": "p", "dispute_game_finality_delay": 1800, "contracts": {}},
          "moments": {"l2.final-good": {"game": "final-good", "l2_block": 26,
                                        "verdict": "VERIFIED-GOOD", "text": "fine",
                                        "argv": ["recompute", "step"]}}}
    manifest = {"format": "recompute-devnet/1", "rpc": "http://127.0.0.1:8545",
                "chain_id": 31337, "contracts": {}, "moments": {}, "l2": l2}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert read_manifest(tmp_path)["l2"] == l2
    for field, bad in (("text", "\x1b[2J all good"), ("argv", ["recompute", "\x1b[2J"])):
        tampered = json.loads(json.dumps(manifest))
        tampered["l2"]["moments"]["l2.final-good"][field] = bad
        (tmp_path / "manifest.json").write_text(json.dumps(tampered))
        with pytest.raises(UsageError, match="one line of text"):
            read_manifest(tmp_path)
