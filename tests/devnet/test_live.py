"""The living devnet (``recompute devnet up --live``, docs/devnet.md §The living devnet): one
per module, a block a second, a reorg every 5 blocks, a lie every 15 s. Its blocks follow the
wall clock; the stream's lie is caught by the check of examples/devnet-watch.toml written for
it; a follow-mode watch retracts a reorg; ``devnet down`` leaves no process. Expected values
come from the node (canonical hashes, timestamps) and from the stream's script (the live
subject SILENT between pulses: recompute/devnet/producer.py), never from the watch."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recompute.devnet.anvil import rpc_call
from recompute.devnet.contracts import connect, load_artifact
from recompute.devnet.lifecycle import LiveOptions, down, up
from tests import REPO_ROOT
from tests.watch.watchproc import EXAMPLE, Watch, block_hash, head

# A chain mined at the wall clock and watches that must keep up with it: starved of CPU by
# another test process they fall behind, so `make test` runs this file alone (marker serial).
# Alone, its own processes share the machine: the watches that wait for the stream's lies
# start with the module and follow it while the tests before theirs wait. (The soak, which
# restarts a node of its own, is not run beside them: its CPU slowed the living devnet's build.)
pytestmark = pytest.mark.serial

BLOCK_TIME, REORG_EVERY, CYCLE = 1, 5, 15


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    state = tmp_path_factory.mktemp("live-devnet")
    manifest, _ = up(state, live=LiveOptions(BLOCK_TIME, REORG_EVERY, CYCLE))
    try:
        yield state, manifest
    finally:
        down(state)


LIVE_WATCH = REPO_ROOT / "examples" / "live-watch.toml"


@pytest.fixture(scope="module", autouse=True)
def waiting(live, tmp_path_factory):
    """The watches whose tests wait for the stream's lies, started with the module: they follow
    the stream while the tests before theirs run, instead of each waiting out its own cycles.
    ``light_client`` follows by the light client (``--beacon``, the devnet's network.json);
    ``alerts`` follows examples/live-watch.toml, ``--on-bad`` appending to ``alerts_file``."""
    state, manifest = live
    beacon = manifest["beacon"]
    start = max(manifest["live"]["first_block"] + 1, int(head(manifest["rpc"])["number"], 16) - 8)
    alerts = tmp_path_factory.mktemp("live-alerts") / "alerts.txt"
    watches = {
        "light_client": Watch(
            "--rpc", manifest["rpc"], "--beacon", beacon["url"], "--trusted-root",
            beacon["trusted_root"], "--network", beacon["network_file"],
            "--accept-old-checkpoint", "--config", str(EXAMPLE), "--from", str(start),
            "--poll", "0.2"),
        "alerts": Watch("--rpc", manifest["rpc"], "--config", str(LIVE_WATCH), "--poll", "0.2",
                        "--on-bad", f'echo "$RECOMPUTE_CHECK $RECOMPUTE_BLOCK" >> {alerts}')}
    try:
        yield {**watches, "alerts_file": alerts}
    finally:
        for watch in watches.values():
            watch.kill()


def _events(state: Path) -> list[dict]:
    return [json.loads(text) for text in (state / "producer.log").read_text().splitlines()]


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_blocks_follow_the_wall_clock(live):
    state, manifest = live
    first = head(manifest["rpc"])
    later = _wait(lambda: (b := head(manifest["rpc"]))["number"] != first["number"] and b,
                  4 * BLOCK_TIME + 2, "a new block")
    assert abs(int(later["timestamp"], 16) - time.time()) <= 5
    assert int(later["number"], 16) > manifest["live"]["first_block"]
    network = json.loads(Path(manifest["beacon"]["network_file"]).read_text())
    assert network["seconds_per_slot"] == BLOCK_TIME
    assert manifest["live"]["producer_pid"] == int((state / "producer.pid").read_text())


def _canonical_lie(state: Path, rpc: str) -> dict:
    """The first lie in the producer's log still in the canonical chain once the head is 3
    blocks past it (the stream's deepest reorg: it can no longer be replaced)."""
    seen: set[str] = set()

    def settled():
        for event in _events(state):
            if not event.get("lie") or event["hash"] in seen:
                continue
            if int(head(rpc)["number"], 16) < event["block"] + 3:
                return None  # the earliest unjudged lie is not settled yet: wait for it
            seen.add(event["hash"])
            if block_hash(rpc, event["block"]) == event["hash"]:
                return event
        return None

    return _wait(settled, 4 * CYCLE + 10, "a lie that stays canonical")


def test_the_producers_log_names_the_block_of_each_step(live):
    """Each step's line names the block that holds its change, at that block's time, and a lie
    is a lie there by the specification's rule (AMM §Status derivation: SILENT when the block's time
    exceeds lastSignalAt + pulseInterval), hand-computed from the lying registry's view of
    lastSignalAt (the field it answers honestly) at that block."""
    state, manifest = live
    _canonical_lie(state, manifest["rpc"])  # at least one lie stays canonical, and
    # enough steps that reorgs (up to 3 blocks in 5) leave at least 10 canonical ones
    _wait(lambda: sum(1 for e in _events(state) if "step" in e) >= 30, 30 * BLOCK_TIME + 20,
          "30 steps in the stream")
    registry = connect(manifest["rpc"]).eth.contract(
        address=manifest["contracts"]["LyingMeditationRegistry"],
        abi=load_artifact("LyingMeditationRegistry")["abi"])
    steps = [e for e in _events(state) if e.get("step", "live-subject-enrolled")
             != "live-subject-enrolled"]
    # a block mined again after a rollback with the same parent, time and content is the same
    # block (same hash): its lines agree
    by_hash = {(e["hash"], e["block"], e["ts"], bool(e.get("lie"))) for e in steps}
    assert len(by_hash) == len({e["hash"] for e in steps}), steps
    interval = CYCLE // 3  # the live subject's pulse interval (recompute/devnet/producer.py)
    judged = lies = 0
    for event in steps:
        if block_hash(manifest["rpc"], event["block"]) != event["hash"]:
            continue  # orphaned by a reorg since
        block = rpc_call(manifest["rpc"], "eth_getBlockByHash", [event["hash"], False])
        assert int(block["timestamp"], 16) == event["ts"], event
        _, last_signal, _ = registry.functions.signalStatus(
            manifest["accounts"][8]).call(block_identifier=event["hash"])
        assert bool(event.get("lie")) == (event["ts"] > last_signal + interval), event
        judged += 1
        lies += bool(event.get("lie"))
    assert judged >= 10 and lies >= 1 and judged > lies, (judged, lies)


def test_the_streams_lie_is_caught_by_the_example_check(live, run_cli):
    state, manifest = live
    # the producer's log names a block where the live subject is SILENT in storage; a reorg
    # may replace it: the watch judges a lie's block that stayed canonical
    lie = _canonical_lie(state, manifest["rpc"])
    number = lie["block"]
    out = run_cli("watch", "--rpc", manifest["rpc"], "--config", str(EXAMPLE), "--from",
                  str(number), "--to", str(number))
    lines = [json.loads(text) for text in out.stdout.splitlines()]
    [line] = [x for x in lines if x["check"] == "amm/live/signal"]
    assert line["hash"] == lie["hash"]
    assert (line["verdict"], line["derived"]["status"]) == ("VERIFIED-BAD", "SILENT"), line
    assert out.returncode == 1


def test_a_light_client_watch_catches_the_lie(live, waiting):
    """Followed by the light client (``--beacon``, the devnet's network.json): the check of
    the live subject turns VERIFIED-BAD, SILENT, at a block the producer logged as a lie by the
    block's own storage and time (its hash, so a reorg since does not matter)."""
    state, _ = live
    watch = waiting["light_client"]
    try:
        lines = watch.wait_for(lambda ls: any(
            x.get("check") == "amm/live/signal" and x["verdict"] == "VERIFIED-BAD"
            for x in ls), 2 * CYCLE + 40, "a VERIFIED-BAD line of amm/live/signal")
    finally:
        watch.kill()
    bad = next(x for x in lines
               if x.get("check") == "amm/live/signal" and x["verdict"] == "VERIFIED-BAD")
    assert bad["derived"]["status"] == "SILENT", bad
    logged = {e["hash"]: e for e in _events(state) if "step" in e}
    assert logged[bad["hash"]]["block"] == bad["block"] and logged[bad["hash"]].get("lie"), bad
    anchor = bad["anchor"]  # the light client's, or a parentHash link down from it
    assert "light-client" in (anchor["method"], anchor.get("root_anchor")), bad


def test_the_living_devnet_is_read_by_tag_without_at(live, run_cli):
    """Its head is current by the wall clock: `-b latest` needs no --at (the static devnet's
    `as of` line would say it does), and the summary says what --beacon needs instead."""
    state, manifest = live
    assert "as_of" not in manifest
    again = run_cli("devnet", "up", "--live", "--state-dir", str(state))
    assert again.returncode == 0, again.stderr
    assert "as of --at" not in again.stdout
    assert "need no --at" in again.stdout
    assert f"--network {manifest['beacon']['network_file']}" in again.stdout
    registry = manifest["contracts"]["AgentMeditationRegistry"]
    out = run_cli("read", "-r", manifest["rpc"], "-b", "latest", "--layout", "amm-registry",
                  "--address", registry, "--all")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("VERIFIED-GOOD"), out.stdout


def test_a_follow_mode_watch_retracts_a_reorg(live):
    state, manifest = live
    # anchored below the deepest reorg the stream makes (3): a reorg below a watch's first
    # block cannot be retracted (it is header-mismatch, restart with a new anchor)
    start = int(head(manifest["rpc"])["number"], 16) - 4
    watch = Watch("--rpc", manifest["rpc"], "--config", str(EXAMPLE), "--from", str(start),
                  "--confirmations", "3", "--poll", "0.2")
    try:
        lines = watch.wait_for(lambda ls: any(x.get("event") == "reorg" for x in ls),
                               REORG_EVERY * BLOCK_TIME * 3 + 20, "a reorg event")
        event = next(x for x in lines if x.get("event") == "reorg")
        orphaned = set(event["orphaned"])
        written = {x["hash"] for x in lines if "check" in x}
        assert orphaned <= written  # lines were written about the orphaned blocks
        for number in range(event["fork_point"] + 1, event["fork_point"] + 1 + event["depth"]):
            assert block_hash(manifest["rpc"], number) not in orphaned
        assert not any(x["final"] for x in lines if x.get("hash") in orphaned)
        # the producer's own log says the same reorg happened
        assert any(set(e.get("orphaned", ())) & orphaned for e in _events(state))
    finally:
        watch.kill()


def test_the_live_watch_config_alerts_once_per_lie(live, waiting):
    """examples/live-watch.toml on the living devnet: no check but the lie's is ever verified
    unhealthy (a block the producer's reorg orphans while it is evaluated may give any check an
    UNVERIFIABLE line, healthy null: no evidence either way), and --on-bad runs once each time the
    lie starts (a turn to unhealthy), not at every BAD block; each BAD block is a lie by the
    producer's own log."""
    state, _ = live
    watch, alerts = waiting["alerts"], waiting["alerts_file"]
    try:  # two lies: two cycles of the stream and a little more
        watch.wait_for(
            lambda ls: _turns([x for x in ls if "check" in x and not x["final"]]) >= 2,
            3 * CYCLE + 20,
            "two lies")
    finally:
        watch.stop()  # its queued hooks run before it exits
    # each block's first lines (a line written again once final is not a new verdict)
    lines = [x for x in watch.snapshot() if "check" in x and not x["final"]]
    assert {x["check"] for x in lines if x["healthy"] is False} == {"amm/live/signal"}
    said = alerts.read_text().splitlines()
    assert {text.split()[0] for text in said} == {"amm/live/signal"}
    bad = [x for x in lines if x["verdict"] == "VERIFIED-BAD"]
    assert len(said) == _turns(lines) < len(bad)  # once a lie, not once a block
    lies = {e["hash"] for e in _events(state) if e.get("lie")}
    assert {x["hash"] for x in bad} <= lies


def _turns(lines: list[dict]) -> int:
    """How many times amm/live/signal turns VERIFIED-BAD in the watch's lines, in order (an
    UNVERIFIABLE line leaves the state as it was, as for the hooks)."""
    turns, was = 0, False
    for line in lines:
        if line["check"] == "amm/live/signal" and line["verdict"] != "UNVERIFIABLE":
            now = line["verdict"] == "VERIFIED-BAD"
            turns += now and not was
            was = now
    return turns


def test_devnet_down_leaves_no_process(live):
    state, _ = live
    pids = [int((state / f"{name}.pid").read_text()) for name in ("anvil", "beacon", "producer")]
    assert all(Path(f"/proc/{pid}").exists() for pid in pids)
    assert down(state)
    for pid in pids:
        status = Path(f"/proc/{pid}/status")
        assert not status.exists() or "zombie" in status.read_text(), pid


def test_a_short_soak_holds_every_invariant(tmp_path):
    """benchmarks/soak_watch.py for 15 s: SIGKILLs of the stored watch at random moments, a node
    restart, a withholding beacon, reorgs; its invariants (docs/watch.md §Restarts) hold."""
    out = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "soak_watch.py"), "--minutes", "0.25",
         "--block-time", "1", "--reorg-every", "5", "--kill-every", "3", "--node-every", "6",
         "--node-pause", "1", "--withhold-every", "8", "--withhold-for", "3", "--seed", "7",
         "--work", str(tmp_path)], capture_output=True, text=True, timeout=240)
    assert out.stdout.strip(), out.stderr[-3000:]
    figures = json.loads(out.stdout.splitlines()[-1])
    assert out.returncode == 0, figures["failures"]
    assert figures["watch_kills"] >= 3 and figures["node_restarts"] >= 1
    assert figures["duplicates"] == figures["final_retracted"] == figures["missing_final"] == 0
