"""The files the README's tours write in the checkout are named by .gitignore: a newcomer who
followed them has a clean `git status`. The files are read off the README's own commands
(redirections and the options that name an output file or folder)."""

import re
import shutil
import subprocess

import pytest

from tests import REPO_ROOT

OUTPUTS = re.compile(r"(?:>>?|-o|--store|--html|--csv|--suite|--state-dir)\s+([\w./-]+)")


def test_every_file_a_tour_writes_is_ignored():
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    readme = (REPO_ROOT / "README.md").read_text()
    written = {m.group(1) for m in OUTPUTS.finditer(readme)}
    assert {"audit.sqlite", "audit.html", "lines.jsonl", "alerts.txt",
            "my-vectors/pulser-overdue.json", ".devnet-live"} <= written
    written |= {"audit.sqlite-wal", "audit.sqlite-shm", ".devnet/manifest.json"}
    done = subprocess.run(["git", "check-ignore", "--no-index", *sorted(written)],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    assert set(done.stdout.split()) == written, sorted(written - set(done.stdout.split()))
