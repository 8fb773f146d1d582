"""The durable evidence store of ``recompute watch --store PATH`` (docs/watch.md §The evidence
store): one SQLite file, one writer (the coordinator), committed segment by segment, so a
``kill -9`` loses at most the segments in flight.

Tables:

``audit``     key/value: the audit's parameters (mode ``range`` or ``follow``, config hash, the
              checks and their healthy verdicts, the anchor: pinned block, hash and method, the
              range, the head the finality was judged against, the segment size) and progress
              (``emitted_through``: the highest block whose lines reached stdout;
              ``last_final_block``/``_hash`` in follow mode, with ``stdout_journal``, the
              last write to stdout, committed before it is written, and ``unfinal_written``,
              the blocks above the last final one whose first lines were written:
              docs/watch.md §Restarts).
``segments``  per evaluated segment: its blocks, lowest parentHash, highest hash, per-block
              hashes, the endpoint, seconds, and a failure if every endpoint failed.
``lines``     every line as the JSON written to stdout, keyed by (block, position).

Outside bytes: the store is the user's file; every value read back is checked for type, and
a file that is not a recompute store (or a newer schema) is refused in one line.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from recompute.core.errors import UsageError
from recompute.watch.segment import SegmentResult

SCHEMA = 1
_TABLES = """
CREATE TABLE IF NOT EXISTS audit (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS segments (
    lo INTEGER PRIMARY KEY, hi INTEGER NOT NULL, parent_hash TEXT, top_hash TEXT,
    hashes TEXT NOT NULL, failure TEXT, endpoint TEXT, seconds REAL NOT NULL);
CREATE TABLE IF NOT EXISTS lines (
    block INTEGER NOT NULL, position INTEGER NOT NULL, line TEXT NOT NULL,
    PRIMARY KEY (block, position));
"""


class Store:
    """One audit (range or follow) in one SQLite file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.db = sqlite3.connect(self.path, timeout=10, isolation_level=None,
                                      check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_TABLES)
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"--store {path}: not a recompute evidence store ({exc})") from None
        schema = self.get("schema")
        if schema is None:
            self.put({"schema": SCHEMA})
        elif schema != SCHEMA:
            raise UsageError(f"--store {path}: schema {schema!r}, this recompute reads "
                             f"{SCHEMA}")

    @classmethod
    def existing(cls, path: str | Path) -> Store:
        if not Path(path).is_file():
            raise UsageError(f"--store {path}: no such file")
        return cls(path)

    def close(self) -> None:
        self.db.close()

    # ---- parameters and progress ---------------------------------------------------------

    def get(self, key: str):
        row = self.db.execute("SELECT value FROM audit WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except ValueError:
            raise UsageError(f"--store {self.path}: audit value {key!r} is not JSON") from None

    def params(self) -> dict:
        out = {}
        for key, value in self.db.execute("SELECT key, value FROM audit ORDER BY key"):
            try:
                out[key] = json.loads(value)
            except ValueError:
                raise UsageError(f"--store {self.path}: audit value {key!r} is not JSON") from None
        return out

    def put(self, values: dict) -> None:
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT OR REPLACE INTO audit VALUES (?, ?)",
                                [(k, json.dumps(v)) for k, v in values.items()])

    # ---- segments (range mode) -----------------------------------------------------------

    def record_segment(self, result: SegmentResult) -> None:
        """A segment's links and lines, in one transaction (all or nothing after a crash)."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("DELETE FROM lines WHERE block BETWEEN ? AND ?",
                            (result.lo, result.hi))
            self.db.execute(
                "INSERT OR REPLACE INTO segments VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (result.lo, result.hi, result.parent_hash, result.top_hash,
                 json.dumps(result.hashes),
                 json.dumps(list(result.failure)) if result.failure else None,
                 result.endpoint, result.seconds))
            self._insert_lines(result.lines)

    def _insert_lines(self, lines: list[dict]) -> None:
        positions: dict[int, int] = {}
        rows = []
        for line in lines:
            position = positions.get(line["block"], 0)
            positions[line["block"]] = position + 1
            rows.append((line["block"], position, json.dumps(line)))
        self.db.executemany("INSERT INTO lines VALUES (?, ?, ?)", rows)

    def segments(self) -> Iterator[SegmentResult]:
        """The stored segments, lowest first, each with its lines (one at a time: an audit's
        lines need not fit in memory)."""
        rows = self.db.execute("SELECT * FROM segments ORDER BY lo").fetchall()
        for lo, hi, parent, top, hashes, failure, endpoint, seconds in rows:
            result = SegmentResult(lo, hi, [], _json_list(hashes, self.path), parent, top,
                                   tuple(_json_list(failure, self.path)) if failure else None,
                                   endpoint, seconds)
            result.lines = self.lines(lo, hi)
            yield result

    def segment_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM segments").fetchone()[0]

    def lines(self, lo: int, hi: int) -> list[dict]:
        rows = self.db.execute("SELECT line FROM lines WHERE block BETWEEN ? AND ? "
                               "ORDER BY block, position", (lo, hi))
        out = []
        for (text,) in rows:
            try:
                line = json.loads(text)
            except ValueError:
                raise UsageError(f"--store {self.path}: a stored line is not JSON") from None
            if not isinstance(line, dict):
                raise UsageError(f"--store {self.path}: a stored line is not an object")
            out.append(line)
        return out

    def all_lines(self) -> list[dict]:
        return self.lines(-1, 1 << 62)

    # ---- follow mode ---------------------------------------------------------------------

    def record_final(self, lines: list[dict], block: int, block_hash: str) -> None:
        """A followed block's final lines, and the block as the last final one."""
        with self.db:
            self.db.execute("BEGIN")
            self._final(lines, block, block_hash)

    def _final(self, lines: list[dict], block: int, block_hash: str) -> None:
        self.db.execute("DELETE FROM lines WHERE block = ?", (block,))
        self._insert_lines(lines)
        self.db.executemany("INSERT OR REPLACE INTO audit VALUES (?, ?)", [
            ("last_final_block", json.dumps(block)),
            ("last_final_hash", json.dumps(block_hash))])

    def record_write(self, journal: dict, finals: list[tuple[int, str, list[dict]]],
                     unfinal: dict[str, str]) -> None:
        """Follow mode, before a write to stdout (docs/watch.md §Restarts), in one transaction:
        the write itself (``journal``: its text and where stdout stood), the final lines it
        holds (``finals``: block, hash, lines; the highest block becomes the last final one)
        and the blocks above it whose first lines stdout has once it is written."""
        with self.db:
            self.db.execute("BEGIN")
            for block, block_hash, lines in sorted(finals):
                self._final(lines, block, block_hash)
            self.db.executemany("INSERT OR REPLACE INTO audit VALUES (?, ?)", [
                ("stdout_journal", json.dumps(journal)),
                ("unfinal_written", json.dumps(unfinal))])


def _json_list(text: str, path: Path) -> list:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, list):
        raise UsageError(f"--store {path}: a stored segment is malformed")
    return value
