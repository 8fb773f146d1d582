"""``sai/revision`` through the real CLI at the devnet's ``swarm.*`` moments.

Every run is ``python -m recompute step … --json`` pinned with ``--block-hash``; nothing is
sent to the devnet. Expected values are what the history script
(recompute/devnet/history_swarm.py) did, worked out by hand: who was seated, suspended,
carried, substituted, expelled or left, and how many state-changing calls each swarm took
(§5.4: one revision per call — form, applyToJoin, admit, join, acceptCharter, activate,
suspendMember, challenge, enforceRoster, resume, expel, advance, substitute, amend, leave,
conclude, dissolve; reverted calls and calls to other contracts change nothing).
Account numbers are anvil dev accounts ``a[i]`` as in the script.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def step(manifest, recipe, moment, swarm, *args, registry=None, block_hash=None):
    """Run one recipe; returns (exit code, the JSON outcome)."""
    s = manifest["swarm"]["swarms"][swarm]
    registry = registry or s["registry"]
    cmd = [sys.executable, "-m", "recompute", "step", recipe, "--rpc", manifest["rpc"],
           "--block-hash", block_hash or manifest["moments"][f"swarm.{moment}"]["hash"],
           "--address", manifest["contracts"][registry], "--param", f"swarm={s['id']}",
           "--json", *args]
    if registry == "LyingSwarmRegistry":
        cmd += ["--layout", "swarm-registry-lying"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


GOOD, BAD = (0, "VERIFIED-GOOD"), (1, "VERIFIED-BAD")

# ---- sai/revision ---------------------------------------------------------------------------

REVISION_CASES = [
    # pin, swarm, from (a moment, or "before" = the block before formation), revision, r_from
    # minimal: form, applyToJoin a3, admit a4, admit a3, acceptCharter a4, applyToJoin+admit
    # a5, activate (8), applyToJoin+admit a6, amend, acceptCharter a3, leave a6 (13),
    # conclude (14), dissolve (15; the early dissolve reverted)
    ("dissolved", "minimal", "before", 15, 0),
    ("amended", "minimal", "activated", 13, 8),
    # challenged: 3 seats (7), activate, challenge a4, enforceRoster (10), challenge a4 (11),
    # resume (12), applyToJoin+admit a6, challenge a6, expel (16; the early expel reverted)
    ("expelled", "challenged", "suspended", 16, 10),
    # tender: seat a3 (3), 4 joins, applyToJoin a8, activate, suspendMember, advance (11),
    # challenge a5, substitute, acceptCharter a7 (14)
    ("substituted", "tender", "select-advanced", 14, 11),
    ("inherit-completed", "pipeline", "inherit-advanced", 12, 11),  # admit a6
    # lying: 3 seats (7), activate (8), leave a4 (9); the cache setters are no swarm calls
    ("roster-lies", "lying", "lying-activated", 9, 8),
]


@pytest.mark.parametrize("pin, swarm, since, revision, r_from", REVISION_CASES,
                         ids=[f"{c[1]}-{c[0]}" for c in REVISION_CASES])
def test_revision(devnet, pin, swarm, since, revision, r_from):
    _, manifest = devnet
    if since == "before":
        from_block = manifest["swarm"]["swarms"][swarm]["formed_block"] - 1
    else:
        from_block = manifest["moments"][f"swarm.{since}"]["number"]
    rc, out = step(manifest, "sai/revision", pin, swarm, "--param", f"from_block={from_block}",
                   "--compare-views")
    derived = out["evidence"]["derived"]
    assert (derived["revision"], derived["revision_at_from"], derived["changed_events"]) == \
        (str(revision), str(r_from), str(revision - r_from))
    assert derived["consistent"] is True and derived["increased"] is True
    assert (rc, out["verdict"]) == GOOD
    assert out["evidence"]["findings"] == []  # getSwarm's revision agrees


def test_revision_unchanged_is_bad(devnet):
    # nothing changes the minimal swarm after its dissolution block
    _, manifest = devnet
    pin = manifest["moments"]["swarm.dissolved"]["number"]
    rc, out = step(manifest, "sai/revision", "dissolved", "minimal",
                   "--param", f"from_block={pin}")
    derived = out["evidence"]["derived"]
    assert (derived["revision"], derived["revision_at_from"], derived["changed_events"]) == \
        ("15", "15", "0")
    assert derived["increased"] is False and derived["consistent"] is True
    assert (rc, out["verdict"]) == BAD
