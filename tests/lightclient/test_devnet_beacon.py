"""The devnet beacon server: synthetic execution blocks, signed by the devnet's sync
committees, synced through real HTTP; the light client hands back exactly those blocks, and
refuses a tampered or under-signed answer."""

from __future__ import annotations

import hashlib

import pytest

from recompute.devnet.beacon_server import DevnetBeaconServer, devnet_secret
from recompute.lightclient import DEVNET, bls, bootstrap
from recompute.lightclient.failures import Unverifiable
from recompute.sources.beacon import BeaconClient, sync_light_client


def synthetic_blocks(count: int) -> list[dict]:
    """Execution blocks as JSON-RPC shows them (hex quantities), chained by parentHash."""

    def word(label: str, index: int) -> str:
        return "0x" + hashlib.sha256(f"test {label} {index}".encode()).hexdigest()

    blocks, parent = [], word("genesis", 0)
    for index in range(count):
        blocks.append({
            "hash": word("hash", index), "parentHash": parent,
            "stateRoot": word("state", index), "receiptsRoot": word("receipts", index),
            "number": hex(1000 + index), "timestamp": hex(1_767_225_600 + 12 * index),
            "miner": "0x" + "ab" * 20, "gasLimit": hex(30_000_000), "gasUsed": hex(21_000),
            "baseFeePerGas": hex(7), "extraData": "0x6465766e6574",
        })
        parent = blocks[-1]["hash"]
    return blocks


def sync(server: DevnetBeaconServer):
    with BeaconClient(server.url) as client:
        return sync_light_client(client, DEVNET, server.trusted_block_root,
                                 current_slot=server.current_slot)


def test_a_few_blocks_in_one_period():
    blocks = synthetic_blocks(4)
    with DevnetBeaconServer(blocks) as server:
        store = sync(server)
    finalized, optimistic = store.finalized_execution(), store.optimistic_execution()
    assert finalized.block_hash.hex() == blocks[-2]["hash"][2:]
    assert finalized.block_number == 1002
    assert finalized.state_root.hex() == blocks[-2]["stateRoot"][2:]
    assert finalized.receipts_root.hex() == blocks[-2]["receiptsRoot"][2:]
    assert finalized.parent_hash.hex() == blocks[-3]["hash"][2:]
    assert finalized.timestamp == 1_767_225_600 + 24
    assert finalized.finalized
    assert optimistic.block_hash.hex() == blocks[-1]["hash"][2:]
    assert not optimistic.finalized
    assert store.last_participation == (32, 32)


def test_each_update_is_checked_against_the_clock_of_its_moment():
    """A sync that began a slot before the node's latest update was signed (a slow sync on a
    chain of short slots, the living devnet's 1 s) accepts the update once the clock has
    reached its signature slot; the slot read at the sync's start refuses it, as it must."""
    blocks = synthetic_blocks(4)
    with DevnetBeaconServer(blocks) as server, BeaconClient(server.url) as client:
        signed = server.current_slot  # the last update's signature slot (the server's own)
        reads = iter([signed - 1])  # the clock at the sync's start, then a slot later

        def clock() -> int:
            return next(reads, signed)

        store = sync_light_client(client, DEVNET, server.trusted_block_root, current_slot=clock)
        assert store.optimistic_execution().block_hash.hex() == blocks[-1]["hash"][2:]
        with pytest.raises(Unverifiable, match="slots out of order"):
            sync_light_client(client, DEVNET, server.trusted_block_root,
                              current_slot=signed - 1)


def test_across_sync_committee_periods():
    """24 slots per block: 64-slot periods, so the committee rotates three times."""
    blocks = synthetic_blocks(12)
    with DevnetBeaconServer(blocks, slots_per_block=24) as server:
        assert DEVNET.period_at_slot(server.current_slot) == 4
        store = sync(server)
        assert store.sync_period == 3
        assert store.current_sync_committee.pubkeys == server.committee(3).committee.pubkeys
    assert store.finalized_execution().block_hash.hex() == blocks[-2]["hash"][2:]
    assert store.optimistic_execution().block_hash.hex() == blocks[-1]["hash"][2:]


def test_the_devnet_keys_are_deterministic_and_valid():
    blocks = synthetic_blocks(2)
    with DevnetBeaconServer(blocks) as first, DevnetBeaconServer(blocks) as second:
        assert first.trusted_block_root == second.trusted_block_root
        committee = first.committee(0)
        assert committee.committee.pubkeys == second.committee(0).committee.pubkeys
        assert committee.secrets[0] == devnet_secret(b"recompute devnet sync committee", 0, 0)
        assert len(set(committee.committee.pubkeys)) == 32
        for key in committee.committee.pubkeys:
            bls.decode_pubkey(key)  # KeyValidate
        assert first.committee(1).committee.pubkeys != committee.committee.pubkeys


def flip_signature(route, document):
    if route in ("finality_update", "optimistic_update"):
        signature = document["data"]["sync_aggregate"]["sync_committee_signature"]
        document["data"]["sync_aggregate"]["sync_committee_signature"] = (
            signature[:10] + ("0" if signature[10] != "0" else "1") + signature[11:])
    return document


def forge_block_hash(route, document):
    if route == "finality_update":
        document["data"]["finalized_header"]["execution"]["block_hash"] = "0x" + "66" * 32
    return document


def swap_next_committee(route, document):
    if route == "updates":
        for update in document:
            keys = update["data"]["next_sync_committee"]["pubkeys"]
            keys[0], keys[1] = keys[1], keys[0]
    return document


def other_bootstrap(route, document):
    if route == "bootstrap":
        document["data"]["header"]["beacon"]["proposer_index"] = "31"
    return document


@pytest.mark.parametrize("tamper", [flip_signature, forge_block_hash, swap_next_committee,
                                    other_bootstrap])
def test_a_tampered_answer_is_refused(tamper):
    blocks = synthetic_blocks(6)
    with DevnetBeaconServer(blocks, slots_per_block=24, tamper=tamper) as server:
        with pytest.raises(Unverifiable) as caught:
            sync(server)
    assert caught.value.reason == "invalid-consensus-proof"


@pytest.mark.parametrize("signers, accepted", [(21, False), (22, True)])
def test_two_thirds_of_the_committee_must_sign(signers, accepted):
    """Correctly signed by 21 of 32 (21*3 < 32*2): refused though the signature is valid;
    22 of 32 is a supermajority."""
    blocks = synthetic_blocks(3)
    with DevnetBeaconServer(blocks, signers=signers) as server, \
            BeaconClient(server.url) as client:
        store = bootstrap(server.trusted_block_root,
                          client.bootstrap(server.trusted_block_root, DEVNET), DEVNET)
        update = client.finality_update(DEVNET)
        if accepted:
            store = store.apply_update(update, current_slot=server.current_slot)
            assert store.last_participation == (22, 32)
            assert store.finalized_execution().block_hash.hex() == blocks[1]["hash"][2:]
        else:
            with pytest.raises(Unverifiable) as caught:
                store.apply_update(update, current_slot=server.current_slot)
            assert "21/32" in caught.value.detail


def test_execution_header_is_minted_only_by_the_light_client():
    from recompute.lightclient import ExecutionHeader

    with pytest.raises(TypeError):
        ExecutionHeader(block_hash=bytes(32), parent_hash=bytes(32), state_root=bytes(32),
                        receipts_root=bytes(32), logs_bloom=bytes(256), block_number=1,
                        timestamp=1, beacon_slot=1,
                        beacon_root=bytes(32), finalized=True)
