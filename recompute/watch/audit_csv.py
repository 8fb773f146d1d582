"""The CSV of a range audit or a stored one (docs/report.md §CSV): one row per line, that is per
block and check, in block order, with the columns of :data:`COLUMNS`.

The cells are the line's own values, and what a store or a node put there is only ever text
(docs/report.md §CSV):

- every non-printable character (a carriage return, a line feed, a tab, an escape, a bidi
  override…) is written escaped (:func:`recompute.core.outside_text.visible`), so no cell
  holds a record break a spreadsheet could split on;
- a cell that a spreadsheet would take for a formula, after any leading spaces and in any of
  its compatibility forms (``=``, ``+``, ``-``, ``@``, and the full-width ``＝``, ``＋``,
  ``－``, ``＠``, the small ``﹦``, ``﹢``, ``﹣``…: every character whose NFKC form is one of the
  four), is written with a leading ``'``;
- a cell holding ``,``, ``"``, a carriage return or a line feed is quoted (RFC 4180), whatever
  made it so.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import Protocol

from recompute.core.jsontext import compact_json
from recompute.core.outside_text import visible
from recompute.watch.evaluate import Line

COLUMNS = ("block", "block_hash", "check", "verdict", "reason", "healthy", "final",
           "evidence_digest", "anchor_method", "detail", "derived")
_FORMULA = frozenset("=+-@\t\r")
_QUOTED = frozenset(',"\r\n')


def cell(value: object) -> str:
    """A text cell: visible, and never the start of a formula."""
    text = visible("" if value is None else value)
    first = text.lstrip(" ")[:1]
    if first and (first in _FORMULA or unicodedata.normalize("NFKC", first)[:1] in _FORMULA):
        return "'" + text
    return text


def record(cells: Sequence[str]) -> str:
    """One CSV record, ``\\n``-terminated: a cell with ``,``, ``"``, CR or LF quoted."""
    return ",".join('"' + c.replace('"', '""') + '"' if not _QUOTED.isdisjoint(c) else c
                    for c in cells) + "\n"


def _flag(value: bool | None) -> str:
    return "" if value is None else "true" if value else "false"


def row(line: Line) -> list[str]:
    anchor = line.anchor.get("method") if isinstance(line.anchor, dict) else None
    return [str(line.block), cell(line.hash), cell(line.check), line.verdict.value,
            cell(line.reason), _flag(line.healthy), _flag(line.final),
            cell(line.evidence_digest), cell(anchor), cell(line.detail),
            cell(compact_json(line.derived))]


class Out(Protocol):
    """Where the rows go: a text file, or a file written whole."""

    def write(self, text: str, /) -> object: ...


class AuditCsv:
    """Rows written as the lines come (an audit's lines need not fit in memory)."""

    def __init__(self, out: Out):
        self.out = out
        out.write(record(COLUMNS))

    def add(self, lines: Iterable[Line]) -> None:
        self.out.write("".join(record(row(line)) for line in lines))
