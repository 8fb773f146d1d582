"""``--from N --to M``: audit a range of history (docs/watch.md §Range audit).

Block M is anchored as ``step`` anchors one (the options pin the *top* of the range); every
block down to N is tied to it by re-hashed parentHash links
(:func:`recompute.core.caching.ancestors`,
the checkpoint walk), so one pin covers the whole range. The blocks are evaluated in block order,
each after the one below it (so that its reads are carried while the storageRoot is the same),
while ``workers`` threads fetch the next blocks' account proofs ahead
(:mod:`recompute.watch.lookahead`); lines go to stdout in block order. A block the node fails on
(:data:`~recompute.watch.evaluate.NODE_TROUBLE`) is tried again with backoff, then given
UNVERIFIABLE lines. A line is final when the block was ``confirmations`` deep under the head
the node reported when the audit started.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass, field
from typing import Protocol

from recompute.core.anchor import AnchoredBlock
from recompute.core.caching import ancestors
from recompute.core.errors import Unverifiable
from recompute.core.hops import reach
from recompute.core.verdict import EXIT_BAD, EXIT_GOOD, EXIT_UNVERIFIABLE, Verdict
from recompute.watch.evaluate import NODE_TROUBLE, BlockEvaluator, Line, unverifiable_lines
from recompute.watch.lookahead import in_order
from recompute.watch.sink import Sink

BAR = 28


class CheckHealth(Protocol):
    """What the summary reads of a check: a :class:`~recompute.watch.config.Check`, or the
    store's :class:`~recompute.watch.store_records.CheckMeta` of one."""

    @property
    def name(self) -> str: ...

    @property
    def healthy(self) -> Verdict: ...


@dataclass
class Tally:
    healthy: Verdict
    counts: dict[Verdict, int] = field(default_factory=lambda: dict.fromkeys(Verdict, 0))
    first_bad: int | None = None
    first_unhealthy: int | None = None
    reasons: dict[str, int] = field(default_factory=dict)  # of the UNVERIFIABLE lines


class Summary:
    """Per check: GOOD / BAD / UNVERIFIABLE counts, the first BAD and first unhealthy block."""

    def __init__(self, checks: Iterable[CheckHealth]):
        self.tallies = {c.name: Tally(c.healthy) for c in checks}
        self.blocks = 0

    def add(self, lines: list[Line]) -> None:
        self.blocks += 1
        for line in lines:
            tally = self.tallies[line.check]
            tally.counts[line.verdict] += 1
            if line.verdict is Verdict.UNVERIFIABLE:
                tally.reasons[line.reason] = tally.reasons.get(line.reason, 0) + 1
            if line.verdict is Verdict.BAD and tally.first_bad is None:
                tally.first_bad = line.block
            if line.healthy is False and tally.first_unhealthy is None:
                tally.first_unhealthy = line.block

    def exit_code(self) -> int:
        """0 every check healthy at every block, 1 any unhealthy verified verdict, else 2 if
        any UNVERIFIABLE."""
        if any(t.first_unhealthy is not None for t in self.tallies.values()):
            return EXIT_BAD
        if any(t.counts[Verdict.UNVERIFIABLE] for t in self.tallies.values()):
            return EXIT_UNVERIFIABLE
        return EXIT_GOOD

    def table(self) -> list[str]:
        width = max([len("check"), *(len(n) for n in self.tallies)])
        head = (f"{'check':<{width}}  healthy  {'GOOD':>6}  {'BAD':>6}  {'UNVERIFIABLE':>12}  "
                f"{'first BAD':>9}  {'first unhealthy':>15}")
        rows = [head, "-" * len(head)]
        for name, t in self.tallies.items():
            rows.append(
                f"{name:<{width}}  {t.healthy.value.removeprefix('VERIFIED-'):<7}  "
                f"{t.counts[Verdict.GOOD]:>6}  {t.counts[Verdict.BAD]:>6}  "
                f"{t.counts[Verdict.UNVERIFIABLE]:>12}  {_or_dash(t.first_bad):>9}  "
                f"{_or_dash(t.first_unhealthy):>15}")
        for name, t in self.tallies.items():  # why: no-contract, pruned state, a liar…
            if t.reasons:
                shown = ", ".join(f"{reason} ×{n}" for reason, n in sorted(t.reasons.items()))
                rows.append(f"{name}: UNVERIFIABLE because {shown}")
        return rows


