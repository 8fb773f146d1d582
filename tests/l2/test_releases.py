"""The table of standard implementation addresses (recompute/data/l2/standard-implementations
.json) against the superchain registry's standard-versions files and the storage-layout
snapshots copied into tests/fixtures/l2-releases/ (no network, no anvil)."""

from __future__ import annotations

import json

import pytest

from recompute.l2.releases import UnlistedRelease, load_releases
from tests.l2.standard_releases import FIXTURES, TABLE, build


def test_the_bundled_table_is_the_build_of_the_copied_registry_files():
    assert json.loads(TABLE.read_text()) == build()


def test_v7_on_mainnet_and_v8_on_sepolia_only():
    releases = load_releases()
    assert releases.networks == {"mainnet": 1, "sepolia": 11155111}
    portal = bytes.fromhex("e89f13c5ee4033b2d3cd76c9d6958efbfe26d3c2")
    found = {entry.network: entry for entry in releases.find(portal, "portal")}
    assert set(found) == {"mainnet", "sepolia"}
    assert found["mainnet"].label == "OptimismPortal2 5.6.1"
    assert "op-contracts/v7.0.0-rc.4" in found["mainnet"].releases
    v8 = bytes.fromhex("1005217ad392dc64cef501fa1777a27d42166748")  # listed on sepolia only
    assert [entry.network for entry in releases.find(v8, "portal")] == ["sepolia"]
    assert releases.find(v8, "registry") == []  # a portal's address is no registry


def test_every_listed_address_appears_in_the_copied_file_with_its_version():
    releases = load_releases()
    for entry in releases.listed:
        text = (FIXTURES / f"standard-versions-{entry.network}.toml").read_text().lower()
        line = (f'version = "{entry.version}", implementation_address = '
                f'"0x{entry.address.hex()}"')
        assert line in text, entry


def test_layouts_are_the_snapshots_slots():
    releases = load_releases()
    registry = next(e for e in releases.listed if e.label == "AnchorStateRegistry 3.9.0")
    layout = releases.layout(registry)
    snapshot = {v["label"]: v for v in json.loads(
        (FIXTURES / "storageLayout-AnchorStateRegistry.json").read_text())}
    for name in ("disputeGameFactory", "anchorGame", "disputeGameBlacklist",
                 "respectedGameType", "retirementTimestamp"):
        variable = layout.variable(name)
        assert (variable.slot, variable.offset, variable.size) == (
            int(snapshot[name]["slot"]), snapshot[name]["offset"], int(snapshot[name]["bytes"]))
    # struct Proposal { Hash root; uint256 l2SequenceNumber } at slot 3: two words
    assert layout.variable("startingAnchorRoot.root").slot == 3
    assert layout.variable("startingAnchorRoot.l2SequenceNumber").slot == 4
    factory = next(e for e in releases.listed if e.label == "DisputeGameFactory 1.6.1")
    assert releases.layout(factory).variable("_disputeGames").slot == 103
    assert releases.layout(factory).variable("_disputeGameList").slot == 104


def test_a_listed_release_without_a_layout_is_refused_by_name():
    releases = load_releases()
    old = next(e for e in releases.listed if e.label == "AnchorStateRegistry 2.2.2")
    with pytest.raises(UnlistedRelease, match="AnchorStateRegistry 2.2.2 .* no storage layout"):
        releases.layout(old)


def test_the_layout_contract_compiles_to_the_snapshot_s_slots():
    """contracts/src/op-releases' StandardAnchorStateRegistryLayout (the release's variables in
    its order, compiled by the project's solc-js) has the snapshot's slots for every variable
    read; the release-pair tests place its code at the listed implementation address."""
    from recompute.devnet.contracts import load_artifact

    compiled = {v["label"]: v for v in load_artifact(
        "StandardAnchorStateRegistryLayout")["storageLayout"]["storage"]}
    snapshot = {v["label"]: v for v in json.loads(
        (FIXTURES / "storageLayout-AnchorStateRegistry.json").read_text())}
    for name in ("disputeGameFactory", "anchorGame", "startingAnchorRoot",
                 "disputeGameBlacklist", "respectedGameType", "retirementTimestamp"):
        assert (int(compiled[name]["slot"]), compiled[name]["offset"]) == \
            (int(snapshot[name]["slot"]), snapshot[name]["offset"]), name


@pytest.mark.parametrize(("asked", "chain_id", "beacon", "network"), [
    (None, 1, None, "mainnet"), ("mainnet", 1, None, "mainnet"),
    (None, 11155111, None, "sepolia"), (None, 31337, None, None),
    ("sepolia", 11155111, "sepolia", "sepolia"), (None, 1, "mainnet", "mainnet"),
    (None, 17000, "holesky", None),
])
def test_the_l1_network_whose_addresses_apply(asked, chain_id, beacon, network):
    from recompute.l2.anchor_state import network_of

    assert network_of(load_releases(), asked, chain_id, beacon) == network


@pytest.mark.parametrize(("asked", "chain_id", "beacon"), [
    ("mainnet", 11155111, None),  # the preset's network is not the L1 block's chain
    ("sepolia", 31337, None),
    (None, 11155111, "mainnet"),  # the light client follows mainnet, the node says sepolia
    ("sepolia", 1, "mainnet"),
])
def test_a_network_that_does_not_agree_is_refused_by_name(asked, chain_id, beacon):
    from recompute.core.errors import Unverifiable
    from recompute.l2.anchor_state import network_of

    with pytest.raises(Unverifiable) as caught:
        network_of(load_releases(), asked, chain_id, beacon)
    assert caught.value.reason == "l1-network-mismatch"
