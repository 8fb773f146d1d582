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


def recorded_at(name: str) -> int:
    """The time a recorded mainnet set is judged as of: the start of its optimistic update's
    signature slot (mainnet genesis time + 12 s a slot; consensus-specs configs/mainnet.yaml),
    the first moment that update could exist."""
    slot = int(load(name, "optimistic.json")["data"]["signature_slot"])
    return 1606824023 + 12 * slot


def replay_clock(name: str) -> list[str]:
    """``--at`` for a recorded set, and ``--accept-old-checkpoint`` when its trusted root is
    older than 256 epochs (the weak-subjectivity floor) at that time: the helios set's
    bootstrap is 40,056 slots (5.6 days) before its updates."""
    boot = int(load(name, "bootstrap.json")["data"]["header"]["beacon"]["slot"])
    signed = int(load(name, "optimistic.json")["data"]["signature_slot"])
    old = ["--accept-old-checkpoint"] if signed - boot > 256 * 32 else []
    return ["--at", str(recorded_at(name)), *old]
