"""A beacon node that withholds updates: it serves only the first sync-committee period's
(validly signed) update, and replays it as the finality and the optimistic update. The light
client's store then stays on an old block; every command that anchors by it must say
``stale-anchor`` (never GOOD or BAD), and the same run judged ``--at`` the update's own time
gives the verdict.

The chain is the meters history (recompute/devnet/history_meters.py: blocks dated from the
devnet's genesis timestamp), so every run is judged ``--at`` a stated time: the honest beacon's
head time, or the withheld update's. With 4 beacon slots a block (64-slot periods) the first
period's update attests block 15 and finalizes block 14; the honest one finalizes block 39
(the blocks' timestamps, read from the node, are 93,412 s apart: history_meters.py's gaps).
"""

from __future__ import annotations

import json

import pytest

from recompute.cli import main
from recompute.devnet.beacon_server import DevnetBeaconServer
from tests.watch.meters import chain_blocks, honest_key_check, start_meters_chain

pytestmark = pytest.mark.anvil

SLOTS_PER_BLOCK = 4  # period 0 = slots 0..63 = blocks 0..15 (block k at slot 1 + 4k)


def withhold(server: DevnetBeaconServer):
    """The tamper of a withholding beacon node: period 0's update only, replayed as the
    finality and optimistic update (each in its own shape, so it decodes and verifies)."""
    first = server.updates(0, 1)[0]
    data = first["data"]
    finality = {"version": first["version"], "data": {
        key: data[key] for key in ("attested_header", "finalized_header", "finality_branch",
                                   "sync_aggregate", "signature_slot")}}
    optimistic = {"version": first["version"], "data": {
        key: data[key] for key in ("attested_header", "sync_aggregate", "signature_slot")}}

    def tamper(route: str, document):
        if route == "updates":
            return [first] if any(u == first for u in document) else []
        if route == "finality_update":
            return finality
        if route == "optimistic_update":
            return optimistic
        return document

    return tamper


@pytest.fixture(scope="module")
def chain():
    node, manifest = start_meters_chain()
    try:
        blocks = chain_blocks(node.url)
        honest = DevnetBeaconServer(blocks, slots_per_block=SLOTS_PER_BLOCK).start()
        liar = DevnetBeaconServer(blocks, slots_per_block=SLOTS_PER_BLOCK).start()
        liar.tamper = withhold(liar)
        try:
            yield node, honest_key_check("honest", manifest), blocks, honest, liar
        finally:
            honest.stop()
            liar.stop()
    finally:
        node.stop()


def run(capsys, *args) -> Ran:
    return Ran(capsys, args)


class Ran:
    """What one in-process run of the CLI gave (a fresh process per run costs a second)."""

    def __init__(self, capsys, args):
        with pytest.raises(SystemExit) as done:
            main([str(arg) for arg in args])
        captured = capsys.readouterr()
        self.returncode, self.stdout, self.stderr = done.value.code, captured.out, captured.err


def lc(beacon: DevnetBeaconServer, at: dict, *more: str) -> list[str]:
    """The light-client options, judged as of ``at``'s timestamp (a block of the chain)."""
    return ["--beacon", beacon.url, "--trusted-root", "0x" + beacon.trusted_block_root.hex(),
            "--network", "devnet", "--accept-old-checkpoint",
            "--at", str(int(at["timestamp"], 16)), *more]


def commands(node, check, tmp_path) -> dict[str, list[str]]:
    params = [arg for key, value in check["params"].items()
              for arg in ("--param", f"{key}={value}")]
    step = [check["recipe"], "--address", check["address"], *params]
    return {
        "proof": ["proof", "--rpc", node.url, "--address", check["address"], "--slot", "0",
                  "--json"],
        "step": ["step", *step, "--rpc", node.url, "--json"],
        "read": ["read", "--rpc", node.url, "--layout", "meter-reserved-confirmed",
                 "--address", check["address"], "--all", "--json"],
        "vectors capture": ["vectors", "capture", *step, "--rpc", node.url,
                            "-o", str(tmp_path / "v.json")],
        "lightclient sync": ["lightclient", "sync", "--json"],
    }


