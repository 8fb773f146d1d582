"""The durable evidence store of ``recompute watch --store PATH`` (docs/watch.md §The evidence
store): one SQLite file, one writer (the coordinator), committed segment by segment, so a
``kill -9`` loses at most the segments in flight.

Tables:

``audit``     key/value: the store's ``schema`` version, the audit's parameters (mode
              ``range`` or ``follow``, config hash, the checks and their healthy verdicts, the
              anchor: pinned block, hash and method, the range, the head the finality was judged
              against, the segment size) and progress: ``stdout_journal``, the last write to
              stdout, committed before it is written, with what it changes: in a range audit
              ``emitted_through``, the highest block whose lines that write or an earlier one
              holds; in follow mode ``last_final_block``/``_hash`` and ``unfinal_written``,
              the blocks above the last final one whose first lines were written
              (docs/watch.md §Restarts).
``segments``  per evaluated segment: its blocks, lowest parentHash, highest hash, per-block
              hashes, the endpoint, seconds, and a failure if every endpoint failed.
``lines``     every line as the JSON written to stdout, keyed by (block, position).

Outside bytes: the store is the user's file, and may be one handed to them. Opening one that
exists checks that it is a SQLite file at all, that SQLite finds it undamaged (``PRAGMA
quick_check``), that its tables are a recompute store's and that its schema version is this
one; every value read back then goes through :mod:`recompute.watch.store_records` (sizes
bounded in SQL before a value is fetched). Whatever is wrong is one line, ``store PATH: …``
(exit 64). A file that is not a store is never written to.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from recompute.core.errors import OptionError, UsageError, literal
from recompute.core.jsontext import json_line
from recompute.watch import store_records as records
from recompute.watch.evaluate import JsonObject
from recompute.watch.segment import SegmentResult
from recompute.watch.store_records import SCHEMA, StoreRecordError

# A followed block's final lines as the store keeps them: (block, its hash, the lines as JSON).
FinalBlock = tuple[int, str, list[JsonObject]]

_TABLES = """
CREATE TABLE audit (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE segments (
    lo INTEGER PRIMARY KEY, hi INTEGER NOT NULL, parent_hash TEXT, top_hash TEXT,
    hashes TEXT NOT NULL, failure TEXT, endpoint TEXT, seconds REAL NOT NULL);
CREATE TABLE lines (
    block INTEGER NOT NULL, position INTEGER NOT NULL, line TEXT NOT NULL,
    PRIMARY KEY (block, position));
"""
_COLUMNS = {"audit": ["key", "value"],
            "segments": ["lo", "hi", "parent_hash", "top_hash", "hashes", "failure", "endpoint",
                         "seconds"],
            "lines": ["block", "position", "line"]}
_SQLITE = b"SQLite format 3\x00"
# How an existing store is checked on open: quick_check reads every page and checks the b-trees,
# the record formats and NOT NULL; integrity_check also matches every index entry to its row.
# On a 161 MB store (50,000 blocks, 350,000 lines) quick_check took 0.14-0.35 s and
# integrity_check 0.45-0.52 s (3 runs each, warm cache): 3.5x for a kind of damage (an index
# out of step with well-formed pages) that no crafted store needs, since whoever hands one over
# can write any row they like; every record read back is checked below either way.
_CHECK = "quick_check"
_TO_DO = "run the audit again into a new {store}"  # an OptionError template (Store._error)


def _sized(column: str, limit: int) -> str:
    """A text column's byte length and its value, the value only when within ``limit`` (a huge
    value is never fetched)."""
    size = f"length(CAST({column} AS BLOB))"
    return f"{size}, CASE WHEN {size} <= {int(limit)} THEN {column} END"


def _within(size: int | None, value: object, limit: int, what: str) -> object:
    if size is not None and size > limit:
        raise StoreRecordError(f"{what} is larger than {limit:,} bytes")
    return value


class Store:
    """One audit (range or follow) in one SQLite file. ``Store(path)`` creates the file when it
    does not exist (or is empty), else opens it as :meth:`existing` does."""

    def __init__(self, path: str | Path, *, create: bool = True):
        self.path = Path(path)
        self._frame: records.LineFrame | None = None
        new = create and (not self.path.exists() or (self.path.is_file()
                                                     and self.path.stat().st_size == 0))
        if not new:
            self._check_file()
        try:
            self.db = sqlite3.connect(self.path, timeout=10, isolation_level=None,
                                      check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._error(f"cannot be opened ({exc})") from None
        try:
            if new:
                self._create()
            else:
                self._check_database()
            self.db.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            self.db.close()
            raise

    def _create(self) -> None:
        """The tables and the schema version, in one transaction."""
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(f"BEGIN; {_TABLES} INSERT INTO audit VALUES "
                                  f"('schema', '{SCHEMA}'); COMMIT;")
        except sqlite3.Error as exc:
            raise self._error(f"cannot be created ({exc})") from None

    @classmethod
    def existing(cls, path: str | Path) -> Store:
        return cls(path, create=False)

    def close(self) -> None:
        self.db.close()

    # ---- what is opened -----------------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: what is read inside is one state of the file, though an audit
        may be writing to it meanwhile (the counts a report compares then agree)."""
        with self._reading():
            self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("ROLLBACK")

    def _error(self, what: str, to_do: str | None = None) -> UsageError:
        """One line: a stored value shown in it cannot break it or drive the terminal. With
        ``to_do`` (said after it), the line ends with what to do: a new store (the option)."""
        shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in what)
        if to_do is None:
            return UsageError(f"store {self.path}: {shown}")
        return OptionError(literal(f"store {self.path}: {shown}; ") + _TO_DO + literal(to_do),
                           ("store",))

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A stored value that is not what it should be, or a page SQLite cannot read: one
        line naming the store."""
        try:
            yield
        except StoreRecordError as exc:
            raise self._error(f"{exc}: the store is damaged or was changed", "") from None
        except sqlite3.DatabaseError as exc:
            raise self._error(f"SQLite cannot read it ({exc})", "") from None
        except UnicodeDecodeError:  # a text value (or SQLite's own schema) is not UTF-8
            raise self._error("SQLite cannot read it (a text in it is not UTF-8)", "") from None

    def _check_file(self) -> None:
        path = self.path
        if path.is_dir():
            raise self._error("is a directory, not a store file")
        if not path.exists():
            raise self._error("no such file")
        if not path.is_file():
            raise self._error("is not a regular file, so not a store")
        try:
            with path.open("rb") as handle:
                head = handle.read(len(_SQLITE))
        except OSError as exc:
            raise self._error(f"cannot be read ({exc.strerror or exc})") from None
        if not head:
            raise self._error("is an empty file, not a recompute store")
        if head != _SQLITE:
            raise self._error("is not a SQLite file, so not a recompute store")

    def _check_database(self) -> None:
        try:
            problem = self.db.execute(f"PRAGMA {_CHECK}(1)").fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._error(f"SQLite cannot read it ({exc})") from None
        except UnicodeDecodeError:  # its schema's text, damaged
            raise self._error("SQLite cannot read it (its schema is not UTF-8)") from None
        if problem is None or problem[0] != "ok":
            shown = " ".join(str(problem and problem[0]).split())[:200]
            raise self._error(f"SQLite reports the file damaged ({shown})", "")
        with self._reading():
            for table, columns in _COLUMNS.items():
                found = [row[1] for row in self.db.execute(f"PRAGMA table_info({table})")]
                if not found:
                    raise self._error(f"not a recompute store (it has no {table} table)")
                if found != columns:
                    raise self._error(f"not a recompute store (its {table} table has columns "
                                      f"{', '.join(map(str, found))[:200]})")
            row = self.db.execute(f"SELECT {_sized('value', 64)} FROM audit "
                                  "WHERE key = 'schema'").fetchone()
            if row is None:
                raise self._error("holds no schema version: not written by this recompute's "
                                  "store format", "")
            if row[1] != str(SCHEMA):
                shown = str(row[1])[:20] if row[1] is not None else "(too large)"
                raise self._error(f"schema {shown}, this recompute reads schema {SCHEMA}",
                                  " (or read it with the recompute that wrote it)")
            self.params()

    # ---- parameters and progress ---------------------------------------------------------

    def get(self, key: str) -> object:
        """One audit value, checked (None when the store has none)."""
        value: object = self.params().get(key)
        return value

    def params(self) -> JsonObject:
        """The audit table, every value checked (:func:`records.audit_params`)."""
        with self._reading():
            rows = self.db.execute(
                f"SELECT key, {_sized('value', records.MAX_VALUE_BYTES)} FROM audit "
                f"LIMIT {len(records.AUDIT_KEYS) + 1}").fetchall()
            values: dict[str, object] = {}
            for key, size, text in rows:
                if not isinstance(key, str) or key not in records.AUDIT_KEYS:
                    raise StoreRecordError(f"audit key {str(key)[:40]!r} is not one of a "
                                           "recompute store")
                what = f"audit value {key!r}"
                text = _within(size, text, records.MAX_VALUE_BYTES, what)
                values[key] = SCHEMA if key == "schema" else records.parse(
                    text, what, records.MAX_VALUE_BYTES)
            return records.audit_params(values)

    def put(self, values: JsonObject) -> None:
        self._frame = None
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT OR REPLACE INTO audit VALUES (?, ?)",
                                [(k, json_line(v)) for k, v in values.items()])

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
                 json_line(result.hashes),
                 json_line(list(result.failure)) if result.failure else None,
                 result.endpoint, result.seconds))
            self._insert_lines(result.lines)

    def _insert_lines(self, lines: list[JsonObject]) -> None:
        positions: dict[int, int] = {}
        rows = []
        for line in lines:
            position = positions.get(line["block"], 0)
            positions[line["block"]] = position + 1
            rows.append((line["block"], position, json_line(line)))
        self.db.executemany("INSERT INTO lines VALUES (?, ?, ?)", rows)

    def segments(self, descending: bool = False, with_lines: bool = True
                 ) -> Iterator[SegmentResult]:
        """The stored segments of a range audit, lowest first (or highest first), each checked
        (:func:`records.segment`: on the audit's own plan) with its lines, one at a time (an
        audit's lines need not fit in memory). Once all are read with their lines, every stored
        line must have been one of theirs."""
        params = self.params()
        if params.get("mode") != "range":
            raise self._error("holds no range audit")
        limit = params["segment_blocks"] * records.HASH_TEXT + 2
        text = records.MAX_TEXT_BYTES
        cursor = self.db.execute(
            f"SELECT lo, hi, {_sized('parent_hash', 66)}, {_sized('top_hash', 66)}, "
            f"{_sized('hashes', limit)}, {_sized('failure', 2 * text + 8)}, "
            f"{_sized('endpoint', text)}, seconds FROM segments "
            f"ORDER BY lo {'DESC' if descending else 'ASC'}")
        read = rows = 0
        with self._reading():
            for (lo, hi, parent_size, parent, top_size, top, hashes_size, hashes, failure_size,
                 failure, endpoint_size, endpoint, seconds) in cursor:
                where = f"segment {lo}..{str(hi)[:20]}"
                row = (lo, hi, _within(parent_size, parent, 66, f"{where}: parent_hash"),
                       _within(top_size, top, 66, f"{where}: top_hash"),
                       _within(hashes_size, hashes, limit, f"{where}: its hashes"),
                       _within(failure_size, failure, 2 * text + 8, f"{where}: its failure"),
                       _within(endpoint_size, endpoint, text, f"{where}: endpoint"), seconds)
                result = records.segment(row, params)
                rows += 1
                if not with_lines:
                    yield result
                    continue
                result.lines = self.lines(result.lo, result.hi)
                if result.failure is not None and result.lines:
                    raise StoreRecordError(f"{where} failed, yet holds lines")
                read += len(result.lines)
                yield result
            records.progress(params, rows)
            stored = self.line_count()
            if with_lines and stored != read:
                raise StoreRecordError(f"{stored - read} stored line(s) belong to no stored "
                                       "segment")

    def check_segments(self) -> int:
        """Every stored segment checked (on the audit's plan, as many as its progress says),
        their lines not read (they are checked as an audit reads them); how many there are."""
        return sum(1 for _ in self.segments(with_lines=False))

    def segment_count(self) -> int:
        with self._reading():
            return int(self.db.execute("SELECT count(*) FROM segments").fetchone()[0])

    def line_count(self) -> int:
        with self._reading():
            return int(self.db.execute("SELECT count(*) FROM lines").fetchone()[0])

    def lines(self, lo: int, hi: int) -> list[JsonObject]:
        """The stored lines of blocks ``lo..hi`` in block order, each checked
        (:func:`records.line`: a check of the audit, once per block)."""
        return list(self.iter_lines(lo, hi))

    def iter_lines(self, lo: int, hi: int) -> Iterator[JsonObject]:
        with self._reading():
            if self._frame is None:
                self._frame = records.LineFrame.of(self.params())
            frame = self._frame
            rows = self.db.execute(
                f"SELECT block, position, {_sized('line', records.MAX_LINE_BYTES)} FROM lines "
                "WHERE block BETWEEN ? AND ? ORDER BY block, position",
                (max(lo, -1), min(hi, records.MAX_BLOCK)))
            block, seen = None, set[str]()
            for number, position, size, text in rows:
                text = _within(size, text, records.MAX_LINE_BYTES, f"the line of block {number}")
                line = records.line((number, position, text), frame)
                if number != block:
                    block, seen = number, set()
                if line["check"] in seen:
                    raise StoreRecordError(f"block {number} has two lines of check "
                                           f"{line['check']!r}")
                seen.add(line["check"])
                yield line

    # ---- follow mode ---------------------------------------------------------------------

    def final_lines(self) -> Iterator[JsonObject]:
        """A follow store's final lines in block order, each checked, none above the last
        final block it records; once all are read, every stored line must have been read."""
        params = self.params()
        if params.get("mode") != "follow":
            raise self._error("holds no follow audit")
        last = params.get("last_final_block", -1)
        read = 0
        with self._reading():
            for line in self.iter_lines(0, records.MAX_BLOCK):
                if line["block"] > last:
                    raise StoreRecordError(f"a final line of block {line['block']}, above the "
                                           f"last final block {last}")
                read += 1
                yield line
            stored = self.line_count()
            if stored != read:
                raise StoreRecordError(f"{stored - read} stored line(s) are not lines of "
                                       "blocks")

    def record_final(self, lines: list[JsonObject], block: int, block_hash: str) -> None:
        """A followed block's final lines, and the block as the last final one."""
        with self.db:
            self.db.execute("BEGIN")
            self._final(lines, block, block_hash)

    def _final(self, lines: list[JsonObject], block: int, block_hash: str) -> None:
        self.db.execute("DELETE FROM lines WHERE block = ?", (block,))
        self._insert_lines(lines)
        last = self.get("last_final_block")
        if isinstance(last, int) and block < last:
            return  # lines of a block below written again (an L2 retraction's): the last stays
        self.db.executemany("INSERT OR REPLACE INTO audit VALUES (?, ?)", [
            ("last_final_block", json_line(block)),
            ("last_final_hash", json_line(block_hash))])

    def record_write(self, journal: dict[str, object], finals: list[FinalBlock],
                     progress: dict[str, object]) -> None:
        """Before a write to stdout (docs/watch.md §Restarts), in one transaction: the write
        itself (``journal``: its text or blocks, where stdout stood), what the store keeps of it
        (``finals``, follow mode: block, hash, final lines; the highest block becomes the last
        final one) and the progress it makes (``progress``: audit values, e.g. the blocks
        above the last final one whose first lines stdout has once it is written, or the
        range's ``emitted_through``)."""
        with self.db:
            self.db.execute("BEGIN")
            for block, block_hash, lines in sorted(finals):
                self._final(lines, block, block_hash)
            self.db.executemany("INSERT OR REPLACE INTO audit VALUES (?, ?)", [
                ("stdout_journal", json_line(journal)),
                *((key, json_line(value)) for key, value in progress.items())])
