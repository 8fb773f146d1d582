"""Hostile variants of a seed document, as Hypothesis strategies: bytes to write as the file.

A variant is one structural change of the parsed seed (a field deleted or given a value of
another type, huge, deep, NaN, a duplicate key) rendered as text, then optionally one change
of the bytes (cut short, a byte overwritten, something inserted).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import strategies as st

from tests.mutations import DELETE, JUNK, at

_NAN_MARK = "\ue000nan\ue000"
_DUP_MARK = "__fuzz_duplicate__"

# Values no JSON writer emits but a hand-made file may hold: each is raw text put in a field.
RAW_VALUES = ["NaN", "-Infinity", "Infinity", "1e400", "-1e400", "9" * 5000, "1" + "0" * 20,
              "-0", "0.1e-400", '"\\ud800"', '"\\u0000"', "[" * 100 + "]" * 100,
              "[" * 5000 + "]" * 5000, '{"a": {"a": {"a": 1}}}', "true", "[null]"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)

# Bytes put into a file's text: not UTF-8, NUL, a BOM, a lone bracket, control characters.
INSERTS = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf", b"[", b"{", b"}", b'"',
           b"\\", b",", b"\n", b"\r", b"\x1b[2J", b"1e99999", b"NaN", b"[" * 70, b"9" * 5000]


def places(node: Any, depth: int, prefix: tuple = ()) -> Iterator[tuple]:
    """Every field's path down to ``depth``, but of a list only its first two items and its
    last (a sync committee's 512 keys would otherwise be nearly every place)."""
    if isinstance(node, dict):
        items: Any = node.items()
    else:
        indexes = sorted({i for i in (0, 1, len(node) - 1) if 0 <= i < len(node)})
        items = [(i, node[i]) for i in indexes]
    for key, value in items:
        here = (*prefix, key)
        yield here
        if isinstance(value, dict | list) and len(here) < depth:
            yield from places(value, depth, here)


def _render_json(document: Any, raw: str | None = None, duplicate: Any = None) -> bytes:
    text = json.dumps(document, allow_nan=True, indent=1)
    if raw is not None:
        text = text.replace(json.dumps(_NAN_MARK), raw, 1)
    if duplicate is not None:
        key, value, original = duplicate
        body = json.dumps(original, allow_nan=True)
        twice = "{" + json.dumps(key) + ": " + json.dumps(value) + ", " + body[1:]
        text = text.replace(json.dumps({_DUP_MARK: 1}), twice, 1)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def json_variants(draw: Callable[..., Any], seed: Any, depth: int = 6) -> bytes:
    """A seed JSON document with one field changed, rendered (and maybe its bytes changed)."""
    fields = sorted(places(seed, depth), key=str)
    doc = json.loads(json.dumps(seed))
    how = draw(st.sampled_from(["junk", "raw", "any", "duplicate", "none"]))
    raw = duplicate = None
    if how != "none" and fields:
        place = draw(st.sampled_from(fields))
        parent = at(doc, place[:-1])
        if how == "junk":
            value = draw(st.sampled_from(JUNK + [math.nan, math.inf]))
            if value == DELETE:
                del parent[place[-1]]
            else:
                parent[place[-1]] = value
        elif how == "any":
            parent[place[-1]] = draw(json_values)
        elif how == "raw":
            parent[place[-1]] = _NAN_MARK
            raw = draw(st.sampled_from(RAW_VALUES))
        else:
            target = parent[place[-1]]
            if isinstance(target, dict) and target:
                key = draw(st.sampled_from(sorted(target)))
                duplicate = (key, draw(st.sampled_from(JUNK[:14])), target)
                parent[place[-1]] = {_DUP_MARK: 1}
            else:
                parent[place[-1]] = draw(st.sampled_from(JUNK[:14]))
    return draw(byte_changes(_render_json(doc, raw, duplicate)))


def toml_text(document: dict[str, Any]) -> str:
    """A small TOML writer (tables, arrays of tables, inline values) for the seed of a checks
    file: enough to render one changed field, in any type TOML can hold."""
    lines: list[str] = []
    for key, value in document.items():
        if not isinstance(value, list) or not value or not all(isinstance(v, dict)
                                                                for v in value):
            lines.append(f"{_key(key)} = {_inline(value)}")
    for key, value in document.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for table in value:
                lines.append(f"[[{_key(key)}]]")
                lines.extend(f"{_key(k)} = {_inline(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"


def _key(key: Any) -> str:
    key = str(key)
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _inline(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(_inline, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_inline(v)}" for k, v in value.items()) + "}"
    return '""'  # TOML has no null


toml_values = st.recursive(
    st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.from_regex(r"[a-z_]{1,6}", fullmatch=True), inner, max_size=4),
    max_leaves=12)


@st.composite
def toml_variants(draw: Callable[..., Any], seed: dict[str, Any], depth: int = 5) -> bytes:
    fields = sorted(places(seed, depth), key=str)
    doc = json.loads(json.dumps(seed))
    how = draw(st.sampled_from(["junk", "any", "none"]))
    if how != "none":
        place = draw(st.sampled_from(fields))
        parent = at(doc, place[:-1])
        value = draw(st.sampled_from([v for v in JUNK if v is not None]
                                     + [math.nan, -math.inf, 10**30])) if how == "junk" \
            else draw(toml_values)
        if value == DELETE:
            del parent[place[-1]]
        else:
            parent[place[-1]] = value
    return draw(byte_changes(toml_text(doc).encode("utf-8", "surrogatepass")))


@st.composite
def byte_changes(draw: Callable[..., Any], data: bytes) -> bytes:
    """``data`` as is, cut short, with a byte overwritten, or with bytes inserted."""
    how = draw(st.sampled_from(["same", "same", "cut", "overwrite", "insert"]))
    if how == "same" or not data:
        return data
    at_ = draw(st.integers(0, len(data) - 1))
    if how == "cut":
        return data[:at_]
    if how == "overwrite":
        return data[:at_] + bytes([draw(st.integers(0, 255))]) + data[at_ + 1:]
    return data[:at_] + draw(st.sampled_from(INSERTS)) + data[at_:]
