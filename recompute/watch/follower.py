"""Follow the head: every check at every new block, through reorgs and node outages
(docs/watch.md §Following the head).

- The first block is anchored as ``step`` anchors one (``--block-hash``, ``--checkpoint``, a
  quorum, else single-rpc); every later block by its parentHash link to the last verified block
  (:func:`recompute.core.anchor.by_parent_link`).
- A new head whose parent is not the last verified block is a reorg: the fork point is the
  highest verified block the node still has at its number; the blocks above it are orphaned
  (one ``{"event": "reorg", …}`` line) and the new canonical blocks are evaluated from there.
- A block's lines are written as soon as it is evaluated with ``final: false``, and written
  again with ``final: true`` once ``confirmations`` blocks are verified on top of it. An
  orphaned block's lines are dropped before they are final, so as long as a reorg is not
  deeper than ``confirmations``, no final line is about an orphaned block (a deeper one is
  named in the reorg event's ``final_orphaned``). With ``confirmations`` 0 every line is final
  at once.
- A head whose timestamp is later than the clock plus ``--max-clock-drift`` is not written
  about: the watch waits for the clock to reach it, and one further ahead than that plus
  :data:`~recompute.core.clock.FUTURE_HEAD_PATIENCE` is ``UNVERIFIABLE (future-head)`` (as node
  trouble: lines with ``hash`` null, never final, then retries).
- A node in trouble (:data:`~recompute.watch.evaluate.NODE_TROUBLE`, or any UNVERIFIABLE while
  reading the head) gives UNVERIFIABLE lines about the block awaited (``hash`` null, never
  final), then retries with capped exponential backoff; the last verified block is kept, so
  the watch resumes right after it: no gap, and no block's final lines twice.
- Silence is an alert: while no newer block is verified and the last verified one is older
  than ``--max-anchor-age`` by the clock (a node that stopped, or answers with a head that
  does not move, or cannot be reached), each poll gives UNVERIFIABLE lines about the block
  awaited (``stale-anchor`` when the node answers, its own reason otherwise), ``up`` is 0, and
  the hook's :meth:`~recompute.watch.hooks.Hook.alert` is told once per outage (until a block
  is verified again), whatever anchors the watch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from recompute.core.anchor import AnchoredBlock, by_parent_link
from recompute.core.caching import keep_window
from recompute.core.clock import FUTURE_HEAD_PATIENCE, SYSTEM, Clock
from recompute.core.errors import Unverifiable, literal
from recompute.core.header import Header
from recompute.core.source import ProofSource
from recompute.core.verdict import Verdict
from recompute.watch.collector import paused
from recompute.watch.evaluate import (
    NODE_TROUBLE,
    BlockEvaluator,
    JsonObject,
    Line,
    unverifiable_lines,
)
from recompute.watch.metrics import Metrics
from recompute.watch.signed_heads import SignedHeads
from recompute.watch.sink import Sink

WINDOW = 1024  # verified blocks kept for finding a fork point


class ReorgTooDeep(Unverifiable):
    def __init__(self, lowest: int):
        super().__init__(
            "header-mismatch",
            f"the chain was reorganised below block {lowest}, deeper than the {WINDOW} blocks "
            "a watch keeps: restart the watch with a new anchor")


class Follower:
    def __init__(self, evaluator: BlockEvaluator, sink: Sink,
                 anchor_first: Callable[[], AnchoredBlock], first_number: int | None = None, *,
                 confirmations: int = 2, poll: float = 1.0, max_backoff: float = 30.0,
                 max_blocks: int | None = None, stop: threading.Event | None = None,
                 heads: SignedHeads | None = None,
                 confirm: Callable[[AnchoredBlock], AnchoredBlock | None] | None = None,
                 start_timeout: float = 60.0, clock: Clock = SYSTEM):
        self.clock = clock  # heads from the future wait; --strict-timestamps
        self.heads = heads  # --beacon: only signed heads are evaluated, finality by the LC
        self.confirm = confirm  # a quorum's confirmation of each new head (several --rpc)
        self.start_timeout = start_timeout  # node trouble before the first block: then exit 2
        self.evaluator = evaluator
        self.sink = sink
        self.anchor_first = anchor_first
        self.first_number = first_number
        self.confirmations = confirmations
        self.poll = poll
        self.max_backoff = max_backoff
        self.max_blocks = max_blocks
        self.stop = stop or threading.Event()
        self.tip: AnchoredBlock | None = None
        self.chain: dict[int, AnchoredBlock] = {}  # verified canonical blocks by number
        self.pending: dict[int, list[Line]] = {}  # lines written but not yet final
        # a restarted bot (--store): blocks above the last final one whose first lines an
        # earlier run wrote, by number: their hash (docs/watch.md §Restarts)
        self.written: dict[int, str] = {}
        self.verified = 0
        self.failures = 0
        self.head_seen = -1  # the highest `latest` the node gave: below it, no need to ask
        self.alerted = False  # the hook was told of this outage (silence past the bound)

    @property
    def metrics(self) -> Metrics:
        return self.sink.metrics

    # ---- the loop ------------------------------------------------------------------------

    def run(self) -> None:
        started = time.monotonic()
        while not self.stop.is_set():
            try:
                moved = self._advance()
                if not moved:
                    self._check_overdue()
            except ReorgTooDeep:
                raise
            except Unverifiable as exc:
                self.metrics.set("up", 0)
                waits = exc.reason in NODE_TROUBLE or exc.reason == "future-head"
                if self.tip is None and (not waits or
                                         time.monotonic() - started > self.start_timeout):
                    raise  # the first block cannot be anchored (in time): exit 2
                if exc.reason == "block-unknown" and self.tip is not None:
                    self.stop.wait(self.poll)  # a block vanished under us: look again
                    continue
                self._trouble(exc)
                continue
            self.metrics.set("up", 1)
            if self.failures:
                where = (f"after block {self.tip.number}" if self.tip is not None else
                         "with the first block")  # the first may wait for the clock
                self.sink.note(f"the node answers again after {self.failures} failed "
                               f"attempt(s); resuming {where}")
                self.failures = 0
            self._finalize()
            if self.max_blocks is not None and self.verified >= self.max_blocks:
                return
            if not moved:
                self.stop.wait(self.poll)

    def _advance(self) -> bool:
        """Verify the next block, or handle a reorg; False when there is nothing new."""
        if self.tip is None:
            return self._first()
        source = self.tip.source
        if self.heads is not None:
            self.heads.refresh(source, self.tip)  # the light client follows the chain too
        if self.head_seen > self.tip.number + 1 and self._catch_up():
            return True
        raw = source.block_by_number("latest")
        if raw is None:
            raise Unverifiable("rpc-malformed", f"{source.label} has no latest block")
        latest = Header.from_rpc(raw)
        self.head_seen = latest.number
        self.metrics.set("head_block", latest.number)
        self.metrics.set("lag_blocks", max(latest.number - self.tip.number, 0))
        if latest.hash == self.tip.hash:
            return False
        if latest.number == self.tip.number + 1 and latest.parent_hash == self.tip.hash:
            return self._child(raw, latest)  # `latest` is the tip's child: no second call
        if latest.number <= self.tip.number:
            # a `latest` at or below our tip (a stale answer, a sibling of the tip): a reorg
            # only if the node no longer has our tip at its number
            raw = source.block_by_number(self.tip.number)
            if raw is None or Header.from_rpc(raw).hash == self.tip.hash:
                return False
            return self._reorg_unless_signed(latest)
        raw = source.block_by_number(self.tip.number + 1)
        if raw is None:
            return False
        header = Header.from_rpc(raw)
        if header.parent_hash == self.tip.hash:
            return self._child(raw, header)
        return self._reorg_unless_signed(latest)

    def _overdue(self) -> bool:
        """Is the last verified block older than ``--max-anchor-age`` by the clock?"""
        return self.tip is not None and \
            self.clock.age(self.tip.timestamp) > self.clock.max_anchor_age

    def _check_overdue(self) -> None:
        """Nothing new to verify: ``stale-anchor`` when the awaited block is overdue (the
        last verified one is older than ``--max-anchor-age``), so that a node whose head
        stops moving is not silence."""
        if self.tip is None or not self._overdue():
            return
        self.clock.check_fresh(
            self.tip.timestamp, self.clock.max_anchor_age,
            literal(f"the last verified block {self.tip.number} (no newer block followed it)"),
            "max_anchor_age")

    def _catch_up(self) -> bool:
        """Below a head already seen, the next block is known to exist: asked with the account
        proofs its evaluation needs (one request, where the source can batch). False when it
        does not link to the tip (then `latest` and the reorg logic decide) or waits."""
        assert self.tip is not None
        raw = _next_block(self.tip.source, self.tip.number + 1, self.evaluator.addresses())
        if raw is None:
            return False
        header = Header.from_rpc(raw)
        return header.parent_hash == self.tip.hash and self._child(raw, header)

    def _child(self, raw: JsonObject, header: Header) -> bool:
        """The tip's child the node serves: verified, unless it waits (from the future, not
        yet signed by the sync committee, not yet confirmed by the quorum)."""
        assert self.tip is not None
        if self._ahead(header):
            return False  # later than the clock allows: no line about it (yet)
        if self.heads is not None and not self.heads.admits(self.tip.source, self.tip, header):
            return False  # not (yet) signed by the sync committee: no line about it
        child: AnchoredBlock | None = by_parent_link(self.tip, raw, self.clock)
        if self.confirm is not None and child is not None:
            child = self.confirm(child)
        if child is None:  # not (yet) confirmed by the quorum: no line about it
            return False
        self._verify(child)
        return True

    def _first(self) -> bool:
        first = self.anchor_first()
        if self._ahead(first):
            return False  # later than the clock allows: wait for the clock
        self._verify(first)
        return True

    def _ahead(self, header: Header | AnchoredBlock) -> bool:
        """Is the head's timestamp later than the clock plus --max-clock-drift? Then it waits
        (True); ``future-head`` when it is ahead by more than the patience besides."""
        self.clock.check_not_future(header.timestamp, f"block {header.number}",
                                    FUTURE_HEAD_PATIENCE)
        return self.clock.is_future(header.timestamp)

    def _reorg_unless_signed(self, latest: Header) -> bool:
        assert self.tip is not None
        if self.heads is not None and self.heads.holds(self.tip):
            return False  # the node's other branch is not signed: the tip stands
        return self._reorg(latest)

    # ---- one block -----------------------------------------------------------------------

    def _verify(self, block: AnchoredBlock) -> None:
        # the collector paused while the block is evaluated and its lines handled, as a
        # range audit pauses it (recompute.watch.collector)
        with paused():
            self._verify_paused(block)

    def _verify_paused(self, block: AnchoredBlock) -> None:
        started = time.monotonic()
        lines = self.evaluator.evaluate(block)
        if self.tip is None:
            self._announce(block)
        self.chain[block.number] = block
        for number in [n for n in self.chain if n < block.number - WINDOW]:
            del self.chain[number]
        keep_window(block.source)  # the memos hold a window of blocks, not hours of them
        self.tip = block
        self.verified += 1
        self.alerted = False  # a block verified: any outage is over
        if self.confirmations == 0 and self.heads is None:
            lines = [line.as_final() for line in lines]
        else:
            self.pending[block.number] = lines
        again = self._written_before(block)
        self.metrics.inc("blocks_total")
        self.metrics.set("last_verified_block", block.number)
        self.metrics.set("last_verified_block_timestamp_seconds", block.timestamp)
        self.metrics.observe("evaluation_seconds", time.monotonic() - started)
        self.metrics.set("last_success_timestamp_seconds", time.time())
        head = self.metrics.get("head_block")
        if head is None or head < block.number:
            self.metrics.set("head_block", head := block.number)
        self.metrics.set("lag_blocks", head - block.number)
        if again:  # an earlier run wrote these first lines: they wait for finality, unwritten
            self.sink.note(summary(block, lines, time.monotonic() - started)
                           + "; first lines written before the restart")
            return
        self.sink.evaluated(lines)
        self.sink.note(summary(block, lines, time.monotonic() - started))

    def _written_before(self, block: AnchoredBlock) -> bool:
        """Whether an earlier run wrote this block's first lines; if it wrote them about
        another block at this number (a reorg while the watch was down), a reorg event retracts
        those, and every written block above it."""
        if not self.written:
            return False
        block_hash = "0x" + block.hash.hex()
        if self.written.get(block.number) == block_hash:
            del self.written[block.number]
            return True
        gone = sorted(n for n in self.written if n >= block.number)
        if gone:
            orphaned = [self.written.pop(n) for n in gone]
            self.sink.event({"event": "reorg", "fork_point": block.number - 1,
                             "orphaned": orphaned, "depth": len(orphaned),
                             "new_head": block.number, "new_head_hash": block_hash,
                             "before_restart": True})
            self.metrics.inc("reorgs_total")
            self.metrics.inc("orphaned_blocks_total", len(orphaned))
        return False

    def _announce(self, block: AnchoredBlock) -> None:
        anchor = block.anchor
        self.sink.note(f"watch: first block {block.number} 0x{block.hash.hex()} anchored by "
                       f"{anchor.method}: trusts {anchor.trusts}")
        if anchor.method == "single-rpc":
            self.sink.note("warning: single-rpc: the node itself said which block this is; pin "
                           "it with --block-hash, --checkpoint or a --quorum of endpoints")
        if self.heads is not None:
            self.sink.note("watch: each next block is evaluated once the sync committee has "
                           "signed it (at or below the light client's optimistic header, linked "
                           "by parentHash); lines are final when its finalized header covers them")
            return
        self.sink.note("watch: each next block is anchored by its parentHash link to the last "
                       f"verified one; lines are final {self.confirmations} block(s) deep")
        if self.confirm is None:
            self.sink.note("watch: each new head is the node's word (parent-link proves "
                           "continuity, not canonicity); give several --rpc to have a quorum "
                           "confirm each one")

    def _finalize(self) -> None:
        for number in sorted(self.pending):
            if self.heads is not None:
                if not self.heads.covers(self.chain, number):
                    break
            elif self.tip is not None and self.tip.number - number < self.confirmations:
                break
            self.metrics.set("last_final_block", number)
            self.sink.finalized([line.as_final() for line in self.pending.pop(number)])

    # ---- reorgs and trouble --------------------------------------------------------------

    def _reorg(self, latest: Header) -> bool:
        """Find the fork point and orphan the blocks above it; False when nothing was
        orphaned (the node went back to our branch), so the caller waits before asking
        again rather than loop."""
        assert self.tip is not None
        source = self.tip.source
        lowest = min(self.chain)
        number = min(latest.number, self.tip.number)
        while True:
            if number < lowest:
                raise ReorgTooDeep(lowest)
            raw = source.block_by_number(number)
            if raw is not None and Header.from_rpc(raw).hash == self.chain[number].hash:
                break
            number -= 1
        orphaned = [self.chain[n] for n in range(number + 1, self.tip.number + 1)]
        if not orphaned:
            return False  # the node went back to our branch between two questions
        event = {"event": "reorg", "fork_point": number,
                 "orphaned": ["0x" + b.hash.hex() for b in orphaned],
                 "depth": len(orphaned), "new_head": latest.number,
                 "new_head_hash": "0x" + latest.hash.hex()}
        final_orphaned = ["0x" + b.hash.hex() for b in orphaned if b.number not in self.pending]
        if final_orphaned:
            event["final_orphaned"] = final_orphaned
        for block in orphaned:
            self.pending.pop(block.number, None)
            del self.chain[block.number]
        self.tip = self.chain[number]
        self.sink.event(event)
        self.metrics.inc("reorgs_total")
        self.metrics.inc("orphaned_blocks_total", len(orphaned))
        self.metrics.set("last_verified_block", number)
        self.sink.note(f"reorg: {len(orphaned)} block(s) above {number} orphaned; the new "
                       f"head is {latest.number}; re-evaluating from block {number + 1}")
        return True

    def _trouble(self, error: Unverifiable) -> None:
        self.failures += 1
        self.metrics.inc("rpc_errors_total", reason=error.reason)
        number = self.tip.number + 1 if self.tip is not None else self.first_number
        said = self.sink.word(error)
        lines = unverifiable_lines(self.evaluator.checks, number, None, error, said)
        self.sink.unverifiable(lines)
        if lines and not self.alerted and self._overdue():
            self.alerted = True  # silence past the bound: told once per outage
            self.sink.alert(lines[0])
        delay = min(max(self.poll, 0.05) * 2 ** (self.failures - 1), self.max_backoff)
        self.sink.note(f"node trouble ({error.reason}): {said}; retry "
                       f"{self.failures} in {delay:.1f}s")
        self.stop.wait(delay)


def _next_block(source: ProofSource, number: int, addresses: list[bytes]
                ) -> JsonObject | None:
    """The node's block ``number``, with the account proofs of ``addresses`` at it fetched into
    the source in the same batch where it can (a shared source), else alone."""
    fetch = getattr(source, "block_with_accounts", None)
    if fetch is None:
        return source.block_by_number(number)
    raw: JsonObject | None = fetch(number, addresses)
    return raw


def summary(block: AnchoredBlock, lines: list[Line], seconds: float) -> str:
    counts = {v: sum(1 for line in lines if line.verdict is v) for v in Verdict}
    shown = ", ".join(f"{n} {v.value.removeprefix('VERIFIED-')}" for v, n in counts.items()
                      if n) or "no check active"
    unhealthy = [line.check for line in lines if line.healthy is False]
    unverifiable = [line.check for line in lines if line.verdict is Verdict.UNVERIFIABLE]
    extra = f"; unhealthy: {', '.join(unhealthy)}" if unhealthy else ""
    extra += f"; unverifiable: {', '.join(unverifiable)}" if unverifiable else ""
    return (f"block {block.number} 0x{block.hash.hex()[:12]}…: {len(lines)} check(s) "
            f"{shown}{extra} ({seconds * 1000:.0f} ms)")
