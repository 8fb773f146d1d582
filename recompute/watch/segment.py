"""One segment of a range audit, evaluated on its own: the function a Dask task runs
(docs/watch.md §Audits that outgrow one machine).

:func:`evaluate_segment` takes a :class:`SegmentTask` (the blocks ``lo..hi``, the checks as the
text of their ``checks.toml``, the RPC endpoints to ask, in order) and returns a
:class:`SegmentResult`: the verdict lines of every block, the per-block hashes, the lowest
block's ``parentHash`` and the highest block's hash. Everything in and out is plain data (no
sockets, no :class:`~recompute.core.anchor.AnchoredBlock`), so it pickles to any worker that has
the same package installed, and nothing here needs Dask.

Trust (docs/design.md §Trust flow): inside the segment, every header from ``hi`` down to ``lo``
is re-hashed and tied to the next by its parentHash (:func:`recompute.core.caching.ancestors`), but
the segment's top is only what the node *said* block ``hi`` is. The segment proves nothing until
the coordinator ties its top hash to the parentHash of the segment above it, and so on up to the
pinned block M (:mod:`recompute.watch.linking`); a segment that does not link is never merged.

A node in trouble (:data:`~recompute.watch.evaluate.NODE_TROUBLE`) is met as in the one-process
auditor: the block is tried again with backoff, then the next endpoint of the list is asked, then
the block gets UNVERIFIABLE lines. If no endpoint can even give the segment's headers, the result
says so (``failure``) rather than raising: an :class:`~recompute.core.errors.Unverifiable` does
not survive pickling, and the coordinator turns a failed segment into UNVERIFIABLE lines.
"""

from __future__ import annotations

import hashlib
import threading
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from recompute.core.anchor import AnchoredBlock, by_single_rpc
from recompute.core.caching import ancestors
from recompute.core.errors import Unverifiable, UsageError
from recompute.sources.cache import SharedSource
from recompute.sources.live import LiveSource
from recompute.version import __version__
from recompute.watch.config import Check, parse_config_text
from recompute.watch.evaluate import (
    NODE_TROUBLE,
    BlockEvaluator,
    JsonObject,
    Line,
    unverifiable_lines,
)
from recompute.watch.lookahead import in_order

RPC_TIMEOUT = 10.0


@dataclass(frozen=True)
class SegmentTask:
    """What a worker needs for blocks ``lo..hi``: plain data only."""

    lo: int
    hi: int
    config_text: str
    config_path: str  # for the recipes' relative file parameters; the text is what counts
    rpcs: tuple[str, ...]
    retries: int = 3
    retry_delay: float = 0.5
    threads: int = 4  # helpers fetching the next blocks ahead (the node's latency overlaps)
    version: str = ""  # the coordinator's recompute.__version__: workers must run the same
    # the recipe modules the user named to the coordinator (--recipes, $RECOMPUTE_RECIPES),
    # resolved: the only user recipe code a worker imports (the config text only declares it)
    recipe_paths: tuple[str, ...] = ()
    reference: bool = False  # the plain evaluator (recompute.evaluator.reference), not the fast

    @property
    def config_hash(self) -> str:
        return config_hash(self.config_text)


@dataclass
class SegmentResult:
    lo: int
    hi: int
    lines: list[JsonObject] = field(default_factory=list)  # Line.to_json(), block order
    hashes: list[str] = field(default_factory=list)  # 0x hash of lo, lo+1, … hi
    parent_hash: str | None = None  # the parentHash of block lo
    top_hash: str | None = None  # the hash of block hi
    failure: tuple[str, str] | None = None  # (reason, detail) when no endpoint could serve
    endpoint: str | None = None
    seconds: float = 0.0
    # set by the coordinator when it keeps a result without its lines (they are in the store):
    # why the lines did not hold together with the hashes, if they did not
    problem: str | None = None


def config_hash(text: str) -> str:
    """sha256 of the checks.toml text: what a resume must match."""
    return hashlib.sha256(text.encode()).hexdigest()


def parse_checks(text: str, path: str, recipe_paths: tuple[str, ...] = ()) -> list[Check]:
    return parse_config_text(text, Path(path), recipe_paths)


