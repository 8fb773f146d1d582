"""Real mainnet light-client data replayed over real HTTP (the fixture beacon server) through
the beacon client: bootstrap -> updates -> finality -> optimistic, ending at the execution
blocks each set's meta.json names. Expected values come from meta.json and the full beacon
blocks, never from the code under test."""

from __future__ import annotations

import pytest

from recompute.devnet.beacon_http import FixtureBeaconServer
from recompute.lightclient import MAINNET, bootstrap
from recompute.lightclient.failures import Unverifiable
from recompute.sources.beacon import BeaconClient, sync_light_client
from tests.lightclient.data import FIXTURES, MAINNET_SETS, load, root


def current_slot_of(name: str) -> int:
    """'Now' for a set: helios names it; the portal sets are replayed at the optimistic
    update's signature slot (the last slot their data speaks of)."""
    meta = load(name, "meta.json")
    if "current_slot_hint" in meta:
        return meta["current_slot_hint"]
    return int(load(name, "optimistic.json")["data"]["signature_slot"])


def check_execution(header, want: dict) -> None:
    assert header.beacon_slot == want["slot"]
    if "beacon_root" in want:
        assert header.beacon_root == root(want["beacon_root"])
    assert header.block_number == want["execution_block_number"]
    assert header.block_hash == root(want["execution_block_hash"])
    if "execution_state_root" in want:
        assert header.state_root == root(want["execution_state_root"])


@pytest.fixture(scope="module", params=MAINNET_SETS)
def served(request):
    name = request.param
    with FixtureBeaconServer(FIXTURES / name, MAINNET) as server, \
            BeaconClient(server.url) as client:
        yield name, client


def test_step_by_step(served):
    name, client = served
    meta = load(name, "meta.json")
    slot = current_slot_of(name)
    trusted = root(meta["trusted_block_root"])

    store = bootstrap(trusted, client.bootstrap(trusted, MAINNET), MAINNET)
    assert store.finalized_header.beacon_root == trusted
    assert store.finalized_execution().beacon_root == trusted

    start = store.sync_period
    updates = client.updates(start, MAINNET.period_at_slot(slot) - start + 1, MAINNET)
    expected_updates = len(load(name, "updates.json")) if meta.get(
        "updates_chain_forward_from_bootstrap", True) else 0
    assert len(updates) == expected_updates
    for update in updates:
        before = store.sync_period
        store = store.apply_update(update, current_slot=slot)
        assert store.sync_period in (before, before + 1)
        assert store.next_sync_committee_known
    assert store.sync_period == MAINNET.period_at_slot(slot)

    store = store.apply_update(client.finality_update(MAINNET), current_slot=slot)
    assert store.last_participation[1] == 512
    assert store.last_participation[0] * 3 >= 512 * 2
    expected = meta["expected"]
    if name == "helios-mainnet-capella":
        want = expected["after_updates_and_finality"]
        check_execution(store.finalized_execution(), {"slot": want["finalized_slot"], **want})
        # helios' own test: the first block after sync is the finality update's attested one
        attested = store.optimistic_execution()
        assert attested.block_hash == root(
            "0x71305d343b77fa1444cf825353974dacfd7ba0813e085ea87a02ec261d66262a")
        assert attested.block_number == 17923112
        assert not attested.finalized
    else:
        check_execution(store.finalized_execution(), expected["finality_update_finalized"])
        check_execution(store.optimistic_execution(), expected["finality_update_attested"])
    assert store.finalized_execution().finalized

    store = store.apply_update(client.optimistic_update(MAINNET), current_slot=slot)
    if name != "helios-mainnet-capella":
        check_execution(store.optimistic_execution(), expected["optimistic_attested"])
        check_execution(store.finalized_execution(), expected["finality_update_finalized"])


