"""A range audit in segments (docs/watch.md §Audits that outgrow one machine): the coordinator.

``first..M`` is cut into segments (:func:`~recompute.watch.linking.plan_segments`); each
segment not already in the store is handed to an executor (this process, or Dask workers:
:mod:`recompute.watch.cluster`) as a :class:`~recompute.watch.segment.SegmentTask`, highest
first, its endpoint list rotated so that several ``--rpc`` share the load (this process and
``--processes`` take them lowest first, each worker a contiguous lane:
:mod:`recompute.watch.worker_pool`). Every result is
committed to the store as it arrives (the coordinator is its only writer). When every segment
is in, the segments are tied into one chain of parent links up to the pinned block M
(:func:`~recompute.watch.linking.tie`) and the lines go to stdout in block order, exactly as the
one-process auditor writes them; a segment that did not link, or kept failing, gives
UNVERIFIABLE lines (``hash`` null, never final) for its blocks, counted in the summary.

The lines go to stdout in writes of whole blocks, each committed to the store first with its
last block as ``emitted_through`` (:class:`~recompute.watch.recording.AuditSink`, the journal
follow mode uses too): a resumed audit writes what stdout lacks of that last write (on a
regular file; on a pipe, the whole write again) and goes on with the block after it, so each
line reaches stdout once (docs/watch.md §Restarts).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator

from recompute.core.anchor import AnchoredBlock
from recompute.core.verdict import Verdict
from recompute.version import __version__
from recompute.watch.auditor import Summary, _bar
from recompute.watch.evaluate import JsonObject, Line, anchor_fields
from recompute.watch.linking import Tie, plan_segments, tie, without_lines
from recompute.watch.recording import AuditSink
from recompute.watch.segment import SegmentResult, SegmentTask, evaluate_segment
from recompute.watch.sink import Sink, lines_text
from recompute.watch.store import Store
from recompute.watch.store_records import CheckMeta

# An executor runs tasks and yields (task, result) as they finish, in any order.
Executor = Callable[[list[SegmentTask], threading.Event], Iterable[tuple[SegmentTask,
                                                                         SegmentResult]]]


def in_process(tasks: list[SegmentTask], stop: threading.Event
               ) -> Iterator[tuple[SegmentTask, SegmentResult]]:
    """The executor of ``--store`` without ``--processes``/``--cluster``: one after another,
    lowest first (each segment's log scans then stop at the block below, scanned a moment
    before: recompute.watch.worker_pool's lanes)."""
    for task in sorted(tasks, key=lambda t: t.lo):
        if stop.is_set():
            return
        yield task, evaluate_segment(task)


def line_from_json(value: JsonObject, anchor: JsonObject | None = None) -> Line:
    """A stored line as :func:`recompute.watch.store_records.line` returns it, every field
    already checked there (the store hands out no other): the line it was."""
    return Line(value["block"], value["hash"], value["check"], Verdict(value["verdict"]),
                value["reason"], value["final"], value["healthy"], value["derived"],
                value["evidence_digest"], value.get("detail", ""), anchor=anchor)


def line_anchor(params: JsonObject, number: int) -> JsonObject:
    """What a line says of its block's anchor once its segment is tied to the pin, exactly as a
    one-process audit says it (recompute.watch.evaluate.anchor_summary): the pinned block M by
    its own anchor, every block below it by parent links from M (a segment anchors itself on
    its worker; only the coordinator, having tied it, knows the pin it hangs from)."""
    if number != params["last"]:
        return {"method": "parent-link", "pinned_hash": params["pinned_hash"]}
    anchor = params["anchor"]
    return anchor_fields(anchor["method"], anchor)


def block_lines(params: JsonObject, checks: list[CheckMeta], ties: Iterable[Tie],
                lines_of: Callable[[int, int], list[JsonObject]]
                ) -> Iterator[tuple[int, list[Line]]]:
    """Every block of the audit with its lines, in block order: a linked segment's own lines
    (final when ``confirmations`` deep under the head recorded at the start), else
    UNVERIFIABLE lines naming why the segment is not merged. Pure: the report uses it too."""
    head, confirmations = params.get("head"), params["confirmations"]
    for t in ties:
        by_block: dict[int, list[Line]] = {}
        if t.linked:
            for value in lines_of(t.lo, t.hi):
                number: int = value["block"]
                line = line_from_json(value, line_anchor(params, number))
                if head is not None and head - number >= confirmations:
                    line = line.as_final()
                by_block.setdefault(number, []).append(line)
        for number in range(t.lo, t.hi + 1):
            if t.linked:
                yield number, by_block.get(number, [])
            else:
                yield number, [Line(number, None, c.name, Verdict.UNVERIFIABLE, t.reason,
                                    detail=t.detail) for c in checks if number >= c.since]


def summarise(params: JsonObject, checks: list[CheckMeta], ties: Iterable[Tie],
              lines_of: Callable[[int, int], list[JsonObject]],
              each: Callable[[list[Line]], None] | None = None) -> Summary:
    """The summary of a tied range audit, block by block (one segment's lines at a time);
    ``each`` is handed every block's lines in block order (the report files)."""
    summary = Summary(checks)
    for _, lines in block_lines(params, checks, ties, lines_of):
        summary.add(lines)
        if each is not None:
            each(lines)
    return summary


class SegmentedAudit:
    def __init__(self, store: Store, sink: Sink, executor: Executor, *, where: str,
                 threads: int = 4, stop: threading.Event | None = None,
                 recipe_paths: tuple[str, ...] = (), reference: bool = False):
        self.threads = threads
        self.reference = reference  # handed to every worker (SegmentTask.reference)
        self.recipe_paths = recipe_paths  # resolved; handed to every worker (SegmentTask)
        self.store = store
        self.sink = sink
        self.executor = executor
        self.where = where
        self.stop = stop or threading.Event()
        self.interrupted = False

    def run(self, top: AnchoredBlock, config_text: str, config_path: str,
            rpcs: list[str]) -> tuple[Summary, list[Tie]]:
        params = self.store.params()
        checks = [CheckMeta.from_json(c) for c in params["checks"]]
        first, last, size = params["first"], params["last"], params["segment_blocks"]
        plan = plan_segments(first, last, size)
        results = {r.lo: without_lines(r) for r in self.store.segments()}
        todo = {(lo, hi) for lo, hi in plan if lo not in results}
        self.sink.note(f"audit: block {top.number} 0x{top.hash.hex()} anchored by "
                       f"{top.anchor.method}: trusts {top.anchor.trusts}")
        if top.anchor.method == "single-rpc":
            self.sink.note("warning: single-rpc: the node itself said which block this is; pin "
                           "it with --block-hash, --checkpoint or a --quorum of endpoints")
        self.sink.note(f"audit: blocks {first}..{last} in {len(plan)} segment(s) of {size} "
                       f"block(s), {len(plan) - len(todo)} already in {self.store.path}; "
                       f"{len(checks)} check(s) on {self.where}; segments are tied to the "
                       "pinned block by parentHash links")
        tasks = [SegmentTask(lo, hi, config_text, config_path, _rotated(rpcs, index),
                             threads=self.threads, version=__version__,
                             recipe_paths=self.recipe_paths, reference=self.reference)
                 for index, (lo, hi) in sorted(enumerate(plan), key=lambda x: -x[1][0])
                 if (lo, hi) in todo]
        started = shown = time.monotonic()
        done = len(plan) - len(todo)
        blocks = sum(r.hi - r.lo + 1 for r in results.values())
        for _, result in self.executor(tasks, self.stop):
            self.store.record_segment(result)
            results[result.lo] = without_lines(result)
            done += 1
            blocks += result.hi - result.lo + 1
            if result.failure:
                self.sink.note(f"\nsegment {result.lo}..{result.hi}: {result.failure[0]}: "
                               f"{result.failure[1]}")
            now = time.monotonic()
            if now - shown >= 0.2 or done == len(plan):
                shown = now
                self.sink.progress(_bar(blocks, last - first + 1, now - started)
                                   .replace(" blocks ", f" blocks, {done}/{len(plan)} "
                                            "segments ", 1))
            if self.stop.is_set():
                break
        self.sink.progress("\n")
        if len(results) < len(plan):
            self.interrupted = True
            return Summary(checks), []
        self._relink(params, plan, results, config_text, config_path, rpcs)
        return self._emit(params, checks, results)

    def _relink(self, params: JsonObject, plan: list[tuple[int, int]],
                results: dict[int, SegmentResult], config_text: str, config_path: str,
                rpcs: list[str]) -> None:
        """The highest segment that does not link, if another ``--rpc`` has not served it yet,
        is evaluated again from the endpoints not tried (one lying or reorged node among
        several then costs a segment's time, not the blocks below it); until it links, or no
        endpoint is left."""
        tried: dict[int, set[str]] = {}
        while not self.stop.is_set():
            ties = tie(params["last"], params["pinned_hash"], plan, results)
            loose = [t for t in ties if not t.linked]
            if not loose:
                return
            worst = max(loose, key=lambda t: t.lo)
            served = tried.setdefault(worst.lo, set())
            endpoint = results[worst.lo].endpoint
            if endpoint:
                served.add(endpoint)
            left = tuple(url for url in rpcs if url not in served)
            if worst.reason != "header-mismatch" or not left:
                return
            self.sink.note(f"segment {worst.lo}..{worst.hi} does not link ({worst.detail}); "
                           f"evaluating it again from {left[0]}")
            task = SegmentTask(worst.lo, worst.hi, config_text, config_path, left,
                               threads=self.threads, version=__version__,
                               recipe_paths=self.recipe_paths, reference=self.reference)
            for _, result in self.executor([task], self.stop):
                self.store.record_segment(result)
                results[result.lo] = without_lines(result)
                if result.endpoint is None:  # every endpoint left failed: nothing more to try
                    served.update(left)

    def _emit(self, params: JsonObject, checks: list[CheckMeta],
              results: dict[int, SegmentResult]) -> tuple[Summary, list[Tie]]:
        plan = plan_segments(params["first"], params["last"], params["segment_blocks"])
        ties = tie(params["last"], params["pinned_hash"], plan, results)
        emitted = params.get("emitted_through", params["first"] - 1)
        summary = Summary(checks)
        for t in ties:
            if not t.linked:
                self.sink.note(f"segment {t.lo}..{t.hi} not merged ({t.reason}): {t.detail}")
        # each write committed to the store with its blocks first (docs/watch.md §Restarts):
        # a resumed audit completes the write a kill cut and goes on after it
        sink = self.sink

        def text_of(lo: int, hi: int) -> str:
            """The text of blocks ``lo..hi`` exactly as written (a write the journal names),
            block by block as the sink writes them."""
            around = [t for t in ties if t.lo <= hi and t.hi >= lo]
            return "".join(lines_text(lines) for number, lines
                           in block_lines(params, checks, around, self.store.lines)
                           if lo <= number <= hi)

        out = AuditSink.instead_of(sink, store=self.store, text_of=text_of)
        try:
            out.recover()
            for number, lines in block_lines(params, checks, ties, self.store.lines):
                summary.add(lines)
                if number > emitted:
                    if lines:
                        out.block(number, lines)
                    sink.metrics.inc("blocks_total")
                    sink.metrics.set("last_verified_block", number)
        finally:
            out.close()  # not after a write that failed: the next run checks that one
        return summary, ties


def _rotated(rpcs: list[str], index: int) -> tuple[str, ...]:
    """The endpoint list starting at segment ``index``'s share: several --rpc split the load,
    and each is the others' fallback."""
    k = index % len(rpcs)
    return tuple(rpcs[k:] + rpcs[:k])
