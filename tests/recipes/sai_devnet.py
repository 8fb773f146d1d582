"""Shared by the ``sai/*`` devnet recipe tests (test_sai_member_devnet, test_sai_revision_devnet,
test_sai_roster_devnet): a runner for the real CLI at the devnet's ``swarm.*`` moments, and the
verdicts and manifest look-ups the tests compare against.

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

ROOT = Path(__file__).resolve().parents[2]

GOOD, BAD = (0, "VERIFIED-GOOD"), (1, "VERIFIED-BAD")


def step(manifest, recipe, moment, swarm, *args, registry=None, block_hash=None,
         usage_error_ok=False):
    """Run one recipe; returns (exit code, the JSON outcome).

    With ``usage_error_ok``, a usage error (exit 64: one line on stderr, no outcome) returns
    ``(64, {"error": stderr})`` instead of failing the test.
    """
    s = manifest["swarm"]["swarms"][swarm]
    registry = registry or s["registry"]
    cmd = [sys.executable, "-m", "recompute", "step", recipe, "--rpc", manifest["rpc"],
           "--block-hash", block_hash or manifest["moments"][f"swarm.{moment}"]["hash"],
           "--address", manifest["contracts"][registry], "--param", f"swarm={s['id']}",
           "--json", *args]
    if registry == "LyingSwarmRegistry":
        cmd += ["--layout", "swarm-registry-lying"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    if usage_error_ok and proc.returncode == 64:
        return 64, {"error": proc.stderr}
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def account(manifest, i: int) -> str:
    """Anvil dev account ``a[i]``."""
    return manifest["accounts"][i]


def role_id(manifest, name: str) -> str:
    """The role id the devnet manifest records for role ``name``."""
    return manifest["swarm"]["roles"][name]


def view_disagreements(out) -> list[dict]:
    """The ``view-disagrees`` findings of an outcome (a view answering otherwise than storage)."""
    return [f for f in out["evidence"]["findings"] if f.get("finding") == "view-disagrees"]
