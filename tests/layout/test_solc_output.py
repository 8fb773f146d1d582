"""solc outputs are validated before use (recompute/layout/solc_output.py): a field of the wrong
type in a standard-JSON output, a build artifact, a bare storageLayout or Sourcify metadata is
one line naming the field, exit 64 — never a Python error (exit 70). Hypothesis mutates valid
inputs (the committed LayoutZoo outputs, solc's own metadata shape) anywhere in their tree."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompute.core.errors import UsageError
from recompute.core.keccak import keccak256
from recompute.layout import import_layout
from recompute.layout.verified_source import load_sourcify

from .conftest import STANDARD_OUTPUT, ZOO_ARTIFACT, ZOO_CONTRACT

UINT = {"encoding": "inplace", "label": "uint256", "numberOfBytes": "32"}


def entry(**fields: Any) -> dict[str, Any]:
    out = {"astId": 1, "contract": "a.sol:A", "label": "x", "offset": 0, "slot": "0",
           "type": "t_uint256"}
    out.update(fields)
    return out


def layout(*storage: dict[str, Any]) -> dict[str, Any]:
    return {"storage": list(storage), "types": {"t_uint256": UINT}}


# ---- list-shaped and other mistyped fields: exit 64, the field named ---------------------------

CLI_CASES = {
    "a storage entry's contract a list": (
        {"storage": [entry(contract=["x"])], "types": {"t_uint256": UINT}},
        "storage[0].contract must be a string, not a list"),
    "a source's contracts a list": (
        {"contracts": {"a.sol": [layout(entry())]}},
        'contracts["a.sol"] must be an object of contracts, not a list'),
    "a contract a list": (
        {"contracts": {"a.sol": {"A": [layout(entry())]}}},
        'contracts["a.sol"]["A"] must be an object, not a list'),
}


@pytest.mark.parametrize("doc,needle", CLI_CASES.values(), ids=CLI_CASES.keys())
def test_list_shaped_fields_are_one_line_naming_the_field(run_cli, tmp_path, doc, needle):
    path = tmp_path / "output.json"
    path.write_text(json.dumps(doc))
    result = run_cli("layout", "import", path, "-o", tmp_path / "out.json")
    assert result.returncode == 64, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert "internal error" not in result.stderr


FIELD_CASES = {
    "contracts a list": ({"contracts": [layout()]}, "contracts must be an object of source files"),
    "storageLayout a list": ({"contracts": {"a.sol": {"A": {"storageLayout": []}}}},
                             'contracts["a.sol"]["A"].storageLayout must be an object'),
    "storage an object": ({"contracts": {"a.sol": {"A": {"storageLayout": {
        "storage": {}, "types": None}}}}}, 'contracts["a.sol"]["A"].storageLayout.storage must '
                                           "be a list, not an object"),
    "a storage entry a string": ({"contracts": {"a.sol": {"A": {"storageLayout": {
        "storage": ["x"], "types": None}}}}}, ".storageLayout.storage[0] must be an object"),
    "types a list": ({"contracts": {"a.sol": {"A": {"storageLayout": {
        "storage": [], "types": []}}}}}, ".storageLayout.types must be an object or null"),
    "combined storage-layout a number": ({"contracts": {"a.sol:A": {"storage-layout": 5}}},
                                         'contracts["a.sol:A"]["storage-layout"] must be an '
                                         "object"),
    "combined version a number": ({"contracts": {"a.sol:A": {"storage-layout": layout()}},
                                   "version": 8}, "version must be a string, not a number"),
    "build-info output a list": ({"output": [], "solcVersion": "0.8.26"},
                                 "output must be a solc standard-JSON output object"),
    "build-info solcVersion a number": ({"output": {"contracts": {}}, "solcVersion": 1},
                                        "solcVersion must be a string"),
    "artifact sourceName a list": ({"storageLayout": layout(), "sourceName": ["a.sol"],
                                    "contractName": "A"}, "sourceName must be a string"),
    "artifact compiler a string": ({"storageLayout": layout(), "compiler": "0.8.26"},
                                   "compiler must be an object"),
    "artifact compiler.version a list": ({"storageLayout": layout(), "compiler": {
        "version": ["0.8"]}}, "compiler.version must be a string"),
    "artifact metadata a number": ({"storageLayout": layout(), "metadata": 3},
                                   "metadata must be solc metadata"),
    "artifact metadata not JSON": ({"storageLayout": layout(), "metadata": "{"},
                                   "metadata is not JSON"),
    "metadata settings a list": ({"storageLayout": layout(), "metadata": {"settings": []}},
                                 "metadata.settings must be an object"),
    "compilationTarget two contracts": (
        {"storageLayout": layout(), "metadata": {"settings": {"compilationTarget": {
            "a.sol": "A", "b.sol": "B"}}}},
        "metadata.settings.compilationTarget must name one contract, it names 2"),
    "compilationTarget name a number": (
        {"storageLayout": layout(), "metadata": {"settings": {"compilationTarget": {
            "a.sol": 3}}}}, 'compilationTarget["a.sol"] must be a contract name'),
    "metadata compiler a string": ({"storageLayout": layout(), "metadata": {
        "compiler": "0.8.26"}}, "metadata.compiler must be an object"),
    "the input a list": ([layout()], "the input must be a JSON object, not a list"),
}


@pytest.mark.parametrize("doc,needle", FIELD_CASES.values(), ids=FIELD_CASES.keys())
def test_each_mistyped_field_is_named(doc, needle):
    with pytest.raises(UsageError) as refused:
        import_layout(doc, origin="in.json")
    message = str(refused.value)
    assert message.startswith("in.json: ") and needle in message, message
    assert "\n" not in message


def test_valid_shapes_still_import():
    """The validator refuses no shape the importer reads (the same contract, four ways)."""
    art = json.loads(ZOO_ARTIFACT.read_text())
    std = json.loads(STANDARD_OUTPUT.read_text())
    version = art["compiler"]["version"]
    meta = {"settings": {"compilationTarget": {"tests/layout/contracts/LayoutZoo.sol":
                                               "LayoutZoo"}}, "compiler": {"version": version}}
    foundry = {"storageLayout": art["storageLayout"], "metadata": json.dumps(meta)}
    build_info = {"solcVersion": version, "output": std}
    texts = {import_layout(art).dumps(), import_layout(foundry).dumps(),
             import_layout(build_info, contract="LayoutZoo").dumps(),
             import_layout(std, contract=ZOO_CONTRACT, compiler=version).dumps()}
    assert len(texts) == 1


# ---- hypothesis: mutations of valid inputs anywhere in their tree ----------------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=8) | st.sampled_from(["0", "32", "t_uint256", "inplace", "a.sol:A",
                                             "0.8.26+commit.8a97fa7a", "{", "[]", "{}"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8)


def mutate(doc: Any, data: st.DataObject, mutations: int = 3) -> Any:
    """``doc`` with a few changes, each at the end of a random walk from the root: a value
    replaced by arbitrary JSON, a key deleted, a key added, a list emptied or grown."""
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, mutations))):
        node: Any = doc
        while True:
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            inner = [k for k in keys if isinstance(node[k], (dict, list)) and node[k]]
            if not inner or data.draw(st.integers(0, 3)) == 0:
                break
            node = node[data.draw(st.sampled_from(inner))]
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace" and keys:
            node[data.draw(st.sampled_from(keys))] = data.draw(JSONISH)
        elif action == "delete" and keys:
            key = data.draw(st.sampled_from(keys))
            del node[key]
        elif isinstance(node, dict):
            node[data.draw(st.sampled_from(["contracts", "storageLayout", "storage", "types",
                                            "output", "version", "metadata", "compiler",
                                            "sourceName", "contractName", "storage-layout",
                                            "solcVersion", "x"]))] = data.draw(JSONISH)
        else:
            node.append(data.draw(JSONISH))
    return doc


VALID = {
    "standard-JSON output": json.loads(STANDARD_OUTPUT.read_text()),
    "build artifact": json.loads(ZOO_ARTIFACT.read_text()),
    "bare storageLayout": json.loads(ZOO_ARTIFACT.read_text())["storageLayout"],
    "build-info": {"solcVersion": "0.8.37", "output": {"contracts": {"a.sol": {
        "A": {"storageLayout": layout(entry()), "abi": []}}}}},
    "combined-json": {"contracts": {"a.sol:A": {"storage-layout": json.dumps(layout(entry()))}},
                      "version": "0.8.37"},
    "artifact with metadata": {"storageLayout": layout(entry()), "metadata": json.dumps(
        {"settings": {"compilationTarget": {"a.sol": "A"}}, "compiler": {"version": "0.8.37"}})},
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(VALID)), st.data())
def test_a_mutated_solc_output_is_a_layout_or_one_usage_error(shape, data):
    doc = mutate(VALID[shape], data)
    for contract in (None, ZOO_CONTRACT, "A"):
        try:
            import_layout(doc, contract=contract)
        except UsageError as exc:
            assert "\n" not in str(exc)


SOURCE = "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract A { uint x; }\n"
METADATA = {"language": "Solidity", "compiler": {"version": "0.8.26+commit.8a97fa7a"},
            "settings": {"compilationTarget": {"A.sol": "A"}, "evmVersion": "cancun",
                         "optimizer": {"enabled": True, "runs": 200}, "remappings": [],
                         "libraries": {}, "metadata": {"bytecodeHash": "ipfs"}},
            "sources": {"A.sol": {"keccak256": "0x" + keccak256(SOURCE.encode()).hex(),
                                  "content": SOURCE, "urls": []}},
            "output": {"abi": []}, "version": 1}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_sourcify_metadata_is_a_source_or_one_usage_error(data):
    metadata = mutate(METADATA, data)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "metadata.json").write_text(json.dumps(metadata))
        try:
            load_sourcify(Path(folder))
        except UsageError as exc:
            assert "\n" not in str(exc)


@pytest.mark.parametrize("change,needle", [
    (lambda m: m.update(compiler="0.8.26"), "compiler must be an object"),
    (lambda m: m.update(settings=[]), "settings must be an object"),
    (lambda m: m["settings"].update(compilationTarget=["A.sol"]),
     "settings.compilationTarget must be an object"),
    (lambda m: m["sources"].update({"A.sol": "x"}), "sources['A.sol'] must be an object"),
    (lambda m: m["sources"]["A.sol"].update(content=["x"]),
     "sources['A.sol'].content must be a string"),
    (lambda m: m["compiler"].update(version=["0.8.26"]), "the compiler version is missing"),
])
def test_mistyped_sourcify_metadata_names_the_field(tmp_path, change, needle):
    metadata = copy.deepcopy(METADATA)
    change(metadata)
    (tmp_path / "metadata.json").write_text(json.dumps(metadata))
    with pytest.raises(UsageError, match="metadata.json: ") as refused:
        load_sourcify(tmp_path)
    assert needle in str(refused.value)
