"""Verified results kept by hash, per proof source (README §Performance).

A header is kept under the hash it re-hashed to, receipts under the hash of the block whose
receiptsRoot they rebuilt to: a hash names one value forever, so a kept value is exactly what
verifying again would give. Memos are per source object (a weak reference: they go with it),
so one node's answers never stand in for another's, and each is a bounded LRU. The watch's
range audits walk the same parentHash links and prove the same receipts check after check,
block after block; with these they do it once.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

_LOCK = threading.Lock()
_BY_SOURCE: weakref.WeakKeyDictionary[object, dict[str, Memo]] = weakref.WeakKeyDictionary()


class Memo:
    """A thread-safe LRU of at most ``size`` entries (values of any type: each kind of memo
    holds one, e.g. :class:`~recompute.core.header.Header` by hash)."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, key: Hashable) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
                self.hits += 1
            return value

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


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
