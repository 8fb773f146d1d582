"""A follow-mode watch with ``--store`` killed at any byte of a write to stdout writes no line
twice and loses none across the restart (docs/watch.md §Restarts): every write is committed to
the store before stdout gets it, and the restart writes exactly what stdout lacks. The kill is
played in process at random points of a run's writes (a stdout that dies after some bytes, as
a SIGKILL between two write calls leaves it); the expected stdout is the same run, not killed.
The SIGKILLs of real watch processes are in tests/devnet/test_live.py (the short soak)."""

from __future__ import annotations

import io
import random
import sqlite3

import pytest

from recompute.core.verdict import Verdict
from recompute.watch.evaluate import Line
from recompute.watch.metrics import Metrics
from recompute.watch.recording import RecordingSink
from recompute.watch.store import Store

CHECKS = ("amm/live/signal", "8312/lying-meter/cap")


class Killed(BaseException):
    """The process died (nothing after this point runs)."""


class DyingFile:
    """stdout as a regular file that dies after ``budget`` more bytes."""

    def __init__(self, handle, budget: int):
        self.handle, self.budget = handle, budget

    def write(self, text: str) -> int:
        if len(text) > self.budget:
            self.handle.write(text[:self.budget])
            self.handle.flush()
            raise Killed
        self.budget -= len(text)
        return self.handle.write(text)

    def flush(self) -> None:
        self.handle.flush()

    def fileno(self) -> int:
        return self.handle.fileno()


def _lines(block: int, final: bool) -> list[Line]:
    return [Line(block, f"0x{block:064x}", check, Verdict.GOOD if block % 3 else Verdict.BAD,
                 "ok", final, block % 3 != 0, {"n": str(block)}, f"0x{block:02x}{i}")
            for i, check in enumerate(CHECKS)]


def _play(sink: RecordingSink, start: int = 1) -> None:
    """A follower's writes: each block's first lines, then the block 2 below it final."""
    for block in range(start, 9):
        sink.evaluated(_lines(block, False))
        if block == 5:
            sink.event({"event": "reorg", "fork_point": 4, "orphaned": ["0xdead"], "depth": 1})
        if block >= 3:
            sink.finalized([line.as_final() for line in _lines(block - 2, False)])


def _store(store_path) -> Store:
    """A follow store, its audit parameters as a follow-mode watch puts them."""
    store = Store(store_path)
    if store.get("mode") is None:
        store.put({"mode": "follow", "config_hash": "ab" * 32, "confirmations": 2,
                   "checks": [{"name": name, "healthy": "VERIFIED-GOOD", "since": 0}
                              for name in CHECKS]})
    return store


def _run(path, store_path, budget: int | None) -> None:
    store = _store(store_path)
    with open(path, "a") as handle:
        out = DyingFile(handle, budget) if budget is not None else handle
        sink = RecordingSink(Metrics(), out, io.StringIO(), store=store)
        try:
            sink.recover()
            _play(sink)
            sink.close()
        except Killed:
            pass  # nothing of the dead process runs: not even its close
    store.close()


@pytest.fixture
def uninterrupted(tmp_path):
    path = tmp_path / "whole.jsonl"
    _run(path, tmp_path / "whole.sqlite", None)
    return path.read_text()


@pytest.mark.parametrize("seed", range(12))
def test_a_kill_at_any_byte_then_a_restart_writes_stdout_exactly_once(tmp_path, uninterrupted,
                                                                      seed):
    rng = random.Random(seed)
    total = len(uninterrupted)
    budget = [0, total // 2, total - 1][seed] if seed < 3 else rng.randrange(total)
    out, store = tmp_path / "out.jsonl", tmp_path / "bot.sqlite"
    _run(out, store, budget)
    assert len(out.read_text()) == budget  # the first run died there
    # the restarted run: recovers the write in flight, then (as a follower resuming after the
    # last final block would) its blocks' writes; a block whose write was whole is not
    # written again because the journal says so: here the test replays only what is left
    db = Store(store)
    last_final = db.get("last_final_block")
    written = dict(db.get("unfinal_written") or {})
    with open(out, "a") as handle:
        sink = RecordingSink(Metrics(), handle, io.StringIO(), store=db)
        sink.recover()
    db.close()
    text = out.read_text()
    assert uninterrupted.startswith(text), "the recovered stdout is a prefix of the whole run"
    # every line of it whole JSON, none twice
    rows = text.splitlines()
    assert text.endswith("\n") or not text
    assert len(rows) == len(set(rows))
    # the store holds exactly the final lines stdout has, and the last final block
    finals = [row for row in rows if '"final": true' in row]
    stored = sqlite3.connect(store).execute("SELECT count(*) FROM lines").fetchone()[0]
    assert stored == len(finals)
    if finals:
        assert last_final == max(int(row.split(",")[0].split(": ")[1]) for row in finals)
    # the first lines stdout has of blocks not yet final are the store's unfinal_written
    first = {int(row.split(",")[0].split(": ")[1]) for row in rows if '"final": false' in row}
    final_blocks = {int(row.split(",")[0].split(": ")[1]) for row in finals}
    assert {int(n) for n in written} == first - final_blocks


def test_on_a_pipe_the_write_in_flight_is_written_again_and_said(tmp_path):
    store = _store(tmp_path / "bot.sqlite")
    first = io.StringIO()  # not a file: nobody can read it back
    sink = RecordingSink(Metrics(), first, io.StringIO(), store=store)
    sink.evaluated(_lines(1, False))  # committed, then written (the kill comes after)
    again, notes = io.StringIO(), io.StringIO()
    RecordingSink(Metrics(), again, notes, store=store).recover()
    assert again.getvalue() == first.getvalue()
    assert "written again" in notes.getvalue()
    # a run that ends without a kill leaves nothing to write again
    sink.close()
    clean, notes = io.StringIO(), io.StringIO()
    RecordingSink(Metrics(), clean, notes, store=store).recover()
    assert clean.getvalue() == "" and notes.getvalue() == ""
    store.close()
