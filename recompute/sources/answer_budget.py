"""One memory budget for the node answers a process reads and parses at once
(docs/performance.md §Bounded answers).

Each answer is bounded alone (:data:`recompute.sources.rpc.MAX_ANSWER_BYTES`,
:data:`recompute.core.boundedjson.MAX_VALUES`), but a run asks from many threads (a range
audit's ``--workers`` fetching ahead, each prover's requests in flight): eight answers at their
bounds at once would be eight times the memory. So an answer is *small* up to
:data:`SMALL_BYTES` and :data:`SMALL_VALUES` (every answer of a quiet block, a header walk, a
batch of proofs), and small answers go on at once, in parallel; a *large* one (a block's
receipts, or a node's bomb) is read on and parsed only in its turn, one large answer at a time
in the process. A large answer that cannot have its turn within its wait is ``TimeoutError``
(the client says ``rpc-unreachable``).
"""

from __future__ import annotations

import threading
import time

from recompute.core.boundedjson import value_count

# Up to these an answer is small: a batch of 100 headers is ~100 KB and ~2,500 values, a block's
# account proofs a few hundred KB; 50,000 values are at most ~5 MB once parsed.
SMALL_BYTES = 4 * 1024 * 1024
SMALL_VALUES = 50_000
# Held by the one large answer being read or parsed (re-entrant: a client that falls back
# from a batch to single calls while holding it asks them on the same thread).
_LARGE = threading.RLock()


class AnswerShare:
    """One answer's share of the budget: ``with AnswerShare(wait) as share:`` around its
    exchange and its parse; the turn it took, if any, is given back at the end."""

    def __init__(self, wait: float):
        self.wait = wait  # seconds a large answer waits for its turn before its parse
        self.large = False

    def __enter__(self) -> AnswerShare:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def read(self, size: int, deadline: float) -> None:
        """``size`` bytes of the answer read so far: past :data:`SMALL_BYTES`, its turn
        first, waited for until ``deadline`` (``time.monotonic``)."""
        if size > SMALL_BYTES:
            self._take(deadline - time.monotonic())

    def parse(self, raw: bytes) -> None:
        """``raw`` is about to be parsed: a large answer (by bytes or values) waits for its
        turn first, at most :attr:`wait` seconds."""
        if not self.large and (len(raw) > SMALL_BYTES
                               or value_count(raw, SMALL_VALUES) > SMALL_VALUES):
            self._take(self.wait)

    def release(self) -> None:
        """Give the turn back (between tries, and at the end)."""
        if self.large:
            self.large = False
            _LARGE.release()

    def _take(self, wait: float) -> None:
        if self.large:
            return
        if wait <= 0 or not _LARGE.acquire(timeout=wait):
            raise TimeoutError
        self.large = True
