"""`make demo`'s command: the devnet up, proofs and re-derivations at named moments, the
lying views exposed, real geth data, the devnet stopped, exit 0."""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_the_devnet_and_exposes_the_liars():
    result = subprocess.run([sys.executable, "-m", "recompute", "demo"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # the specification's worked example, proven: version 2 with the post root 0x9918ebff…c3de
    assert "stateVersion=2, root=0x9918ebff…c3de" in out
    assert "VERIFIED-BAD   a subject that only pulses, layer 0 @ amm.overdue" in out
    assert "signalStatus(address) says status=PRESENT, proven storage says SILENT" in out
    assert "VERIFIED-BAD   restore claim the lying registry accepted" in out
    assert "withinCap(bytes32,uint256) says within_cap=True, proven storage says False" in out
    assert "rosterMet(bytes32) says roster_met=True, proven storage says False" in out
    # geth's own answers for the fixture account: balance 0x76 = 118, slot 0 = 0x38
    assert "balance 118, slot 0 = 0x38" in out
    # the light-client anchor end to end on the devnet's beacon side (32/32 devnet signers)
    assert "pinned by the light client" in out and "32/32 of the sync committee signed" in out
    assert "recompute proof --rpc" in out and "--network devnet" in out
    assert "UNVERIFIABLE   a node that lies about that slot (rpc-inconsistent)" in out
    # the L2: blocks pinned through L1's dispute games, the lying L2 node never a verdict
    lines = out.splitlines()
    for verdict, label in (("VERIFIED-BAD", "l2.final-bad"),
                           ("UNVERIFIABLE (game-not-final)", "l2.in-delay"),
                           ("UNVERIFIABLE (game-challenger-wins)", "l2.challenger-wins"),
                           ("UNVERIFIABLE (rpc-inconsistent)", "l2.lying-node")):
        assert any(line.startswith(f"{verdict:<36} {label}: ") for line in lines), label
    assert "recompute step amm/layer-status --rpc http://127.0.0.1:" in out
    assert out.rstrip().endswith("The devnet was stopped.")
