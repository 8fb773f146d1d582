"""``--lc-store``: any single-field mutation of a store the light client wrote is the store
back (an immaterial change) or one UsageError line naming the field; never another exception
(exit 70). The store comes from a real sync of the recorded mainnet set."""

from __future__ import annotations

import json

import pytest

from recompute.devnet.beacon_http import FixtureBeaconServer
from recompute.lightclient import MAINNET
from tests.core.test_file_schemas import holds
from tests.lightclient.data import FIXTURES, load
from tests.lightclient.test_cli_sync import HELIOS, sync_args


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    store = tmp_path_factory.mktemp("lc") / "lc.json"
    with FixtureBeaconServer(FIXTURES / HELIOS, MAINNET) as server:
        from recompute.cli import main

        with pytest.raises(SystemExit) as done:
            main(sync_args(server, HELIOS, "--lc-store", str(store), "--json"))
    assert done.value.code == 0
    return json.loads(store.read_text())


def test_a_mutated_store_is_the_store_or_one_line_naming_the_field(stored):
    from recompute.lightclient.persist import store_from_json

    root = bytes.fromhex(load(HELIOS, "meta.json")["trusted_block_root"][2:])
    holds(stored, 4, lambda doc: store_from_json(doc, MAINNET, root, "--lc-store x.json"),
          "nested deeper")

