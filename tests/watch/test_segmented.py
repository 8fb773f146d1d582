"""A range audit in segments (``--processes``, ``--store``, ``--resume``) against the devnet
history (the shared session devnet, read-only), compared byte for byte with the one-process
auditor of the same range (itself checked against ``step`` at every named moment in
test_range.py); the coordinator killed with SIGKILL and resumed; ``audit report``.

Independent expectations: the one-process run's stdout and summary rows, and the devnet
manifest's moment ``meter.over-cap`` (the lying meter's first over-cap block).
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests import REPO_ROOT
from tests.watch.watchproc import EXAMPLE, block_hash

FIRST, LAST = 60, 157  # the lying meter's draws (67..69), the swarm's forming (98), the head


def run(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "recompute", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO_ROOT)


def audit_args(node, *extra: str) -> list[str]:
    return ["watch", "--rpc", node.url, "--config", str(EXAMPLE), "--from", str(FIRST),
            "--to", str(LAST), *extra]


def table(stderr: str) -> list[str]:
    lines = stderr.splitlines()
    start = next(i for i, t in enumerate(lines) if t.startswith("check "))
    return lines[start:]


@pytest.fixture(scope="module")
def baseline(devnet):
    node, manifest = devnet
    done = run(*audit_args(node))
    assert done.returncode == 1, done.stderr  # the lying meter: VERIFIED-BAD
    return {"node": node, "manifest": manifest, "stdout": done.stdout,
            "table": table(done.stderr)}


def test_local_processes_with_a_store_write_what_one_process_writes(baseline, tmp_path):
    store = tmp_path / "audit.sqlite"
    done = run(*audit_args(baseline["node"], "--processes", "2", "--segment-blocks", "10",
                           "--store", str(store)))
    assert done.returncode == 1, done.stderr
    assert done.stdout == baseline["stdout"]
    assert table(done.stderr) == baseline["table"]
    assert "2 local worker process(es)" in done.stderr

    report = run("audit", "report", "--store", str(store))
    assert report.returncode == 1
    assert report.stdout.splitlines()[-len(baseline["table"]):] == baseline["table"]
    as_json = run("audit", "report", "--store", str(store), "--json")
    summary = json.loads(as_json.stdout)
    over = baseline["manifest"]["moments"]["meter.over-cap"]["number"]
    assert summary["blocks"] == LAST - FIRST + 1 and summary["complete"] is True
    assert summary["checks"]["8312/lying-meter/cap"]["first_bad"] == over
    assert summary["pinned_hash"] == block_hash(baseline["node"].url, LAST)
    assert summary["segments"] == {"planned": 10, "evaluated": 10, "not_merged": []}


def _segments_in(store) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT count(*) FROM segments").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_a_coordinator_killed_with_sigkill_resumes_with_no_block_missing_or_twice(
        baseline, tmp_path):
    node = baseline["node"]
    store = tmp_path / "audit.sqlite"
    first = subprocess.Popen(
        [sys.executable, "-m", "recompute", *audit_args(node, "--store", str(store),
                                                         "--segment-blocks", "5",
                                                         "--workers", "1")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        deadline = time.monotonic() + 120
        while _segments_in(store) < 3 and time.monotonic() < deadline:
            assert first.poll() is None, first.stderr.read()
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        out, _ = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == -signal.SIGKILL
    done_before = _segments_in(store)
    assert 3 <= done_before < 20  # killed mid-audit

    resumed = run("watch", "--rpc", node.url, "--config", str(EXAMPLE), "--resume",
                  "--store", str(store))
    assert resumed.returncode == 1, resumed.stderr
    assert f"{done_before} already in" in resumed.stderr
    assert out + resumed.stdout == baseline["stdout"]
    assert table(resumed.stderr) == baseline["table"]

    again = run("watch", "--rpc", node.url, "--config", str(EXAMPLE), "--resume",
                "--store", str(store))
    assert (again.returncode, again.stdout) == (1, "")  # complete: nothing written twice
    assert table(again.stderr) == baseline["table"]


def test_a_resume_with_other_checks_or_another_anchor_is_refused_in_one_line(devnet, tmp_path):
    node, _ = devnet
    store = tmp_path / "audit.sqlite"
    short = ["watch", "--rpc", node.url, "--config", str(EXAMPLE), "--from", "150", "--to",
             "152", "--store", str(store)]
    assert run(*short).returncode == 1  # the lying meter is over its cap there

    other = tmp_path / "other.toml"
    other.write_text(EXAMPLE.read_text().replace('since = 98', 'since = 99'))
    refused = [
        run("watch", "--rpc", node.url, "--config", str(other), "--resume", "--store",
            str(store)),
        run("watch", "--rpc", node.url, "--config", str(EXAMPLE), "--resume", "--store",
            str(store), "--block-hash", block_hash(node.url, 153)),
        run("watch", "--rpc", node.url, "--config", str(EXAMPLE), "--resume", "--store",
            str(store), "--from", "150", "--to", "153"),
        run(*short),  # a new audit into a store that holds one
        run("watch", "--rpc", node.url, "--config", str(EXAMPLE), "--resume", "--store",
            str(tmp_path / "missing.sqlite")),
    ]
    for done, says in zip(refused, ["not the checks", "pinned to", "not the audit's",
                                    "already holds an audit", "no such file"], strict=True):
        assert done.returncode == 64, done.stderr
        assert done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr


def test_a_file_that_is_not_a_store_is_refused_in_one_line(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    done = run("audit", "report", "--store", str(junk))
    assert done.returncode == 64
    assert len(done.stderr.strip().splitlines()) == 1 and "not a recompute" in done.stderr


def test_a_node_serving_another_chain_cannot_put_its_blocks_into_the_audit(baseline, anvil,
                                                                          tmp_path):
    """Two --rpc: the devnet and a node of another chain, as tall. The segments whose endpoint
    list starts with the other node come back with blocks that do not link to the devnet's
    pinned block: not merged; each is evaluated again from the devnet, and the audit's lines
    are the one-process run's, byte for byte."""
    anvil.rpc("anvil_mine", hex(LAST + 10))
    assert block_hash(anvil.url, LAST) != block_hash(baseline["node"].url, LAST)
    done = run("watch", "--rpc", baseline["node"].url, "--rpc", anvil.url, "--config",
               str(EXAMPLE), "--from", str(FIRST), "--to", str(LAST), "--segment-blocks", "20",
               "--block-hash", block_hash(baseline["node"].url, LAST),
               "--store", str(tmp_path / "audit.sqlite"))
    assert done.returncode == 1, done.stderr
    relinked = [t for t in done.stderr.splitlines() if "does not link" in t]
    # segments 120..139 and 80..99 (the 4th and 2nd): their endpoint list starts with the other
    assert [t.split()[1] for t in relinked] == ["120..139", "80..99"]
    assert all(f"by {anvil.url}" in t for t in relinked)
    # the same lines as the one-process run, byte for byte but for how block M was pinned:
    # there by the node (single-rpc), here by the hash given (every line says its anchor)
    got, want = _top_anchor_apart(done.stdout), _top_anchor_apart(baseline["stdout"])
    assert got[0] == want[0]
    assert {a["method"] for a in got[1]} == {"block-hash"}
    assert {a["method"] for a in want[1]} == {"single-rpc"}


def _top_anchor_apart(stdout: str) -> tuple[list[str], list[dict]]:
    """(the lines with block M's anchor removed, block M's anchors)"""
    lines, anchors = [], []
    for text in stdout.splitlines():
        value = json.loads(text)
        if value.get("block") == LAST and "anchor" in value:
            anchors.append(value.pop("anchor"))
        lines.append(json.dumps(value))
    return lines, anchors
