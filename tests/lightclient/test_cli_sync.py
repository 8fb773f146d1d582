"""``recompute lightclient sync`` and the light-client anchor on real mainnet data, replayed
over HTTP by the fixture beacon server. Expected blocks come from each set's meta.json and
the full beacon blocks recorded with it, never from the code under test."""

from __future__ import annotations

import copy
import json

import pytest

from recompute.cli import main
from recompute.devnet.beacon_http import FixtureBeaconServer
from recompute.lightclient import MAINNET
from tests.lightclient.data import FIXTURES, MAINNET_SETS, load, replay_clock
from tests.lightclient.test_tamper import (
    BOOTSTRAP_TAMPERS,
    FINALITY_TAMPERS,
    OPTIMISTIC_TAMPERS,
    UPDATE_TAMPERS,
)

HELIOS = "helios-mainnet-capella"


def expected_blocks(name: str) -> tuple[dict, dict | None]:
    """(finalized, optimistic) execution blocks a set names: number and hash."""
    meta = load(name, "meta.json")
    expected = meta["expected"]
    if name == HELIOS:
        payload = load(name, "blocks", "7109431.json")["data"]["message"]["body"][
            "execution_payload"]
        optimistic = {"execution_block_number": int(payload["block_number"]),
                      "execution_block_hash": payload["block_hash"]}
        return expected["after_updates_and_finality"], optimistic
    return expected["finality_update_finalized"], expected["optimistic_attested"]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """The CLI in this process (a fresh one per call costs seconds; the sweep is long)."""
    with pytest.raises(SystemExit) as done:
        main([*map(str, args)])
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def sync_args(server, name: str, *more: str) -> list[str]:
    return ["lightclient", "sync", "--beacon", server.url, "--trusted-root",
            load(name, "meta.json")["trusted_block_root"], *replay_clock(name), *more]


@pytest.mark.parametrize("name", MAINNET_SETS)
def test_sync_ends_at_the_blocks_each_set_names(name, capsys):
    finalized, optimistic = expected_blocks(name)
    with FixtureBeaconServer(FIXTURES / name, MAINNET) as server:
        code, out, err = cli(capsys, *sync_args(server, name, "--json"))
        human_code, human, _ = cli(capsys, *sync_args(server, name))
    assert code == 0, out + err
    summary = json.loads(out)
    assert summary["synced"] is True and summary["network"] == "mainnet"
    assert summary["finalized"]["block_number"] == finalized["execution_block_number"]
    assert summary["finalized"]["block_hash"] == finalized["execution_block_hash"]
    assert summary["finalized"]["finalized"] is True
    assert summary["optimistic"]["block_number"] == optimistic["execution_block_number"]
    assert summary["optimistic"]["block_hash"] == optimistic["execution_block_hash"]
    if "execution_state_root" in finalized:
        assert summary["finalized"]["state_root"] == finalized["execution_state_root"]
    assert human_code == 0 and human.startswith("SYNCED mainnet")
    assert finalized["execution_block_hash"] in human


TAMPERS = (
    [("bootstrap", key, fn) for key, fn in BOOTSTRAP_TAMPERS.items()]
    + [("updates", key, fn) for key, fn in UPDATE_TAMPERS.items()]
    + [("finality_update", key, fn) for key, fn in FINALITY_TAMPERS.items()]
    + [("optimistic_update", key, fn) for key, fn in OPTIMISTIC_TAMPERS.items()]
)


@pytest.mark.parametrize("route,key,fn", TAMPERS, ids=[f"{r}: {k}" for r, k, _ in TAMPERS])
def test_every_tampering_of_the_core_surfaces_as_unverifiable(route, key, fn, capsys):
    def tamper(answered: str, document):
        if answered != route:
            return document
        document = copy.deepcopy(document)
        target = document[1] if route == "updates" else document  # the core's updates[1]
        fn(target["data"])
        return document

    with FixtureBeaconServer(FIXTURES / HELIOS, MAINNET, tamper=tamper) as server:
        code, out, err = cli(capsys, *sync_args(server, HELIOS, "--json"))
        assert code == 2, out + err
        assert json.loads(out) == {"synced": False, "reason": "invalid-consensus-proof",
                                   "detail": json.loads(out)["detail"]}
        # the same through an anchoring command: UNVERIFIABLE before any node is asked
        code, out, err = cli(capsys, "proof", "--rpc", "http://127.0.0.1:9", "--beacon",
                             server.url, "--trusted-root",
                             load(HELIOS, "meta.json")["trusted_block_root"],
                             *replay_clock(HELIOS), "--address", "0x" + "11" * 20, "--slot",
                             "0", "--json")
    assert code == 2, out + err
    outcome = json.loads(out)
    assert outcome["verdict"] == "UNVERIFIABLE"
    assert outcome["reason"] == "invalid-consensus-proof"


