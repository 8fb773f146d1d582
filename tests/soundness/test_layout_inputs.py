"""Crashes: every malformed layout input is one UsageError line, never a traceback
(cyclic types, deep nesting, huge numbers, odd import inputs), fed by hypothesis too."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompute.core.errors import UsageError
from recompute.layout import load_layout
from recompute.layout.descriptor import import_layout, parse_descriptor

FORMAT = "recompute-layout/1"


def descriptor(types: dict, storage: list | None = None) -> dict:
    return {"format": FORMAT, "contract": "x.sol:X", "compiler": None,
            "storage": storage if storage is not None else [], "types": types}


def struct(tid: str, member_type: str) -> dict:
    return {"encoding": "inplace", "label": f"struct {tid}", "numberOfBytes": "32",
            "members": [{"astId": 1, "contract": "x.sol:X", "label": "m", "offset": 0,
                         "slot": "0", "type": member_type}]}


CYCLES = {
    "struct holding itself": {"t_struct(S)1_storage": struct("t_struct(S)1_storage",
                                                             "t_struct(S)1_storage")},
    "two structs holding each other": {
        "t_struct(A)1_storage": struct("t_struct(A)1_storage", "t_struct(B)2_storage"),
        "t_struct(B)2_storage": struct("t_struct(B)2_storage", "t_struct(A)1_storage")},
    "static array of itself": {"t_array(t_x)2_storage": {
        "encoding": "inplace", "label": "x[2]", "numberOfBytes": "64",
        "base": "t_array(t_x)2_storage"}},
    "dynamic array of itself": {"t_array(t_x)dyn_storage": {
        "encoding": "dynamic_array", "label": "x[]", "numberOfBytes": "32",
        "base": "t_array(t_x)dyn_storage"}},
}


@pytest.mark.parametrize("types", CYCLES.values(), ids=CYCLES.keys())
def test_a_cyclic_layout_is_refused_at_validation(types):
    with pytest.raises(UsageError, match="itself"):
        parse_descriptor(descriptor(types))


def test_a_struct_reached_again_through_a_dynamic_array_is_fine():
    types = {"t_struct(S)1_storage": struct("t_struct(S)1_storage", "t_array(t_s)dyn_storage"),
             "t_array(t_s)dyn_storage": {"encoding": "dynamic_array", "label": "S[]",
                                         "numberOfBytes": "32", "base": "t_struct(S)1_storage"}}
    parse_descriptor(descriptor(types))


@pytest.mark.parametrize("content", [b"[" * 200_000, b"\xff\xfe", b'{"a": ' + b"1" * 5000 + b"}"])
def test_a_deep_or_binary_or_huge_layout_file_is_one_line(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(UsageError):
        load_layout(path)
    with pytest.raises(UsageError):
        import_layout(path)


def test_a_slot_of_5000_digits_is_refused():
    storage = [{"astId": 1, "contract": "x.sol:X", "label": "a", "offset": 0, "slot": "9" * 5000,
                "type": "t_uint256"}]
    types = {"t_uint256": {"encoding": "inplace", "label": "uint256", "numberOfBytes": "32"}}
    with pytest.raises(UsageError):
        parse_descriptor(descriptor(types, storage))


ODD_IMPORTS = [
    {"contracts": ["x.sol"]},
    {"contracts": {"x.sol": ["X"]}},
    {"output": {"contracts": []}, "solcVersion": 1},
    {"output": {"contracts": {"x.sol": {"X": {"storageLayout": []}}}}},
    {"storageLayout": {"storage": [], "types": None}, "metadata": '{"settings": []}'},
    {"storageLayout": {"storage": [], "types": None},
     "metadata": '{"settings": {"compilationTarget": ["x.sol"]}, "compiler": "0.8"}'},
    {"storageLayout": {"storage": [], "types": None},
     "metadata": '{"settings": {"compilationTarget": {"x.sol": 3}}}'},
    {"storageLayout": {"storage": [{"slot": "1"}], "types": {}}},
]


@pytest.mark.parametrize("doc", ODD_IMPORTS, ids=[json.dumps(d)[:40] for d in ODD_IMPORTS])
def test_odd_import_inputs_are_one_line_or_a_layout(doc):
    try:
        import_layout(doc)
    except UsageError:
        pass


KEYS = st.sampled_from(["format", "contract", "compiler", "storage", "types", "contracts",
                        "output", "storageLayout", "metadata", "members", "base", "key",
                        "value", "encoding", "label", "numberOfBytes", "slot", "offset", "type",
                        "astId", "t_uint256", "x.sol", "X", "solcVersion", "settings"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2**70) | st.sampled_from(
        [FORMAT, "inplace", "mapping", "dynamic_array", "bytes", "t_uint256", "32", "0", "x.sol:X",
         "t_struct(S)1_storage", "t_array(t_uint256)2_storage", "t_mapping(t_uint256,t_uint256)"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_any_json_is_a_layout_or_one_usage_error(doc):
    for parse in (parse_descriptor, import_layout):
        try:
            parse(doc)
        except UsageError:
            pass
