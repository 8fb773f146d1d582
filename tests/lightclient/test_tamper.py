"""Tampered light-client data is refused: ``invalid-consensus-proof`` for anything that is
well-formed but does not verify, ``rpc-malformed`` for anything that is not well-formed; in
no case does the store move on (so no execution header comes out of it)."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from recompute.lightclient import (
    MAINNET,
    Fork,
    bootstrap,
    decode_bootstrap,
    decode_finality_update,
    decode_optimistic_update,
    decode_update,
    minimal_network,
)
from recompute.lightclient.failures import Unverifiable
from tests.lightclient.data import load, root

HELIOS = "helios-mainnet-capella"
SLOT = load(HELIOS, "meta.json")["current_slot_hint"]
TRUSTED = root(load(HELIOS, "meta.json")["trusted_block_root"])


def flip(text: str, index: int = 0) -> str:
    """0x-hex with the lowest bit of byte ``index`` flipped."""
    data = bytearray(bytes.fromhex(text[2:]))
    data[index] ^= 1
    return "0x" + data.hex()


def clear_bits(bits_hex: str, count: int) -> str:
    """Clear the first ``count`` set bits of a Bitvector's hex."""
    data = bytearray(bytes.fromhex(bits_hex[2:]))
    for index in range(len(data) * 8):
        if count and data[index // 8] >> (index % 8) & 1:
            data[index // 8] &= ~(1 << (index % 8)) & 0xFF
            count -= 1
    return "0x" + data.hex()


def refused(reason: str, action) -> Unverifiable:
    with pytest.raises(Unverifiable) as caught:
        action()
    assert caught.value.reason == reason, caught.value
    assert "\n" not in caught.value.detail
    return caught.value


@pytest.fixture(scope="module")
def stores(helios_store):
    """(store after update 862, store synced to period 867)."""
    updates = load(HELIOS, "updates.json")
    first = helios_store.apply_update(decode_update(updates[0], MAINNET), current_slot=SLOT)
    synced = first
    for document in updates[1:]:
        synced = synced.apply_update(decode_update(document, MAINNET), current_slot=SLOT)
    return first, synced


# -- bootstrap ---------------------------------------------------------------------------

BOOTSTRAP_TAMPERS = {
    "current committee branch byte": lambda d: d["current_sync_committee_branch"].__setitem__(
        2, flip(d["current_sync_committee_branch"][2], 7)),
    "execution branch byte": lambda d: d["header"]["execution_branch"].__setitem__(
        1, flip(d["header"]["execution_branch"][1])),
    "execution block hash": lambda d: d["header"]["execution"].__setitem__(
        "block_hash", flip(d["header"]["execution"]["block_hash"], 31)),
    "beacon state root": lambda d: d["header"]["beacon"].__setitem__(
        "state_root", flip(d["header"]["beacon"]["state_root"])),
    "swapped pubkeys": lambda d: d["current_sync_committee"]["pubkeys"].__setitem__(
        slice(0, 2), d["current_sync_committee"]["pubkeys"][1::-1]),
    "aggregate pubkey": lambda d: d["current_sync_committee"].__setitem__(
        "aggregate_pubkey", flip(d["current_sync_committee"]["aggregate_pubkey"], 20)),
}


@pytest.mark.parametrize("tamper", sorted(BOOTSTRAP_TAMPERS))
def test_tampered_bootstrap(tamper):
    document = copy.deepcopy(load(HELIOS, "bootstrap.json"))
    BOOTSTRAP_TAMPERS[tamper](document["data"])
    data = decode_bootstrap(document, MAINNET)
    refused("invalid-consensus-proof", lambda: bootstrap(TRUSTED, data, MAINNET))


def test_bootstrap_for_another_root(helios_store):
    data = decode_bootstrap(load(HELIOS, "bootstrap.json"), MAINNET)
    error = refused("invalid-consensus-proof",
                    lambda: bootstrap(bytes(31) + b"\x01", data, MAINNET))
    assert "trusted block root" in error.detail


# -- period updates ---------------------------------------------------------------------


def _first_set_bit_cleared(d):
    aggregate = d["sync_aggregate"]
    aggregate["sync_committee_bits"] = clear_bits(aggregate["sync_committee_bits"], 1)


def _below_two_thirds(d):
    aggregate = d["sync_aggregate"]
    aggregate["sync_committee_bits"] = clear_bits(aggregate["sync_committee_bits"], 512 - 341)


UPDATE_TAMPERS = {
    "next committee branch byte": lambda d: d["next_sync_committee_branch"].__setitem__(
        0, flip(d["next_sync_committee_branch"][0])),
    "finality branch byte": lambda d: d["finality_branch"].__setitem__(
        3, flip(d["finality_branch"][3], 5)),
    "attested execution branch byte": lambda d: d["attested_header"][
        "execution_branch"].__setitem__(0, flip(d["attested_header"]["execution_branch"][0])),
    "finalized execution branch byte": lambda d: d["finalized_header"][
        "execution_branch"].__setitem__(3, flip(d["finalized_header"]["execution_branch"][3])),
    "attested execution block hash": lambda d: d["attested_header"]["execution"].__setitem__(
        "block_hash", flip(d["attested_header"]["execution"]["block_hash"])),
    "finalized execution state root": lambda d: d["finalized_header"]["execution"]
    .__setitem__("state_root", flip(d["finalized_header"]["execution"]["state_root"])),
    "finalized beacon body root": lambda d: d["finalized_header"]["beacon"].__setitem__(
        "proposer_index", str(int(d["finalized_header"]["beacon"]["proposer_index"]) + 1)),
    "attested beacon header": lambda d: d["attested_header"]["beacon"].__setitem__(
        "parent_root", flip(d["attested_header"]["beacon"]["parent_root"])),
    "swapped next committee pubkeys": lambda d: d["next_sync_committee"]["pubkeys"]
    .__setitem__(slice(0, 2), d["next_sync_committee"]["pubkeys"][1::-1]),
    "all-zero next committee with its branch": lambda d: d.__setitem__(
        "next_sync_committee", {"pubkeys": ["0x" + "00" * 48] * 512,
                                "aggregate_pubkey": "0x" + "00" * 48}),
    "signature byte": lambda d: d["sync_aggregate"].__setitem__(
        "sync_committee_signature", flip(d["sync_aggregate"]["sync_committee_signature"], 50)),
    "signature of another header": lambda d: d["sync_aggregate"].__setitem__(
        "sync_committee_signature",
        load(HELIOS, "updates.json")[2]["data"]["sync_aggregate"]["sync_committee_signature"]),
    "one participation bit cleared (signing set changed)": _first_set_bit_cleared,
    "participation below 2/3": _below_two_thirds,
}


@pytest.mark.parametrize("tamper", sorted(UPDATE_TAMPERS))
def test_tampered_period_update(stores, tamper):
    first, _ = stores
    document = copy.deepcopy(load(HELIOS, "updates.json")[1])
    UPDATE_TAMPERS[tamper](document["data"])
    update = decode_update(document, MAINNET)
    error = refused("invalid-consensus-proof",
                    lambda: first.apply_update(update, current_slot=SLOT))
    if tamper == "participation below 2/3":
        assert "341/512" in error.detail and "2/3" in error.detail
    # the untampered update still applies to the same store: it is the tampering refused
    assert first.apply_update(decode_update(load(HELIOS, "updates.json")[1], MAINNET),
                              current_slot=SLOT).sync_period == first.sync_period + 1


def test_exactly_two_thirds_is_enough(stores):
    """342/512 signers (342*3 >= 512*2) is a supermajority; 341 is not (above). A genuine
    aggregate cannot be thinned without changing its signer set, so the boundary is checked
    on the count alone: the refusal message must be about the signature, not participation."""
    first, _ = stores
    document = copy.deepcopy(load(HELIOS, "updates.json")[1])
    aggregate = document["data"]["sync_aggregate"]
    aggregate["sync_committee_bits"] = clear_bits(aggregate["sync_committee_bits"], 512 - 342)
    error = refused("invalid-consensus-proof", lambda: first.apply_update(
        decode_update(document, MAINNET), current_slot=SLOT))
    assert "signature does not verify" in error.detail


def test_update_before_the_trusted_period(stores):
    _, synced = stores
    old = decode_update(load(HELIOS, "updates.json")[0], MAINNET)
    error = refused("invalid-consensus-proof", lambda: synced.apply_update(old, current_slot=SLOT))
    assert "before the store's period 867" in error.detail


def test_update_from_the_future(stores):
    first, _ = stores
    update = decode_update(load(HELIOS, "updates.json")[1], MAINNET)
    refused("invalid-consensus-proof",
            lambda: first.apply_update(update, current_slot=update.signature_slot - 1))


def test_skipping_a_period_is_refused(stores):
    first, _ = stores
    update = decode_update(load(HELIOS, "updates.json")[2], MAINNET)  # period 864 from 862
    error = refused("invalid-consensus-proof",
                    lambda: first.apply_update(update, current_slot=SLOT))
    assert "period" in error.detail


def test_all_zero_next_committee_means_unknown(stores):
    """An update whose next committee is all zero (and unproven: zero branch) is a plain
    finality update: it may advance the store, after which the next committee is unknown and
    an update signed by it is refused."""
    first, _ = stores
    updates = load(HELIOS, "updates.json")
    document = copy.deepcopy(updates[1])
    document["data"]["next_sync_committee"] = {"pubkeys": ["0x" + "00" * 48] * 512,
                                               "aggregate_pubkey": "0x" + "00" * 48}
    document["data"]["next_sync_committee_branch"] = ["0x" + "00" * 32] * 5
    advanced = first.apply_update(decode_update(document, MAINNET), current_slot=SLOT)
    assert advanced.sync_period == 863
    assert not advanced.next_sync_committee_known
    following = decode_update(updates[2], MAINNET)
    error = refused("invalid-consensus-proof",
                    lambda: advanced.apply_update(following, current_slot=SLOT))
    assert "knows committees only for period(s) 863" in error.detail


# -- finality and optimistic updates ---------------------------------------------------


FINALITY_TAMPERS = {
    "finality branch byte": lambda d: d["finality_branch"].__setitem__(
        0, flip(d["finality_branch"][0], 31)),
    "finalized execution branch byte": lambda d: d["finalized_header"][
        "execution_branch"].__setitem__(2, flip(d["finalized_header"]["execution_branch"][2])),
    "finalized block hash": lambda d: d["finalized_header"]["execution"].__setitem__(
        "block_hash", flip(d["finalized_header"]["execution"]["block_hash"])),
    "finalized block number": lambda d: d["finalized_header"]["execution"].__setitem__(
        "block_number", str(int(d["finalized_header"]["execution"]["block_number"]) + 1)),
    "signature byte": lambda d: d["sync_aggregate"].__setitem__(
        "sync_committee_signature", flip(d["sync_aggregate"]["sync_committee_signature"], 95)),
    "one participation bit cleared": _first_set_bit_cleared,
    "participation below 2/3": _below_two_thirds,
}


@pytest.mark.parametrize("tamper", sorted(FINALITY_TAMPERS))
def test_tampered_finality_update(stores, tamper):
    _, synced = stores
    document = copy.deepcopy(load(HELIOS, "finality.json"))
    FINALITY_TAMPERS[tamper](document["data"])
    update = decode_finality_update(document, MAINNET)
    refused("invalid-consensus-proof", lambda: synced.apply_update(update, current_slot=SLOT))
    assert synced.finalized_header.slot < 7109344  # the store we hold has not moved


OPTIMISTIC_TAMPERS = {
    "attested block hash": lambda d: d["attested_header"]["execution"].__setitem__(
        "block_hash", flip(d["attested_header"]["execution"]["block_hash"], 3)),
    "signature byte": lambda d: d["sync_aggregate"].__setitem__(
        "sync_committee_signature", flip(d["sync_aggregate"]["sync_committee_signature"], 7)),
    "one participation bit cleared": _first_set_bit_cleared,
}


@pytest.mark.parametrize("tamper", sorted(OPTIMISTIC_TAMPERS))
def test_tampered_optimistic_update(stores, tamper):
    _, synced = stores
    document = copy.deepcopy(load(HELIOS, "optimistic.json"))
    OPTIMISTIC_TAMPERS[tamper](document["data"])
    update = decode_optimistic_update(document, MAINNET)
    refused("invalid-consensus-proof", lambda: synced.apply_update(update, current_slot=SLOT))


# -- the network: fork versions, genesis_validators_root, fork of the data -------------


def _with_fork_version(network, name, version):
    return replace(network, forks=tuple(
        Fork(fork.name, version, fork.epoch) if fork.name == name else fork
        for fork in network.forks))


@pytest.mark.parametrize("network", [
    _with_fork_version(MAINNET, "capella", bytes.fromhex("03000001")),
    replace(MAINNET, genesis_validators_root=bytes(32)),
], ids=["wrong capella fork version", "wrong genesis_validators_root"])
def test_wrong_network_parameters(network):
    """Bootstrap involves no signature, so it passes; the first signed update does not."""
    store = bootstrap(TRUSTED, decode_bootstrap(load(HELIOS, "bootstrap.json"), network),
                      network)
    update = decode_update(load(HELIOS, "updates.json")[0], network)
    error = refused("invalid-consensus-proof",
                    lambda: store.apply_update(update, current_slot=SLOT))
    assert "signature does not verify" in error.detail


def test_data_of_the_wrong_fork():
    """Capella data where the network says deneb is active: refused, whatever it proves."""
    deneb_early = replace(MAINNET, forks=tuple(
        Fork(fork.name, fork.version, min(fork.epoch, 194048)) if fork.name == "deneb" else fork
        for fork in MAINNET.forks))
    data = decode_bootstrap(load(HELIOS, "bootstrap.json"), deneb_early)
    error = refused("invalid-consensus-proof", lambda: bootstrap(TRUSTED, data, deneb_early))
    assert "data of fork capella" in error.detail


# -- electra (generalized indices 169 / 86 / 87) -----------------------------------------

ELECTRA = ("spec-tests-minimal", "electra", "light_client_sync")


@pytest.fixture(scope="module")
def electra():
    meta = load(*ELECTRA, "meta.json")
    network = minimal_network(load(*ELECTRA, "config.json"), root(meta["genesis_validators_root"]))
    store = bootstrap(root(meta["trusted_block_root"]),
                      decode_bootstrap(load(*ELECTRA, "bootstrap.json"), network), network)
    step = load(*ELECTRA, "steps.json")[0]["process_update"]
    document = load(*ELECTRA, "updates", step["update"] + ".json")
    assert document["version"] == "electra" and len(document["data"]["finality_branch"]) == 7
    return network, store, document, step["current_slot"]


@pytest.mark.parametrize("field", ["finality_branch", "next_sync_committee_branch"])
def test_electra_branches(electra, field):
    network, store, document, slot = electra
    assert store.apply_update(decode_update(document, network), current_slot=slot)
    for index in range(len(document["data"][field])):
        tampered = copy.deepcopy(document)
        tampered["data"][field][index] = flip(tampered["data"][field][index], 9)
        update = decode_update(tampered, network)
        refused("invalid-consensus-proof", lambda u=update: store.apply_update(
            u, current_slot=slot))


def test_electra_data_labelled_fulu(electra):
    network, store, document, slot = electra
    relabelled = dict(document, version="fulu")  # same shape, wrong fork for the slot
    update = decode_update(relabelled, network)
    error = refused("invalid-consensus-proof",
                    lambda: store.apply_update(update, current_slot=slot))
    assert "data of fork fulu" in error.detail


def test_electra_data_with_deneb_branch_lengths(electra):
    network, store, document, slot = electra
    truncated = copy.deepcopy(document)
    truncated["data"]["finality_branch"] = truncated["data"]["finality_branch"][1:]
    refused("rpc-malformed", lambda: decode_update(truncated, network))


# -- malformed -------------------------------------------------------------------------

MALFORMED = {
    "short branch": lambda d: d["next_sync_committee_branch"].pop(),
    "long branch": lambda d: d["finality_branch"].append("0x" + "00" * 32),
    "odd hex": lambda d: d["sync_aggregate"].__setitem__("sync_committee_bits", "0x0"),
    "short bits": lambda d: d["sync_aggregate"].__setitem__("sync_committee_bits", "0xff"),
    "slot not a string": lambda d: d["attested_header"]["beacon"].__setitem__("slot", 5),
    "slot over uint64": lambda d: d.__setitem__("signature_slot", str(2**64)),
    "negative slot": lambda d: d.__setitem__("signature_slot", "-1"),
    "missing field": lambda d: d.pop("finalized_header"),
    "extra field": lambda d: d.__setitem__("surprise", "0x"),
    "511 pubkeys": lambda d: d["next_sync_committee"]["pubkeys"].pop(),
    "47-byte pubkey": lambda d: d["next_sync_committee"]["pubkeys"].__setitem__(
        0, "0x" + "11" * 47),
    "deneb field in capella data": lambda d: d["attested_header"]["execution"].__setitem__(
        "blob_gas_used", "0"),
    "extra_data over 32 bytes": lambda d: d["attested_header"]["execution"].__setitem__(
        "extra_data", "0x" + "00" * 33),
    "non-hex root": lambda d: d["attested_header"]["beacon"].__setitem__(
        "state_root", "0x" + "zz" * 32),
}


@pytest.mark.parametrize("tamper", sorted(MALFORMED))
def test_malformed_update(tamper):
    document = copy.deepcopy(load(HELIOS, "updates.json")[1])
    MALFORMED[tamper](document["data"])
    refused("rpc-malformed", lambda: decode_update(document, MAINNET))


@pytest.mark.parametrize("version", ["altair", "bellatrix", "gloas", "", None, 4, "x" * 100])
def test_unsupported_versions(version):
    document = dict(load(HELIOS, "updates.json")[1], version=version)
    refused("rpc-malformed", lambda: decode_update(document, MAINNET))
