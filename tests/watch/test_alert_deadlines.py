"""An alert is delivered or said undelivered, within a stated bound (docs/watch.md §Hooks,
§Webhook): a webhook receiver that answers one byte at a time (each socket read well within
the per-read timeout, the answer never complete) or never answers, and an ``--on-bad`` command
that hangs, hold neither the alerts after them nor the watch at its close.

The receivers are real listeners on 127.0.0.1; the alerts are three health transitions of one
check (unhealthy, healthy, unhealthy again: the rule of recompute/watch/hooks.py). Expected:
every alert attempted in order, each undelivered one named on stderr and counted in
``recompute_watch_alerts_undelivered_total{hook}``. The waits asserted are hang guards (far
above the bounds under test), not timings.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from recompute.core.verdict import Verdict
from recompute.watch.alerts import Hooks
from recompute.watch.evaluate import Line
from recompute.watch.hooks import OnBad
from recompute.watch.metrics import Metrics
from recompute.watch.webhook import Webhook
from tests.rpcproxy import silent_endpoint

GUARD = 30.0  # seconds a close may take before the test calls it hung


def transitions() -> list[Line]:
    """Lines of one check: BAD (turns unhealthy), GOOD (healthy again), BAD (unhealthy)."""
    lines = []
    for block, (verdict, healthy) in enumerate([(Verdict.BAD, False), (Verdict.GOOD, True),
                                                (Verdict.BAD, False)], start=100):
        lines.append(Line(block, "0x" + f"{block:02x}" * 32, "cap", verdict,
                          "predicate-failed" if verdict is Verdict.BAD else "ok",
                          healthy=healthy))
    return lines


@contextmanager
def dribbling_receiver(every: float = 0.1) -> Iterator[tuple[str, list[float]]]:
    """A receiver that reads each request, then answers one byte every ``every`` seconds and
    never completes its headers; yields its URL and the times it accepted a connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    accepted: list[float] = []
    stop = threading.Event()

    def answer(connection: socket.socket) -> None:
        with connection:
            connection.settimeout(1)
            try:
                connection.recv(65536)
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100000:
                    if stop.is_set():
                        return
                    connection.sendall(bytes([byte]))
                    time.sleep(every)
            except OSError:
                return

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            accepted.append(time.monotonic())
            threading.Thread(target=answer, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook", accepted
    finally:
        stop.set()
        thread.join(5)
        server.close()


def closed_within_guard(close) -> None:
    """Run ``close`` in a thread; fail (rather than hang) if it is still running at GUARD."""
    worker = threading.Thread(target=close, daemon=True)
    worker.start()
    worker.join(GUARD)
    assert not worker.is_alive(), "close waited past its bound"


def undelivered(metrics: Metrics, hook: str) -> float | None:
    return metrics.get("alerts_undelivered_total", hook=hook)


def test_a_dribbling_receiver_stalls_no_alert(monkeypatch):
    """The issue's receiver: one byte at a time, each read well within the per-read timeout.
    Each POST is cut at its deadline (0.5 s here), so each of the three alerts is tried in
    turn, and each is said undelivered and counted."""
    notes: list[str] = []
    metrics = Metrics()
    with dribbling_receiver() as (url, accepted):
        hook = Webhook(url, notes.append, timeout=0.5, attempts=1, metrics=metrics)
        for line in transitions():
            hook.observe(line)
        closed_within_guard(lambda: hook.close(time.monotonic() + 20))
    assert len(accepted) == 3  # every alert was attempted, in order, none held the others
    said = [note for note in notes if "not delivered" in note]
    assert said == [
        "--on-bad-webhook: unhealthy cap at 100 not delivered (no complete answer within "
        "0.5 s, after 1 attempt(s))",
        "--on-bad-webhook: healthy cap at 101 not delivered (no complete answer within 0.5 s, "
        "after 1 attempt(s))",
        "--on-bad-webhook: unhealthy cap at 102 not delivered (no complete answer within "
        "0.5 s, after 1 attempt(s))"]
    assert undelivered(metrics, "webhook") == 3
    assert hook.sent == 0


def test_the_close_deadline_cuts_off_a_receiver_that_never_answers():
    """Default deadline (5 s) and attempts (3): the first alert would take 16.5 s; the close
    deadline (1 s here) cuts it off, and the two behind it are said without being sent."""
    notes: list[str] = []
    metrics = Metrics()
    with silent_endpoint() as url:
        hook = Webhook(url + "/hook", notes.append, metrics=metrics)
        for line in transitions():
            hook.observe(line)
        time.sleep(0.2)  # the first POST is in flight
        closed_within_guard(lambda: Hooks([hook]).close(time.monotonic() + 1))
    said = [note for note in notes if "not delivered" in note]
    assert said == [
        "--on-bad-webhook: unhealthy cap at 100 not delivered (cut off: the watch closed, "
        "after 1 attempt(s))",
        "--on-bad-webhook: healthy cap at 101 not delivered (the watch closed before it was "
        "sent)",
        "--on-bad-webhook: unhealthy cap at 102 not delivered (the watch closed before it was "
        "sent)"]
    assert undelivered(metrics, "webhook") == 3


def test_a_hung_command_is_killed_with_its_children(tmp_path: Path):
    """``--on-bad``: a command that starts a child and waits on it is killed at its limit
    (0.5 s here), the child with it; said and counted; the next alert runs."""
    notes: list[str] = []
    metrics = Metrics()
    pids = tmp_path / "pids"
    hook = OnBad(f"sleep 300 & echo $! >> {pids}; wait", notes.append, metrics, timeout=0.5)
    lines = transitions()
    for line in lines:
        hook.observe(line)
    closed_within_guard(lambda: hook.close(time.monotonic() + 20))
    assert hook.fired == 2
    assert [note for note in notes if "not delivered" in note] == [
        "--on-bad: unhealthy cap at 100 not delivered (the command ran over 0.5 s and was "
        "killed)",
        "--on-bad: unhealthy cap at 102 not delivered (the command ran over 0.5 s and was "
        "killed)"]
    assert undelivered(metrics, "on-bad") == 2
    for pid in map(int, pids.read_text().split()):
        assert _gone_within_guard(pid), pid


def test_the_close_deadline_kills_a_running_command(tmp_path: Path):
    notes: list[str] = []
    metrics = Metrics()
    hook = OnBad("sleep 300", notes.append, metrics)  # its own limit: 60 s
    hook.observe(transitions()[0])
    time.sleep(0.2)
    closed_within_guard(lambda: hook.close(time.monotonic() + 0.5))
    assert [note for note in notes if "not delivered" in note] == [
        "--on-bad: unhealthy cap at 100 not delivered (cut off: the watch closed and the "
        "command was killed)"]
    assert undelivered(metrics, "on-bad") == 1


def test_a_delivered_alert_is_not_counted(tmp_path: Path):
    """The control: a command that succeeds is no note and no count."""
    notes: list[str] = []
    metrics = Metrics()
    out = tmp_path / "alerts.jsonl"
    hook = OnBad(f"cat >> {out}", notes.append, metrics)
    hook.observe(transitions()[0])
    closed_within_guard(lambda: hook.close())
    assert notes == [] and undelivered(metrics, "on-bad") == 0
    assert '"block": 100' in out.read_text()


def _gone_within_guard(pid: int) -> bool:
    """Has ``pid`` died (a SIGKILL is delivered when the process is next scheduled: under load
    that may be a moment after the kill)?"""
    deadline = time.monotonic() + GUARD
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _running(pid: int) -> bool:
    """Is ``pid`` a live process (not gone, not a zombie waiting for its reaper)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.fixture(autouse=True)
def _no_leftover_threads():
    before = set(threading.enumerate())
    yield
    left = [t for t in set(threading.enumerate()) - before
            if t.name.startswith("watch-") and t.is_alive()]
    assert not left, left


def _transitions_in(lines: list[dict]) -> list[tuple[str, str, int]]:
    """The health transitions a range audit's stdout holds, by the rule of docs/watch.md
    §Hooks (computed here from the lines, not by the watch): (event, check, block)."""
    unhealthy: dict[str, bool] = {}
    found = []
    for line in lines:
        if line.get("healthy") is None:
            continue
        was = unhealthy.get(line["check"], False)
        unhealthy[line["check"]] = not line["healthy"]
        if not line["healthy"] and not was:
            found.append(("unhealthy", line["check"], line["block"]))
        elif line["healthy"] and was:
            found.append(("healthy", line["check"], line["block"]))
    return found


def test_a_range_audit_says_every_alert_a_dribbling_receiver_swallowed(devnet, run_cli):
    """The issue's replay through the CLI: a range audit of the devnet (the lying meter over
    its cap at block 69) alerting a receiver that answers a byte every 0.1 s. Before, the
    first POST was held open for good, the audit waited 20 s at its close and said nothing;
    now each transition is said undelivered on stderr, within the close bound."""
    import json

    from tests.watch.watchproc import EXAMPLE

    node, _ = devnet
    with dribbling_receiver() as (url, accepted):
        done = run_cli("watch", "--rpc", node.url, "--config", EXAMPLE, "--from", 60,
                       "--to", 70, "--on-bad-webhook", url, timeout=120)
    assert done.returncode == 1, done.stderr
    expected = _transitions_in([json.loads(text) for text in done.stdout.splitlines()])
    assert expected, "the range holds a transition"
    said = [text for text in done.stderr.splitlines() if "not delivered" in text]
    assert len(said) == len(expected), done.stderr
    for (event, check, block), text in zip(expected, said, strict=True):
        assert text.startswith(f"--on-bad-webhook: {event} {check} at {block} not delivered ("), \
            text
    assert accepted  # the first alert was tried
