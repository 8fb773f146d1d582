"""``--on-bad-webhook URL``: a JSON POST per health transition of a check (docs/watch.md §Webhook).

A check turns *unhealthy* when a verified verdict that is not its healthy one follows a healthy
one (or is its first verified verdict), and turns *healthy* again when a healthy verdict follows
an unhealthy one; UNVERIFIABLE is no evidence either way and leaves the state as it was (the
same rule as ``--on-bad``, :mod:`recompute.watch.hooks`). Each transition is one POST, sent from a
worker thread in order so a slow receiver never delays a verdict; each POST waits at most
:data:`TIMEOUT` seconds and is tried at most :data:`ATTEMPTS` times (a connection failure, a
timeout or a 5xx answer is tried again after 0.5 s, 1 s, …; a 4xx answer is not). The body
(``--webhook-format json``, the default)::

    {"source": "recompute", "event": "unhealthy" | "healthy", "check": NAME, "block": N,
     "hash": "0x…", "verdict": "VERIFIED-BAD", "reason": "predicate-failed", "detail": "…",
     "line": {…the watch's JSON line…}}

Once per outage, when no block has been verified for longer than ``--max-anchor-age`` (a node
stopped, or its head stopped moving), one POST with ``"event": "stale"``, ``"hash": null``
and the first UNVERIFIABLE line about the block awaited.

``--webhook-format slack`` sends ``{"text": "…"}``, which Slack's (and Mattermost's, Discord's
``/slack``) incoming webhooks accept.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

import requests

from recompute.core.errors import OptionError, UsageError
from recompute.sources.rpc import check_url
from recompute.watch.evaluate import JsonObject, Line
from recompute.watch.hooks import HealthTransitions, Hook

FORMATS = ("json", "slack")
TIMEOUT = 5.0
ATTEMPTS = 3
FIRST_RETRY = 0.5


def check_webhook_url(url: str) -> str:
    try:
        return check_url(url)
    except UsageError:
        raise OptionError("{on_bad_webhook} {url!r} is not an http(s) URL", ("on_bad_webhook",),
                          url=url) from None


def body(line: Line, event: str, fmt: str) -> JsonObject:
    """The POST body for ``line``, the first line of the transition to ``event``."""
    if fmt == "slack" and event == "stale":
        return {"text": f"recompute watch: SILENT: block {line.block} is overdue, nothing "
                        f"verified ({line.verdict.value}, {line.reason}): {line.detail}"}
    if fmt == "slack":
        state = "UNHEALTHY" if event == "unhealthy" else "healthy again"
        detail = f": {line.detail}" if line.detail else ""
        return {"text": f"recompute watch: check `{line.check}` is {state} at block "
                        f"{line.block} ({line.verdict.value}, {line.reason}){detail}"}
    return {"source": "recompute", "event": event, "check": line.check, "block": line.block,
            "hash": line.hash, "verdict": line.verdict.value, "reason": line.reason,
            "detail": line.detail, "line": line.to_json()}


class Webhook:
    """Posts each health transition of each check to ``url``."""

    def __init__(self, url: str, note: Callable[[str], None], fmt: str = "json",
                 timeout: float = TIMEOUT, attempts: int = ATTEMPTS):
        if fmt not in FORMATS:
            raise OptionError("{webhook_format} {fmt!r} is not one of {formats}",
                              ("webhook_format",), fmt=fmt, formats=", ".join(FORMATS))
        self.url = check_webhook_url(url)
        self.note = note
        self.fmt = fmt
        self.timeout = timeout
        self.attempts = attempts
        self._health = HealthTransitions()
        self._queue: queue.Queue[tuple[Line, str] | None] = queue.Queue()
        self._session = requests.Session()
        self._worker = threading.Thread(target=self._run, name="watch-webhook", daemon=True)
        self._worker.start()
        self.sent = 0

    def observe(self, line: Line) -> None:
        turned = self._health.change(line)
        if turned is not None:
            self._queue.put((line, turned))

    def alert(self, line: Line) -> None:
        self._queue.put((line, "stale"))

    def close(self, timeout: float = 20.0) -> None:
        """Let queued POSTs finish (at most ``timeout`` seconds)."""
        self._queue.put(None)
        self._worker.join(timeout)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            line, event = item
            self._post(body(line, event, self.fmt), f"{event} {line.check} at {line.block}")

    def _post(self, payload: JsonObject, what: str) -> None:
        delay = FIRST_RETRY
        for attempt in range(1, self.attempts + 1):
            try:
                reply = self._session.post(self.url, json=payload, timeout=self.timeout)
            except requests.RequestException as exc:
                problem = type(exc).__name__
            else:
                if reply.status_code < 300:
                    self.sent += 1
                    return
                problem = f"HTTP {reply.status_code}"
                if reply.status_code < 500:
                    break  # the receiver refuses this body: asking again will not help
            if attempt < self.attempts:
                time.sleep(delay)
                delay *= 2
        self.note(f"--on-bad-webhook: {what} not delivered ({problem}) after {attempt} "
                  "attempt(s)")


class Hooks:
    """Several hooks behind the one the sink shows lines to (``--on-bad`` and the webhook)."""

    def __init__(self, hooks: list[Hook]):
        self.hooks = hooks

    def observe(self, line: Line) -> None:
        for hook in self.hooks:
            hook.observe(line)

    def alert(self, line: Line) -> None:
        for hook in self.hooks:
            hook.alert(line)

    def close(self) -> None:
        for hook in self.hooks:
            hook.close()
