"""``watch --blocks LIST`` / ``--every N``: the blocks of a sparse audit, as the user gave them
(docs/watch.md §Sparse audits).

A list of numbers (decimal or 0x-hex, comma-separated, the option repeatable), or every N-th
block of ``--from A --to M``. An entry that is not a number, is given twice or lies above the
pinned block is a usage error naming it, before any evaluation. Each block is then reached from
the pinned one by :func:`recompute.core.hops.reach` (:mod:`recompute.watch.auditor`).
"""

from __future__ import annotations

from collections.abc import Iterable

from recompute.core.errors import UsageError
from recompute.core.hexdata import parse_block

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



def sparse_blocks(texts: tuple[str, ...], step: int | None, first: int | None,
                  last: int | None, processes: int | None, cluster: str | None,
                  store_path: str | None) -> list[int] | None:
    """The blocks of a sparse audit (``--blocks``, or ``--every`` over ``--from/--to``), checked
    before any node is asked; None for any other run."""
    if not texts and step is None:
        return None
    if texts and step is not None:
        raise UsageError("--blocks and --every are two ways to name the blocks: give one")
    if processes is not None or cluster is not None or store_path is not None:
        raise UsageError("--blocks and --every audit in one process: no --processes, "
                         "--cluster or --store")
    if texts:
        if first is not None:
            raise UsageError("--blocks names its blocks: give no --from (--to M pins the top)")
        numbers = parse_blocks(texts)
        if last is not None:
            check_below(numbers, last)
        return numbers
    if first is None or last is None:
        raise UsageError("--every N needs --from A --to M (the blocks A, A+N, … up to M)")
    return every_blocks(first, last, step if step is not None else 1)