def test_sync_loop(served):
    """The client's sync loop reaches the same finalized block in one call."""
    name, client = served
    meta = load(name, "meta.json")
    store = sync_light_client(client, MAINNET, root(meta["trusted_block_root"]),
                              current_slot=current_slot_of(name))
    expected = meta["expected"]
    want = expected.get("finality_update_finalized") or {
        "slot": expected["after_updates_and_finality"]["finalized_slot"],
        **expected["after_updates_and_finality"]}
    check_execution(store.finalized_execution(), want)


def test_helios_full_blocks_confirm_the_light_client():
    """The full SignedBeaconBlocks (beacon API v2) of the helios set: their execution
    payloads' block_hash are what the light client yields for the same slots, their beacon
    fields are the headers' it verified, and block 7109431 carries the sync aggregate the
    finality update shows (it signs block 7109430)."""
    name = "helios-mainnet-capella"
    meta = load(name, "meta.json")
    slot = current_slot_of(name)
    with FixtureBeaconServer(FIXTURES / name, MAINNET) as server, \
            BeaconClient(server.url) as client:
        store = sync_light_client(client, MAINNET, root(meta["trusted_block_root"]),
                                  current_slot=slot, check_genesis=False)
        finality = client.finality_update(MAINNET)
    blocks = {number: load(name, "blocks", f"{number}.json")["data"]["message"]
              for number in (7109344, 7109430, 7109431)}

    finalized = store.finalized_execution()
    optimistic = store.optimistic_execution()
    headers = {finalized.beacon_slot: (finalized, store.finalized_header),
               optimistic.beacon_slot: (optimistic, store.optimistic_header),
               finality.attested_header.slot: (None, finality.attested_header)}
    assert sorted(headers) == [7109344, 7109430, 7109431]
    for number, (execution, header) in headers.items():
        block = blocks[number]
        payload = block["body"]["execution_payload"]
        assert int(block["slot"]) == header.slot
        assert root(block["parent_root"]) == bytes(header.beacon.parent_root)
        assert root(block["state_root"]) == bytes(header.beacon.state_root)
        assert root(payload["block_hash"]) == bytes(header.execution.block_hash)
        if execution is not None:
            assert root(payload["block_hash"]) == execution.block_hash
            assert int(payload["block_number"]) == execution.block_number
            assert root(payload["state_root"]) == execution.state_root
            assert root(payload["receipts_root"]) == execution.receipts_root
    assert root(blocks[7109431]["parent_root"]) == finality.attested_header.beacon_root
    aggregate = blocks[7109431]["body"]["sync_aggregate"]
    assert aggregate == load(name, "finality.json")["data"]["sync_aggregate"]


def test_portal_capella_backfill_is_refused_then_checked_as_a_chain():
    """The portal capella set's 4 updates (periods 816-819) come before the bootstrap's
    period (820): the store refuses each; as a chain among themselves they link up to the
    trusted committee (update k's next committee signs update k+1; the last one's next
    committee is the bootstrap's current one)."""
    from recompute.lightclient import decode_bootstrap, decode_updates, verify_committee_chain

    name = "portal-mainnet-capella"
    meta = load(name, "meta.json")
    store = bootstrap(root(meta["trusted_block_root"]),
                      decode_bootstrap(load(name, "bootstrap.json"), MAINNET), MAINNET)
    updates = decode_updates(load(name, "updates.json"), MAINNET, 4)
    assert [MAINNET.period_at_slot(u.attested_header.slot) for u in updates] == [
        816, 817, 818, 819]
    for update in updates:
        with pytest.raises(Unverifiable) as refused:
            store.apply_update(update, current_slot=current_slot_of(name))
        assert refused.value.reason == "invalid-consensus-proof"
        assert "before the store's period 820" in refused.value.detail
    verify_committee_chain(updates, store.current_sync_committee, MAINNET)
    with pytest.raises(Unverifiable, match="invalid-consensus-proof"):
        verify_committee_chain(updates[:3], store.current_sync_committee, MAINNET)
    with pytest.raises(Unverifiable, match="invalid-consensus-proof"):
        verify_committee_chain([updates[0], updates[2], updates[1], updates[3]],
                               store.current_sync_committee, MAINNET)
