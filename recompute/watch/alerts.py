"""How a watch's alerts leave it (the command of :mod:`recompute.watch.hooks`, the POSTs of
:mod:`recompute.watch.webhook`): queued, and sent in order by a worker thread of their own, each
within a bound, so that neither a slow receiver nor a hung command delays a verdict, stalls the
alerts after it, or holds the watch at its end (docs/watch.md §Hooks, §Webhook).

- Each alert's delivery is bounded by its hook (a webhook POST: a deadline on the whole
  exchange, a few attempts; a command: killed with its process group past its limit).
- At most :data:`MAX_QUEUED` alerts wait; one more is not delivered.
- An alert not delivered is said on stderr (one line: the hook, the alert, why) and counted in
  ``alerts_undelivered_total{hook}`` (recompute.watch.metrics).
- On close the alerts still queued have until one deadline, :data:`CLOSE_WAIT` seconds for
  every hook together (:class:`Hooks`); then the one in flight is cut off, and each one left
  is said and counted as not delivered.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from recompute.core.outside_text import visible
from recompute.watch.evaluate import Line
from recompute.watch.metrics import Metrics

CLOSE_WAIT = 10.0  # seconds a watch waits at its end for its alerts, all hooks together
MAX_QUEUED = 1000  # alerts waiting to be sent, per hook
_CUT_OFF_WAIT = 5.0  # seconds for the worker to see the cut-off alert fail and say the rest

Alert = TypeVar("Alert")


class AlertSender(Generic[Alert]):
    """The queue and worker of one hook. A subclass says how one alert is delivered
    (:meth:`deliver`: None when it was, else why not), how it is named (:meth:`describe`) and
    how the delivery in flight is cut off (:meth:`cut_off`)."""

    hook = "alert"  # the metric's label
    option = "alert"  # who speaks in the notes (the hook's option)

    def __init__(self, note: Callable[[str], None], metrics: Metrics | None = None):
        self.note = note
        self.metrics = metrics
        self.undelivered = 0
        self.closing = threading.Event()  # set once the close deadline has passed
        self._queue: queue.Queue[Alert | None] = queue.Queue()
        self._finished = False
        self._worker = threading.Thread(target=self._run, name=f"watch-{self.hook}",
                                        daemon=True)
        self._worker.start()

    # ---- what a hook defines ---------------------------------------------------------------

    def observe(self, line: Line) -> None:
        """A line the watch wrote: :meth:`send` an alert when it calls for one."""
        raise NotImplementedError

    def alert(self, line: Line) -> None:
        """The watch is silent past its bound: ``line`` is the first UNVERIFIABLE line about
        the block awaited (told once per outage): :meth:`send` an alert for it."""
        raise NotImplementedError

    def deliver(self, alert: Alert) -> str | None:
        raise NotImplementedError

    def describe(self, alert: Alert) -> str:
        raise NotImplementedError

    def cut_off(self) -> None:
        """End the delivery in flight at once (the close deadline has passed)."""

    # ---- the queue -------------------------------------------------------------------------

    def send(self, alert: Alert) -> None:
        """Queue ``alert`` (from the thread that shows the lines); never waits."""
        if self._finished or self.closing.is_set():
            self.not_delivered(alert, "the watch was closing")
        elif self._queue.qsize() >= MAX_QUEUED:
            self.not_delivered(alert, f"{MAX_QUEUED} alerts were already waiting")
        else:
            self._queue.put(alert)

    def not_delivered(self, alert: Alert, why: str) -> None:
        self.undelivered += 1
        if self.metrics is not None:
            self.metrics.inc("alerts_undelivered_total", hook=self.hook)
        self.note(visible(f"{self.option}: {self.describe(alert)} not delivered ({why})"))

    def _run(self) -> None:
        while (alert := self._queue.get()) is not None:
            if self.closing.is_set():
                self.not_delivered(alert, "the watch closed before it was sent")
                continue
            try:
                problem = self.deliver(alert)
            except Exception as exc:  # an alert's failure is said, never the worker's end
                problem = f"{type(exc).__name__}: {str(exc)[:200]}"
            if problem is not None:
                self.not_delivered(alert, problem)

    def finish(self) -> None:
        """No more alerts: the worker ends once the queued ones are sent."""
        if not self._finished:
            self._finished = True
            self._queue.put(None)

    def close(self, deadline: float | None = None) -> None:
        """Send the alerts still queued until ``deadline`` (``time.monotonic()``; default
        :data:`CLOSE_WAIT` from now); past it, cut off the one in flight and say each one left
        as not delivered."""
        if deadline is None:
            deadline = time.monotonic() + CLOSE_WAIT
        self.finish()
        self._worker.join(max(0.0, deadline - time.monotonic()))
        if not self._worker.is_alive():
            return
        self.closing.set()
        self.cut_off()
        self._worker.join(_CUT_OFF_WAIT)


class Hooks:
    """Several hooks behind the one the sink shows lines to (``--on-bad`` and the webhook),
    closed together within one :data:`CLOSE_WAIT`."""

    def __init__(self, hooks: list[AlertSender[Any]]):
        self.hooks = hooks

    def observe(self, line: Line) -> None:
        for hook in self.hooks:
            hook.observe(line)

    def alert(self, line: Line) -> None:
        for hook in self.hooks:
            hook.alert(line)

    def close(self, deadline: float | None = None) -> None:
        if deadline is None:
            deadline = time.monotonic() + CLOSE_WAIT
        for hook in self.hooks:
            hook.finish()
        for hook in self.hooks:
            hook.close(deadline)
