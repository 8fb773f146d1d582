"""Build the table of standard OP-stack implementations by address
(recompute/data/l2/standard-implementations.json) from the superchain registry's
standard-versions files and the contracts' storage-layout snapshots, copied with their
provenance into tests/fixtures/l2-releases/ (its README). tests/l2/test_releases.py checks the
bundled table against this build.

Run ``python -m tests.l2.standard_releases`` to write the table again.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

from recompute.data import data_path
from tests import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "l2-releases"
TABLE = data_path("l2", "standard-implementations.json")
REGISTRY_COMMIT = "8336d2aedd19b87a57b01ae36ba4afef8ea377d0"
NETWORKS = {"mainnet": 1, "sepolia": 11155111}
# standard-versions key -> (role, contract name)
ROLES = {"optimism_portal": ("portal", "OptimismPortal2"),
         "anchor_state_registry": ("registry", "AnchorStateRegistry"),
         "dispute_game_factory": ("factory", "DisputeGameFactory")}
# (contract, major version, snapshot file, its source, variables read)
LAYOUTS = [
    ("AnchorStateRegistry", 3, "storageLayout-AnchorStateRegistry.json",
     "ethereum-optimism/optimism packages/contracts-bedrock/snapshots/storageLayout/"
     "AnchorStateRegistry.json at 0973cabbb40d232639c28a45c2b8300ccf835498",
     ("disputeGameFactory", "anchorGame", "startingAnchorRoot", "disputeGameBlacklist",
      "respectedGameType", "retirementTimestamp")),
    ("DisputeGameFactory", 1, "storageLayout-DisputeGameFactory.json",
     "ethereum-optimism/optimism packages/contracts-bedrock/snapshots/storageLayout/"
     "DisputeGameFactory.json at 4ba2eb00eafc3d7de2c8ceb6fd83913a8c0a2c0d",
     ("_disputeGames", "_disputeGameList")),
]


def _implementations(network: str) -> list[dict[str, Any]]:
    text = (FIXTURES / f"standard-versions-{network}.toml").read_text()
    releases = tomllib.loads(text)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for tag, contracts in releases.items():
        for key, (role, name) in ROLES.items():
            entry = contracts.get(key)
            if entry is None or "implementation_address" not in entry:
                continue
            address = entry["implementation_address"].lower()
            row = found.setdefault((role, address), {
                "address": address, "role": role, "name": name, "version": entry["version"],
                "releases": []})
            assert row["version"] == entry["version"], (network, tag, key)
            row["releases"].append(tag)
    return sorted(found.values(), key=lambda row: (row["role"], row["address"]))


def _layout(name: str, major: int, file: str, source: str,
            wanted: tuple[str, ...]) -> dict[str, Any]:
    snapshot = json.loads((FIXTURES / file).read_text())
    storage: dict[str, Any] = {}
    for variable in snapshot:
        label = variable["label"]
        if label not in wanted:
            continue
        slot, offset, size = int(variable["slot"]), variable["offset"], int(variable["bytes"])
        if label == "startingAnchorRoot":  # struct Proposal { Hash root; uint256 l2SequenceNumber }
            assert (size, offset) == (64, 0)
            storage["startingAnchorRoot.root"] = {"slot": slot, "offset": 0, "bytes": 32}
            storage["startingAnchorRoot.l2SequenceNumber"] = {"slot": slot + 1, "offset": 0,
                                                              "bytes": 32}
            continue
        storage[label] = {"slot": slot, "offset": offset, "bytes": size}
    return {"name": name, "major": major, "source": source, "storage": storage}


def build() -> dict[str, Any]:
    return {
        "format": "recompute-op-stack-releases/1",
        "about": ("Standard OP-stack implementation addresses by L1 network, from the "
                  "superchain registry's standard-versions files (each network names its file "
                  "and commit; each address the op-contracts releases listing it), and the "
                  "storage slots recompute reads of each contract's major version, from the "
                  "contracts' storage-layout snapshots (each names its file and commit)."),
        "networks": {
            network: {
                "chain_id": chain_id,
                "source": (f"ethereum-optimism/superchain-registry validation/standard/"
                           f"standard-versions-{network}.toml at {REGISTRY_COMMIT}"),
                "implementations": _implementations(network),
            } for network, chain_id in NETWORKS.items()},
        "layouts": [_layout(*layout) for layout in LAYOUTS],
    }


def main() -> None:
    TABLE.write_text(json.dumps(build(), indent=1) + "\n")
    print(f"wrote {TABLE}")


if __name__ == "__main__":
    main()
