"""The light-client fixture folder (tests/fixtures/light-client/) and JSON loading."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "light-client"
MAINNET_SETS = ("helios-mainnet-capella", "portal-mainnet-capella", "portal-mainnet-deneb")


def load(*parts: str):
    return json.loads((FIXTURES.joinpath(*parts)).read_text())


def root(text: str) -> bytes:
    return bytes.fromhex(text.removeprefix("0x"))
