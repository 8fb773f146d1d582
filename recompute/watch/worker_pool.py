"""``--processes P``: segments on P worker processes of this machine, without Dask
(docs/watch.md §Audits that outgrow one machine).

Each worker is ``python -P -m recompute.watch.worker_pool`` (this interpreter, the installed
package; ``-P``: the working directory is not put on ``sys.path``, docs/executables.md). It
imports only what :func:`~recompute.watch.segment.evaluate_segment` needs (no Dask, no command
line: about a quarter of a Dask worker's start), then evaluates one segment at a time, sent to
it and returned as pickles over a pair of pipes of its own (never its stdout, which a recipe may
print to). A worker keeps its caches from one segment to the next, as a Dask worker does
(recompute.watch.segment: one evaluator and one shared source per endpoint per process).

Each worker has a lane (:func:`lanes`): a contiguous run of the segments, taken lowest first, so
that a worker reads the history below its run once. The log-reading checks scan every header's
bloom from their first block up; at a segment's first block that scan stops at the block below,
whose scan the same worker kept a moment before (recompute.core.caching: log scans kept by block
hash), and that block's reads are there to be carried (recompute.evaluator.carry), as in one
process. Segments dealt out in turn instead, each worker walked and scanned nearly the whole
history below the range's top. A worker whose lane is empty takes the upper half of the longest
lane left (:func:`steal`), so no worker idles while segments wait.

The workers an audit starts come from one interpreter start: the first imports the segment
evaluator, then forks the others (:func:`main`) before it runs anything else (no thread, no
socket yet), so a second worker costs a fork, not a second import (about 0.15 s of CPU, most of
what a second worker added once it no longer read the history twice). A forked worker is its
parent worker's child: the parent reaps it, and waits for every one before it exits, so their
CPU time still adds up in the coordinator's ``RUSAGE_CHILDREN``. A worker started later (one
that died is replaced) is a fresh interpreter of its own.

Faults, as the Dask executor meets them: a worker that dies mid-segment (killed, out of memory)
or a segment that raises has that segment run again on a fresh worker, once (Dask's
``retries=1``); a segment that fails again comes back as a failed
:class:`~recompute.watch.segment.SegmentResult` (reason ``segment-failed``), which the
coordinator turns into UNVERIFIABLE lines. A :class:`~recompute.core.errors.UsageError` in a
worker stops the audit as a usage error. Workers ignore SIGINT: the coordinator decides what an
interrupt stops, then ends them (asked to exit, then terminated). Every worker is waited for, so
its CPU time is the coordinator's (``RUSAGE_CHILDREN``).
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from recompute.core.errors import UsageError
from recompute.watch.linking import SEGMENT_FAILED
from recompute.watch.segment import SegmentResult, SegmentTask

RERUNS = 1  # a segment whose worker died or that raised is run once more (Dask's retries=1)
POLL = 0.2  # seconds between looks at the stop event while segments run
EXIT_WAIT = 5.0  # seconds a worker is given to exit when asked, before it is terminated


class _Forked:
    """A worker another worker forked (module docstring): not this process's child, so it is
    killed by its pid and waited for until its parent has reaped it (at most ``EXIT_WAIT``)."""

    def __init__(self, pid: int):
        self.pid = pid

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def wait(self, timeout: float | None = None) -> int:
        deadline = time.monotonic() + (EXIT_WAIT if timeout is None else timeout)
        while True:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return 0
            if time.monotonic() > deadline:
                if timeout is None:
                    return -1  # still there (its parent stopped reaping): nothing more to do
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            time.sleep(0.01)


@dataclass(eq=False)
class _Worker:
    process: subprocess.Popen[bytes] | _Forked
    send: Connection  # tasks to the worker
    receive: Connection  # its answers
    task: SegmentTask | None = None
    lane: int = -1  # the lane (recompute.watch.worker_pool.lanes) it takes segments from


class LocalProcesses:
    """Hands tasks to ``processes`` local worker processes; yields results as they finish."""

    def __init__(self, processes: int):
        self.processes = processes
        self.where = f"{processes} local worker process(es)"
        self.idle: list[_Worker] = []
        self.started: list[_Worker] = []

    def __call__(self, tasks: list[SegmentTask], stop: threading.Event
                 ) -> Iterator[tuple[SegmentTask, SegmentResult]]:
        runs = lanes(tasks, self.processes)
        missing = min(self.processes, len(tasks)) - len(self.idle)
        if missing > 0 and not stop.is_set():
            self._start_many(missing)
        failures: dict[int, int] = {}
        busy: dict[int, _Worker] = {}  # the fd of a worker's answers -> the worker
        while any(runs) or busy:
            while len(busy) < self.processes and not stop.is_set():
                lane = _free_lane(runs, {w.lane for w in busy.values()})
                if lane is None:
                    break
                worker = self._worker_for(lane)
                worker.lane = lane
                worker.task = runs[lane].popleft()
                try:
                    worker.send.send_bytes(pickle.dumps(worker.task))
                except OSError:  # it died while idle: its segment waits for another
                    runs[lane].appendleft(worker.task)
                    self._end(worker)
                    continue
                busy[worker.receive.fileno()] = worker
            if stop.is_set():
                return
            for ready in wait([w.receive for w in busy.values()], timeout=POLL):
                worker = busy.pop(ready.fileno())  # type: ignore[union-attr]
                task = worker.task
                assert task is not None
                answer = _answer(worker)
                if answer is not None and answer[0] == "ok":
                    worker.task = None
                    self.idle.append(worker)
                    result = answer[1]
                    assert isinstance(result, SegmentResult)  # what serve() sends with "ok"
                    yield task, result
                    continue
                if answer is None:  # the worker died mid-segment
                    self._end(worker)
                    detail = "the worker process died"
                else:
                    worker.task = None
                    self.idle.append(worker)
                    if answer[0] == "usage":
                        raise UsageError(str(answer[1]))
                    detail = str(answer[1])
                failures[task.lo] = failures.get(task.lo, 0) + 1
                if failures[task.lo] <= RERUNS:
                    runs[worker.lane].appendleft(task)
                else:
                    yield task, SegmentResult(task.lo, task.hi, failure=(
                        SEGMENT_FAILED, detail[:300]))

    def _worker_for(self, lane: int) -> _Worker:
        """The idle worker that last served ``lane`` (its caches hold the segment below),
        else another idle one, else a new one."""
        for worker in self.idle:
            if worker.lane == lane:
                self.idle.remove(worker)
                return worker
        return self.idle.pop() if self.idle else self._start()

    def close(self) -> None:
        """End every worker: one still in a segment (an interrupted audit) at once, an idle one
        asked to exit; each is waited for."""
        workers = list(self.started)
        for worker in workers:  # every pipe first: a parent waits for the workers it forked
            if worker.task is not None:
                worker.process.kill()
            worker.send.close()
            worker.receive.close()
        for worker in workers:
            self._end(worker)
        self.idle = []

    def _start(self) -> _Worker:
        return self._spawn(1)[0]

    def _start_many(self, count: int) -> None:
        """``count`` more idle workers, forked from one interpreter start where the system
        can (module docstring); started one by one if the first could not say whom it
        forked."""
        if count < 2 or not hasattr(os, "fork"):
            self.idle += [self._start() for _ in range(count)]
            return
        workers = self._spawn(count)
        answer = _answer(workers[0])
        pids = answer[1] if answer is not None and answer[0] == "forked" else None
        if not isinstance(pids, list) or len(pids) != count - 1:
            for worker in workers:
                self._end(worker)
            self.idle += [self._start() for _ in range(count)]
            return
        for worker, pid in zip(workers[1:], pids, strict=True):
            worker.process = _Forked(pid)
        self.idle += workers

    def _spawn(self, count: int) -> list[_Worker]:
        """One new interpreter serving ``count`` pipe pairs (the first itself, the others by
        the workers it forks: their ``process`` is set by the caller)."""
        pairs = [(*os.pipe(), *os.pipe()) for _ in range(count)]  # to_worker, from_here, …
        fds = [fd for to_worker, _, _, from_worker in pairs for fd in (to_worker, from_worker)]
        try:
            process = subprocess.Popen(
                [sys.executable, "-P", "-m", "recompute.watch.worker_pool", *map(str, fds)],
                pass_fds=fds, stdin=subprocess.DEVNULL)
        finally:
            for fd in fds:
                os.close(fd)
        workers = [_Worker(process, Connection(from_here, readable=False),
                           Connection(to_here, writable=False))
                   for _, from_here, to_here, _ in pairs]
        self.started += workers
        return workers

    def _end(self, worker: _Worker) -> None:
        """Ask the worker to exit (its pipe closed), wait for it, kill it if it lingers."""
        if worker in self.started:
            self.started.remove(worker)
        worker.send.close()
        worker.receive.close()
        try:
            worker.process.wait(EXIT_WAIT)
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait()


def lanes(tasks: list[SegmentTask], count: int) -> list[deque[SegmentTask]]:
    """``tasks`` cut into ``count`` contiguous runs of (nearly) equal length, each lowest
    first: the lane of one worker (module docstring)."""
    ordered = sorted(tasks, key=lambda t: t.lo)
    size, extra = divmod(len(ordered), count)
    out: list[deque[SegmentTask]] = []
    start = 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        out.append(deque(ordered[start:end]))
        start = end
    return out


def _free_lane(runs: list[deque[SegmentTask]], held: set[int]) -> int | None:
    """The lane a free worker serves next: one no busy worker holds that has segments left,
    else an empty one, given the upper half of the longest (:func:`steal`); None if none."""
    free = [i for i in range(len(runs)) if i not in held]
    lane = next((i for i in free if runs[i]), None)
    if lane is None and free and any(runs):
        lane = free[0]
        steal(runs, lane)
    return lane


def steal(runs: list[deque[SegmentTask]], into: int) -> None:
    """Move the upper half (at least one segment) of the longest lane into the empty lane
    ``into``: its worker takes those lowest first, having walked the history below them
    once."""
    longest = max(range(len(runs)), key=lambda i: len(runs[i]))
    source = runs[longest]
    keep = len(source) // 2
    moved = [source.pop() for _ in range(len(source) - keep)]
    runs[into].extend(reversed(moved))


def _answer(worker: _Worker) -> tuple[str, object] | None:
    """("ok", SegmentResult) | ("usage", text) | ("error", text); None if the worker died."""
    try:
        answer: tuple[str, object] = pickle.loads(worker.receive.recv_bytes())
        return answer
    except (EOFError, OSError):
        return None


def serve(receive: Connection, send: Connection) -> None:
    """A worker: segments in, results out, until the coordinator closes the pipe."""
    from recompute.watch.segment import evaluate_segment

    while True:
        try:
            task = pickle.loads(receive.recv_bytes())
        except EOFError:
            return
        try:
            answer: tuple[str, object] = ("ok", evaluate_segment(task))
        except UsageError as exc:
            answer = ("usage", str(exc))
        except Exception as exc:  # noqa: BLE001 -- sent to the coordinator, which re-runs it
            text = str(exc).splitlines()[0] if str(exc) else ""
            answer = ("error", f"{type(exc).__name__}: {text}")
        send.send_bytes(pickle.dumps(answer))


def main(fds: list[int]) -> None:
    """A worker process given ``(tasks in, answers out)`` pipe pairs: the first pair is its
    own; for each other it forks a worker, having imported the segment evaluator (module
    docstring), and sends the coordinator their pids first. It reaps them as they end and
    waits for every one before it exits."""
    import recompute.watch.segment  # noqa: F401 -- imported once, before the forks

    pairs = list(zip(fds[0::2], fds[1::2], strict=True))
    pids = []
    for index, (receive, send) in enumerate(pairs[1:], start=1):
        pid = os.fork()
        if pid == 0:
            try:
                for other, (r, w) in enumerate(pairs):
                    if other != index:
                        os.close(r)
                        os.close(w)
                serve(Connection(receive, writable=False), Connection(send, readable=False))
            finally:
                os._exit(0)
        pids.append(pid)
    for receive, send in pairs[1:]:
        os.close(receive)
        os.close(send)
    answers = Connection(pairs[0][1], readable=False)
    if pids:
        signal.signal(signal.SIGCHLD, _reap)
        answers.send_bytes(pickle.dumps(("forked", pids)))
    serve(Connection(pairs[0][0], writable=False), answers)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    while True:  # every forked worker waited for: their CPU time is then this process's
        try:
            os.wait()
        except ChildProcessError:
            return


def _reap(signum: int, frame: object) -> None:
    """SIGCHLD: reap the forked workers that ended (none stays a zombie while this runs)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    main([int(arg) for arg in sys.argv[1:]])
