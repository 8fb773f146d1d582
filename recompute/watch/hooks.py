"""``--on-bad CMD``: a shell command run when a check turns unhealthy (docs/watch.md §Hooks).

A check *turns* unhealthy when a verified verdict that is not its healthy one follows a
healthy verdict (or is its first verified verdict): once per transition, not at every block.
UNVERIFIABLE is no evidence either way and leaves the state as it was. Silence is the one
exception: once per outage, when no block has been verified for longer than
``--max-anchor-age`` (:meth:`Hook.alert`), the command runs with the first UNVERIFIABLE line
about the block awaited. The command gets the JSON line on stdin and ``RECOMPUTE_CHECK`` /
``RECOMPUTE_BLOCK`` / ``RECOMPUTE_VERDICT`` in its environment; it runs in a worker thread, in
order, so a slow hook never delays a verdict.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Callable
from typing import Protocol

from recompute.watch.evaluate import Line

HOOK_TIMEOUT = 60.0


class Hook(Protocol):
    """What the sink shows lines to (``--on-bad``, the webhook, or both)."""

    def observe(self, line: Line) -> None: ...

    def alert(self, line: Line) -> None:
        """The watch is silent past its bound: ``line`` is the first UNVERIFIABLE line about
        the block awaited (told once per outage)."""

    def close(self) -> None: ...


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


class OnBad:
    def __init__(self, command: str, note: Callable[[str], None]):
        self.command = command
        self.note = note
        self._health = HealthTransitions()
        self._queue: queue.Queue[Line | None] = queue.Queue()
        self._worker = threading.Thread(target=self._run, name="watch-on-bad", daemon=True)
        self._worker.start()
        self.fired = 0

    def observe(self, line: Line) -> None:
        if self._health.change(line) == "unhealthy":
            self.fired += 1
            self._queue.put(line)

    def alert(self, line: Line) -> None:
        self.fired += 1
        self._queue.put(line)

    def close(self, timeout: float = 10.0) -> None:
        """Let queued hooks finish (at most ``timeout`` seconds)."""
        self._queue.put(None)
        self._worker.join(timeout)

    def _run(self) -> None:
        while (line := self._queue.get()) is not None:
            env = dict(os.environ, RECOMPUTE_CHECK=line.check, RECOMPUTE_BLOCK=str(line.block),
                       RECOMPUTE_VERDICT=line.verdict.value)
            try:
                done = subprocess.run(self.command, shell=True, env=env, text=True,
                                      input=json.dumps(line.to_json()) + "\n",
                                      timeout=HOOK_TIMEOUT, capture_output=True)
            except subprocess.TimeoutExpired:
                self.note(f"--on-bad: the command ran over {HOOK_TIMEOUT:.0f}s and was stopped")
                continue
            except OSError as exc:
                self.note(f"--on-bad: the command could not start: {exc}")
                continue
            if done.returncode != 0:
                tail = (done.stderr or "").strip().splitlines()[-1:] or [""]
                self.note(f"--on-bad: the command exited {done.returncode} {tail[0][:200]}")
