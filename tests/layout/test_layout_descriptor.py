"""Descriptors: importing solc output in its three shapes, determinism, validation errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from eth_hash.auto import keccak

from recompute.cli.flags import cli_message
from recompute.core.errors import UsageError
from recompute.layout import FORMAT, import_layout, load_layout, parse_descriptor, resolve
from recompute.layout import descriptor as descriptor_module
from recompute.layout.types import ENCODINGS

from .conftest import STANDARD_OUTPUT, ZOO_ARTIFACT, ZOO_CONTRACT, artifact

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "layouts" / "schema.json"


def test_three_input_shapes_give_the_same_descriptor():
    art = artifact()
    version = art["compiler"]["version"]
    from_artifact = import_layout(art).dumps()
    from_bare = import_layout(art["storageLayout"], compiler=version).dumps()
    std = json.loads(STANDARD_OUTPUT.read_text())
    from_std = import_layout(std, contract=ZOO_CONTRACT, compiler=version).dumps()
    from_std_short = import_layout(std, contract="LayoutZoo", compiler=version).dumps()
    # solc --combined-json storage-layout: {"contracts": {"SOURCE:NAME": {...}}, "version"}
    combined = {"contracts": {ZOO_CONTRACT: {"storage-layout": art["storageLayout"]}},
                "version": version}
    from_combined = import_layout(combined).dumps()
    assert from_artifact == from_bare == from_std == from_std_short == from_combined
    header = json.loads(from_artifact)
    assert header["format"] == "recompute-layout/1"
    assert header["contract"] == "tests/layout/contracts/LayoutZoo.sol:LayoutZoo"
    assert header["compiler"] == version


def test_import_is_byte_identical_and_canonical():
    first = import_layout(ZOO_ARTIFACT).dumps()
    second = import_layout(json.loads(ZOO_ARTIFACT.read_text())).dumps()
    assert first == second
    assert first.endswith("}\n")
    assert first == json.dumps(json.loads(first), indent=2, sort_keys=True) + "\n"
    # a loaded descriptor serialises back to the same bytes
    assert parse_descriptor(json.loads(first)).dumps() == first


def test_storage_order_is_solcs_including_inheritance():
    solc_labels = [v["label"] for v in artifact()["storageLayout"]["storage"]]
    layout = import_layout(ZOO_ARTIFACT)
    assert [v.label for v in layout.variables] == solc_labels
    assert solc_labels[:4] == ["baseSmall", "baseFlag", "baseOwner", "baseMid"]
    doc = json.loads(layout.dumps())
    assert doc["storage"] == artifact()["storageLayout"]["storage"]
    assert doc["types"] == artifact()["storageLayout"]["types"]


def test_standard_json_with_several_contracts_asks_which():
    std = json.loads(STANDARD_OUTPUT.read_text())
    with pytest.raises(UsageError) as caught:
        import_layout(std)
    # the option as data: the command line words it as its flag
    assert re.search(r"several contracts .*--contract .*LayoutZooBase", cli_message(caught.value))
    with pytest.raises(UsageError, match=r"no contract 'Nope' .*choices: "):
        import_layout(std, contract="Nope")


def test_bare_layout_of_unknown_contract_needs_a_name():
    empty = {"storage": [], "types": None}
    with pytest.raises(UsageError) as caught:
        import_layout(empty)
    assert cli_message(caught.value).endswith("pass --contract SOURCE:NAME")
    assert import_layout(empty, contract="a.sol:A").contract == "a.sol:A"
    with pytest.raises(UsageError, match=r"SOURCE:NAME"):
        import_layout(empty, contract="A")


def test_compiler_mismatch_and_non_layouts_are_refused():
    with pytest.raises(UsageError, match=r"compiled by 0\.8\.37.*not 0\.8\.1"):
        import_layout(artifact(), compiler="0.8.1")
    with pytest.raises(UsageError, match=r"not a storage layout"):
        import_layout({"abi": []})


def _doc() -> dict:
    return json.loads(import_layout(ZOO_ARTIFACT).dumps())


def _type_key(doc, prefix):
    return next(k for k in doc["types"] if k.startswith(prefix))


def _set(path, value):
    def edit(doc):
        target = doc
        for p in path[:-1]:
            target = target[p(doc) if callable(p) else p]
        target[path[-1]] = value
    return edit


BAD = [
    ("format", _set(["format"], "solc"), r"not a recompute-layout/1 descriptor"),
    ("extra key", _set(["extra"], 1), r"unknown top-level keys \['extra'\]"),
    ("contract", _set(["contract"], "LayoutZoo"), r"contract must be 'SOURCE:NAME'"),
    ("unknown type", _set(["storage", 0, "type"], "t_uint7"),
     r"storage\[0\] \(baseSmall\) refers to unknown type 't_uint7'"),
    ("encoding", _set(["types", "t_uint8", "encoding"], "packed"),
     r"types\['t_uint8'\] has unknown encoding 'packed'"),
    ("size text", _set(["types", "t_uint8", "numberOfBytes"], "one"),
     r"numberOfBytes must be a non-negative integer, got 'one'"),
    ("size width", _set(["types", "t_uint8", "numberOfBytes"], "2"),
     r"numberOfBytes 2 disagrees with its identifier \(8 bits\)"),
    ("offset range", _set(["storage", 0, "offset"], 40), r"offset = 40 is out of range"),
    ("crossing", _set(["storage", 2, "offset"], 13),
     r"storage\[2\] \(baseOwner\) offset 13 \+ 20 bytes crosses the slot boundary"),
    ("slot", _set(["storage", 0, "slot"], "-1"), r"slot must be a non-negative integer"),
    ("label", _set(["storage", 0, "label"], "a b"), r"bad label 'a b'"),
    ("mapping value", _set(["types", lambda d: _type_key(d, "t_mapping(t_address,t_uint256)"),
                            "value"], "t_nothing"), r"refers to unknown type 't_nothing'"),
    ("struct size", _set(["types", lambda d: _type_key(d, "t_struct(Checkpoint)"),
                          "numberOfBytes"], "32"),
     r"members span 2 slots but numberOfBytes is 32"),
    ("array size", _set(["types", "t_array(t_uint64)6_storage", "numberOfBytes"], "96"),
     r"6 elements of uint64 take 64 bytes, not numberOfBytes 96"),
    ("value type", _set(["types", "t_uint8", "label"], ""), r"lacks a label"),
    ("types", _set(["types"], []), r"'types' must be an object"),
]


@pytest.mark.parametrize("name,edit,message", BAD, ids=[b[0] for b in BAD])
def test_malformed_descriptors_name_the_file_and_the_problem(tmp_path, name, edit, message):
    doc = _doc()
    edit(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=message) as err:
        load_layout(str(path))
    assert str(err.value).startswith(str(path))
    assert "\n" not in str(err.value)


def test_unreadable_files(tmp_path):
    with pytest.raises(UsageError, match=r"no such file"):
        load_layout(str(tmp_path / "missing.json"))
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(UsageError, match=r"not JSON .*line 1 column 2"):
        load_layout(str(tmp_path / "x.json"))


def test_bundled_names(tmp_path, monkeypatch):
    monkeypatch.setattr(descriptor_module, "LAYOUTS", tmp_path)
    (tmp_path / "zoo.json").write_text(import_layout(ZOO_ARTIFACT).dumps())
    (tmp_path / "schema.json").write_text("{}")
    assert load_layout("zoo").contract == ZOO_CONTRACT
    with pytest.raises(UsageError, match=r"no bundled layout 'nope' .*\(bundled: zoo\)"):
        load_layout("nope")


def test_a_file_cannot_hijack_a_bundled_name(tmp_path, monkeypatch):
    """A file named like a bundled layout in the working directory is never read for the name;
    a path (with a / or ending .json) is always a file (issue: a range audit run from the wrong
    folder read the wrong slots)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "swarm-registry").write_text(import_layout(ZOO_ARTIFACT).dumps())
    assert load_layout("swarm-registry").contract.endswith(":SwarmRegistry")
    assert load_layout("./swarm-registry").contract == ZOO_CONTRACT
    (tmp_path / "zoo.json").write_text(import_layout(ZOO_ARTIFACT).dumps())
    assert load_layout("zoo.json").contract == ZOO_CONTRACT
    with pytest.raises(UsageError, match=r"no bundled layout 'zoo' .*give a descriptor file"):
        load_layout("zoo")
    with pytest.raises(UsageError, match=r"no bundled layout 'sources'"):
        load_layout("sources")  # the bundled folder's build list is not a layout


