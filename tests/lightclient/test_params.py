"""Networks: the built-in ones against the fixtures' networks.json, the minimal preset from a
spec-test config, and ``--network FILE`` validation (one-line UsageError)."""

from __future__ import annotations

import json

import pytest

from recompute.lightclient import (
    DEVNET,
    HOLESKY,
    MAINNET,
    SEPOLIA,
    load_network,
    minimal_network,
    network_by_name,
)
from recompute.lightclient.failures import UsageError
from recompute.lightclient.proofs import (
    CURRENT_SYNC_COMMITTEE_GINDEX,
    CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA,
    FINALIZED_ROOT_GINDEX,
    FINALIZED_ROOT_GINDEX_ELECTRA,
    current_sync_committee_gindex_at_slot,
    finalized_root_gindex_at_slot,
    next_sync_committee_gindex_at_slot,
)
from tests.lightclient.data import FIXTURES, load, root


def test_mainnet_is_networks_json():
    expected = load("networks.json")["mainnet"]
    assert MAINNET.genesis_validators_root == root(expected["genesis_validators_root"])
    assert [(f.name, "0x" + f.version.hex(), f.epoch) for f in MAINNET.forks] == [
        (f["name"], f["version"], f["epoch"]) for f in expected["forks"]]
    assert MAINNET.slots_per_epoch == expected["slots_per_epoch"]
    assert MAINNET.epochs_per_sync_committee_period == expected[
        "epochs_per_sync_committee_period"]
    assert MAINNET.sync_committee_size == expected["sync_committee_size"]


def test_networks_json_entry_loads_as_a_network_file(tmp_path):
    path = tmp_path / "mainnet.json"
    path.write_text(json.dumps(load("networks.json")["mainnet"]))
    loaded = load_network(path)
    assert loaded.name == "mainnet"
    assert loaded.forks == MAINNET.forks
    assert loaded.genesis_validators_root == MAINNET.genesis_validators_root


def test_fork_schedule_and_gindices():
    # the README's facts: 105/54/55 up to deneb, 169/86/87 from electra, by the slot's fork
    last_deneb = 364032 * 32 - 1
    assert MAINNET.fork_at_slot(last_deneb).name == "deneb"
    assert MAINNET.fork_at_slot(last_deneb + 1).name == "electra"
    assert finalized_root_gindex_at_slot(MAINNET, last_deneb) == FINALIZED_ROOT_GINDEX == 105
    assert finalized_root_gindex_at_slot(MAINNET, last_deneb + 1) == (
        FINALIZED_ROOT_GINDEX_ELECTRA) == 169
    assert current_sync_committee_gindex_at_slot(MAINNET, last_deneb) == (
        CURRENT_SYNC_COMMITTEE_GINDEX) == 54
    assert current_sync_committee_gindex_at_slot(MAINNET, last_deneb + 1) == (
        CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA) == 86
    assert next_sync_committee_gindex_at_slot(MAINNET, last_deneb) == 55
    assert next_sync_committee_gindex_at_slot(MAINNET, last_deneb + 1) == 87
    assert MAINNET.fork_at_slot(411392 * 32).name == "fulu"
    assert finalized_root_gindex_at_slot(MAINNET, 411392 * 32) == 169
    assert MAINNET.period_at_slot(7069376) == 862  # the helios bootstrap


def test_builtin_networks():
    for network in (MAINNET, SEPOLIA, HOLESKY, DEVNET):
        assert network_by_name(network.name) is network
        assert len(network.genesis_validators_root) == 32
        assert [f.epoch for f in network.forks] == sorted(f.epoch for f in network.forks)
    assert SEPOLIA.genesis_time == 1655733600
    assert HOLESKY.genesis_time == 1695902400
    assert DEVNET.sync_committee_size == 32 and DEVNET.fork_at_slot(0).name == "electra"
    assert MAINNET.slot_at_time(1606824023 + 12 * 100 + 5) == 100
    with pytest.raises(UsageError, match="unknown network"):
        network_by_name("goerli")


def test_minimal_network_from_spec_config():
    folder = FIXTURES / "spec-tests-minimal" / "deneb" / "light_client_sync"
    config = json.loads((folder / "config.json").read_text())
    network = minimal_network(config, bytes(32))
    assert (network.slots_per_epoch, network.epochs_per_sync_committee_period,
            network.sync_committee_size) == (8, 8, 32)
    assert network.fork_at_slot(0).name == "deneb"
    assert network.fork_at_slot(0).version == bytes.fromhex("04000001")


GOOD = {
    "genesis_validators_root": "0x" + "11" * 32,
    "forks": [{"name": "phase0", "version": "0x00000001", "epoch": 0},
              {"name": "capella", "version": "0x03000001", "epoch": 10}],
    "slots_per_epoch": 8, "epochs_per_sync_committee_period": 8, "sync_committee_size": 32,
}


def _without(key):
    return {k: v for k, v in GOOD.items() if k != key}


BAD = {
    "not an object": [],
    "unknown key": {**GOOD, "colour": "red"},
    "missing root": _without("genesis_validators_root"),
    "short root": {**GOOD, "genesis_validators_root": "0x11"},
    "no forks": {**GOOD, "forks": []},
    "unknown fork": {**GOOD, "forks": [{"name": "london", "version": "0x00000000", "epoch": 0}]},
    "out of order": {**GOOD, "forks": list(reversed(GOOD["forks"]))},
    "first fork late": {**GOOD, "forks": [{"name": "capella", "version": "0x03000001",
                                           "epoch": 5}]},
    "no light-client fork": {**GOOD, "forks": GOOD["forks"][:1]},
    "same versions": {**GOOD, "forks": [{**f, "version": "0x00000001"} for f in GOOD["forks"]]},
    "bool epoch": {**GOOD, "forks": [GOOD["forks"][0], {**GOOD["forks"][1], "epoch": True}]},
    "negative epoch": {**GOOD, "forks": [GOOD["forks"][0], {**GOOD["forks"][1], "epoch": -1}]},
    "huge committee": {**GOOD, "sync_committee_size": 10**6},
    "committee not a multiple of 8": {**GOOD, "sync_committee_size": 33},
    "zero slots": {**GOOD, "slots_per_epoch": 0},
    "bad name": {**GOOD, "name": "Main Net\n"},
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_network_files(tmp_path, case):
    path = tmp_path / "net.json"
    path.write_text(json.dumps(BAD[case]))
    with pytest.raises(UsageError) as caught:
        load_network(path)
    assert "\n" not in str(caught.value)


def test_network_file_errors(tmp_path):
    good = tmp_path / "good-net.json"
    good.write_text(json.dumps(GOOD))
    assert load_network(good).name == "good-net"
    for content, message in ((b"{", "not JSON"), (b" " * (1 << 20) + b"{}", "larger than")):
        path = tmp_path / "x.json"
        path.write_bytes(content)
        with pytest.raises(UsageError, match=message):
            load_network(path)
    with pytest.raises(UsageError, match="cannot read"):
        load_network(tmp_path / "absent.json")
