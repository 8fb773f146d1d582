"""Where a watch's results go: JSON lines on stdout, notes on stderr, metrics, the hook.

Every stdout line is one JSON object, written whole and flushed (docs/watch.md §Output):
a check's line (:class:`~recompute.watch.evaluate.Line`) or an event (``{"event": "reorg",
…}``). Lines are written by one thread at a time, in the order the follower or the auditor
hands them over.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TextIO

from recompute.core.errors import Unverifiable, argument_word
from recompute.core.jsontext import json_line, json_string
from recompute.core.outside_text import visible
from recompute.core.verdict import Verdict
from recompute.watch.evaluate import JsonObject, Line
from recompute.watch.hooks import Hook
from recompute.watch.metrics import Metrics, Series, series_key

_CONSTANTS: dict[bool | None, str] = {True: "true", False: "false", None: "null"}


def _scalar(value: object) -> str:
    if isinstance(value, str):
        return json_string(value)
    if value is None or isinstance(value, bool):
        return _CONSTANTS[value]
    return json_line(value)


def line_text(line: Line, texts: dict[object, str]) -> str:
    """``json_line(line.to_json())``, the same text put together field by field. ``texts`` keeps,
    for the lines of one write, the parts most lines share (a block's 400 lines share their
    block, hash and anchor; most, their verdict, reason and flags; each check's name is the
    same at every block), each encoded once."""
    head = texts.get((line.block.__class__, line.block, line.hash))
    if head is None:
        block = str(line.block) if isinstance(line.block, int) else _scalar(line.block)
        head = texts[(line.block.__class__, line.block, line.hash)] = (
            f'{{"block": {block}, "hash": {_scalar(line.hash)}, "check": ')
    check = texts.get(line.check)
    if check is None:
        check = texts[line.check] = _scalar(line.check)
    middle = texts.get((line.verdict, line.reason, line.final, line.healthy))
    if middle is None:
        middle = texts[(line.verdict, line.reason, line.final, line.healthy)] = (
            f', "verdict": {_scalar(line.verdict.value)}, "reason": {_scalar(line.reason)}, '
            f'"final": {_scalar(line.final)}, "healthy": {_scalar(line.healthy)}, "derived": ')
    anchor = ""
    if line.anchor is not None:
        kept = texts.get(id(line.anchor))
        if kept is None:
            kept = texts[id(line.anchor)] = ', "anchor": ' + json_line(line.anchor)
        anchor = kept
    detail = ', "detail": ' + _scalar(line.detail) if line.detail else ""
    return (f'{head}{check}{middle}{json_line(line.derived)}, '
            f'"evidence_digest": {_scalar(line.evidence_digest)}{anchor}{detail}}}')


def lines_text(lines: list[Line]) -> str:
    """One write's text: each line and a newline. The parts cache of :func:`line_text` lives
    as long as ``lines`` (it keys anchors by id: their objects stay alive meanwhile)."""
    texts: dict[object, str] = {}
    return "".join([line_text(line, texts) + "\n" for line in lines])


FINAL_MEMORY = 4096  # blocks whose final-line count is kept, for a reorg that retracts them


class Sink:
    def __init__(self, metrics: Metrics, out: TextIO | None = None, err: TextIO | None = None,
                 hook: Hook | None = None):
        self.metrics = metrics
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.hook = hook
        # how an error's options are named in lines and notes: the library's words
        # (``Clock.max_clock_drift``) unless the command line gives its flags
        self.spell: Callable[[str], str] = argument_word
        self._lock = threading.Lock()
        self._final_lines: dict[str, int] = {}  # block hash -> final lines written (recent)
        self._series: dict[tuple[str, Verdict], tuple[Series, Series, Series]] = {}

    def word(self, error: Unverifiable) -> str:
        """``error``'s detail with its options named by :attr:`spell`."""
        return error.worded(self.spell)

    def _write(self, objects: list[JsonObject]) -> None:
        self._put("".join(json_line(o) + "\n" for o in objects))

    def _write_lines(self, lines: list[Line]) -> None:
        self._put(lines_text(lines))

    def _put(self, text: str) -> None:
        with self._lock:
            self.out.write(text)
            self.out.flush()

    def note(self, text: str) -> None:
        with self._lock:
            self.err.write(visible(text) + "\n")  # notes quote node messages: text only
            self.err.flush()

    def progress(self, text: str) -> None:
        """A progress bar: rewritten in place (``\\r``); the line ends only where ``text``
        ends with one (the last bar)."""
        bar = text.rstrip("\n")
        with self._lock:
            self.err.write("\r" + visible(bar) + text[len(bar):])
            self.err.flush()

    def evaluated(self, lines: list[Line]) -> None:
        """A block's first lines (final or not): counted, written, shown to the hook (metrics
        first, so that a scrape after a line is seen agrees with it)."""
        incs: list[tuple[Series, float]] = []
        sets: list[tuple[Series, float]] = []
        finals: dict[str, int] = {}  # block hash -> final lines among these
        for line in lines:
            counted, final, healthy = self._keys(line)
            incs.append((counted, 1))
            if line.healthy is not None:
                sets.append((healthy, int(line.healthy)))
            if line.final:
                incs.append((final, 1))
                if line.hash is not None:
                    finals[line.hash] = finals.get(line.hash, 0) + 1
        for block_hash, count in finals.items():
            self._count_finals(block_hash, count)
        self.metrics.apply(incs, sets)
        self._write_lines(lines)
        if self.hook is not None:
            for line in lines:
                if line.hash is not None:
                    self.hook.observe(line)

    def _keys(self, line: Line) -> tuple[Series, Series, Series]:
        """The series a line counts in, looked up once per check and verdict (and kept: a
        line is then counted without hashing a series' key)."""
        keys = self._series.get((line.check, line.verdict))
        if keys is None:
            verdict, series = line.verdict.value, self.metrics.series
            keys = self._series[(line.check, line.verdict)] = (
                series(series_key("verdicts_total", check=line.check, verdict=verdict)),
                series(series_key("final_verdicts_total", check=line.check, verdict=verdict)),
                series(series_key("check_healthy", check=line.check)))
        return keys

    def finalized(self, lines: list[Line]) -> None:
        """Lines of a block that is now deep enough: written again with ``final: true``."""
        for line in lines:
            self.metrics.inc("final_verdicts_total", check=line.check, verdict=line.verdict.value)
            self._count_final(line)
        self._write_lines(lines)

    def _count_final(self, line: Line) -> None:
        if line.hash is not None:
            self._count_finals(line.hash, 1)

    def _count_finals(self, block_hash: str, count: int) -> None:
        self._final_lines[block_hash] = self._final_lines.get(block_hash, 0) + count
        while len(self._final_lines) > FINAL_MEMORY:  # oldest first (insertion order)
            del self._final_lines[next(iter(self._final_lines))]

    def unverifiable(self, lines: list[Line]) -> None:
        """Lines about a block the node could not be asked about: never final, no hook."""
        for line in lines:
            self.metrics.inc("verdicts_total", check=line.check, verdict=line.verdict.value)
        self._write_lines(lines)

    def alert(self, line: Line) -> None:
        """The watch is silent past its bound (no block verified, the last one older than
        ``--max-anchor-age``): ``line``, the first UNVERIFIABLE line about the block awaited,
        shown to the hook's :meth:`~recompute.watch.hooks.Hook.alert` (the follower calls this
        once per outage)."""
        self.metrics.inc("stale_alerts_total")
        if self.hook is not None:
            self.hook.alert(line)

    def event(self, event: JsonObject) -> None:
        # a reorg's orphaned blocks, or an L2 game's retracted ones (docs/l2.md §Watch)
        gone = [*event.get("final_orphaned", ()), *event.get("final_retracted", ())]
        retracted = sum(self._final_lines.pop(h, 0) for h in gone)
        if retracted:
            self.metrics.inc("retracted_final_lines_total", retracted)
        self._write([event])