def test_the_withholding_beacon_is_stale_never_a_verdict(chain, capsys, tmp_path):
    node, check, blocks, honest, liar = chain
    first_update = liar.updates(0, 1)[0]["data"]
    attested = int(first_update["attested_header"]["execution"]["block_number"])
    assert attested == 15  # period 0's last block (slot 61): independent of the verifier
    for name, args in commands(node, check, tmp_path).items():
        result = run(capsys, *args, *lc(liar, blocks[-1]))
        assert result.returncode == 2, (name, result.stdout, result.stderr)
        assert "stale-anchor" in result.stdout, (name, result.stdout)
        assert "VERIFIED" not in result.stdout, (name, result.stdout)
        if name == "lightclient sync":
            out = json.loads(result.stdout)
            assert out["synced"] is False and out["reason"] == "stale-anchor"
            assert out["finalized"]["block_number"] == 14
            assert "93412 s" not in out["detail"] and "1 d 1 h" in out["detail"]
    sync = run(capsys, "lightclient", "sync", *lc(liar, blocks[-1]))
    assert sync.stdout.startswith("NOT SYNCED (stale-anchor): the light client's finalized "
                                  "block 14")


def test_judged_as_of_the_updates_own_time_it_gives_the_verdict(chain, capsys, tmp_path):
    node, check, blocks, honest, liar = chain
    own_time = blocks[15]  # the withheld update attests block 15
    by_hash = run(capsys, "step", *commands(node, check, tmp_path)["step"][1:],
                      "--block-hash", blocks[14]["hash"])
    expected = json.loads(by_hash.stdout)["verdict"]
    assert expected.startswith("VERIFIED-")
    for name in ("proof", "step", "read"):
        args = commands(node, check, tmp_path)[name]
        result = run(capsys, *args, *lc(liar, own_time))
        assert result.returncode in (0, 1), (name, result.stdout, result.stderr)
        out = json.loads(result.stdout)
        assert out["evidence"]["block"]["hash"] == blocks[14]["hash"]
        anchor = out["evidence"]["anchor"]
        assert anchor["clock"] == "at" and anchor["as_of"] == int(own_time["timestamp"], 16)
        assert anchor["age_s"] == int(own_time["timestamp"], 16) - int(blocks[14]["timestamp"],
                                                                        16)
        if name == "step":
            assert out["verdict"] == expected
    sync = run(capsys, "lightclient", "sync", "--json", *lc(liar, own_time))
    assert sync.returncode == 0 and json.loads(sync.stdout)["synced"] is True
    captured = run(capsys, *commands(node, check, tmp_path)["vectors capture"], *lc(liar, own_time))
    assert captured.returncode == 0, captured.stdout + captured.stderr
    assert f"pinned by the light client: {blocks[14]['hash']}" in captured.stdout


def test_the_honest_beacon_at_the_same_time_pins_the_head(chain, capsys, tmp_path):
    node, check, blocks, honest, liar = chain
    result = run(capsys, *commands(node, check, tmp_path)["step"], *lc(honest, blocks[-1]))
    assert result.returncode in (0, 1), result.stdout + result.stderr
    out = json.loads(result.stdout)
    assert out["evidence"]["block"]["hash"] == blocks[-2]["hash"]
    assert out["evidence"]["anchor"]["age_s"] == 12  # blocks 39 and 40: history_meters.py


