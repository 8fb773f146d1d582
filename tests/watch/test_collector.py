"""recompute.watch.collector.paused and the follower's use of it: the cyclic collector is off
while a followed block is evaluated and its lines written, on again after (and after a
failure); a caller that had it off finds it off. Expected values: gc.isenabled() as the test
itself records it, no anvil (a stand-in evaluator and block)."""

from __future__ import annotations

import gc
import io
from types import SimpleNamespace

import pytest

from recompute.core.verdict import Verdict
from recompute.watch.collector import paused
from recompute.watch.evaluate import Line
from recompute.watch.follower import Follower
from recompute.watch.metrics import Metrics
from recompute.watch.sink import Sink


def test_paused_turns_the_collector_off_inside_and_back_on_after():
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()


class RecordingSink(Sink):
    def __init__(self):
        super().__init__(Metrics(), io.StringIO(), io.StringIO())
        self.collector_on_while_written: list[bool] = []

    def evaluated(self, lines):
        self.collector_on_while_written.append(gc.isenabled())
        super().evaluated(lines)


class Evaluator:
    checks: list = []

    def __init__(self, fail: bool = False):
        self.fail = fail
        self.collector_on_while_evaluated: list[bool] = []

    def evaluate(self, block, final=False):
        self.collector_on_while_evaluated.append(gc.isenabled())
        if self.fail:
            raise RuntimeError("a bug in a check")
        return [Line(block.number, "0x" + block.hash.hex(), "c", Verdict.GOOD, "ok", final,
                     True, {"x": "1"}, "00" * 32)]


BLOCK = SimpleNamespace(number=7, timestamp=1762736424, hash=b"\x11" * 32,
                        anchor=SimpleNamespace(method="single-rpc", trusts="the node"),
                        source=object())  # a source with no memos (follow mode trims them)


def test_the_follower_pauses_the_collector_while_a_block_is_evaluated_and_written():
    sink, evaluator = RecordingSink(), Evaluator()
    follower = Follower(evaluator, sink, lambda: BLOCK, confirmations=0, max_blocks=1)
    assert gc.isenabled()
    follower.run()
    assert evaluator.collector_on_while_evaluated == [False]
    assert sink.collector_on_while_written == [False]
    assert gc.isenabled()
    assert '"block": 7' in sink.out.getvalue()


def test_the_collector_runs_again_after_a_followed_block_that_failed():
    follower = Follower(Evaluator(fail=True), RecordingSink(), lambda: BLOCK, confirmations=0,
                        max_blocks=1)
    with pytest.raises(RuntimeError):
        follower.run()
    assert gc.isenabled()
