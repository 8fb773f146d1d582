"""recompute.watch.lookahead.in_order: blocks come back in order, each evaluated once, and
how far ahead the node is asked adapts: one block ahead for a node that keeps up, more (up
to 2 x threads) for one the evaluation has to wait for. Expected values: the block numbers
given, and the counts of preparations the test itself records."""

from __future__ import annotations

import gc
import threading
import time

import pytest

from recompute.watch.lookahead import in_order


class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.started: list[int] = []
        self.done: dict[int, threading.Event] = {}
        self.running = 0
        self.most_running = 0

    def event(self, block: int) -> threading.Event:
        with self.lock:
            return self.done.setdefault(block, threading.Event())


def test_a_node_that_keeps_up_is_asked_one_block_ahead():
    seen = Recorder()
    ahead_when_evaluated: dict[int, int] = {}

    def prepare(block: int) -> None:
        with seen.lock:
            seen.started.append(block)
        seen.event(block).set()

    def evaluate(block: int) -> str:
        if block + 1 < 30:  # the next block's preparation is over before this one ends
            assert seen.event(block + 1).wait(10)
        with seen.lock:
            ahead_when_evaluated[block] = max(seen.started) - block
        return f"lines of {block}"

    out = list(in_order(range(30), evaluate, prepare, threads=4))
    assert out == [(b, f"lines of {b}") for b in range(30)]
    assert sorted(seen.started) == list(range(30))  # each block prepared once
    # never further than the next block (the last block has none after it)
    assert [ahead_when_evaluated[b] for b in range(30)] == [1] * 29 + [0]


def test_a_slow_node_gets_more_requests_in_flight():
    seen = Recorder()

    def prepare(block: int) -> None:
        with seen.lock:
            seen.running += 1
            seen.most_running = max(seen.most_running, seen.running)
        time.sleep(0.02)  # a distant node: the evaluation below always waits for it
        with seen.lock:
            seen.running -= 1

    out = list(in_order(range(40), lambda b: b, prepare, threads=2))
    assert out == [(b, b) for b in range(40)]
    assert seen.most_running == 2  # both threads busy: asked further ahead than one block


def test_stop_ends_the_range_early():
    evaluated = []
    out = list(in_order(range(10), evaluated.append, lambda b: None, threads=2,
                        stop=lambda: len(evaluated) >= 3))
    assert [b for b, _ in out] == [0, 1, 2]


def test_the_cyclic_collector_is_paused_while_a_block_is_evaluated_and_handled():
    """It is off inside an evaluation and while the caller handles the block's lines, on
    again between blocks and after the last; on again after an evaluation that raised, and
    after a caller that raised or stopped while handling a block once the generator is
    closed; a caller that had it off finds it off."""
    on_inside = []

    def evaluate(block: int) -> int:
        on_inside.append(gc.isenabled())
        return block

    assert gc.isenabled()
    for block, _ in in_order(range(3), evaluate, lambda b: None, threads=1):
        assert not gc.isenabled(), block  # the caller handles the lines: still paused
    assert gc.isenabled()
    assert on_inside == [False, False, False]

    from contextlib import closing

    with pytest.raises(ValueError), closing(in_order(range(3), evaluate, lambda b: None,
                                                     threads=1)) as each:
        for block, _ in each:
            raise ValueError(block)  # the caller fails while handling a block
    assert gc.isenabled()
    with closing(in_order(range(3), evaluate, lambda b: None, threads=1)) as each:
        for _block, _ in each:
            break
    assert gc.isenabled()

    def failing(block: int) -> int:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        list(in_order(range(3), failing, lambda b: None, threads=1))
    assert gc.isenabled()

    gc.disable()
    try:
        out = list(in_order(range(2), lambda b: gc.isenabled(), lambda b: None, threads=1))
        assert out == [(0, False), (1, False)]
        assert not gc.isenabled()
    finally:
        gc.enable()
