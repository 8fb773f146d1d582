"""Segments on Dask (``dask.distributed``): ``--cluster tcp://HOST:8786`` (a running scheduler)
or ``--processes P`` (a local cluster of P worker processes, one Dask thread each: the checks are
CPU-bound Python, so processes, not threads, add throughput; inside a task, ``--workers``
threads only overlap the node's latency). docs/watch.md §Audits that outgrow one machine.

Dask does the scheduling and the fault handling: a worker that dies mid-segment has its task
re-run on another worker by the scheduler (up to its ``allowed-failures``, 3 by default); a task
that still fails (the scheduler gives up on it: ``KilledWorker``, or the worker could not run
it) comes back here as a failed :class:`~recompute.watch.segment.SegmentResult` whose blocks the
coordinator turns into UNVERIFIABLE lines (reason ``segment-failed``). A
:class:`~recompute.core.errors.UsageError` raised in a worker (a check that cannot be asked, or a
worker running another recompute version) stops the audit as a usage error.

The local cluster listens on 127.0.0.1 only (its HTTP endpoint on a free loopback port). Dask
is imported only here, and only when one of the two options is given.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator

from recompute.core.errors import UsageError
from recompute.watch.linking import SEGMENT_FAILED
from recompute.watch.segment import SegmentResult, SegmentTask, evaluate_segment

CONNECT_TIMEOUT = "10s"


class DaskExecutor:
    """Hands tasks to a Dask cluster; yields results as they finish."""

    def __init__(self, *, cluster: str | None = None, processes: int | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("--cluster and --processes need dask.distributed: "
                             "pip install 'dask[distributed]'") from None
        self.local = None
        if cluster is not None:
            try:
                self.client = Client(cluster, timeout=CONNECT_TIMEOUT,
                                     set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise UsageError(f"--cluster {cluster}: no Dask scheduler answered "
                                 f"({str(exc).splitlines()[0] if str(exc) else exc!r})"
                                 ) from None
            self.where = f"the Dask cluster {cluster}"
        else:
            self.local = LocalCluster(n_workers=processes, threads_per_worker=1,
                                      processes=True, host="127.0.0.1", scheduler_port=0,
                                      dashboard_address="127.0.0.1:0",
                                      silence_logs=logging.ERROR)
            self.client = Client(self.local, set_as_default=False)
            self.where = f"{processes} local worker process(es)"
        self.audit_id = uuid.uuid4().hex[:12]

    def __call__(self, tasks: list[SegmentTask], stop: threading.Event
                 ) -> Iterator[tuple[SegmentTask, SegmentResult]]:
        from distributed import as_completed

        futures = {}
        for task in tasks:
            future = self.client.submit(evaluate_segment, task, pure=False, retries=1,
                                        key=f"recompute-segment-{self.audit_id}-{task.lo}")
            futures[future.key] = (future, task)
        try:
            for future in as_completed([f for f, _ in futures.values()],
                                       loop=self.client.loop):
                task = futures[future.key][1]
                yield task, self._result(future, task)
                if stop.is_set():
                    return
        finally:
            for future, _ in futures.values():
                if not future.done():
                    future.cancel()

    @staticmethod
    def _result(future, task: SegmentTask) -> SegmentResult:
        try:
            return future.result()
        except UsageError:
            raise
        except Exception as exc:  # the scheduler gave up on the task (KilledWorker, …)
            text = str(exc).splitlines()[0] if str(exc) else ""
            return SegmentResult(task.lo, task.hi, failure=(
                SEGMENT_FAILED, f"{type(exc).__name__}: {text}"[:300]))

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.local is not None:
                self.local.close()
