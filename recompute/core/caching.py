"""Verified results kept by hash, per proof source (README §Performance).

A header is kept under the hash it re-hashed to, receipts under the hash of the block whose
receiptsRoot they rebuilt to: a hash names one value forever, so a kept value is exactly what
verifying again would give. Memos are per source object (a weak reference: they go with it),
so one node's answers never stand in for another's, and each is a bounded LRU. The watch's
range audits walk the same parentHash links and prove the same receipts check after check,
block after block; with these they do it once.

Their sizes are chosen for range audits (thousands of blocks walked and asked again). A watch
that follows the chain needs only the last few blocks' entries: each new block asks its
parent's (a log scan, an ancestor, a header), a reorg at most its fork point's. Follow mode
calls :func:`keep_window` once a block; from then on that source's memos drop what was neither
kept nor asked for in the last :data:`FOLLOW_WINDOW` blocks, the source holds the raw headers
and receipts of about as many blocks (``hold_window``), and the process's proof-node cache
(:data:`recompute.core.mpt.SHARED_NODES`) starts again every :data:`FOLLOW_WINDOW` blocks, so a
bot's memory is that of a window of blocks, not of a memo filling for hours (docs/watch.md
§Memory).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from recompute.core.mpt import SHARED_NODES

_LOCK = threading.Lock()
_BY_SOURCE: weakref.WeakKeyDictionary[object, dict[str, Memo]] = weakref.WeakKeyDictionary()
FOLLOW_WINDOW = 64  # blocks: deeper than a reorg is expected to be; deeper ones only re-ask
_nodes_followed = 0  # keep_window calls since the proof-node cache last started again


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
