"""The command line as a user runs it: ``recompute ARGS…`` in a fresh process."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args: object, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """Run ``python -m recompute ARGS…``; stdout and stderr captured as text."""
    return subprocess.run([sys.executable, "-m", "recompute", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, **kwargs)


def as_of_head(url: str) -> list[str]:
    """``--at`` the chain's head time: for a recorded history (the devnet is dated from its
    genesis timestamp, not today), whose ``latest`` is judged as of its own time
    (docs/lightclient.md §Clock)."""
    from recompute.devnet.anvil import rpc_call

    head = rpc_call(url, "eth_getBlockByNumber", ["latest", False])
    return ["--at", str(int(head["timestamp"], 16))]
