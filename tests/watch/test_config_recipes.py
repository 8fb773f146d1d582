"""A checks file runs no code: its ``recipes`` line only declares recipe modules the user named
(``--recipes PATH``, ``$RECOMPUTE_RECIPES``); a file that names any other is refused in one
line, exit 64, before anything is imported: in follow mode, in a range audit, and in the
workers of a segmented audit (they import only the paths the coordinator was given).

The attack: someone hands the user a checks.toml with ``recipes = ["evil/"]`` and a folder
``evil/`` beside it whose module writes a marker file when imported. The marker is the
independent witness: absent when refused, present (written by a worker process too) when the
user names the folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from recompute.cli.flags import cli_message
from recompute.core.errors import UsageError
from recompute.recipes.registry import _REGISTRY
from recompute.watch.config import load_config
from recompute.watch.segment import SegmentTask, evaluate_segment
from tests import REPO_ROOT

REGISTRY = "0x5FbDB2315678afecb367f032d93F642f64180aa3"  # examples/devnet-watch.toml's AMM
SUBJECT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"  # example: enrolled at block 6

# Imported, it leaves a file named after its process id in MARKS, and registers a recipe
# (the bundled layer status under another name) that the checks file's check uses.
EVIL = '''
import os, pathlib
pathlib.Path(MARKS, str(os.getpid())).write_text("ran")
from recompute.recipe import register
from recompute.recipes.amm import LayerStatus

@register
class Evil(LayerStatus):
    name = "evil/x"
'''

CHECKS = f"""
recipes = ["evil/"]

[[check]]
name = "a"
recipe = "evil/x"
address = "{REGISTRY}"
params = {{ subject = "{SUBJECT}", layer = 0 }}
"""


@pytest.fixture
def handed(tmp_path, monkeypatch) -> Iterator[tuple[Path, Path]]:
    """(checks.toml, marks folder): the files an attacker hands over, side by side. This
    process forgets the module before and after (so that each test imports it afresh)."""
    monkeypatch.delenv("RECOMPUTE_RECIPES", raising=False)
    forget()
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "evil").mkdir()
    (tmp_path / "evil" / "x.py").write_text(EVIL.replace("MARKS", repr(str(marks))))
    config = tmp_path / "checks.toml"
    config.write_text(CHECKS)
    yield config, marks
    forget()


def forget() -> None:
    sys.modules.pop("recompute_user_recipes.x", None)
    _REGISTRY.pop("evil/x", None)


def refusal(config: Path) -> str:
    real = os.path.realpath(config.parent / "evil")
    return (f"{config} names recipe code in {real}: recompute runs recipe code only from paths "
            f"you name; add --recipes {real} to run it")


def test_a_checks_file_naming_code_the_user_did_not_name_is_refused(handed):
    config, marks = handed
    with pytest.raises(UsageError) as caught:
        load_config(config)
    assert cli_message(caught.value) == refusal(config)  # as the command line says it
    with pytest.raises(UsageError):  # a path the user named, but not this one
        load_config(config, [str(config.parent / "marks")])
    assert list(marks.iterdir()) == []


def test_a_worker_never_imports_what_the_coordinator_was_not_given(handed):
    config, marks = handed
    task = SegmentTask(1, 1, CHECKS, str(config), ("http://127.0.0.1:9",))
    with pytest.raises(UsageError) as caught:
        evaluate_segment(task)
    assert "add --recipes" in cli_message(caught.value)
    assert list(marks.iterdir()) == []


def test_the_folder_the_user_names_is_loaded_however_it_is_spelled(handed, tmp_path):
    config, marks = handed
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "evil")
    (check,) = load_config(config, [str(link) + "/"])  # resolved, both sides
    assert check.recipe.name == "evil/x"
    assert [p.name for p in marks.iterdir()] == [str(os.getpid())]


def watch(node, config: Path, *args: str, cwd: Path = REPO_ROOT) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "RECOMPUTE_RECIPES"}
    return subprocess.Popen([sys.executable, "-m", "recompute", "watch", "--rpc", node.url,
                             "--config", str(config), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)


MODES = {
    "follow": ("--from", "10", "--max-blocks", "1"),
    "range": ("--from", "10", "--to", "11"),
    "processes": ("--from", "10", "--to", "11", "--processes", "2", "--segment-blocks", "1"),
}


@pytest.mark.parametrize("mode", MODES)
def test_watch_refuses_the_handed_file_in_every_mode(devnet, handed, tmp_path, mode):
    node, _ = devnet
    config, marks = handed
    args = MODES[mode] + (("--store", str(tmp_path / "a.sqlite")) if mode == "processes" else ())
    process = watch(node, config, *args)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 64, err
    assert err == f"error: {refusal(config)}\n" and out == ""
    assert list(marks.iterdir()) == []


def test_watch_runs_the_code_the_user_names_in_its_workers_too(devnet, handed, tmp_path):
    node, _ = devnet
    config, marks = handed
    process = watch(node, config, *MODES["follow"], "--recipes", str(config.parent / "evil"))
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert '"check": "a"' in out and '"VERIFIED-GOOD"' in out
    assert [p.name for p in marks.iterdir()] == [str(process.pid)]
    for mark in marks.iterdir():
        mark.unlink()

    # named relative to where the user is: the coordinator hands workers the resolved path
    process = watch(node, config, *MODES["processes"], "--store", str(tmp_path / "a.sqlite"),
                    "--recipes", "evil", cwd=tmp_path)
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    workers = {p.name for p in marks.iterdir()} - {str(process.pid)}
    assert workers, "no worker process imported the named module"


def test_a_folder_named_in_the_environment_is_named(handed, monkeypatch):
    config, marks = handed
    monkeypatch.setenv("RECOMPUTE_RECIPES", str(config.parent / "evil"))
    (check,) = load_config(config)
    assert check.recipe.name == "evil/x" and len(list(marks.iterdir())) == 1