def test_latest_is_judged_by_the_much_smaller_head_bound(chain, capsys, tmp_path):
    node, check, blocks, honest, liar = chain
    proof = commands(node, check, tmp_path)["proof"]
    # as of 10 minutes after the head: the finalized block is within --max-anchor-age, the
    # optimistic head (block 40) is not within --max-head-age (120 s)
    later = {"timestamp": hex(int(blocks[-1]["timestamp"], 16) + 600)}
    finalized = run(capsys, *proof, *lc(honest, later))
    assert finalized.returncode in (0, 1), finalized.stdout + finalized.stderr
    latest = run(capsys, *proof, *lc(honest, later, "--block", "latest"))
    assert latest.returncode == 2 and json.loads(latest.stdout)["reason"] == "stale-anchor"
    assert "--max-head-age" in json.loads(latest.stdout)["detail"]
    wider = run(capsys, *proof, *lc(honest, later, "--block", "latest", "--max-head-age", "900"))
    assert wider.returncode in (0, 1), wider.stdout
    assert json.loads(wider.stdout)["evidence"]["block"]["hash"] == blocks[-1]["hash"]


def test_watch_beacon_stops_while_the_light_client_lags_and_resumes(anvil):
    """Follow mode by the light client on a chain mined now: while the beacon node signs
    nothing new (the optimistic head older than --max-head-age, here 4 s) the watch writes no
    verdict (each poll is UNVERIFIABLE stale-anchor, hash null) and ``up`` is 0; once the
    beacon serves the next block, its line is written and ``up`` is 1 again."""
    import io
    import threading
    import time

    from recompute.cli.beacon_options import LightClientRequest, LightClientSession
    from recompute.cli.watch_cmd import _anchor, _signed_heads
    from recompute.core.clock import Clock
    from recompute.devnet.contracts import connect, deploy
    from recompute.lightclient import DEVNET
    from recompute.sources.live import LiveSource
    from recompute.watch.evaluate import BlockEvaluator
    from recompute.watch.follower import Follower
    from recompute.watch.metrics import Metrics
    from recompute.watch.sink import Sink
    from tests.soundness.test_follow_heads import _checks

    meter = deploy(connect(anvil.url), "AggregateBudgetMeter")
    anvil.rpc("evm_mine")
    head = int(anvil.rpc("eth_blockNumber"), 16)
    blocks = [anvil.rpc("eth_getBlockByNumber", hex(n), False) for n in range(head + 1)]
    clock = Clock(max_head_age=4)
    with DevnetBeaconServer(blocks) as beacon:
        request = LightClientRequest(beacon.url, beacon.trusted_block_root, DEVNET)
        session = LightClientSession(request, clock)
        sources = [LiveSource(anvil.url)]
        out, err, metrics = io.StringIO(), io.StringIO(), Metrics()
        stop = threading.Event()
        follower = Follower(BlockEvaluator(_checks(meter.address)), Sink(metrics, out, err),
                            _anchor(sources, session, request, None, None, None, None, clock),
                            poll=0.1, max_backoff=0.2, stop=stop,
                            heads=_signed_heads(session, clock), clock=clock)
        worker = threading.Thread(target=follower.run, daemon=True)
        worker.start()
        try:
            def lines():
                return [json.loads(x) for x in out.getvalue().splitlines()]

            def wait(condition, what):
                deadline = time.monotonic() + 30
                while not condition():
                    assert time.monotonic() < deadline, (what, lines(), err.getvalue())
                    time.sleep(0.1)

            wait(lambda: any(x["block"] == head and x["hash"] for x in lines()), "head")
            # the chain moves on, the beacon node signs nothing new: behind after 4 s
            anvil.rpc("evm_mine")
            wait(lambda: any(x["reason"] == "stale-anchor" for x in lines()), "stale")
            assert metrics.get("up") == 0
            lagging = lines()
            assert not any(x["block"] == head + 1 and x["hash"] for x in lagging)
            assert all(x["hash"] is None and not x["final"] for x in lagging
                       if x["reason"] == "stale-anchor")
            # the beacon node catches up: the next block is signed and written
            anvil.rpc("evm_mine")
            beacon.add_blocks([anvil.rpc("eth_getBlockByNumber", hex(n), False)
                               for n in (head + 1, head + 2)])
            wait(lambda: any(x["block"] == head + 1 and x["hash"] for x in lines()), "resumed")
            assert metrics.get("up") == 1
        finally:
            stop.set()
            worker.join(10)
            session.close()