def reached_by(blocks: list[AnchoredBlock]) -> str:
    """How a sparse audit's blocks were tied to the pinned one, counted by way."""
    ways: dict[str, int] = {}
    for block in blocks:
        path = block.anchor.detail.get("history_path")
        way = "the pinned block itself" if path is None else (
            "history contract hops" if path["via"] == "history-contract" else "header walk")
        ways[way] = ways.get(way, 0) + 1
    return ", ".join(f"{n} by {way}" for way, n in ways.items())


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


class Auditor:
    def __init__(self, evaluator: BlockEvaluator, sink: Sink, *, workers: int = 4,
                 confirmations: int = 2, retries: int = 3, retry_delay: float = 0.5,
                 stop: threading.Event | None = None):
        self.evaluator = evaluator
        self.sink = sink
        self.workers = max(1, workers)
        self.confirmations = confirmations
        self.retries = retries
        self.retry_delay = retry_delay
        self.stop = stop or threading.Event()
        self.interrupted_at: int | None = None
        self._head: int | None = None  # the chain's head when the audit started (run)

    def run(self, top: AnchoredBlock, first: int, head: int | None,
            sparse: list[int] | None = None, history: str = "auto") -> Summary:
        """Every block from ``first`` up to ``top``; or, ``sparse``, those blocks only, each
        reached from ``top`` as ``history`` says (:func:`recompute.core.hops.reach`)."""
        self.sink.note(f"audit: block {top.number} 0x{top.hash.hex()} anchored by "
                       f"{top.anchor.method}: trusts {top.anchor.trusts}")
        if top.anchor.method == "single-rpc":
            self.sink.note("warning: single-rpc: the node itself said which block this is; pin "
                           "it with --block-hash, --checkpoint or a --quorum of endpoints")
        if sparse is None:
            blocks = list(reversed(ancestors(top, first)))
            self.sink.note(f"audit: blocks {first}..{top.number} tied to it by parentHash "
                           f"links; {len(self.evaluator.checks)} check(s), {self.workers} "
                           "thread(s)")
        else:
            blocks = [reach(top, number, history) for number in sparse]
            self.sink.note(f"audit: {len(blocks)} block(s) from {sparse[0]} to {sparse[-1]} "
                           f"proven from it ({reached_by(blocks)}); "
                           f"{len(self.evaluator.checks)} check(s), {self.workers} thread(s)")
        summary = Summary(self.evaluator.checks)
        started = shown = time.monotonic()
        self._head = head
        # closed when the loop ends, however it ends: the collector it pauses runs again
        with closing(in_order(blocks, self._evaluate, self.evaluator.prepare,
                              self.workers, self.stop.is_set)) as each:
            for block, lines in each:
                if self._final(block):  # made final by the evaluation already (no copy then)
                    lines = [line.as_final() for line in lines]
                self.sink.evaluated(lines)
                self.sink.metrics.inc("blocks_total")
                self.sink.metrics.set("last_verified_block", block.number)
                self.sink.metrics.set("last_verified_block_timestamp_seconds", block.timestamp)
                summary.add(lines)
                now = time.monotonic()
                if now - shown >= 0.2 or summary.blocks == len(blocks):
                    shown = now
                    self.sink.progress(_bar(summary.blocks, len(blocks), now - started))
        if self.stop.is_set() and summary.blocks < len(blocks):
            self.interrupted_at = blocks[summary.blocks].number
        self.sink.progress(_bar(summary.blocks, len(blocks), time.monotonic() - started) + "\n")
        return summary

    def _final(self, block: AnchoredBlock) -> bool:
        """Is the block deep enough below the head that its lines are final?"""
        return self._head is not None and self._head - block.number >= self.confirmations

    def _evaluate(self, block: AnchoredBlock) -> list[Line]:
        for attempt in range(self.retries + 1):
            try:
                return self.evaluator.evaluate(block, self._final(block))
            except Unverifiable as exc:
                if exc.reason not in NODE_TROUBLE:  # about this block: its lines say so, and
                    return unverifiable_lines(       # the audit goes on to the next block
                        self.evaluator.checks, block.number, "0x" + block.hash.hex(), exc,
                        self.sink.word(exc))
                self.sink.metrics.inc("rpc_errors_total", reason=exc.reason)
                if attempt == self.retries or self.stop.is_set():
                    return unverifiable_lines(self.evaluator.checks, block.number,
                                              "0x" + block.hash.hex(), exc,
                                              self.sink.word(exc))
                time.sleep(self.retry_delay * 2 ** attempt)
        raise AssertionError("unreachable")


def _bar(done: int, total: int, seconds: float) -> str:
    filled = BAR * done // total if total else BAR
    rate = done / seconds if seconds > 0 else 0.0
    return (f"[{'#' * filled}{'.' * (BAR - filled)}] {done}/{total} blocks "
            f"{rate:.1f} blocks/s")
