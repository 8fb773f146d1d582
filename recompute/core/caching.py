"""Every reuse of a verified value, in one place: the checkers (``core/mpt.py``,
``core/prover.py``, ``core/receipts.py``, ``core/anchor.py``) keep nothing and consult no cache
of their own; the fast path calls them through this module, which keeps what they proved.

What is kept, and why it cannot change a result:

- :data:`SHARED_NODES`, the proof nodes of the process (:class:`recompute.core.mpt.NodeCache`):
  a node is kept under the keccak256 of its bytes once it hashed to the reference its parent
  holds, and taken only for a listed node of the very same text, so it gives exactly the bytes
  whose hash is its key.
- Parent headers (:func:`ancestors`): kept under the hash they re-hashed to, found by the
  child's parentHash, and linked again (:func:`recompute.core.anchor.linked_parent`).
- Ancestors (:func:`ancestor`): kept under (a descendant's hash, number): a block hash names
  one chain below it.
- Proven receipts (:func:`prove_receipts`): kept under the hash of the block whose
  receiptsRoot they rebuilt to.
- Log scans (:func:`kept_scan`, :func:`keep_scan`): kept under (block hash, query), the scan of
  the blocks from the query's first up to that block.

Each memo is a bounded LRU per proof source (a weak reference: it goes with the source), so
one node's answers never stand in for another's. A range audit walks the same parentHash links
and proves the same receipts check after check, block after block; with these it does it once.
The rules by which a *kept read* stands in for a fresh proof (same storageRoot, same layout)
are not here but in ``recompute/evaluator/carry.py``, which keeps its values in a memo of this
module.

Their sizes are chosen for range audits (thousands of blocks walked and asked again). A watch
that follows the chain needs only the last few blocks' entries: each new block asks its
parent's (a log scan, an ancestor, a header), a reorg at most its fork point's. Follow mode
calls :func:`keep_window` once a block; from then on that source's memos drop what was neither
kept nor asked for in the last :data:`FOLLOW_WINDOW` blocks, the source holds the raw headers
and receipts of about as many blocks (``hold_window``), and :data:`SHARED_NODES` starts again
every :data:`FOLLOW_WINDOW` blocks, so a bot's memory is that of a window of blocks, not of a
memo filling for hours (docs/watch.md §Memory).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from recompute.core import anchor, receipts
from recompute.core.anchor import AnchoredBlock
from recompute.core.errors import UsageError
from recompute.core.mpt import NodeCache
from recompute.core.receipts import ProvenReceipts

_LOCK = threading.Lock()
_BY_SOURCE: weakref.WeakKeyDictionary[object, dict[str, Memo]] = weakref.WeakKeyDictionary()
FOLLOW_WINDOW = 64  # blocks: deeper than a reorg is expected to be; deeper ones only re-ask
_nodes_followed = 0  # keep_window calls since the proof-node cache last started again

# The proof nodes of the process (the module docstring: why sharing them is sound).
SHARED_NODES = NodeCache()


class Memo:
    """A thread-safe LRU of at most ``size`` entries (values of any type: each kind of memo
    holds one, e.g. :class:`~recompute.core.header.Header` by hash). With a ``window`` (follow
    mode, :func:`keep_window`), also no entry last kept or asked for more than ``window``
    blocks ago."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.window: int | None = None
        self._now = 0  # the block count of keep_window
        self._when: dict[Hashable, int] = {}  # window: key -> the count when last used

    def get(self, key: Hashable) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
                self.hits += 1
                if self.window is not None:
                    self._when[key] = self._now
            return value

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            if self.window is not None:
                self._when[key] = self._now
            while len(self._items) > self.size:
                self._drop_oldest()

    def _drop_oldest(self) -> None:
        key, _ = self._items.popitem(last=False)
        self._when.pop(key, None)

    def advance(self, window: int) -> None:
        """One more block followed: drop the entries not used in the last ``window`` blocks.
        Each use moves its entry to the end with the count of that moment, so the counts rise
        along the LRU order and the stale entries are at its front (the entries kept before
        follow mode began count as used at its start)."""
        with self._lock:
            if self.window is None:
                self._when = dict.fromkeys(self._items, self._now)
            self.window = window
            self._now += 1
            oldest = self._now - window
            while self._items and self._when[next(iter(self._items))] < oldest:
                self._drop_oldest()


def memo_for(source: object, kind: str, size: int) -> Memo | None:
    """The ``kind`` memo of ``source`` (None if the source cannot be weakly referenced)."""
    with _LOCK:
        try:
            memos = _BY_SOURCE.get(source)
            if memos is None:
                memos = _BY_SOURCE[source] = {}
        except TypeError:
            return None
        memo = memos.get(kind)
        if memo is None:
            memo = memos[kind] = Memo(size)
        return memo


