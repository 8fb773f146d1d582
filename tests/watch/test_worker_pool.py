"""``--processes``' local workers (recompute.watch.worker_pool) against the devnet history: a
worker SIGKILLed in the middle of a segment (held there: the node's answer to its first proof
waits until the kill) has the segment run again on a fresh worker, with the lines of an
uninterrupted run; a segment whose worker is killed twice comes back failed (``segment-failed``,
which the coordinator turns into UNVERIFIABLE lines), never as lines; a UsageError in a worker
stops the audit as one.

Independent expectation: the same segment evaluated in this process (evaluate_segment, no
worker), through the same node.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from recompute.core.errors import UsageError
from recompute.version import __version__
from recompute.watch.linking import SEGMENT_FAILED, plan_segments
from recompute.watch.segment import SegmentTask, evaluate_segment
from recompute.watch.worker_pool import LocalProcesses, lanes, steal
from tests.rpcproxy import RpcProxy
from tests.watch.watchproc import EXAMPLE

LO, HI = 150, 157


class HeldNode:
    """A proxy that holds the answer to the first eth_getProof of each of ``holds`` segment
    runs until the test has killed the worker asking it."""

    def __init__(self, upstream: str, holds: int):
        self.holds = holds
        self.arrived = threading.Event()
        self.killed = threading.Event()
        self.proxy = RpcProxy(upstream, self.rewrite)

    def rewrite(self, method: str, params: list, reply: dict) -> dict:
        if method == "eth_getProof" and self.holds > 0:
            self.arrived.set()
            self.killed.wait(60)
        return reply

    def kill_when_held(self, pool: LocalProcesses, times: int) -> threading.Thread:
        def run():
            for _ in range(times):
                assert self.arrived.wait(60)
                busy = next(w for w in pool.started if w.task is not None)
                busy.process.kill()
                busy.process.wait()
                self.holds -= 1
                self.arrived.clear()
                self.killed.set()
                self.killed.clear()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread


def task(url: str, version: str = __version__) -> SegmentTask:
    return SegmentTask(LO, HI, EXAMPLE.read_text(), str(EXAMPLE), (url,), version=version,
                       retries=0)


@pytest.fixture(scope="module")
def expected(devnet):
    node, _ = devnet
    return evaluate_segment(task(node.url))


@pytest.mark.parametrize("kills", [1, 2])
def test_a_killed_worker_has_its_segment_rerun_once_then_failed(devnet, expected, kills):
    node, _ = devnet
    held = HeldNode(node.url, kills)
    pool = LocalProcesses(1)
    with held.proxy as proxy:
        try:
            killer = held.kill_when_held(pool, kills)
            results = list(pool([task(proxy.url)], threading.Event()))
            killer.join(60)
        finally:
            pool.close()
    assert len(results) == 1
    result = results[0][1]
    if kills == 1:
        assert result.failure is None
        assert (result.lines, result.hashes, result.top_hash) == (
            expected.lines, expected.hashes, expected.top_hash)
        assert len(result.lines) > 0
    else:
        assert result.failure is not None and result.failure[0] == SEGMENT_FAILED
        assert result.lines == [] and result.hashes == []
    assert pool.started == []  # every worker waited for


def test_a_usage_error_in_a_worker_stops_the_audit(devnet):
    node, _ = devnet
    pool = LocalProcesses(1)
    try:
        with pytest.raises(UsageError, match="install the same version on every worker"):
            list(pool([task(node.url, version="0.0.0-other")], threading.Event()))
    finally:
        pool.close()


# ---- lanes: each worker a contiguous run of segments, lowest first ----------------------------


def tasks_of(plan: list[tuple[int, int]], url: str = "http://127.0.0.1:1") -> list[SegmentTask]:
    """Tasks as the coordinator hands them: highest first."""
    return [SegmentTask(lo, hi, "", "", (url,)) for lo, hi in sorted(plan, reverse=True)]


def test_lanes_are_contiguous_runs_lowest_first_covering_every_segment_once():
    plan = plan_segments(1, 70, 10)  # 7 segments: 1..10 … 61..70
    runs = lanes(tasks_of(plan), 2)
    assert [[t.lo for t in run] for run in runs] == [[1, 11, 21, 31], [41, 51, 61]]
    runs = lanes(tasks_of(plan), 3)
    assert [[t.lo for t in run] for run in runs] == [[1, 11, 21], [31, 41], [51, 61]]
    assert [len(run) for run in lanes(tasks_of(plan[:1]), 2)] == [1, 0]


def test_an_empty_lane_takes_the_upper_half_of_the_longest_lane():
    runs = lanes(tasks_of(plan_segments(1, 100, 10)), 2)  # [1..41], [51..91]
    runs[1].clear()
    steal(runs, 1)
    assert [[t.lo for t in run] for run in runs] == [[1, 11], [21, 31, 41]]
    runs[0].clear()
    steal(runs, 0)
    assert [[t.lo for t in run] for run in runs] == [[31, 41], [21]]
    runs[1].clear()
    steal(runs, 1)
    assert [[t.lo for t in run] for run in runs] == [[31], [41]]


def test_two_workers_read_the_history_below_the_upper_lane_once(devnet):
    """The devnet's 226 blocks in 15 segments of 16 on two workers: every segment comes back
    linked to the one above it, and the node is asked for about 1.5 headers a block (the lower
    lane's blocks by both workers, the upper lane's by its own), where segments dealt out in
    turn had each worker read nearly every header below the top (about 2 a block)."""
    node, _ = devnet
    last = 226
    plan = plan_segments(1, last, 16)
    with RpcProxy(node.url) as proxy:
        tasks = [SegmentTask(lo, hi, EXAMPLE.read_text(), str(EXAMPLE), (proxy.url,),
                             version=__version__) for lo, hi in sorted(plan, reverse=True)]
        pool = LocalProcesses(2)
        try:
            results = {r.lo: r for _, r in pool(tasks, threading.Event())}
        finally:
            pool.close()
        headers = proxy.methods["eth_getBlockByNumber"] + proxy.methods["eth_getBlockByHash"]
    assert sorted(results) == [lo for lo, _ in plan]
    assert all(r.failure is None for r in results.values())
    for (lo, _), (above, _) in zip(plan, plan[1:], strict=False):
        assert results[above].parent_hash == results[lo].top_hash
    assert last <= headers <= 1.75 * last, headers  # in turn: 525 (2.3 a block)


def test_the_second_worker_is_forked_by_the_first_and_waited_for(devnet, expected):
    """Two workers from one interpreter start: the second is the first's child (its parent
    process, from /proc), both give the lines this process gives, and once the pool is closed
    neither is left."""
    node, _ = devnet
    below = SegmentTask(LO - 8, LO - 1, EXAMPLE.read_text(), str(EXAMPLE), (node.url,),
                        version=__version__, retries=0)
    pool = LocalProcesses(2)
    try:
        results = {r.lo: r for _, r in pool([task(node.url), below], threading.Event())}
        first, second = pool.started
        parent = int(Path(f"/proc/{second.process.pid}/stat").read_text().rsplit(")", 1)[1]
                     .split()[1])
        assert parent == first.process.pid
        pids = [first.process.pid, second.process.pid]
    finally:
        pool.close()
    assert (results[LO].lines, results[LO].hashes) == (expected.lines, expected.hashes)
    assert results[LO - 8].top_hash == expected.parent_hash  # the segment below links
    assert pool.started == []
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists()


def test_a_killed_forked_worker_has_its_segment_rerun(devnet, expected):
    """The forked worker SIGKILLed mid-segment (held at its first proof): its parent, the
    first worker, goes on; the segment is run again on a fresh worker, with the lines of an
    uninterrupted run, and no worker is left once the pool is closed."""
    node, _ = devnet
    held = HeldNode(node.url, 1)
    pool = LocalProcesses(2)
    with held.proxy as proxy:
        below = SegmentTask(LO - 8, LO - 1, EXAMPLE.read_text(), str(EXAMPLE), (proxy.url,),
                            version=__version__, retries=0)

        def kill_forked():
            assert held.arrived.wait(60)
            forked = next(w for w in pool.started if w.process is not pool.started[0].process)
            killed.append(forked.process.pid)
            forked.process.kill()
            forked.process.wait()
            held.holds = 0
            held.killed.set()

        killed: list[int] = []
        killer = threading.Thread(target=kill_forked, daemon=True)
        killer.start()
        try:
            results = {r.lo: r for _, r in pool([task(proxy.url), below], threading.Event())}
            killer.join(60)
            assert len(killed) == 1 and len(pool.started) == 2  # the killed one replaced
            assert killed[0] not in [w.process.pid for w in pool.started]
        finally:
            pool.close()
    assert all(r.failure is None for r in results.values())
    assert (results[LO].lines, results[LO].hashes) == (expected.lines, expected.hashes)
    assert results[LO - 8].top_hash == expected.parent_hash
    assert pool.started == []
