"""`make demo`'s command: offline, real data, exit 0, and the liar is caught."""

from __future__ import annotations

import subprocess
import sys


def test_demo_proves_the_fixture_and_catches_the_liar():
    result = subprocess.run([sys.executable, "-m", "recompute", "demo"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # geth's own eth_getBalance / eth_getStorageAt answers: 0x76 = 118 and 0x38
    assert out.count("VERIFIED-GOOD") == 3
    assert "balance 118, slot 0 = 0x38" in out
    assert "53 parentHash links re-hashed" in out
    assert "UNVERIFIABLE   a node that lies about slot 0 (rpc-inconsistent)" in out
