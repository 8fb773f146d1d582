"""Follow mode writing to the evidence store (docs/watch.md §The evidence store, §Restarts):
every final line, and the block as the last final one, so a restarted bot continues right after
it, writing no line twice.

Each write to stdout is first committed to the store (one transaction: the final lines it
holds, the last final block, the blocks whose first lines it holds, and the write's own text
with where stdout stood before it), then written and flushed. A kill at any point leaves the
store either without the write (stdout has none of it) or with it (stdout has none, part or
all of it); a restart (:meth:`RecordingSink.recover`) compares that last write with the end of
stdout when stdout is a regular file and writes exactly the part it lacks. When stdout is a
pipe or a terminal nobody can read it back: the last write is then written again, whole, and
a note on stderr says so.
"""

from __future__ import annotations

import os
import stat
from typing import TextIO

from recompute.watch.evaluate import Line
from recompute.watch.sink import Sink
from recompute.watch.store import Store


class RecordingSink(Sink):
    """A :class:`~recompute.watch.sink.Sink` that commits each write to the store first."""

    def __init__(self, *args, store: Store, **kwargs):
        super().__init__(*args, **kwargs)
        self.store = store
        written = store.get("unfinal_written")
        # blocks above the last final one whose first (not final) lines reached stdout
        self.unfinal: dict[str, str] = dict(written) if isinstance(written, dict) else {}
        self._finals: list[tuple[int, str, list[dict]]] = []
        self._in_flight = False  # a write committed to the store, not yet flushed to stdout

    def evaluated(self, lines: list[Line]) -> None:
        self._stage(final=[line for line in lines if line.final],
                    first=[line for line in lines if not line.final])
        super().evaluated(lines)

    def finalized(self, lines: list[Line]) -> None:
        self._stage(final=lines, first=[])
        super().finalized(lines)

    def event(self, event: dict) -> None:
        orphaned = set(event.get("orphaned", ()))
        self.unfinal = {n: h for n, h in self.unfinal.items() if h not in orphaned}
        super().event(event)

    def _stage(self, final: list[Line], first: list[Line]) -> None:
        by_block: dict[int, list[Line]] = {}
        for line in final:
            if line.hash is not None:
                by_block.setdefault(line.block, []).append(line)
        self._finals = [(block, group[0].hash, [line.to_json() for line in group])
                        for block, group in by_block.items()]
        for block in by_block:
            self.unfinal.pop(str(block), None)
        for line in first:
            if line.hash is not None:
                self.unfinal[str(line.block)] = line.hash

    def _put(self, text: str) -> None:
        with self._lock:
            journal = {"text": text, **_position(self.out)}
            self.store.record_write(journal, self._finals, self.unfinal)
            self._finals = []
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
        if not isinstance(journal, dict) or not isinstance(journal.get("text"), str):
            return
        text = journal["text"]
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

    def written_above_final(self) -> dict[int, str]:
        """Blocks above the last final one whose first lines stdout has, and their hashes."""
        return {int(n): h for n, h in self.unfinal.items() if n.isdigit() and isinstance(h, str)}


def _position(out: TextIO) -> dict:
    """Where stdout stands, when it is a regular file: its device, inode and size."""
    try:
        info = os.fstat(out.fileno())
    except (AttributeError, OSError, ValueError):
        return {}
    if not stat.S_ISREG(info.st_mode):
        return {}
    return {"dev": info.st_dev, "ino": info.st_ino, "offset": info.st_size}


def _missing(journal: dict, text: str, out: TextIO) -> str | None:
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
