"""recompute.watch.metrics as the sink counts a block's lines in one call: what get() reads at
once and what the exposition shows once scraped, for lines the test itself made (expected
counts: the test's own tally of its lines)."""

from __future__ import annotations

import io

import pytest

from recompute.core.verdict import Verdict
from recompute.watch.evaluate import Line
from recompute.watch.metrics import Metrics, series_key
from recompute.watch.sink import Sink


def _line(block: int, check: str, verdict: Verdict, healthy: bool | None, final: bool) -> Line:
    return Line(block, "0x" + "ab" * 32, check, verdict, "ok", final, healthy, {"x": "1"},
                "cd" * 32)


def test_lines_counted_per_check_and_verdict_read_back_and_scraped():
    metrics = Metrics()
    sink = Sink(metrics, io.StringIO(), io.StringIO())
    sink.evaluated([_line(1, "a", Verdict.GOOD, True, True),
                    _line(1, "b", Verdict.BAD, False, False),
                    _line(1, "c", Verdict.UNVERIFIABLE, None, False)])
    sink.evaluated([_line(2, "a", Verdict.GOOD, True, True),
                    _line(2, "b", Verdict.GOOD, True, True),
                    _line(2, "c", Verdict.UNVERIFIABLE, None, False)])
    assert metrics.get("verdicts_total", check="a", verdict=Verdict.GOOD.value) == 2
    assert metrics.get("verdicts_total", check="b", verdict=Verdict.BAD.value) == 1
    assert metrics.get("verdicts_total", check="b", verdict=Verdict.GOOD.value) == 1
    assert metrics.get("verdicts_total", check="c", verdict=Verdict.UNVERIFIABLE.value) == 2
    assert metrics.get("final_verdicts_total", check="a", verdict=Verdict.GOOD.value) == 2
    assert metrics.get("final_verdicts_total", check="b", verdict=Verdict.BAD.value) == 0
    assert metrics.get("check_healthy", check="b") == 1  # the last verified verdict: GOOD
    assert metrics.get("check_healthy", check="c") is None  # never verified: not set
    text = metrics.render()
    assert ('recompute_watch_verdicts_total{check="a",verdict="VERIFIED-GOOD"} 2.0'
            in text)
    assert ('recompute_watch_final_verdicts_total{check="b",verdict="VERIFIED-GOOD"} 1.0'
            in text)
    assert 'recompute_watch_check_healthy{check="b"} 1.0' in text
    assert 'recompute_watch_checks{health="healthy"} 2.0' in text  # a and b; c never verified
    assert 'recompute_watch_checks{health="unhealthy"} 0.0' in text
    sink.evaluated([_line(3, "a", Verdict.GOOD, True, True)])
    assert 'recompute_watch_verdicts_total{check="a",verdict="VERIFIED-GOOD"} 3.0' in (
        metrics.render())  # counted once more, not the earlier counts again


def test_an_unknown_or_derived_series_cannot_be_counted():
    metrics = Metrics()
    for key in (series_key("no_such_family"), series_key("checks", health="healthy")):
        with pytest.raises(KeyError):
            metrics.series(key)
