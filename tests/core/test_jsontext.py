"""recompute.core.jsontext: each function writes what json.dumps writes with its options
(expected values: json.dumps itself), on every JSON shape; jcs is RFC 8785 (expected values by
hand from RFC 8785 §3.2)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompute.core.jsontext import (
    canonical_json,
    compact_json,
    encoder,
    jcs,
    json_document,
    json_line,
    json_string,
    json_text,
    shown_json,
)

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)
SORTED = encoder(sort_keys=True)
LINE = encoder(separators=(", ", ": "))
COMPACT = encoder(separators=(",", ":"))


@given(VALUES)
def test_the_same_text_as_json_dumps(value):
    assert SORTED(value) == json.dumps(value, sort_keys=True)
    assert LINE(value) == json.dumps(value, separators=(", ", ": "))
    assert COMPACT(value) == json.dumps(value, separators=(",", ":"))


@given(VALUES)
def test_each_writer_is_the_json_dumps_it_stands_for(value):
    assert canonical_json(value) == json.dumps(value, sort_keys=True)
    assert json_line(value) == json.dumps(value)
    assert compact_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"))
    assert json_text(value) == json.dumps(value)
    assert json_text(value, ascii=False) == json.dumps(value, ensure_ascii=False)
    assert json_document(value) == json.dumps(value, indent=2)
    assert json_document(value, indent=1, sort_keys=True, ascii=False) == json.dumps(
        value, indent=1, sort_keys=True, ensure_ascii=False)
    assert shown_json(value) == json.dumps(value, default=str)


@given(st.text())
def test_a_string_as_a_line_writes_it(text):
    assert json_string(text) == json.dumps(text)


def test_the_digest_text_by_hand():
    value = {"b": [1, "é\n"], "a": {"y": None, "x": True}, "c": 2**256}
    assert canonical_json(value) == ('{"a": {"x": true, "y": null}, "b": [1, "\\u00e9\\n"], '
                                      f'"c": {2**256}}}')


def test_jcs_is_rfc_8785():
    assert jcs({"b": [1, "é"], "a": {"y": None, "x": True}}) == (
        b'{"a":{"x":true,"y":null},"b":[1,"\xc3\xa9"]}')
    assert jcs(2**53 - 1) == b"9007199254740991"
    for refused in (2**53, {1: "a"}, float("nan"), b"x"):
        with pytest.raises((ValueError, TypeError)):
            jcs(refused)
