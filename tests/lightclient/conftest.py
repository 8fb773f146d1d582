"""Fixtures shared by the light-client tests."""

from __future__ import annotations

import pytest

from recompute.lightclient import MAINNET, bootstrap, decode_bootstrap
from tests.lightclient.data import load, root


@pytest.fixture(scope="session")
def helios_store():
    """The helios set's store right after bootstrap (immutable, so shared)."""
    meta = load("helios-mainnet-capella", "meta.json")
    data = decode_bootstrap(load("helios-mainnet-capella", "bootstrap.json"), MAINNET)
    return bootstrap(root(meta["trusted_block_root"]), data, MAINNET)
