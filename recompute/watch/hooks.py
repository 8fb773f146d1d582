"""``--on-bad CMD``: a shell command run when a check turns unhealthy (docs/watch.md §Hooks).

A check *turns* unhealthy when a verified verdict that is not its healthy one follows a
healthy verdict (or is its first verified verdict): once per transition, not at every block.
UNVERIFIABLE is no evidence either way and leaves the state as it was. Silence is the one
exception: once per outage, when no block has been verified for longer than
``--max-anchor-age`` (:meth:`Hook.alert`), the command runs with the first UNVERIFIABLE line
about the block awaited. The command gets the JSON line on stdin and ``RECOMPUTE_CHECK`` /
``RECOMPUTE_BLOCK`` / ``RECOMPUTE_VERDICT`` in its environment; it runs in a worker thread, in
order (:mod:`recompute.watch.alerts`), so a slow hook never delays a verdict. A command still
running after :data:`HOOK_TIMEOUT` seconds is killed with its process group (it runs in a
session of its own), and said; so is one still running when the watch's close deadline passes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from typing import Protocol

from recompute.core.jsontext import json_line
from recompute.core.outside_text import visible
from recompute.watch.alerts import AlertSender
from recompute.watch.evaluate import Line
from recompute.watch.metrics import Metrics

HOOK_TIMEOUT = 60.0


class Hook(Protocol):
    """What the sink shows lines to (``--on-bad``, the webhook, or both)."""

    def observe(self, line: Line) -> None: ...

    def alert(self, line: Line) -> None:
        """The watch is silent past its bound: ``line`` is the first UNVERIFIABLE line about
        the block awaited (told once per outage)."""

    def close(self, deadline: float | None = None) -> None: ...


class HealthTransitions:
    """Per check, whether its last verified line was unhealthy: :meth:`change` says when a line
    turns a check ``"unhealthy"`` or ``"healthy"`` again (None otherwise, and for lines with no
    verdict on health), so alerts fire once per transition, not once per block."""

    def __init__(self) -> None:
        self._unhealthy: dict[str, bool] = {}

    def change(self, line: Line) -> str | None:
        if line.healthy is None:
            return None
        was = self._unhealthy.get(line.check, False)
        self._unhealthy[line.check] = not line.healthy
        if not line.healthy and not was:
            return "unhealthy"
        if line.healthy and was:
            return "healthy"
        return None


class OnBad(AlertSender[Line]):
    hook = "on-bad"
    option = "--on-bad"

    def __init__(self, command: str, note: Callable[[str], None],
                 metrics: Metrics | None = None, timeout: float = HOOK_TIMEOUT):
        self.command = command
        self.timeout = timeout
        self._health = HealthTransitions()
        self._running: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self.fired = 0
        super().__init__(note, metrics)

    def observe(self, line: Line) -> None:
        if self._health.change(line) == "unhealthy":
            self.fired += 1
            self.send(line)

    def alert(self, line: Line) -> None:
        self.fired += 1
        self.send(line)

    def describe(self, alert: Line) -> str:
        state = "silent" if alert.hash is None else "unhealthy"
        return f"{state} {alert.check} at {alert.block}"

    def cut_off(self) -> None:
        with self._lock:
            if self._running is not None:
                _kill_group(self._running)

    def deliver(self, alert: Line) -> str | None:
        line = alert
        env = dict(os.environ, RECOMPUTE_CHECK=visible(line.check), RECOMPUTE_BLOCK=str(line.block),
                   RECOMPUTE_VERDICT=line.verdict.value)
        # the line on stdin and stderr kept from files, not pipes: a child the command leaves
        # behind holds no pipe the watch would wait on
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stderr:
            stdin.write((json_line(line.to_json()) + "\n").encode())
            stdin.seek(0)
            try:
                process = subprocess.Popen(self.command, shell=True, env=env, stdin=stdin,
                                           stdout=subprocess.DEVNULL, stderr=stderr,
                                           start_new_session=True)
            except OSError as exc:
                return f"the command could not start: {exc}"
            with self._lock:
                self._running = process
            if self.closing.is_set():
                _kill_group(process)
            try:
                code = process.wait(self.timeout)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                process.wait()
                return f"the command ran over {self.timeout:g} s and was killed"
            finally:
                with self._lock:
                    self._running = None
            if code == 0:
                return None
            if self.closing.is_set():
                return "cut off: the watch closed and the command was killed"
            stderr.seek(0)
            tail = stderr.read(1 << 16).decode(errors="replace").strip().splitlines()[-1:]
            return f"the command exited {code}" + (f": {visible(tail[0], 200)}" if tail else "")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the command's process group (its session's: the shell and its children)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
