"""Shared helpers of the light-client tests: the fixture folder and JSON loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recompute.lightclient import MAINNET, bootstrap, decode_bootstrap

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "light-client"
MAINNET_SETS = ("helios-mainnet-capella", "portal-mainnet-capella", "portal-mainnet-deneb")


def load(*parts: str):
    return json.loads((FIXTURES.joinpath(*parts)).read_text())


def root(text: str) -> bytes:
    return bytes.fromhex(text.removeprefix("0x"))


@pytest.fixture(scope="session")
def helios_store():
    """The helios set's store right after bootstrap (immutable, so shared)."""
    meta = load("helios-mainnet-capella", "meta.json")
    data = decode_bootstrap(load("helios-mainnet-capella", "bootstrap.json"), MAINNET)
    return bootstrap(root(meta["trusted_block_root"]), data, MAINNET)
