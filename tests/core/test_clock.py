"""The clock anchors are judged by (recompute/core/clock.py): parsing --at, the age the
evidence records, the two refusals. Expected values are hand-computed."""

from __future__ import annotations

import pytest

from recompute.core.clock import Clock, parse_time, span
from recompute.core.errors import Unverifiable, UsageError


def test_at_is_unix_seconds_or_iso_8601_with_a_zone():
    assert parse_time("1767225600", "--at") == 1767225600  # 2026-01-01T00:00:00Z
    assert parse_time("2026-01-01T00:00:00Z", "--at") == 1767225600
    assert parse_time("2026-01-01T02:00:00+02:00", "--at") == 1767225600
    for text in ("2026-01-01T00:00:00", "yesterday", "", "1e9"):
        with pytest.raises(UsageError):
            parse_time(text, "--at")


def test_the_evidence_says_which_clock_and_how_old():
    clock = Clock(at=1767225600)
    assert clock.kind == "at"
    assert clock.evidence(1767225600 - 90) == {"block_timestamp": 1767225510, "clock": "at",
                                               "as_of": 1767225600, "age_s": 90}
    assert Clock().kind == "system"


def test_stale_and_future_name_the_lag():
    clock = Clock(at=10_000, max_anchor_age=2400, max_clock_drift=15)
    clock.check_fresh(10_000 - 2400, 2400, "block 7", "--max-anchor-age")  # at the bound
    with pytest.raises(Unverifiable) as stale:
        clock.check_fresh(10_000 - 2401, 2400, "block 7", "--max-anchor-age")
    assert stale.value.reason == "stale-anchor" and "40 min old" in stale.value.detail
    clock.check_not_future(10_015, "block 8")  # within the drift
    assert not clock.is_future(10_015) and clock.is_future(10_016)
    with pytest.raises(Unverifiable) as future:
        clock.check_not_future(10_016, "block 8")
    assert future.value.reason == "future-head"
    clock.check_not_future(10_075, "block 8", patience=60)  # waits, not refused


def test_spans_read_as_a_person_says_them():
    assert [span(s) for s in (12, 119, 120, 3600 + 120, 93412)] == [
        "12 s", "119 s", "2 min", "1 h 2 min", "1 d 1 h"]