def keep_window(source: object, window: int = FOLLOW_WINDOW) -> None:
    """Follow mode, once a block verified from ``source``: its memos keep only the entries used
    in the last ``window`` blocks, and every ``window`` blocks the proof-node cache starts
    again (its entries are nodes of recent state roots: a following bot adds the new upper
    nodes of every block and would keep them until the cache's limit, hours later)."""
    global _nodes_followed
    with _LOCK:
        try:
            memos = list(_BY_SOURCE.get(source, {}).values())
        except TypeError:
            return
        _nodes_followed += 1
        restart = _nodes_followed >= window
        if restart:
            _nodes_followed = 0
    for memo in memos:
        memo.advance(window)
    hold_window = getattr(source, "hold_window", None)  # a source's own raw answers
    if hold_window is not None:  # (recompute.sources.cache.SharedSource)
        hold_window(window)
    if restart:
        SHARED_NODES.clear()


# ---- the checkers, with what they proved kept ------------------------------------------------


def ancestors(block: AnchoredBlock, down_to: int) -> list[AnchoredBlock]:
    """:func:`recompute.core.anchor.ancestors` with each parent header kept under its hash: a
    kept one is taken for a child's parentHash and linked again as one fetched."""
    memo = memo_for(block.source, "parent-headers", 1 << 16)
    if memo is None:
        return anchor.ancestors(block, down_to)
    if down_to > block.number:
        raise UsageError(f"block {down_to} is above the pinned block {block.number}")
    out = [block]
    header = block.header
    # a source that fetches headers by number in batches holds the range first (see
    # anchor.ancestors), unless the walk's first step is kept already
    prefetch = getattr(block.source, "prefetch_headers", None)
    if prefetch is not None and block.number - 1 > down_to and \
            memo.get(header.parent_hash) is None:
        prefetch(list(range(down_to, block.number)))
    while header.number > down_to:
        kept = memo.get(header.parent_hash)
        header = (anchor.parent_header(block, header) if kept is None
                  else anchor.linked_parent(block, header, kept))
        memo.put(header.hash, header)
        out.append(anchor.linked(block, header))
    return out


def ancestor(block: AnchoredBlock, number: int) -> AnchoredBlock:
    """:func:`recompute.core.anchor.ancestor`, the header found kept under (the block's hash,
    number): the next block up names this block as its parent, so its own walk to ``number``
    is one look-up, however deep (a range audit asks the same ancestor at every block)."""
    if number == block.number:
        return block
    memo = memo_for(block.source, "ancestor-at", 1 << 14)
    header = None
    if memo is not None and number < block.number:
        header = memo.get((block.hash, number)) or memo.get((block.header.parent_hash, number))
    if header is None:
        header = ancestors(block, number)[-1].header
    if memo is not None:
        memo.put((block.hash, number), header)
    return anchor.linked(block, header)


def prove_receipts(block: AnchoredBlock) -> ProvenReceipts:
    """:func:`recompute.core.receipts.prove_receipts`, kept by block hash: every check of a
    watch, at every block above, asks again."""
    memo = memo_for(block.source, "receipts", 1024)
    proven = memo.get(block.hash) if memo is not None else None
    if proven is None:
        proven = receipts.prove_receipts(block)
        if memo is not None:
            memo.put(block.hash, proven)
    return proven


def prefetch_receipts(blocks: list[AnchoredBlock]) -> None:
    """Have the blocks' source fetch the receipts of those of ``blocks`` not proven yet in one
    go, if it can (the watch's shared source: one JSON-RPC batch); :func:`prove_receipts`
    then finds them there. Raw answers only: each is proven when asked for."""
    if len(blocks) < 2:
        return
    source = blocks[0].source
    prefetch = getattr(source, "prefetch_receipts", None)
    if prefetch is None:
        return
    memo = memo_for(source, "receipts", 1024)
    prefetch([b.hash for b in blocks if b.source is source
              and (memo is None or memo.get(b.hash) is None)])


# A log scan as kept: the matching logs, the evidence's log entries, the blocks proven.
Scan = tuple[tuple[Any, ...], tuple[Any, ...], int]


def kept_scan(block: AnchoredBlock, query: Hashable) -> Scan | None:
    """The scan for ``query`` kept at ``block`` (by its hash), if any."""
    memo = memo_for(block.source, "log-scans", 1 << 12)
    return memo.get((block.hash, query)) if memo is not None else None


def keep_scan(block: AnchoredBlock, query: Hashable, scan: Scan) -> None:
    """Keep the scan for ``query`` from its first block up to ``block``, under ``block``'s hash."""
    memo = memo_for(block.source, "log-scans", 1 << 12)
    if memo is not None:
        memo.put((block.hash, query), scan)
