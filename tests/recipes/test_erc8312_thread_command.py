"""The ERC-8312 thread's own command line works as quoted:
``recompute-step 8312/cap-conservation RPC ADDRESS KEY struct:2:2:1``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.cli import as_of_head

STEP = Path(sys.executable).with_name("recompute-step")


def test_the_threads_command_line(devnet):
    node, manifest = devnet
    envelope = manifest["meters"]["headroom"]["envelopes"]["envelope-1"]
    result = subprocess.run(
        [str(STEP), "8312/cap-conservation", node.url, manifest["contracts"]["HeadroomMeter"],
         envelope["id"], "struct:2:2:1", *as_of_head(node.url)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("VERIFIED-GOOD")
    # the history used 2500 + 3000 + 2500 of 8000: aggregate 8000 <= cap 8000
    assert sum(envelope["turnover"]) == 8000 == envelope["max_cumulative_turnover"]
    # derived values are an aligned table: "aggregate   = 8000"
    assert re.search(r"^ +aggregate += 8000$", result.stdout, re.M)
    assert re.search(r"^ +cap += 8000$", result.stdout, re.M)
    assert "single-rpc" in result.stdout  # no block pinned: said plainly


def test_too_many_arguments_is_a_usage_error(devnet):
    node, manifest = devnet
    result = subprocess.run(
        [str(STEP), "8312/cap-conservation", node.url, manifest["contracts"]["HeadroomMeter"],
         "0x" + "11" * 32, "struct:2:2:1", "extra"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 64 and "takes RPC ADDRESS KEY SHAPE" in result.stderr
