"""The vectors shipped in ``vectors/``, and how each is (re)made.

``make vectors`` rebuilds every file from its source (the bundled geth fixtures, a fresh
devnet, the specifications' numbers) and rewrites ``vectors/suite.json``; a test rebuilds them and
compares bytes, so the committed vectors are exactly what capture gives today.

Expected outputs of the pure vectors are the specifications' own numbers, typed in here from the
text (AMM §Test Cases; ERC-8447 §16), never computed by the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recompute.core.jsontext import json_document, json_line
from recompute.data import FIXTURE_CHAIN, VECTORS
from recompute.devnet.anvil import Anvil
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build
from recompute.disk.whole_file import write_whole
from recompute.recipes.erc8447_interfaces import INTERFACES
from recompute.sources.fixture_node import FixtureNode
from recompute.vectors import SUITE_PROFILE, capture_proof, capture_step, dumps, sha256_file
from recompute.vectors.devnet_cases import DEVNET_CASES

GETH_HEAD = bytes.fromhex("d226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7")
GETH_CONTRACT = "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df"


def _pure(name: str, description: str, function: str, inputs: dict[str, Any],
          output: Any) -> dict[str, Any]:
    return {"format": "recompute-vector/1", "kind": "pure", "name": name,
            "description": description, "function": function, "inputs": inputs,
            "headers": {}, "proofs": [], "receipts": {},  # the same format, no chain
            "expected": {"verdict": "VERIFIED-GOOD", "reason": "ok", "output": output}}


AMM_ERC165_SIGNATURES = [  # AMM §Interface: the 23 functions of IAgentMeditation
    "enroll(bytes32[4],(bytes32,string,uint8,uint8,uint8,uint8,uint48,uint48,uint48[4]),address,"
    "uint8)",
    "setOperator(address,uint8)", "revokeOperator(address,address)",
    "setController(address,address,uint8)",
    "setPolicy(address,(bytes32,string,uint8,uint8,uint8,uint8,uint48,uint48,uint48[4]))",
    "setFloor(address,(uint8,uint48,uint48[4]))", "demand(address,uint8,uint48)",
    "withdrawDemand(address,uint8)",
    "report(address,(uint64,bytes32,bytes32[4],uint8,uint8,uint16,uint8,uint8,uint32,uint48,"
    "uint48,uint48,uint64,bytes32,string))",
    "pulse(address,uint48)", "headOf(address)", "checkpointOf(address,uint8)",
    "rootAt(address,uint64)", "policyOf(address,uint32)", "policyEffectiveFrom(address,uint32)",
    "floorOf(address)", "demandOf(address,uint8)", "operatorPermissions(address,address)",
    "requirementsOf(address)", "layerStatus(address,uint8)", "signalStatus(address)",
    "computeRoot(bytes32[4])", "computeLayerCommitment(uint8,bytes32,bytes32,bytes32)",
]


def pure_vectors() -> list[dict[str, Any]]:
    out = [
        _pure("amm-tag-layer-commitment", "AMM §Test Cases: TAG_LAYER_COMMITMENT",
              "keccak256-text", {"text": "AgentMeditationMechanism/LayerCommitment/v1"},
              "0xc76b0a7a69207b3cf002d75e6493bc9fe99e8d75b5096ead1276bc4339b69d85"),
        _pure("amm-tag-state-root", "AMM §Test Cases: TAG_STATE_ROOT", "keccak256-text",
              {"text": "AgentMeditationMechanism/StateRoot/v1"},
              "0xe2251470d039826c2565c6e003924bb890e07cd981b370528c245e47f1c3e7c6"),
        _pure("amm-jcs-row-1", "AMM §Test Cases, Canonicalization row 1", "amm.jcs",
              {"document": {"b": 1, "a": [True, None, "x"], "c": {"z": 1.5, "y": "é"}}},
              {"canonical": '{"a":[true,null,"x"],"b":1,"c":{"y":"é","z":1.5}}',
               "keccak256": "0xa5bf818c53f5a4b41e090fb63de6621bd9efe8da3a89e87bc41e7fcd004f9031"}),
        _pure("amm-jcs-row-2", "AMM §Test Cases, Canonicalization row 2", "amm.jcs",
              {"document": {"€": 1, "A": 2, "a": 3, "": 4}},
              {"canonical": '{"":4,"A":2,"a":3,"€":1}',
               "keccak256": "0x22816a6b64184a15ee2d60a54c0f519ec38dbf7310593294a545467c66c5ea77"}),
        _pure("amm-jcs-row-3", "AMM §Test Cases, Canonicalization row 3", "amm.jcs",
              {"document": {"n": 1e21, "m": 0.000001, "k": -0.0,
                            "s": 'line\nbreak\ttab"quote\\'}},
              {"canonical": '{"k":0,"m":0.000001,"n":1e+21,"s":"line\\nbreak\\ttab\\"quote\\\\"}',
               "keccak256": "0x8953829f4ccb00b31d6f6ea5b40793765a654514a2049b6e1fb99ab38be2f069"}),
    ]
    pre = [  # (layer, schemaHash, contentHash, salt, commitment): AMM §Test Cases, pre state
        (0, "0x6a00023d50bfe315bf6650953a4bb81910aef335c63ee465d2f52937b860790b",
         "0xa25eae406d69cd3802dbb588487f486e5b5e006b7ef521303ea24406979a4731", "0x" + "00" * 32,
         "0x053bdcecda479dd30b5bfd7a02661df67b79e978fea6888245df8aa167d6d282"),
        (1, "0x2862ecb7722af301f96bf7b7127d96568563c9c6cd281308f315e97b433d2055",
         "0xf3640f14c472bf43b5e89ea5a0a7d1e3681f47c81a7cf1a0d3f41cc685ed1701",
         "0x9b1e4c7a2d5f8b0c3e6a9d1f4b7e0a3c6f9b2e5d8a1c4f7b0e3a6d9c2f5b8e1a",
         "0x3a8a0162793df87f7094634e37d9e5d3d8470bd43cc7fee5669f609d922ee9c3"),
        (2, "0x739b5fc9aa474200ce364ed1db095acd99a4407eb27e258f294f3e65ffff40ad",
         "0x1cefdfbcd841dc162bea189aa25d1e3e2a031d5805901a407db4003706cafdd5", "0x" + "00" * 32,
         "0x3d3356ae1bc86136718f1ecd7f42d8a0570db2d21116c886cab291a789010585"),
        (3, "0x086a5b8a0101b4013c63de2d7392ddb4ae22c61e33afd0eaef58387952c1f468",
         "0xc6e5d3da30fc9d27be29773df620dbed9a359d6bba795d93bafcdb5963e9ede8",
         "0x4d7a0c3f6b9e2d5a8c1f4b7e0a3d6c9f2b5e8a1d4c7f0b3e6a9d2c5f8b1e4a7d",
         "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e"),
    ]
    for layer, schema, content, salt, commitment in pre:
        out.append(_pure(f"amm-worked-example-pre-layer-{layer}",
                         "AMM §Test Cases: layer commitment of the worked example's pre state",
                         "amm.layer-commitment", {"layer": layer, "schema_hash": schema,
                                                  "content_hash": content, "salt": salt},
                         commitment))
    post = ["0xb5a33b6d3732e664a08a19ed068432a6ab1085bf7013b3ffce1ff88ec7dd8519",
            "0xd24fedfca7a64b7596414751a6d4a1ed7a89bf906bce4b453453a7b086d26641",
            "0x8f03de4a144d8d453c84d2d4546fb0f01af23bd6f7ba31d18dac0c6dd1a942f0",
            "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e"]
    out.append(_pure("amm-worked-example-pre-root", "AMM §Test Cases: pre root",
                     "amm.state-root", {"commitments": [row[4] for row in pre]},
                     "0x090e63d66e6cdb08331fece350bd0320551287d53d6644d5af158b04d94d149f"))
    out.append(_pure("amm-worked-example-post-root", "AMM §Test Cases: post root",
                     "amm.state-root", {"commitments": post},
                     "0x9918ebff7f3bc97ca08580033da3aa99b27871d8d57b2b8c9845221fa3dec3de"))
    out.append(_pure("amm-erc165-interface-id",
                     "AMM §Test Cases: 0x9c81b550 is the XOR of the 23 IAgentMeditation selectors",
                     "erc165.interface-id", {"signatures": AMM_ERC165_SIGNATURES}, "0x9c81b550"))
    out += _erc8447_interface_vectors()
    return out


def _erc8447_interface_vectors() -> list[dict[str, Any]]:
    """ERC-8447 §16 identifiers from the §12/§13 signatures (kept in vectors/erc8447-*.json
    inputs); the signature lists live in recompute.recipes.erc8447_interfaces."""
    return [_pure(f"erc8447-{name}-interface-id", f"ERC-8447 §16: {name} = {expected}",
                  "erc165.interface-id", {"signatures": signatures}, expected)
            for name, (signatures, expected) in INTERFACES.items()]


def geth_vectors() -> list[dict[str, Any]]:
    """The real go-ethereum proofs of the execution-apis fixtures, as `recompute proof`."""
    with FixtureNode(FIXTURE_CHAIN) as node:
        return [
            capture_proof(GETH_CONTRACT, [], node.url, GETH_HEAD, "geth-account-proof",
                          "go-ethereum eth_getProof/get-account-proof-*: the account at block "
                          "54 (execution-apis fixtures, CC0)"),
            capture_proof(GETH_CONTRACT, [0], node.url, GETH_HEAD, "geth-account-proof-with-"
                          "storage", "go-ethereum eth_getProof/get-account-proof-with-storage:"
                          " slot 0 = 0x38 at block 54 (execution-apis fixtures, CC0)"),
        ]


def write_all(devnet_vectors: list[dict[str, Any]] | None = None,
              directory: Path = VECTORS) -> list[Path]:
    """(Re)write every shipped vector and the suite; returns the files written."""
    groups = {"pure": pure_vectors(), "geth": geth_vectors(), "devnet": devnet_vectors or []}
    written = []
    for group, vectors in groups.items():
        for vector in vectors:
            path = directory / group / f"{vector['name']}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_whole(path, dumps(vector))
            written.append(path)
    write_suite(directory, written)
    return written


def write_suite(directory: Path, files: list[Path]) -> None:
    suite = {
        "profile": SUITE_PROFILE,
        "vectors": [{"path": str(p.relative_to(directory)), "sha256": sha256_file(p)}
                    for p in sorted(files)],
        "spec": {"path": "README.md", "sha256": sha256_file(directory / "README.md")},
    }
    write_whole(directory / "suite.json", json_document(suite, indent=1) + "\n")


def capture_devnet(node_url: str, manifest: dict[str, Any],
                   cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Capture step vectors from a devnet: each case names recipe, moment, contract, params."""
    out = []
    for case in cases:
        moment = manifest["moments"][case["moment"]]
        out.append(capture_step(
            case["recipe"], case.get("params", {}),
            manifest["contracts"][case["contract"]].lower(),
            case.get("layout"), node_url, bytes.fromhex(moment["hash"][2:]),
            case.get("expect", {}), case["name"], case.get("description", "")))
    return out


