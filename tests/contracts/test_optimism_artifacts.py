"""The bundled OP-stack artifacts (recompute/data/artifacts/optimism) are what
contracts/optimism.mjs takes out of the pinned npm package @eth-optimism/contracts-bedrock,
byte for byte, and every one the devnet deploys is there."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from recompute.devnet.l2_chain import OPTIMISM_ARTIFACTS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "node_modules" / "@eth-optimism" / "contracts-bedrock"


@pytest.mark.skipif(not PACKAGE.is_dir() or not shutil.which("node"),
                    reason="needs node and node_modules/@eth-optimism/contracts-bedrock "
                           "(make setup installs them)")
def test_bundled_optimism_artifacts_match_the_package(tmp_path):
    subprocess.run(["node", "contracts/optimism.mjs", "--out", str(tmp_path)], cwd=ROOT,
                   check=True, capture_output=True, timeout=120)
    built = sorted(path.name for path in tmp_path.glob("*.json"))
    bundled = sorted(path.name for path in Path(OPTIMISM_ARTIFACTS).glob("*.json"))
    assert built == bundled
    for name in built:
        bundled_bytes = (Path(OPTIMISM_ARTIFACTS) / name).read_bytes()
        assert (tmp_path / name).read_bytes() == bundled_bytes, name


def test_the_pinned_package_is_the_bundled_one():
    pinned = json.loads((ROOT / "package.json").read_text())["dependencies"]
    version = pinned["@eth-optimism/contracts-bedrock"]
    for path in Path(OPTIMISM_ARTIFACTS).glob("*.json"):
        artifact = json.loads(path.read_text())
        assert artifact["package"] == f"@eth-optimism/contracts-bedrock@{version}", path.name
        assert artifact["deployedBytecode"].startswith("0x"), path.name
