"""``watch --blocks LIST`` / ``--every N``: verdicts at chosen blocks of a long history, each
proven from one pinned block (docs/watch.md §Sparse audits).

The blocks are parsed here, as the user gave them: a list of numbers (decimal or 0x-hex,
comma-separated, the option repeatable), or every N-th block of ``--from A --to M``. An entry
that is not a number, is given twice or lies above the pinned block is a usage error naming
it. Each block is then reached from the pinned one by :func:`recompute.core.hops.reach`: by
hops through the history storage contract, or the header walk, as ``--history`` says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from recompute.core.errors import UsageError
from recompute.core.hexdata import parse_block
from recompute.watch.audit_page import AuditFacts

MAX_BLOCKS = 100_000  # a sparse audit's blocks: more is a range audit's job (--from/--to)


def parse_blocks(texts: Iterable[str]) -> list[int]:
    """The blocks of ``--blocks`` (each text a comma-separated list), ascending; a usage error
    naming the entry that is not a block number or is given twice."""
    seen: set[int] = set()
    for text in texts:
        for entry in text.split(","):
            entry = entry.strip()
            number = _number(entry)
            if number in seen:
                raise UsageError(f"--blocks: block {entry!r} is given twice")
            seen.add(number)
            if len(seen) > MAX_BLOCKS:
                raise UsageError(f"--blocks: more than {MAX_BLOCKS} blocks: audit a range "
                                 "with --from N --to M")
    if not seen:
        raise UsageError("--blocks: give at least one block number")
    return sorted(seen)


def every_blocks(first: int, last: int, step: int) -> list[int]:
    """Blocks ``first``, ``first + step``, … up to ``last`` (``--every``)."""
    if step < 1:
        raise UsageError(f"--every {step}: give a step of at least 1 block")
    if (last - first) // step + 1 > MAX_BLOCKS:
        raise UsageError(f"--every {step}: more than {MAX_BLOCKS} blocks from {first} to "
                         f"{last}: give a larger step")
    return list(range(first, last + 1, step))


def check_below(numbers: list[int], top: int) -> None:
    """Every block at or below the pinned block ``top``, else a usage error naming the first
    one above it."""
    above = [n for n in numbers if n > top]
    if above:
        raise UsageError(f"--blocks: block {above[0]} is above the pinned block {top}: "
                         "every block is proven from the pinned one, so at or below it")


def _number(entry: str) -> int:
    try:
        number = parse_block(entry) if entry else None
    except UsageError:
        number = None
    if not isinstance(number, int):
        shown = entry if len(entry) <= 40 else entry[:40] + "…"
        raise UsageError(f"--blocks: {shown!r} is not a block number (decimal or 0x-hex)")
    return number


def sparse_facts(facts: AuditFacts, blocks: list[int], top: int, history: str) -> AuditFacts:
    """The report's facts of a sparse audit: its blocks as points on the timeline, and how
    each was tied to the pinned block."""
    said = f"{len(blocks)} block(s) from {blocks[0]} to {blocks[-1]}"
    return replace(
        facts, title=f"Audit of {said}, proven from block {top}", first=blocks[0],
        last=max(blocks[-1], blocks[0]), points=list(blocks),
        notes=[f"{said}, each proven from the pinned block {top} (--history {history}: hops "
               "through the history storage contract, or the header walk; each line's anchor "
               "names its path)"],
        retraction_note="Each block was proven from the pinned block before it was "
                        "evaluated: every line stands.")