def resolve_cases(manifest: dict[str, Any], cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for case in cases:
        params = case["params"](manifest) if callable(case["params"]) else case["params"]
        out.append({**case, "params": params})
    return out


def unverifiable_variant(vector: dict[str, Any], name: str, description: str) -> dict[str, Any]:
    """A vector whose first storage proof does not root: a flipped byte in its first node."""
    variant: dict[str, Any] = json.loads(json_line(vector))
    variant["name"], variant["description"] = name, description
    for proof in variant["proofs"]:
        for entry in proof["answer"].get("storageProof", []):
            if entry.get("proof"):
                node = entry["proof"][0]
                entry["proof"][0] = node[:-1] + ("1" if node[-1] != "1" else "2")
                variant["expected"] = {"verdict": "UNVERIFIABLE", "reason": "invalid-proof"}
                return variant
    raise ValueError(f"{vector['name']} has no storage proof to break")


def devnet_vectors(node_url: str, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    vectors = capture_devnet(node_url, manifest, resolve_cases(manifest, DEVNET_CASES))
    vectors.append(unverifiable_variant(
        vectors[0], "amm-layer-status-proof-does-not-root",
        "the DUE vector with one byte of a storage-proof node changed: UNVERIFIABLE "
        "(invalid-proof), never a verdict"))
    return vectors


def main() -> None:  # `make vectors`

    with Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP) as node:
        manifest = build(node)
        written = write_all(devnet_vectors(node.url, manifest))
    print(f"wrote {len(written)} vectors and vectors/suite.json")


if __name__ == "__main__":
    main()
