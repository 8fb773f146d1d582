"""The cyclic garbage collector paused while a watch handles one block.

A block's evaluation keeps thousands of containers alive at once (a 400-check block: each
check's runner, trace, answers and evidence, then its lines) and frees them by reference
counting when the block is done; collected meanwhile, they were walked again and again and
promoted to the oldest generation, whose passes walk the whole heap (bench_watch range mode,
gc.callbacks: 961 young, 87 middle and 7 full passes over 40 blocks; 54, 5 and 0 paused).
The range audit (:mod:`recompute.watch.lookahead`) and the follower
(:mod:`recompute.watch.follower`) pause it per block; the cycles a block leaves (an exception
and its traceback) are collected by the first pass after it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The collector off inside the block, on again after it however it ends (if it was on:
    a caller that had it off finds it off)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