def test_schema_agrees_with_the_code():
    schema = json.loads(SCHEMA.read_text())
    assert schema["properties"]["format"]["const"] == FORMAT
    assert set(schema["required"]) == {"format", "contract", "compiler", "storage", "types"}
    encodings = schema["$defs"]["type"]["properties"]["encoding"]["enum"]
    assert tuple(encodings) == ENCODINGS
    # every key the committed zoo descriptor uses is one the schema documents
    doc = _doc()
    type_props = set(schema["$defs"]["type"]["properties"])
    assert {k for t in doc["types"].values() for k in t} <= type_props
    place_props = set(schema["$defs"]["place"]["properties"])
    assert {k for v in doc["storage"] for k in v} <= place_props


@pytest.mark.skipif(
    shutil.which("node") is None or not (REPO / "node_modules" / "solc").is_dir(),
    reason="node or node_modules/solc missing (run `make setup`); cannot recompile LayoutZoo",
)
def test_committed_artifacts_are_up_to_date(tmp_path):
    out = tmp_path / "artifacts"
    std = tmp_path / "standard-output.json"
    subprocess.run(
        ["node", "contracts/build.mjs", "--out", str(out), "--standard-json", str(std),
         "tests/layout/contracts"],
        cwd=REPO, check=True, capture_output=True, timeout=240,
    )
    committed = ZOO_ARTIFACT.parent
    for name in ("LayoutZoo.json", "LayoutZooBase.json", "ILayoutZooPing.json"):
        assert (out / name).read_bytes() == (committed / name).read_bytes(), name
    assert std.read_bytes() == STANDARD_OUTPUT.read_bytes()


