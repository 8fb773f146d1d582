"""The distribution's name: the one the built wheel carries is the one the docs install.

The package index's ``recompute`` is an unrelated project; a reader following docs/install.md
must install this one. The import package and the command stay ``recompute``."""

import re
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAME = "recompute-verifier"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--disable-pip-version-check", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=240)
    (built,) = out.glob("*.whl")
    return built


@pytest.mark.slow  # builds the wheel in an isolated build environment (pip fetches setuptools)
def test_wheel_metadata_carries_the_index_name(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(meta_name).decode())
        entry = z.read(meta_name.replace("METADATA", "entry_points.txt")).decode()
        tops = {n.split("/")[0] for n in z.namelist() if ".dist-info" not in n.split("/")[0]}
    assert meta["Name"] == NAME
    assert wheel.name.startswith("recompute_verifier-")
    assert tops == {"recompute"}  # the import package keeps its name
    assert re.search(r"^recompute = recompute\.cli:main$", entry, re.M)  # and so does the command


def test_docs_install_this_distribution() -> None:
    install = (ROOT / "docs/install.md").read_text()
    assert re.findall(r"pip install (\S+)", install) == [NAME]
    assert f'name = "{NAME}"' in (ROOT / "pyproject.toml").read_text()
    assert f"pip install {NAME}" in (ROOT / "README.md").read_text()