# One evaluator (its learned slots) and one shared source per endpoint, per worker process, kept
# across the segments of an audit: a segment that follows the one below it on the same worker
# (recompute.watch.worker_pool's lanes) starts from that one's kept scans and reads.
_WORKER_STATE: dict[str, BlockEvaluator] = {}
_SOURCES: dict[str, SharedSource] = {}
_LOCK = threading.Lock()


def _evaluator(task: SegmentTask) -> BlockEvaluator:
    key = "\0".join((task.config_hash, task.config_path, str(task.reference),
                     *task.recipe_paths))
    with _LOCK:
        if key not in _WORKER_STATE:
            _WORKER_STATE.clear()
            _WORKER_STATE[key] = BlockEvaluator(parse_checks(task.config_text, task.config_path,
                                                             task.recipe_paths),
                                                task.reference)
        return _WORKER_STATE[key]


def _source(url: str) -> SharedSource:
    with _LOCK:
        if url not in _SOURCES:
            _SOURCES[url] = SharedSource(LiveSource(url, timeout=RPC_TIMEOUT))
        return _SOURCES[url]


def evaluate_segment(task: SegmentTask) -> SegmentResult:
    """Every check at every block ``lo..hi``, anchored to the node's block ``hi`` by parent
    links (to be tied to the pin by the coordinator). Raises only
    :class:`~recompute.core.errors.UsageError` (a check that cannot be asked: exit 64)."""
    started = time.monotonic()
    if task.version and task.version != __version__:
        raise UsageError(f"a worker runs recompute {__version__}, the coordinator "
                         f"{task.version}: install the same version on every worker")
    evaluator = _evaluator(task)
    result = SegmentResult(task.lo, task.hi)
    failure: Unverifiable | None = None
    for url in task.rpcs:
        source = _source(url)
        try:
            blocks = _walk(source, task)
        except Unverifiable as exc:
            failure = exc
            continue
        result.endpoint = url
        result.hashes = ["0x" + b.hash.hex() for b in blocks]
        result.parent_hash = "0x" + blocks[0].header.parent_hash.hex()
        result.top_hash = result.hashes[-1]
        with closing(in_order(blocks, lambda b: _block_lines(evaluator, b, task),
                             evaluator.prepare, task.threads)) as each:
            for _, lines in each:
                result.lines.extend(line.to_json() for line in lines)
        result.seconds = time.monotonic() - started
        return result
    assert failure is not None
    result.failure = (failure.reason, failure.detail)
    result.seconds = time.monotonic() - started
    return result


def _walk(source: SharedSource, task: SegmentTask) -> list[AnchoredBlock]:
    """Blocks lo..hi, oldest first, each re-hashed and linked to the next; node trouble is
    tried again a few times before this endpoint is given up."""
    for attempt in range(task.retries + 1):
        try:
            top = by_single_rpc(source, task.hi)
            return list(reversed(ancestors(top, task.lo)))
        except Unverifiable as exc:
            if exc.reason not in NODE_TROUBLE or attempt == task.retries:
                raise
            time.sleep(task.retry_delay * 2 ** attempt)
    raise AssertionError("unreachable")


def _block_lines(evaluator: BlockEvaluator, block: AnchoredBlock,
                 task: SegmentTask) -> list[Line]:
    """As :meth:`recompute.watch.auditor.Auditor._evaluate`: node trouble retried with backoff,
    then UNVERIFIABLE lines carrying the block's hash (so is any other UNVERIFIABLE the block
    raises: it cannot cross to the coordinator as an exception)."""
    for attempt in range(task.retries + 1):
        try:
            return evaluator.evaluate(block)
        except Unverifiable as exc:
            # not node trouble (a malformed answer): this block's lines say so, the rest go on
            if exc.reason not in NODE_TROUBLE or attempt == task.retries:
                return unverifiable_lines(evaluator.checks, block.number,
                                          "0x" + block.hash.hex(), exc)
            time.sleep(task.retry_delay * 2 ** attempt)
    raise AssertionError("unreachable")
