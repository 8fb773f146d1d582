"""Tie the segments of a range audit into one chain of parent links up to the pinned block M
(docs/watch.md §Audits that outgrow one machine; docs/design.md §Trust flow).

Each segment was anchored by its worker only to what the node *said* its top block is; inside,
every header was re-hashed and linked (:mod:`recompute.watch.segment`). Here, from the pinned
block M down: the top segment's highest hash must be M's hash, and each next segment's highest
hash must be the lowest ``parentHash`` of the segment above it. A segment whose top does not
match, whose lines do not carry its own hashes, or that came back without hashes (every
endpoint failed, its worker kept dying) is not merged: its blocks get UNVERIFIABLE lines, and
so do the blocks of every segment below it, since no chain of links reaches them from M any
more. A lying node can therefore only make blocks UNVERIFIABLE, never put a verdict about
another chain's block into the audit. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from recompute.watch.segment import SegmentResult

SEGMENT_FAILED = "segment-failed"


@dataclass(frozen=True)
class Tie:
    """A segment's place in the chain: ``linked``, or why not (a reason code and one line)."""

    lo: int
    hi: int
    linked: bool
    reason: str = ""
    detail: str = ""


def consistency_error(result: SegmentResult) -> str | None:
    """Why a segment's result does not hold together, or None."""
    if result.problem is not None:
        return result.problem
    count = result.hi - result.lo + 1
    if len(result.hashes) != count:
        return f"{len(result.hashes)} block hashes for {count} blocks"
    if result.top_hash != result.hashes[-1]:
        return "its top hash is not its last block's hash"
    last = result.lo - 1
    for line in result.lines:
        block = line.get("block")
        if not isinstance(block, int) or not result.lo <= block <= result.hi or block < last:
            return f"a line about block {block!r} out of order or outside {result.lo}..{result.hi}"
        if line.get("hash") != result.hashes[block - result.lo]:
            return f"a line about block {block} names another hash than the block's"
        last = block
    return None


def without_lines(result: SegmentResult) -> SegmentResult:
    """The result as the coordinator keeps it once its lines are in the store: the links, and
    whether the lines held together with them (checked here, before they are dropped)."""
    result.problem = consistency_error(result)
    result.lines = []
    return result


def tie(pinned_number: int, pinned_hash: str, plan: list[tuple[int, int]],
        results: Mapping[int, SegmentResult | None]) -> list[Tie]:
    """Walk the plan's segments from the top (``hi`` = the pinned block) down; ``results`` by
    each segment's ``lo`` (None: it was never evaluated). Returns the ties in plan order."""
    ties = {t.lo: t for t in ties_from_top(
        pinned_number, pinned_hash,
        ((lo, hi, results.get(lo)) for lo, hi in sorted(plan, reverse=True)))}
    return [ties[lo] for lo, _ in plan]


def ties_from_top(pinned_number: int, pinned_hash: str,
                  segments: Iterable[tuple[int, int, SegmentResult | None]]) -> Iterator[Tie]:
    """:func:`tie` one segment at a time: ``(lo, hi, result or None)`` from the top segment
    down, each segment's tie as it comes (a stored audit is tied without holding its
    segments)."""
    expected: str | None = pinned_hash
    above = f"the pinned block {pinned_number}"
    broken: str | None = None
    for lo, hi, result in segments:
        if broken is not None:
            yield Tie(lo, hi, False, "header-mismatch", broken)
            continue
        if result is None or result.failure is not None:
            reason, detail = (result.failure if result is not None and result.failure
                              else (SEGMENT_FAILED, "no worker finished this segment"))
            yield Tie(lo, hi, False, reason, f"blocks {lo}..{hi} were not evaluated: {detail}")
            broken = (f"blocks {lo}..{hi} above were not evaluated, so no chain of parent links "
                      f"ties these blocks to the pinned block {pinned_number}")
            continue
        problem = consistency_error(result)
        if problem is None and result.top_hash != expected:
            problem = (f"block {hi} is {result.top_hash} by {result.endpoint}, but {above} "
                       f"names {expected} as its parent" if hi != pinned_number else
                       f"block {hi} is {result.top_hash} by {result.endpoint}, not the pinned "
                       f"{expected}")
        if problem is not None:
            yield Tie(lo, hi, False, "header-mismatch",
                      f"blocks {lo}..{hi} do not link to the pinned block {pinned_number}: "
                      + problem)
            broken = (f"blocks {lo}..{hi} above do not link, so no chain of parent links ties "
                      f"these blocks to the pinned block {pinned_number}")
            continue
        yield Tie(lo, hi, True)
        expected, above = result.parent_hash, f"block {lo}"


def plan_segments(first: int, last: int, size: int) -> list[tuple[int, int]]:
    """``first..last`` cut into segments of ``size`` blocks (the last one may be shorter)."""
    return [(lo, min(lo + size - 1, last)) for lo in range(first, last + 1, size)]
