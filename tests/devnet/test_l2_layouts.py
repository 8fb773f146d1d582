"""The devnet's L2 deploys the OP stack's own contracts, no simplified stand-in: the storage
variables the L2 anchor reads (recompute/data/l2/op-stack-versions.json) sit where solc's
storage layout of the bundled artifacts the devnet deploys (recompute/data/artifacts/optimism,
taken from the npm package) puts them, variable by variable."""

from __future__ import annotations

import json

import pytest

from recompute.data import data_path
from recompute.devnet.contracts import load_artifact
from recompute.devnet.l2_chain import OPTIMISM_ARTIFACTS

VERSIONS = json.loads(data_path("l2", "op-stack-versions.json").read_text())
DEPLOYED = ("OptimismPortal2", "DisputeGameFactory", "FaultDisputeGame")


def _layout(name: str) -> dict[str, dict[str, object]]:
    layout = load_artifact(name, OPTIMISM_ARTIFACTS)["storageLayout"]
    types = layout["types"]
    return {entry["label"]: {"slot": int(entry["slot"]), "offset": entry["offset"],
                             "bytes": int(types[entry["type"]]["numberOfBytes"])}
            for entry in layout["storage"]}


@pytest.mark.parametrize("name", DEPLOYED)
def test_the_anchors_slots_are_the_deployed_contracts(name):
    (entry,) = [e for e in VERSIONS["implementations"] if e["name"] == name]
    assert VERSIONS["package_version"] == load_artifact(
        name, OPTIMISM_ARTIFACTS)["package"].rsplit("@", 1)[1]
    layout = _layout(name)
    assert entry["storage"], name
    for variable, where in entry["storage"].items():
        assert layout[variable] == {k: where[k] for k in ("slot", "offset", "bytes")}, variable


def test_the_game_status_word_is_the_real_games():
    """createdAt, resolvedAt and status share slot 0 of every game clone (FaultDisputeGame
    1.2.0): the word the devnet's games are read by."""
    layout = _layout("FaultDisputeGame")
    assert [layout[v] for v in ("createdAt", "resolvedAt", "status")] == [
        {"slot": 0, "offset": 0, "bytes": 8}, {"slot": 0, "offset": 8, "bytes": 8},
        {"slot": 0, "offset": 16, "bytes": 1}]
