"""Each write to stdout committed to the evidence store first, so that a watch killed at any
point and restarted writes no line twice and loses none (docs/watch.md §Restarts): follow mode
(:class:`RecordingSink`) and a range audit's lines (:class:`AuditSink`) share the journal of
:class:`JournalSink`.

Each write to stdout is first committed to the store, in one transaction with what it changes
there (follow mode: the final lines it holds, the last final block, the blocks whose first
lines it holds; a range audit: ``emitted_through``, the last block it writes) and with what
names the write (its text; a range audit's blocks, whose lines the store holds) and where
stdout stood before it; then it is written and flushed. A kill at any point
leaves the store either without the write (stdout has none of it) or with it (stdout has none,
part or all of it); a restart (:meth:`JournalSink.recover`) compares that last write with the
end of stdout when stdout is a regular file and writes exactly the part it lacks. When stdout
is a pipe or a terminal nobody can read it back: the last write is then written again, whole,
and a note on stderr says so.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Any, Self, TextIO

from recompute.watch.evaluate import JsonObject, Line
from recompute.watch.hooks import Hook
from recompute.watch.metrics import Metrics
from recompute.watch.sink import Sink
from recompute.watch.store import FinalBlock, Store


class JournalSink(Sink):
    """A :class:`~recompute.watch.sink.Sink` that commits each write, and what it changes in
    the store (:meth:`_progress`), to the store before stdout gets it."""

    def __init__(self, metrics: Metrics, out: TextIO | None = None, err: TextIO | None = None,
                 hook: Hook | None = None, *, store: Store):
        super().__init__(metrics, out, err, hook)
        self.store = store
        self._in_flight = False  # a write committed to the store, not yet flushed to stdout

    @classmethod
    def instead_of(cls, sink: Sink, **extra: Any) -> Self:
        """This kind of sink in ``sink``'s place: its metrics, streams, hook and wording."""
        made = cls(sink.metrics, sink.out, sink.err, sink.hook, **extra)
        made.spell = sink.spell
        return made

    def _progress(self) -> tuple[list[FinalBlock], JsonObject]:
        """What the next write changes in the store: final lines, audit values."""
        return [], {}

    def _what(self, text: str) -> JsonObject:
        """What the journal keeps to name a write: its text."""
        return {"text": text}

    def _text(self, journal: JsonObject) -> str | None:
        """The text of the write ``journal`` names (None: it names none)."""
        text = journal.get("text")
        return text if isinstance(text, str) else None

    def _put(self, text: str) -> None:
        with self._lock:
            self._journaled(text)

    def _journaled(self, text: str) -> None:
        """Commit, then write and flush (the lock held)."""
        journal: JsonObject = {**self._what(text), **_position(self.out)}
        finals, progress = self._progress()
        self.store.record_write(journal, finals, progress)
        self._in_flight = True
        self.out.write(text)
        self.out.flush()
        self._in_flight = False

    def close(self) -> None:
        """A run that ends without a kill: every write it committed reached stdout whole, so
        the next run has nothing to check (not even on a pipe)."""
        if not self._in_flight:
            self.store.put({"stdout_journal": None})

    def recover(self) -> None:
        """After a restart: write what stdout lacks of the last write committed before it."""
        journal = self.store.get("stdout_journal")
        if not isinstance(journal, dict):
            return
        text = self._text(journal)
        if text is None:
            return
        missing = _missing(journal, text, self.out)
        if missing is None:
            self.note("watch: stdout is not the file the last run wrote to (or not a file): "
                      "its last write before the restart is written again, whole")
            missing = text
        if missing:
            with self._lock:
                self.out.write(missing)
                self.out.flush()
            if missing != text:
                self.note(f"watch: completed the last write before the restart "
                          f"({len(missing)} of its {len(text)} characters were missing)")
            else:
                self.note("watch: the last write before the restart had not reached stdout: "
                          "written now")


class RecordingSink(JournalSink):
    """Follow mode: each write's final lines (the highest block the last final one) and the
    blocks above it whose first lines stdout has."""

    def __init__(self, metrics: Metrics, out: TextIO | None = None, err: TextIO | None = None,
                 hook: Hook | None = None, *, store: Store):
        super().__init__(metrics, out, err, hook, store=store)
        written = store.get("unfinal_written")
        # blocks above the last final one whose first (not final) lines reached stdout
        self.unfinal: dict[str, str] = dict(written) if isinstance(written, dict) else {}
        self._finals: list[FinalBlock] = []

    def evaluated(self, lines: list[Line]) -> None:
        self._stage(final=[line for line in lines if line.final],
                    first=[line for line in lines if not line.final])
        super().evaluated(lines)

    def finalized(self, lines: list[Line]) -> None:
        self._stage(final=lines, first=[])
        super().finalized(lines)

    def event(self, event: JsonObject) -> None:
        orphaned = set(event.get("orphaned", ()))
        self.unfinal = {n: h for n, h in self.unfinal.items() if h not in orphaned}
        super().event(event)

    def _stage(self, final: list[Line], first: list[Line]) -> None:
        by_block: dict[int, tuple[str, list[Line]]] = {}
        for line in final:
            if line.hash is not None and line.block is not None:
                by_block.setdefault(line.block, (line.hash, []))[1].append(line)
        self._finals = [(block, block_hash, [line.to_json() for line in group])
                        for block, (block_hash, group) in by_block.items()]
        for block in by_block:
            self.unfinal.pop(str(block), None)
        for line in first:
            if line.hash is not None:
                self.unfinal[str(line.block)] = line.hash

    def _progress(self) -> tuple[list[FinalBlock], JsonObject]:
        finals, self._finals = self._finals, []
        return finals, {"unfinal_written": self.unfinal}

    def written_above_final(self) -> dict[int, str]:
        """Blocks above the last final one whose first lines stdout has, and their hashes."""
        return {int(n): h for n, h in self.unfinal.items() if n.isdigit() and isinstance(h, str)}


