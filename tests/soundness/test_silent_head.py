"""Silence is an alert: a follow-mode watch whose node stops giving new blocks (it answers with
the same `latest`, or does not answer at all) writes, once the last verified block is older than
``--max-anchor-age`` by the clock, UNVERIFIABLE lines about the block awaited at each poll
(``stale-anchor`` when the node answers; ``hash`` null, never final), says ``up`` 0, and tells
the hook once per outage. Without it a node could stop alerts by stopping: the first block was
judged for age, never the silence after it.

The node is a real anvil; the follower runs in-process with a clock the test sets (the block's
own timestamp plus a stated lag), so no test waits for wall time to pass."""

from __future__ import annotations

import io
import json
import threading
import time
from dataclasses import dataclass, field

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.clock import Clock
from recompute.core.errors import Unverifiable
from recompute.core.verdict import Verdict
from recompute.devnet.contracts import connect, deploy
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource
from recompute.watch.alerts import Hooks
from recompute.watch.config import Check
from recompute.watch.evaluate import BlockEvaluator, Line
from recompute.watch.follower import Follower
from recompute.watch.hooks import OnBad
from recompute.watch.metrics import Metrics
from recompute.watch.sink import Sink
from recompute.watch.webhook import Webhook, body
from tests.ux.receiver import Receiver
from tests.watch.meters import honest_key_check, start_meters_chain
from tests.watch.watchproc import Watch, head, write_config

pytestmark = pytest.mark.anvil

MAX_AGE = 20.0  # --max-anchor-age of these watches


@dataclass(frozen=True)
class SetClock(Clock):
    """The system clock's rules at a time the test sets (``times[-1]``)."""

    times: list[float] = field(default_factory=list)

    def now(self) -> float:
        return self.times[-1]


class Hook:
    """Records what the follower shows the hook."""

    def __init__(self) -> None:
        self.observed: list[Line] = []
        self.alerts: list[Line] = []

    def observe(self, line: Line) -> None:
        self.observed.append(line)

    def alert(self, line: Line) -> None:
        self.alerts.append(line)

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def chain(module_anvil):
    meter = deploy(connect(module_anvil.url), "AggregateBudgetMeter")
    recipe = get_recipe("8312/cap-conservation")
    params = recipe.parse_params({"shape": "cap:1000", "key": "0x" + "11" * 32})
    checks = [Check("cap", recipe, params, bytes.fromhex(meter.address[2:]),
                    load_layout(recipe.layout))]
    return module_anvil, checks


def _head(node) -> tuple[int, int]:
    block = node.rpc("eth_getBlockByNumber", "latest", False)
    return int(block["number"], 16), int(block["timestamp"], 16)


