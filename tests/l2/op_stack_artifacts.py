"""Build the table of known OP-stack implementations (recompute/data/l2/op-stack-versions.json)
from the contracts-bedrock npm package's forge artifacts: each contract's runtime code with its
immutables zeroed (solc leaves zeros there), their offsets, and the storage variables the L2
anchor reads, from the artifact's ``storageLayout``. tests/l2/test_versions.py checks the
bundled table against the package installed in node_modules.

Run ``python -m tests.l2.op_stack_artifacts`` to write the table again.
"""

from __future__ import annotations

import json
import re
from typing import Any

from recompute.core.keccak import keccak256
from recompute.data import data_path
from tests import REPO_ROOT

PACKAGE = REPO_ROOT / "node_modules" / "@eth-optimism" / "contracts-bedrock"
TABLE = data_path("l2", "op-stack-versions.json")

# (artifact, role, source file, storage variables read, immutables read)
WANTED = [
    ("Proxy", "proxy", "src/universal/Proxy.sol", (), ()),
    ("OptimismPortal2", "portal", "src/L1/OptimismPortal2.sol",
     ("disputeGameFactory", "disputeGameBlacklist", "respectedGameType",
      "respectedGameTypeUpdatedAt"),
     ("DISPUTE_GAME_FINALITY_DELAY_SECONDS", "PROOF_MATURITY_DELAY_SECONDS")),
    ("DisputeGameFactory", "factory", "src/dispute/DisputeGameFactory.sol",
     ("gameImpls", "_disputeGames", "_disputeGameList"), ()),
    ("FaultDisputeGame", "game", "src/dispute/FaultDisputeGame.sol",
     ("createdAt", "resolvedAt", "status"), ("GAME_TYPE",)),
    ("PermissionedDisputeGame", "game", "src/dispute/PermissionedDisputeGame.sol",
     ("createdAt", "resolvedAt", "status"), ("GAME_TYPE",)),
]


def _ast_names(node: Any, ids: set[str], out: dict[str, str]) -> None:
    if isinstance(node, dict):
        if str(node.get("id")) in ids and "name" in node:
            out[str(node["id"])] = node["name"]
        for value in node.values():
            _ast_names(value, ids, out)
    elif isinstance(node, list):
        for value in node:
            _ast_names(value, ids, out)


def _version(source: str, name: str) -> str:
    text = (PACKAGE / source).read_text()
    found = re.search(r'string public constant version = "([^"]+)"', text)
    if found:
        return found.group(1)
    found = re.search(r'return string\.concat\(super\.version\(\), "([^"]+)"\)', text)
    if found:  # a game that extends another's version (PermissionedDisputeGame)
        return "FaultDisputeGame" + found.group(1)
    if name == "PermissionedDisputeGame":  # its version() is FaultDisputeGame's
        return _version("src/dispute/FaultDisputeGame.sol", "FaultDisputeGame")
    return "unversioned"  # (Proxy has no version string: its code names it)


def build() -> dict[str, Any]:
    package = json.loads((PACKAGE / "package.json").read_text())
    artifacts = {name: json.loads((PACKAGE / "forge-artifacts" / f"{name}.sol"
                                   / f"{name}.json").read_text()) for name, *_ in WANTED}
    names: dict[str, str] = {}
    refs = {key for a in artifacts.values()
            for key in a["deployedBytecode"].get("immutableReferences", {})}
    for artifact in artifacts.values():
        _ast_names(artifact["ast"], refs, names)
    entries = []
    for name, role, source, variables, immutables in WANTED:
        artifact = artifacts[name]
        code = bytes.fromhex(artifact["deployedBytecode"]["object"].removeprefix("0x"))
        places = {names[key]: sorted([ref["start"], ref["length"]] for ref in refs_)
                  for key, refs_ in artifact["deployedBytecode"].get(
                      "immutableReferences", {}).items()}
        for spans in places.values():
            assert all(code[start:start + length] == bytes(length) for start, length in spans)
        layout = artifact["storageLayout"]
        storage = {}
        for variable in layout["storage"]:
            if variable["label"] in variables:
                kind = layout["types"][variable["type"]]
                storage[variable["label"]] = {"slot": int(variable["slot"]),
                                              "offset": variable["offset"],
                                              "bytes": int(kind["numberOfBytes"]),
                                              "type": kind["label"]}
        assert set(storage) == set(variables), (name, set(variables) - set(storage))
        entries.append({
            "name": name, "version": _version(source, name), "role": role,
            "artifact": f"forge-artifacts/{name}.sol/{name}.json",
            "code_size": len(code), "masked_code_hash": "0x" + keccak256(code).hex(),
            "immutables": {label: places[label] for label in immutables},
            "immutable_spans": sorted(span for spans in places.values() for span in spans),
            "storage": storage,
        })
    return {
        "format": "recompute-op-stack-versions/1",
        "source": (f"{package['name']} {package['version']} (npm): each forge artifact's "
                   "deployedBytecode (immutables zeroed, as solc leaves them), "
                   "immutableReferences and storageLayout"),
        "package": package["name"], "package_version": package["version"],
        "implementations": entries,
    }


def main() -> None:
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(json.dumps(build(), indent=1) + "\n")
    print(f"wrote {TABLE}")


if __name__ == "__main__":
    main()
