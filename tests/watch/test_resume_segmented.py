"""A range audit with ``--store`` (segmented, ``--processes`` or not) whose coordinator is killed
at any point and then ``--resume``d writes each line once (docs/watch.md §Restarts): the store
and stdout after the kills are byte for byte those of one uninterrupted run on a regular file;
on a pipe at most the one write in flight at the kill (whole blocks, about 64 KiB of lines) comes
again, whole.

The expected stdout and store are one uninterrupted run of the same audit against the shared
session devnet (itself the one-process auditor's lines: tests/watch/test_segmented.py). The
kills are played in process at random points (seeds): in the segment phase (after some
segments are committed), inside the transaction that commits a block's write, and at any byte
of stdout (a stdout that dies after some bytes, as a SIGKILL between two write calls leaves
it); the killed run's segments are the uninterrupted run's, replayed (the executor is the seam;
the devnet answers every anchoring). Real SIGKILLs of ``python -m recompute watch`` follow: one
with ``--processes 1`` on a regular file, one blocked writing to a pipe.
"""

from __future__ import annotations

import io
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from recompute.cli import audit_cmd
from recompute.sources.cache import SharedSource
from recompute.sources.live import LiveSource
from recompute.watch.config import load_config
from recompute.watch.coordinator import in_process
from recompute.watch.metrics import Metrics
from recompute.watch.recording import WRITE_CHARS
from recompute.watch.segment import SegmentResult, SegmentTask
from recompute.watch.sink import Sink
from recompute.watch.store import Store
from tests import REPO_ROOT
from tests.watch.test_restart_journal import DyingFile, Killed
from tests.watch.watchproc import EXAMPLE

FIRST, LAST, SIZE = 60, 157, 16  # 7 segments; the lying meter's BAD lines from 67 on


def _audit(node_url: str, store: Path, out, *, resume: bool) -> int:
    """``recompute watch --from FIRST --to LAST --store S --segment-blocks SIZE [--resume]``,
    in process (the CLI's own run_segmented)."""
    return audit_cmd.run_segmented(
        checks=load_config(EXAMPLE), config_path=str(EXAMPLE), rpcs=[node_url],
        sources=[SharedSource(LiveSource(node_url, timeout=10))],
        first=None if resume else FIRST, last=None if resume else LAST,
        pins={"block_hash": None, "checkpoint": None, "quorum": None}, confirmations=2,
        processes=None, cluster=None, store_path=str(store), resume=resume,
        segment_blocks=SIZE, threads=2, sink=Sink(Metrics(), out, io.StringIO()),
        stop=threading.Event())