WRITE_CHARS = 1 << 16  # a range audit's write: whole blocks, this much text or one block


class AuditSink(JournalSink):
    """A range audit's lines in block order, in writes of whole blocks (up to
    :data:`WRITE_CHARS` of text, or one block), each committed with its blocks, the last one as
    ``emitted_through`` (a resumed audit writes from the block after it). The journal names
    the write's blocks rather than keeping its text: the store holds their lines, and
    ``text_of(lo, hi)`` writes them again exactly (the coordinator's)."""

    def __init__(self, metrics: Metrics, out: TextIO | None = None, err: TextIO | None = None,
                 hook: Hook | None = None, *, store: Store,
                 text_of: Callable[[int, int], str]):
        super().__init__(metrics, out, err, hook, store=store)
        self.text_of = text_of
        self._block = 0
        self._first: int | None = None  # the first block of the write being gathered
        self._gathered: list[str] = []
        self._size = 0

    def block(self, number: int, lines: list[Line]) -> None:
        """Block ``number``'s lines (UNVERIFIABLE lines of a block not merged, ``hash`` null,
        or the block's verdicts): gathered into the next write."""
        self._block = number
        if self._first is None:
            self._first = number
        if lines and lines[0].hash is None:
            self.unverifiable(lines)
        else:
            self.evaluated(lines)

    def _put(self, text: str) -> None:
        with self._lock:
            self._gathered.append(text)
            self._size += len(text)
            if self._size >= WRITE_CHARS:
                self._flush_gathered()

    def _flush_gathered(self) -> None:
        if self._gathered:
            self._journaled("".join(self._gathered))
        self._gathered, self._size, self._first = [], 0, None

    def close(self) -> None:
        """The last write, then the journal marked done (as after any clean end); nothing after
        a write that failed (the next run checks that one)."""
        if self._in_flight:
            return
        with self._lock:
            self._flush_gathered()
        super().close()

    def _what(self, text: str) -> JsonObject:
        return {"blocks": [self._first, self._block]}

    def _text(self, journal: JsonObject) -> str | None:
        blocks = journal.get("blocks")
        if not isinstance(blocks, list) or len(blocks) != 2:
            return None
        return self.text_of(blocks[0], blocks[1])

    def _progress(self) -> tuple[list[FinalBlock], JsonObject]:
        return [], {"emitted_through": self._block}


def _position(out: TextIO) -> dict[str, int]:
    """Where stdout stands, when it is a regular file: its device, inode and size."""
    try:
        info = os.fstat(out.fileno())
    except (AttributeError, OSError, ValueError):
        return {}
    if not stat.S_ISREG(info.st_mode):
        return {}
    return {"dev": info.st_dev, "ino": info.st_ino, "offset": info.st_size}


def _missing(journal: JsonObject, text: str, out: TextIO) -> str | None:
    """The tail of ``text`` that stdout lacks ("" when it has it whole); None when stdout is
    not the regular file the journal was written against."""
    here = _position(out)
    if not here or (here["dev"], here["ino"]) != (journal.get("dev"), journal.get("ino")):
        return None
    offset, data = journal.get("offset"), text.encode()
    if not isinstance(offset, int) or offset < 0 or here["offset"] < offset:
        return None
    tail = _read_at(out, offset, max(len(data) + 1, MAX_LOOK))
    if tail is None:
        return None
    if tail[:len(data)] == data:
        return ""
    if len(tail) < len(data) and data.startswith(tail):
        return data[len(tail):].decode()
    if data in tail:
        return ""  # another writer (stderr into the same file) moved it: it is there
    return text


MAX_LOOK = 1 << 24  # bytes of stdout read back after the last write's offset, at most


def _read_at(out: TextIO, offset: int, size: int) -> bytes | None:
    """Up to ``size`` bytes of the file stdout writes to, from ``offset``, read through a
    descriptor of its own (stdout is often write-only, ``>>``; its position stays); None when
    it cannot be read back."""
    try:
        handle = os.open(f"/proc/self/fd/{out.fileno()}", os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.pread(handle, size, offset)
    except OSError:
        return None
    finally:
        os.close(handle)
