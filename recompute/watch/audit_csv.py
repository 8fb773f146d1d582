"""The CSV of a range audit or a stored one (docs/report.md §CSV): one row per line, that is per
block and check, in block order, with the columns of :data:`COLUMNS`.

The cells are the line's own values; a text cell that a spreadsheet would take for a formula
(starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is written with a leading
``'`` so that opening the file never runs what a store or a node put there.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import TextIO

from recompute.watch.evaluate import Line

COLUMNS = ("block", "block_hash", "check", "verdict", "reason", "healthy", "final",
           "evidence_digest", "anchor_method", "detail", "derived")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _text(value: object) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA) else text


def _flag(value: bool | None) -> str:
    return "" if value is None else "true" if value else "false"


def row(line: Line) -> list[str]:
    anchor = line.anchor.get("method") if isinstance(line.anchor, dict) else None
    return [str(line.block), _text(line.hash), _text(line.check), line.verdict.value,
            _text(line.reason), _flag(line.healthy), _flag(line.final),
            _text(line.evidence_digest), _text(anchor), _text(line.detail),
            _text(json.dumps(line.derived, sort_keys=True, separators=(",", ":")))]


class AuditCsv:
    """Rows written as the lines come (an audit's lines need not fit in memory)."""

    def __init__(self, out: TextIO):
        self.writer = csv.writer(out, lineterminator="\n")
        self.writer.writerow(COLUMNS)

    def add(self, lines: Iterable[Line]) -> None:
        self.writer.writerows(row(line) for line in lines)
