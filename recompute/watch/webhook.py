"""``--on-bad-webhook URL``: a JSON POST per health transition of a check (docs/watch.md §Webhook).

A check turns *unhealthy* when a verified verdict that is not its healthy one follows a healthy
one (or is its first verified verdict), and turns *healthy* again when a healthy verdict follows
an unhealthy one; UNVERIFIABLE is no evidence either way and leaves the state as it was (the
same rule as ``--on-bad``, :mod:`recompute.watch.hooks`). Each transition is one POST, queued and
sent in order by a worker thread (:mod:`recompute.watch.alerts`) so a slow receiver never delays
a verdict; each POST has a deadline of :data:`TIMEOUT` seconds on its whole exchange (connect,
send, answer: at the deadline its socket is shut, as the beacon client's,
:mod:`recompute.sources.deadline`) and is tried at most :data:`ATTEMPTS` times (a connection
failure, a missed deadline or a 5xx answer is tried again after 0.5 s, 1 s, …; a 4xx answer is
not). An alert not delivered is said on stderr and counted in the metrics. The body
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

from collections.abc import Callable

import requests

from recompute.core.errors import OptionError, UsageError
from recompute.core.outside_text import visible, visible_tree
from recompute.sources.deadline import SocketDeadline, deadline_adapter
from recompute.sources.rpc import check_url
from recompute.watch.alerts import AlertSender
from recompute.watch.evaluate import JsonObject, Line
from recompute.watch.hooks import HealthTransitions
from recompute.watch.metrics import Metrics

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
                        f"verified ({line.verdict.value}, {_slack(line.reason)}): "
                        f"{_slack(line.detail)}"}
    if fmt == "slack":
        state = "UNHEALTHY" if event == "unhealthy" else "healthy again"
        detail = f": {_slack(line.detail)}" if line.detail else ""
        return {"text": f"recompute watch: check `{_slack(line.check)}` is {state} at block "
                        f"{line.block} ({line.verdict.value}, {_slack(line.reason)}){detail}"}
    return {"source": "recompute", "event": event, "check": visible(line.check),
            "block": line.block, "hash": line.hash, "verdict": line.verdict.value,
            "reason": visible(line.reason), "detail": visible(line.detail),
            "line": visible_tree(line.to_json())}


def _slack(text: str) -> str:
    """Text in a Slack message: visible, its three control characters (``&``, ``<``, ``>``:
    links, mentions such as ``<!channel>``) escaped as Slack asks, backquotes made plain."""
    return (visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("`", "'"))


class Webhook(AlertSender[tuple[Line, str]]):
    """Posts each health transition of each check to ``url``."""

    hook = "webhook"
    option = "--on-bad-webhook"

    def __init__(self, url: str, note: Callable[[str], None], fmt: str = "json",
                 timeout: float = TIMEOUT, attempts: int = ATTEMPTS,
                 metrics: Metrics | None = None):
        if fmt not in FORMATS:
            raise OptionError("{webhook_format} {fmt!r} is not one of {formats}",
                              ("webhook_format",), fmt=fmt, formats=", ".join(FORMATS))
        self.url = check_webhook_url(url)
        self.fmt = fmt
        self.timeout = timeout
        self.attempts = attempts
        self._health = HealthTransitions()
        self._deadline = SocketDeadline()
        self._session = requests.Session()
        adapter = deadline_adapter(self._deadline)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self.sent = 0
        super().__init__(note, metrics)

    def observe(self, line: Line) -> None:
        turned = self._health.change(line)
        if turned is not None:
            self.send((line, turned))

    def alert(self, line: Line) -> None:
        self.send((line, "stale"))

    def describe(self, alert: tuple[Line, str]) -> str:
        line, event = alert
        return f"{event} {line.check} at {line.block}"

    def cut_off(self) -> None:
        self._deadline.expire()

    def deliver(self, alert: tuple[Line, str]) -> str | None:
        line, event = alert
        payload = body(line, event, self.fmt)
        delay = FIRST_RETRY
        for attempt in range(1, self.attempts + 1):
            problem, again = self._post(payload)
            if problem is None:
                self.sent += 1
                return None
            if not again or attempt == self.attempts or self.closing.wait(delay):
                break  # refused, the last attempt, or the watch closed meanwhile
            delay *= 2
        return f"{problem}, after {attempt} attempt(s)"

    def _post(self, payload: JsonObject) -> tuple[str | None, bool]:
        """One POST within the deadline: (None, _) when the receiver took it, else (why not,
        whether to try again)."""
        with self._deadline.running(self.timeout) as deadline:
            if self.closing.is_set():
                deadline.expire()
            try:
                reply = self._session.post(self.url, json=payload, stream=True,
                                           timeout=(self.timeout, self.timeout))
                status = reply.status_code
                reply.close()  # its body is not read: the status says it all
            except (requests.RequestException, OSError) as exc:
                if deadline.expired:
                    return self._late(), True
                return type(exc).__name__, True
            if deadline.expired:
                return self._late(), True
        if status < 300:
            return None, False
        # a 4xx: the receiver refuses this body, asking again will not help
        return f"HTTP {status}", status >= 500

    def _late(self) -> str:
        if self.closing.is_set():
            return "cut off: the watch closed"
        return f"no complete answer within {self.timeout:g} s"
