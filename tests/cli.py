"""The command line as a user runs it: ``recompute ARGS…`` in a fresh process."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args: object, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """Run ``python -m recompute ARGS…``; stdout and stderr captured as text."""
    return subprocess.run([sys.executable, "-m", "recompute", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, **kwargs)
