"""A beacon node that withholds every update newer than what the light client already has
must not turn ``--block latest``'s bound (``--max-head-age``, 2 min) into the finalized
header's (``--max-anchor-age``, 40 min).

The liar serves the whole chain's bootstrap, but in place of each update it serves the
validly signed update of an older block of the same sync-committee period (block 35 here):
the client skips them as not newer, and its optimistic header stays its finalized one. Before
the fix, ``--block latest`` then gave a verdict about the finalized block, labelled ``latest``
and judged by the 40-minute bound.

The chain is the meters history (tests/watch/meters.py), signed with 4 beacon slots a block:
64-slot periods, so period 2 holds blocks 32..47; the head is block 40, which finalizes block
39 (12 s before it: history_meters.py's block gap). Expected values: the blocks' own hashes and
timestamps, read from the node.
"""

from __future__ import annotations

import json

import pytest

from recompute.devnet.beacon_server import DevnetBeaconServer
from recompute.lightclient import DEVNET
from tests.lightclient.test_stale_anchor import SLOTS_PER_BLOCK, commands, run
from tests.watch.meters import chain_blocks, honest_key_check, start_meters_chain

pytestmark = pytest.mark.anvil

OLDER = 35  # the newest block whose updates the liar serves (period 2, as block 39)


def serving_older(blocks: list[dict], upto: int) -> DevnetBeaconServer:
    """A beacon node over the whole chain (any block's bootstrap) that answers every update
    request with the updates of the chain cut at block ``upto``: validly signed, of the same
    period, older than the head."""
    older = DevnetBeaconServer(blocks[:upto + 1], slots_per_block=SLOTS_PER_BLOCK)

    def tamper(route: str, document):
        if route == "updates":
            periods = sorted({DEVNET.period_at_slot(int(u["data"]["attested_header"]["beacon"]
                                                        ["slot"])) for u in document})
            return [update for period in periods for update in older.updates(period, 1)]
        if route == "finality_update":
            return older.finality_update()
        if route == "optimistic_update":
            return older.optimistic_update()
        return document

    return DevnetBeaconServer(blocks, slots_per_block=SLOTS_PER_BLOCK, tamper=tamper)


@pytest.fixture(scope="module")
def chain():
    node, manifest = start_meters_chain()
    try:
        blocks = chain_blocks(node.url)
        assert len(blocks) == 41
        honest = DevnetBeaconServer(blocks, slots_per_block=SLOTS_PER_BLOCK).start()
        liar = serving_older(blocks, OLDER).start()
        try:
            yield node, honest_key_check("honest", manifest), blocks, honest, liar
        finally:
            honest.stop()
            liar.stop()
    finally:
        node.stop()


def timestamp(block: dict) -> int:
    return int(block["timestamp"], 16)


def options(beacon: DevnetBeaconServer, at: int, *more: str, root: str | None = None
            ) -> list[str]:
    return ["--beacon", beacon.url, "--trusted-root",
            root or "0x" + beacon.trusted_block_root.hex(), "--network", "devnet",
            "--accept-old-checkpoint", "--at", str(at), *more]


def assert_no_latest(result, blocks) -> dict:
    """``stale-anchor`` naming the finalized block 39, the missing newer update and the head
    bound; never a verdict."""
    assert result.returncode == 2, result.stdout + result.stderr
    out = json.loads(result.stdout)
    assert out["reason"] == "stale-anchor", out
    assert "VERIFIED" not in result.stdout
    detail = out["detail"]
    assert "finalized block 39" in detail and "no update newer" in detail, detail
    assert "--max-head-age" in detail, detail
    return out


def test_a_store_resumed_then_starved_has_no_latest(chain, capsys, tmp_path):
    """The issue's replay: an --lc-store synced from the honest beacon node, then the liar
    asked ``--block latest`` 600 s after the head (the finalized block 39 is 612 s old: within
    --max-anchor-age, far beyond --max-head-age)."""
    node, check, blocks, honest, liar = chain
    store = tmp_path / "lc.json"
    head_time = timestamp(blocks[-1])
    synced = run(capsys, "lightclient", "sync", "--json", "--lc-store", store,
                 *options(honest, head_time))
    assert synced.returncode == 0, synced.stdout
    assert json.loads(synced.stdout)["finalized"]["block_hash"] == blocks[39]["hash"]
    later = head_time + 600
    for name in ("proof", "read", "step"):
        result = run(capsys, *commands(node, check, tmp_path)[name],
                     *options(liar, later, "--block", "latest", "--lc-store", str(store)))
        assert_no_latest(result, blocks)
    # the honest beacon node at the same clock: its optimistic head (block 40) is 600 s old
    honest_latest = run(capsys, *commands(node, check, tmp_path)["proof"],
                        *options(honest, later, "--block", "latest", "--lc-store", str(store)))
    assert honest_latest.returncode == 2
    assert "optimistic block 40" in json.loads(honest_latest.stdout)["detail"]