def _dump(store: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the store, table by table, in key order; aside, what depends on when a run
    ran: a segment's evaluation time, the clock's reading when the pin was anchored."""
    columns = {"audit": "*", "segments": "lo, hi, parent_hash, top_hash, hashes, failure, "
               "endpoint", "lines": "*"}
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        rows = {table: db.execute(f"SELECT {what} FROM {table} ORDER BY 1, 2").fetchall()
                for table, what in columns.items()}
    for n, (key, value) in enumerate(rows["audit"]):
        if key == "anchor":
            anchor = {k: v for k, v in json.loads(value).items() if k not in ("as_of", "age_s")}
            rows["audit"][n] = (key, anchor)
    return rows


@pytest.fixture(scope="module")
def whole(devnet, tmp_path_factory):
    """One uninterrupted audit: its stdout, its store's rows, and its segments to replay."""
    node, _ = devnet
    directory = tmp_path_factory.mktemp("whole")
    results: dict[int, SegmentResult] = {}

    def recording(tasks: list[SegmentTask], stop: threading.Event
                  ) -> Iterator[tuple[SegmentTask, SegmentResult]]:
        for task, result in in_process(tasks, stop):
            results[task.lo] = replace(result, lines=list(result.lines))
            yield task, result

    with pytest.MonkeyPatch.context() as patch, open(directory / "out.jsonl", "w") as out:
        patch.setattr(audit_cmd, "in_process", recording)
        assert _audit(node.url, directory / "audit.sqlite", out, resume=False) == 1
    text = (directory / "out.jsonl").read_text()
    assert len(text.splitlines()) > 5 * (LAST - FIRST)  # every block's lines
    return {"url": node.url, "stdout": text, "store": _dump(directory / "audit.sqlite"),
            "results": results}


def _replaying(whole, kill_after: int | None):
    """An executor handing out the uninterrupted run's segments; dead after ``kill_after``."""
    def executor(tasks: list[SegmentTask], stop: threading.Event
                 ) -> Iterator[tuple[SegmentTask, SegmentResult]]:
        for n, task in enumerate(tasks):
            if n == kill_after:
                raise Killed
            kept = whole["results"][task.lo]  # a copy: the coordinator drops its lines
            yield task, replace(kept, lines=list(kept.lines))
    return executor


def _run_until_killed(whole, store: Path, out, kill: tuple[str, int], resume: bool) -> bool:
    """One run of the audit, killed at ``kill`` (True) or ended before it came (False):
    ("segments", n) after n segments are committed; ("commit", n) inside the transaction of
    the n-th write to stdout; ("byte", n) after n more characters of stdout."""
    kind, at = kill
    calls = [0]
    record_write = Store.record_write

    def dying_commit(self: Store, *args: object) -> None:
        calls[0] += 1
        with self.db:  # the transaction begun, then the process dies: never committed
            self.db.execute("BEGIN")
            if calls[0] == at:
                raise Killed
        record_write(self, *args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(audit_cmd, "in_process",
                      _replaying(whole, at if kind == "segments" else None))
        if kind == "commit":
            patch.setattr(Store, "record_write", dying_commit)
        try:
            _audit(whole["url"], store, DyingFile(out, at) if kind == "byte" else out,
                   resume=resume)
        except Killed:
            return True
    return False


def _kills(rng: random.Random, total: int) -> list[tuple[str, int]]:
    """One to three kill points, each of a random kind and place."""
    segments = -(-(LAST - FIRST + 1) // SIZE)
    out = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["segments", "commit", "byte", "byte"])
        writes = total // WRITE_CHARS  # a run's writes to stdout, but for its last
        out.append((kind, {"segments": rng.randrange(segments), "commit": rng.randint(1, writes),
                           "byte": rng.randrange(total)}[kind]))
    return out


@pytest.mark.parametrize("seed", range(10))
def test_killed_anywhere_and_resumed_the_audit_writes_each_line_once_on_a_file(whole, tmp_path,
                                                                              seed):
    rng = random.Random(seed)
    fixed = {0: [("byte", 0)], 1: [("byte", len(whole["stdout"]) - 1)],
             2: [("segments", 3), ("commit", 1), ("byte", 100)]}
    kills = fixed.get(seed) or _kills(rng, len(whole["stdout"]))
    store, path = tmp_path / "audit.sqlite", tmp_path / "out.jsonl"
    died = []
    for n, kill in enumerate(kills):
        with open(path, "a") as out:  # each run appends to the same file (`>> out.jsonl`)
            died.append(_run_until_killed(whole, store, out, kill, resume=n > 0))
    assert died[0], "the first run was killed"
    with pytest.MonkeyPatch.context() as patch, open(path, "a") as out:
        patch.setattr(audit_cmd, "in_process", _replaying(whole, None))
        assert _audit(whole["url"], store, out, resume=True) == 1
    assert path.read_text() == whole["stdout"], f"kills {kills}"
    assert _dump(store) == whole["store"], f"kills {kills}"


@pytest.mark.parametrize("seed", range(3))
def test_on_a_pipe_only_the_write_in_flight_at_the_kill_comes_again(whole, tmp_path, seed):
    text = whole["stdout"]
    at = random.Random(seed).randrange(len(text))
    store, killed = tmp_path / "audit.sqlite", io.StringIO()
    assert _run_until_killed(whole, store, killed, ("byte", at), resume=False)
    resumed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(audit_cmd, "in_process", _replaying(whole, None))
        assert _audit(whole["url"], store, resumed, resume=True) == 1
    _one_write_again(text, killed.getvalue(), resumed.getvalue())
    assert _dump(store) == whole["store"]


def _one_write_again(whole: str, killed: str, resumed: str) -> None:
    """``killed`` then ``resumed`` is ``whole`` with the lines of one write begun in ``killed``
    written whole again at the start of ``resumed`` (nothing else repeated, nothing lost): a
    write is whole blocks in block order, less than WRITE_CHARS of them before its last."""
    cut = killed.rfind("\n") + 1  # killed's last whole line ends there
    assert whole.startswith(killed[:cut])
    rest = whole[cut:]
    again = resumed[:len(resumed) - len(rest)]
    assert resumed.endswith(rest) and again.endswith("\n") or not again
    assert rest.startswith(killed[cut:])  # a cut line: its rest follows, never a gap
    assert whole[:cut].endswith(again), "what comes again is what was written"
    rows = again.splitlines(keepends=True)
    numbers = [json.loads(row)["block"] for row in rows]
    assert numbers == sorted(numbers) and len(set(numbers)) == (
        numbers[-1] - numbers[0] + 1 if numbers else 0), "whole blocks in order"
    assert sum(len(r) for r, n in zip(rows, numbers, strict=True) if n != numbers[-1]) \
        < WRITE_CHARS, "one write's lines at most"


# ---- real SIGKILLs of the command ------------------------------------------------------------


def _command(node_url: str, store: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "recompute", "watch", "--rpc", node_url, "--config",
            str(EXAMPLE), "--store", str(store), "--segment-blocks", str(SIZE), *extra]


def _resume(node_url: str, store: Path, out, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(_command(node_url, store, "--resume", *extra), stdout=out,
                          stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, timeout=300)


def test_processes_1_sigkilled_while_writing_then_resumed_appends_each_line_once(whole,
                                                                                 tmp_path):
    """The whole process group (the coordinator and its local Dask worker) SIGKILLed once the
    coordinator has begun writing lines to the file, then resumed appending to it."""
    store, path = tmp_path / "audit.sqlite", tmp_path / "out.jsonl"
    for _ in range(3):  # lines are written in milliseconds: killed mid-way nearly always
        store.unlink(missing_ok=True)
        with open(path, "w") as out:
            first = subprocess.Popen(
                _command(whole["url"], store, "--from", str(FIRST), "--to", str(LAST),
                         "--processes", "1"), stdout=out, stderr=subprocess.DEVNULL,
                cwd=REPO_ROOT, start_new_session=True)
            try:
                deadline = time.monotonic() + 240
                while path.stat().st_size == 0 and first.poll() is None \
                        and time.monotonic() < deadline:
                    time.sleep(0.0005)
                os.killpg(first.pid, signal.SIGKILL)
            finally:
                first.wait(30)
        if first.returncode == -signal.SIGKILL and 0 < path.stat().st_size < len(
                whole["stdout"]):
            break
    assert first.returncode == -signal.SIGKILL
    assert 0 < path.stat().st_size < len(whole["stdout"])  # killed while writing lines
    with open(path, "a") as out:
        resumed = _resume(whole["url"], store, out, "--processes", "1")
    assert resumed.returncode == 1, resumed.stderr
    assert path.read_text() == whole["stdout"]
    assert _dump(store) == whole["store"]


def test_a_coordinator_sigkilled_blocked_on_a_pipe_repeats_at_most_one_write(whole, tmp_path):
    """stdout a pipe nobody reads after 20,000 characters: the coordinator blocks in a write
    (the pipe full), is SIGKILLed there, and the resumed audit's lines follow."""
    store = tmp_path / "audit.sqlite"
    first = subprocess.Popen(_command(whole["url"], store, "--from", str(FIRST), "--to",
                                      str(LAST)), stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, cwd=REPO_ROOT)
    try:
        head = first.stdout.read(20_000)  # then the pipe fills and the writer blocks
        time.sleep(0.5)
        assert first.poll() is None, "the audit ended before its stdout filled a pipe"
        first.send_signal(signal.SIGKILL)
        killed = (head + first.stdout.read()).decode()
    finally:
        first.kill()
        first.wait(30)
    resumed = _resume(whole["url"], store, subprocess.PIPE)
    assert resumed.returncode == 1, resumed.stderr
    assert "written again" in resumed.stderr
    _one_write_again(whole["stdout"], killed, resumed.stdout)
    assert _dump(store) == whole["store"]