class Follow:
    """An in-process follower from block ``first`` (pinned by number: not judged for age),
    stopped by the test."""

    def __init__(self, source: LiveSource, checks: list[Check], first: int, clock: Clock,
                 hook: Hook | Hooks | None = None):
        self.out, self.err = io.StringIO(), io.StringIO()
        self.metrics = Metrics()
        self.hook = hook or Hook()
        sink = Sink(self.metrics, self.out, self.err, self.hook)
        self.stop = threading.Event()
        self.follower = Follower(BlockEvaluator(checks), sink,
                                 lambda: anchor_block([source], block=first), confirmations=0,
                                 poll=0.02, max_backoff=0.05, stop=self.stop, clock=clock)
        self.thread = threading.Thread(target=self.follower.run, daemon=True)
        self.thread.start()

    def lines(self) -> list[dict]:
        return [json.loads(x) for x in self.out.getvalue().splitlines()]

    def wait(self, predicate, what: str, timeout: float = 20.0) -> list[dict]:
        """The lines once ``predicate(lines)`` holds (a bound on a hang, not a timing)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.lines()
            if predicate(lines):
                return lines
            time.sleep(0.02)
        raise AssertionError(f"no {what} within {timeout}s: {self.lines()}\n{self.err.getvalue()}")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)


def _stale(lines: list[dict], number: int) -> list[dict]:
    return [x for x in lines if x["verdict"] == "UNVERIFIABLE" and x["block"] == number]


def test_a_node_whose_head_stops_moving_is_stale_anchor_at_each_poll(chain):
    node, checks = chain
    first, stamp = _head(node)
    clock = SetClock(max_anchor_age=MAX_AGE, times=[stamp + 45.0])  # 45 s past the bound's 20
    follow = Follow(LiveSource(node.url), checks, first, clock)
    try:
        lines = follow.wait(lambda ls: len(_stale(ls, first + 1)) >= 3, "stale lines")
    finally:
        follow.close()
    assert [x["block"] for x in lines if x["hash"]] == [first]  # the first block, verified
    stale = _stale(lines, first + 1)
    assert {(x["reason"], x["hash"], x["final"], x["check"]) for x in stale} == {
        ("stale-anchor", None, False, "cap")}
    assert f"the last verified block {first}" in stale[0]["detail"]
    assert "Clock.max_anchor_age 20 s" in stale[0]["detail"]
    assert follow.metrics.get("up") == 0
    assert follow.metrics.get("rpc_errors_total", reason="stale-anchor") >= 3
    # the hook is told once for the whole outage, with the first line about the awaited block
    assert [(a.block, a.hash, a.reason) for a in follow.hook.alerts] == [
        (first + 1, None, "stale-anchor")]
    assert follow.metrics.get("stale_alerts_total") == 1


def test_within_the_bound_a_quiet_node_is_not_an_alert(chain):
    node, checks = chain
    first, stamp = _head(node)
    clock = SetClock(max_anchor_age=MAX_AGE, times=[stamp + 15.0])  # 5 s inside the bound
    follow = Follow(LiveSource(node.url), checks, first, clock)
    try:
        follow.wait(lambda ls: any(x["hash"] for x in ls), "the first block")
        node.rpc("evm_setNextBlockTimestamp", stamp + 10)
        node.rpc("evm_mine")
        lines = follow.wait(lambda ls: any(x["block"] == first + 1 for x in ls), "block 2")
    finally:
        follow.close()
    assert [x["verdict"] for x in lines] == ["VERIFIED-GOOD", "VERIFIED-GOOD"]
    assert follow.hook.alerts == []
    assert follow.metrics.get("up") == 1


def test_each_outage_alerts_once_and_a_verified_block_ends_it(chain):
    node, checks = chain
    first, stamp = _head(node)
    clock = SetClock(max_anchor_age=MAX_AGE, times=[stamp + 45.0])
    follow = Follow(LiveSource(node.url), checks, first, clock)
    try:
        follow.wait(lambda ls: len(_stale(ls, first + 1)) >= 2, "the first outage")
        node.rpc("evm_setNextBlockTimestamp", stamp + 40)  # 5 s old by the clock: fresh
        node.rpc("evm_mine")
        follow.wait(lambda ls: any(x["hash"] and x["block"] == first + 1 for x in ls),
                    "the block that ends it")
        assert len(follow.hook.alerts) == 1
        assert follow.metrics.get("up") == 1
        clock.times.append(stamp + 40 + 25.0)  # 25 s later, nothing new: a second outage
        follow.wait(lambda ls: len(_stale(ls, first + 2)) >= 2, "the second outage")
    finally:
        follow.close()
    assert [(a.block, a.reason) for a in follow.hook.alerts] == [
        (first + 1, "stale-anchor"), (first + 2, "stale-anchor")]


class GoesDown(LiveSource):
    """Answers for the first block, then is unreachable."""

    down = False

    def block_by_number(self, number):
        if self.down:
            raise Unverifiable("rpc-unreachable", f"{self.label} did not answer")
        return super().block_by_number(number)


def test_an_unreachable_node_past_the_bound_alerts_once_with_its_own_reason(chain):
    node, checks = chain
    first, stamp = _head(node)
    source = GoesDown(node.url)
    clock = SetClock(max_anchor_age=MAX_AGE, times=[stamp + 5.0])
    follow = Follow(source, checks, first, clock)
    try:
        follow.wait(lambda ls: any(x["hash"] for x in ls), "the first block")
        source.down = True
        follow.wait(lambda ls: len(_stale(ls, first + 1)) >= 2, "unreachable lines")
        assert follow.hook.alerts == []  # node trouble, but not yet silence past the bound
        clock.times.append(stamp + 45.0)
        count = len(_stale(follow.lines(), first + 1))
        follow.wait(lambda ls: len(_stale(ls, first + 1)) >= count + 3, "lines past the bound")
    finally:
        follow.close()
    assert {x["reason"] for x in _stale(follow.lines(), first + 1)} == {"rpc-unreachable"}
    assert [(a.block, a.reason) for a in follow.hook.alerts] == [(first + 1, "rpc-unreachable")]
    assert follow.metrics.get("up") == 0


def test_the_webhook_and_on_bad_are_told_once_per_outage(chain, tmp_path):
    """The real hooks behind the alert: one POST ``"event": "stale"`` and one run of the
    --on-bad command, however many polls the outage lasts."""
    node, checks = chain
    first, stamp = _head(node)
    receiver = Receiver()
    ran = tmp_path / "ran.txt"
    notes: list[str] = []
    hooks = Hooks([Webhook(receiver.url, notes.append),
                   OnBad(f'printf "%s %s\\n" "$RECOMPUTE_VERDICT" "$RECOMPUTE_BLOCK" >> {ran}',
                         notes.append)])
    clock = SetClock(max_anchor_age=MAX_AGE, times=[stamp + 45.0])
    follow = Follow(LiveSource(node.url), checks, first, clock, hooks)
    try:
        follow.wait(lambda ls: len(_stale(ls, first + 1)) >= 4, "stale lines")
    finally:
        follow.close()
        hooks.close()
        receiver.close()
    posts = [body for _, _, body in receiver.snapshot()]
    assert [(p["event"], p["block"], p["hash"], p["verdict"], p["reason"]) for p in posts] == [
        ("stale", first + 1, None, "UNVERIFIABLE", "stale-anchor")]
    assert posts[0]["line"]["final"] is False
    assert ran.read_text() == f"UNVERIFIABLE {first + 1}\n"
    assert notes == []


def test_the_slack_text_of_an_outage_names_the_awaited_block():
    line = Line(58, None, "cap", Verdict.UNVERIFIABLE, "stale-anchor", detail="old")
    assert body(line, "stale", "slack") == {"text": "recompute watch: SILENT: block 58 is "
                                            "overdue, nothing verified (UNVERIFIABLE, "
                                            "stale-anchor): old"}


def test_the_command_line_says_so_with_its_flag(tmp_path):
    """The attack as given: ``watch`` 45 s past ``--max-anchor-age 20`` on a node whose head
    does not move (the clock is ``--at`` the head's time plus 45 s; the first block is pinned
    by ``--block-hash``, so only the silence after it is judged)."""
    node, manifest = start_meters_chain()
    watch = None
    try:
        top = head(node.url)
        number, stamp = int(top["number"], 16), int(top["timestamp"], 16)
        config = write_config(tmp_path / "checks.toml", [honest_key_check("key", manifest)])
        watch = Watch("--rpc", node.url, "--config", str(config), "--block-hash", top["hash"],
                      "--at", str(stamp + 45), "--max-anchor-age", "20", "--poll", "0.05",
                      "--max-backoff", "0.1")
        lines = watch.wait_for(lambda ls: len(_stale(ls, number + 1)) >= 3, what="stale lines")
    finally:
        if watch is not None:
            watch.kill()
        node.stop()
    assert [x["block"] for x in lines if x["hash"]] == [number]
    stale = _stale(lines, number + 1)
    assert {(x["reason"], x["hash"], x["final"]) for x in stale} == {("stale-anchor", None, False)}
    assert "more than --max-anchor-age 20 s" in stale[0]["detail"]
