"""The committed artifacts are what the pinned solc-js makes of the committed sources.

Running needs no compiler (the artifacts are committed); this test recompiles each group of
sources the way contracts/README.md says and compares every artifact byte for byte.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "contracts" / "artifacts"
# (source folders compiled together, extra build flags), as contracts/README.md documents.
GROUPS = [
    (["contracts/src/amm", "contracts/src/meters", "contracts/src/variants"], []),
    (["contracts/src/swarm"], ["--via-ir"]),
    (["contracts/src/op-releases"], []),
]


@pytest.mark.skipif(not (ROOT / "node_modules" / "solc").is_dir() or not shutil.which("node"),
                    reason="needs node and node_modules/solc (make setup installs them)")
@pytest.mark.slow  # a full solc-js build: over a minute (make test runs it, test-fast does not)
@pytest.mark.parametrize("folders,flags", GROUPS, ids=["+".join(g[0]) for g in GROUPS])
def test_artifacts_match_a_fresh_build(tmp_path, folders, flags):
    subprocess.run(["node", "contracts/build.mjs", "--out", str(tmp_path), *flags, *folders],
                   cwd=ROOT, check=True, capture_output=True, timeout=600)
    built = sorted(tmp_path.glob("*.json"))
    assert built, "the build produced no artifact"
    for artifact in built:
        committed = ARTIFACTS / artifact.name
        assert committed.is_file(), f"{artifact.name} is built but not committed"
        assert committed.read_bytes() == artifact.read_bytes(), f"{artifact.name} is stale"