def _cyclic(types: dict, var_type: str) -> dict:
    return {"format": "recompute-layout/1", "contract": "c.sol:C", "compiler": None,
            "storage": [{"label": "x", "slot": "0", "offset": 0, "type": var_type}],
            "types": {"t_uint256": {"encoding": "inplace", "label": "uint256",
                                    "numberOfBytes": "32"}, **types}}


def _struct(label: str, members: list[tuple[str, str, int]], size: int) -> dict:
    return {"encoding": "inplace", "label": label, "numberOfBytes": str(size),
            "members": [{"label": n, "slot": str(s), "offset": 0, "type": t}
                        for n, t, s in members]}


def test_a_struct_that_contains_itself_is_refused():
    # solc rejects `struct S { S inner; }` (recursive struct); a crafted descriptor must not
    # make a whole read recurse without end.
    doc = _cyclic({"t_struct(S)1_storage": _struct("struct C.S", [
        ("a", "t_uint256", 0), ("inner", "t_struct(S)1_storage", 1)], 64)},
        "t_struct(S)1_storage")
    with pytest.raises(UsageError, match=r"contains itself \(t_struct\(S\)1_storage → "
                                         r"t_struct\(S\)1_storage\)"):
        parse_descriptor(doc)


def test_an_array_whose_base_is_itself_is_refused():
    doc = _cyclic({"t_array(t_self)2_storage": {
        "encoding": "inplace", "label": "x[2]", "numberOfBytes": "64",
        "base": "t_array(t_self)2_storage"}}, "t_array(t_self)2_storage")
    with pytest.raises(UsageError, match=r"contains itself"):
        parse_descriptor(doc)
    doc = _cyclic({"t_array(t_self)dyn_storage": {
        "encoding": "dynamic_array", "label": "x[]", "numberOfBytes": "32",
        "base": "t_array(t_self)dyn_storage"}}, "t_array(t_self)dyn_storage")
    with pytest.raises(UsageError, match=r"contains itself"):
        parse_descriptor(doc)


def test_structs_holding_each_other_in_place_are_refused_whatever_else_links_them():
    # S1 holds S2 in place and also an array of S2; S2 holds S1 in place: the in-place cycle
    # S1 → S2 → S1 is there even though S1 also reaches S2 through a dynamic array.
    s1, s2, arr = "t_struct(S1)1_storage", "t_struct(S2)2_storage", "t_array(t_s2)dyn_storage"
    doc = _cyclic({
        s1: _struct("struct C.S1", [("d", arr, 0), ("s2", s2, 1)], 64),
        arr: {"encoding": "dynamic_array", "label": "struct C.S2[]", "numberOfBytes": "32",
              "base": s2},
        s2: _struct("struct C.S2", [("s1", s1, 0)], 32),
    }, s1)
    with pytest.raises(UsageError, match=r"contains itself \(.*S1.* → .*S2.* → .*S1"):
        parse_descriptor(doc)


def test_a_struct_may_hold_a_dynamic_array_or_mapping_of_itself():
    # Legal Solidity: `struct Node { uint256 v; Node[] children; mapping(uint256 => Node) m; }`
    node = "t_struct(Node)1_storage"
    doc = _cyclic({
        node: _struct("struct C.Node", [("v", "t_uint256", 0),
                                        ("children", "t_array(t_node)dyn_storage", 1),
                                        ("m", "t_mapping(t_uint256,t_node)", 2)], 96),
        "t_array(t_node)dyn_storage": {"encoding": "dynamic_array", "label": "struct C.Node[]",
                                       "numberOfBytes": "32", "base": node},
        "t_mapping(t_uint256,t_node)": {"encoding": "mapping", "label": "mapping(uint256 => "
                                        "struct C.Node)", "numberOfBytes": "32",
                                        "key": "t_uint256", "value": node},
    }, node)
    layout = parse_descriptor(doc)
    # x.children[3].m[7].v: member +1, array data keccak(1) + 3*3 slots, then the mapping.
    loc = resolve(layout, "x.children[3].m[7].v")
    data = int.from_bytes(keccak(b"\0" * 31 + b"\x01"), "big")
    element = data + 3 * 3
    mapping_slot = element + 2
    expected = int.from_bytes(keccak((7).to_bytes(32, "big") + mapping_slot.to_bytes(32, "big")),
                              "big")
    assert loc.slot == expected