@pytest.mark.parametrize("network", ["sepolia", "holesky"])
def test_another_networks_parameters_are_refused(network, capsys):
    with FixtureBeaconServer(FIXTURES / HELIOS, MAINNET) as server:
        code, out, _ = cli(capsys, *sync_args(server, HELIOS, "--network", network))
    assert code == 2
    assert out.startswith("UNVERIFIABLE (invalid-consensus-proof)")


def test_the_store_on_disk_resumes_and_is_refused_for_another_root(tmp_path, capsys):
    store = tmp_path / "lc.json"
    finalized, _ = expected_blocks(HELIOS)
    with FixtureBeaconServer(FIXTURES / HELIOS, MAINNET) as server:
        code, out, err = cli(capsys, *sync_args(server, HELIOS, "--lc-store", store, "--json"))
    assert code == 0, err
    assert store.is_file() and json.loads(store.read_text())["network"] == "mainnet"

    # resumed from the file: the beacon node no longer serves the bootstrap, sync still works
    def no_bootstrap(route, document):
        return None if route == "bootstrap" else document

    with FixtureBeaconServer(FIXTURES / HELIOS, MAINNET, tamper=no_bootstrap) as server:
        code, out, err = cli(capsys, *sync_args(server, HELIOS, "--lc-store", store, "--json"))
        assert code == 0, out + err
        assert json.loads(out)["finalized"]["block_hash"] == finalized["execution_block_hash"]
        fresh, out, _ = cli(capsys, *sync_args(server, HELIOS, "--json"))
        assert fresh == 2 and json.loads(out)["reason"] != "ok"  # without it: no bootstrap

        other = ["lightclient", "sync", "--beacon", server.url, "--trusted-root",
                 "0x" + "ab" * 32, "--lc-store", str(store)]
        code, out, err = cli(capsys, *other)
        assert code == 64
        assert len(err.strip().splitlines()) == 1 and "trusted root" in err

        code, out, err = cli(capsys, *sync_args(server, HELIOS, "--lc-store", store,
                                                "--network", "sepolia"))
        assert code == 64 and "is for network mainnet, not sepolia" in err


def test_a_store_file_that_is_not_a_store_is_one_line(tmp_path, capsys):
    for content in (b"{not json", b"[]", b"x" * (2 << 20)):
        store = tmp_path / "lc.json"
        store.write_bytes(content)
        with FixtureBeaconServer(FIXTURES / HELIOS, MAINNET) as server:
            code, out, err = cli(capsys, *sync_args(server, HELIOS, "--lc-store", store))
        assert code == 64, (content[:10], out, err)
        assert len(err.strip().splitlines()) == 1


@pytest.mark.anvil
def test_proof_on_the_mainnet_replay_pins_the_block_then_is_unverifiable(anvil, capsys):
    """No mainnet state exists offline: the block is pinned by the light client, and the
    node (an anvil without that block) cannot prove anything at it: UNVERIFIABLE."""
    finalized, _ = expected_blocks(HELIOS)
    with FixtureBeaconServer(FIXTURES / HELIOS, MAINNET) as server:
        for expect in ("0=0x0", "0=0x1"):
            code, out, err = cli(capsys, "proof", "--rpc", anvil.url, "--beacon", server.url,
                                 "--trusted-root",
                                 load(HELIOS, "meta.json")["trusted_block_root"],
                                 *replay_clock(HELIOS), "--address", "0x" + "11" * 20,
                                 "--expect", expect, "--json")
            assert code == 2, out + err
            outcome = json.loads(out)
            assert outcome["verdict"] == "UNVERIFIABLE"
            block = outcome["evidence"]["block"]
            assert block["hash"] == finalized["execution_block_hash"]
            assert block["number"] == finalized["execution_block_number"]
            anchor = outcome["evidence"]["anchor"]
            assert anchor["method"] == "light-client"
            assert anchor["finalized_beacon_slot"] == finalized["finalized_slot"]
            assert anchor["execution_header"].startswith("not served")
