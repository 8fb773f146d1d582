"""Tying a range audit's segments into one chain of parent links up to the pinned block
(recompute/watch/linking.py). Pure: hand-made hashes, the links drawn by hand below."""

from __future__ import annotations

from recompute.watch.linking import plan_segments, tie, without_lines
from recompute.watch.segment import SegmentResult


def h(n: int, fork: str = "a") -> str:
    """A made-up block hash: chain ``fork``, block ``n``."""
    return "0x" + (fork * 2 + f"{n:062x}")[:64]


def segment(lo: int, hi: int, fork: str = "a", parent_fork: str | None = None) -> SegmentResult:
    """Blocks lo..hi of chain ``fork``, one line per block; the lowest block's parent is
    block lo-1 of ``parent_fork`` (default: the same chain)."""
    hashes = [h(n, fork) for n in range(lo, hi + 1)]
    lines = [{"block": n, "hash": h(n, fork), "check": "c"} for n in range(lo, hi + 1)]
    return SegmentResult(lo, hi, lines, hashes, h(lo - 1, parent_fork or fork), hashes[-1],
                         endpoint="http://127.0.0.1:1")


def test_the_plan_covers_the_range_once():
    assert plan_segments(1, 10, 4) == [(1, 4), (5, 8), (9, 10)]
    assert plan_segments(7, 7, 64) == [(7, 7)]


def test_segments_of_one_chain_link_up_to_the_pin():
    plan = plan_segments(1, 12, 4)
    results = {lo: segment(lo, hi) for lo, hi in plan}
    assert [t.linked for t in tie(12, h(12), plan, results)] == [True, True, True]


def test_a_top_that_is_not_the_pinned_block_links_nothing():
    plan = plan_segments(1, 12, 4)
    results = {lo: segment(lo, hi) for lo, hi in plan}
    ties = tie(12, h(12, "b"), plan, results)
    assert [(t.linked, t.reason) for t in ties] == [(False, "header-mismatch")] * 3
    assert "not the pinned" in ties[2].detail


def test_a_segment_from_another_chain_is_never_merged_nor_is_anything_below_it():
    """Blocks 5..8 served from fork b (a lying or reorged node): 9..12 link to the pin, 5..8
    do not (their top is not 9's parent), and 1..4, though on chain a, are no longer tied to
    the pin by any chain of links."""
    plan = plan_segments(1, 12, 4)
    results = {1: segment(1, 4), 5: segment(5, 8, "b", parent_fork="a"), 9: segment(9, 12)}
    ties = tie(12, h(12), plan, results)
    assert [t.linked for t in ties] == [False, False, True]
    assert "block 9 names" in ties[1].detail and h(8, "a") in ties[1].detail
    assert "above do not link" in ties[0].detail


def test_a_failed_or_missing_segment_breaks_the_chain_below_it():
    plan = plan_segments(1, 12, 4)
    failed = SegmentResult(5, 8, failure=("rpc-unreachable", "connection refused"))
    ties = tie(12, h(12), plan, {1: segment(1, 4), 5: failed, 9: segment(9, 12)})
    assert [(t.linked, t.reason) for t in ties] == [
        (False, "header-mismatch"), (False, "rpc-unreachable"), (True, "")]
    ties = tie(12, h(12), plan, {1: segment(1, 4), 9: segment(9, 12)})
    assert ties[1].reason == "segment-failed"


def test_a_segment_whose_lines_name_other_hashes_is_not_merged():
    plan = [(1, 4)]
    result = segment(1, 4)
    result.lines[2] = {**result.lines[2], "hash": h(3, "b")}
    assert tie(4, h(4), plan, {1: result})[0].linked is False
    short = segment(1, 4)
    short.hashes = short.hashes[1:]
    assert tie(4, h(4), plan, {1: short})[0].linked is False
    outside = segment(1, 4)
    outside.lines.append({"block": 9, "hash": h(4), "check": "c"})
    assert tie(4, h(4), plan, {1: outside})[0].linked is False


def test_a_result_kept_without_its_lines_remembers_that_they_did_not_hold_together():
    """The coordinator keeps results without their lines (those are in the store): the check
    of the lines against the hashes is made before they are dropped, and still counts."""
    good, bad = segment(5, 8), segment(1, 4)
    bad.lines[0] = {**bad.lines[0], "hash": h(1, "b")}
    results = {1: without_lines(bad), 5: without_lines(good)}
    assert (bad.lines, good.lines) == ([], [])
    assert [t.linked for t in tie(8, h(8), [(1, 4), (5, 8)], results)] == [False, True]