def test_a_recent_trusted_root_and_a_starving_beacon_have_no_latest(chain, capsys, tmp_path):
    """No store: the trusted root is block 39's own beacon root; the liar's updates are all
    older, so the store stays on the bootstrap header. Even 10 s after it (within the head
    bound) ``latest`` is refused: no update newer than the finalized header came."""
    node, check, blocks, honest, liar = chain
    root = "0x" + liar.blocks[39].root.hex()
    for at in (timestamp(blocks[39]) + 912, timestamp(blocks[39]) + 10):
        result = run(capsys, *commands(node, check, tmp_path)["read"],
                     *options(liar, at, "--block", "latest", root=root))
        assert_no_latest(result, blocks)
    # the finalized block is judged by its own bound and is what it says it is
    final = run(capsys, *commands(node, check, tmp_path)["proof"],
                *options(liar, timestamp(blocks[39]) + 912, root=root))
    assert final.returncode in (0, 1), final.stdout + final.stderr
    anchor = json.loads(final.stdout)["evidence"]["anchor"]
    assert anchor["pinned_block_hash"] == blocks[39]["hash"] and anchor["tag"] == "finalized"
    assert (anchor["judged_header"], anchor["age_bound"], anchor["age_bound_s"]) == (
        "finalized", "max_anchor_age", 2400)


def test_lightclient_sync_is_not_synced_without_a_newer_update(chain, capsys, tmp_path):
    node, check, blocks, honest, liar = chain
    root = "0x" + liar.blocks[39].root.hex()
    result = run(capsys, "lightclient", "sync", "--json",
                 *options(liar, timestamp(blocks[-1]) + 600, root=root))
    assert result.returncode == 2, result.stdout
    out = json.loads(result.stdout)
    assert out["synced"] is False and out["reason"] == "stale-anchor"
    assert out["optimistic"]["block_hash"] == out["finalized"]["block_hash"] == blocks[39]["hash"]
    assert "no update newer" in out["detail"] and "--max-head-age" in out["detail"]


def test_latest_from_an_honest_beacon_says_which_header_and_bound_decided(chain, capsys,
                                                                          tmp_path):
    node, check, blocks, honest, liar = chain
    result = run(capsys, *commands(node, check, tmp_path)["proof"],
                 *options(honest, timestamp(blocks[-1]) + 30, "--block", "latest"))
    assert result.returncode in (0, 1), result.stdout + result.stderr
    anchor = json.loads(result.stdout)["evidence"]["anchor"]
    assert anchor["pinned_block_hash"] == blocks[40]["hash"] and anchor["tag"] == "latest"
    assert (anchor["judged_header"], anchor["age_bound"], anchor["age_bound_s"]) == (
        "optimistic", "max_head_age", 120)
    assert anchor["age_s"] == 30


def test_watch_beacon_writes_nothing_about_a_head_nobody_signed_anew(chain):
    """Follow mode by the light client (its first block and every refresh): the starving
    beacon node is stale-anchor, never a signed head to follow."""
    from recompute.cli.beacon_options import LightClientRequest, LightClientSession
    from recompute.cli.watch_cmd import _anchor, _signed_heads
    from recompute.core.clock import Clock
    from recompute.core.errors import Unverifiable
    from recompute.sources.live import LiveSource

    node, check, blocks, honest, liar = chain
    clock = Clock(at=timestamp(blocks[-1]) + 600, accept_old_checkpoint=True)
    request = LightClientRequest(liar.url, liar.blocks[39].root, DEVNET)
    session = LightClientSession(request, clock)
    try:
        first = _anchor([LiveSource(node.url)], session, request, None, None, None, None, clock)
        with pytest.raises(Unverifiable) as refused:
            first()
        assert refused.value.reason == "stale-anchor"
        assert "no update newer" in refused.value.detail
        heads = _signed_heads(session, clock)
        assert heads is not None
        with pytest.raises(Unverifiable) as lagging:
            heads.refresh_store()
        assert lagging.value.reason == "stale-anchor"
        assert "Clock.max_head_age" in lagging.value.detail
    finally:
        session.close()
