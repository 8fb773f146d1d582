"""The depth bound of outside JSON (recompute.core.boundedjson): exact on valid JSON, never
below the depth a parser would reach on anything else. Expected depths come from the parsed
structure (json.loads) and from a plain character-by-character scanner written here."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompute.core.boundedjson import loads, nesting_depth

# Strings full of what the scan must see through: brackets, quotes, escapes, non-ASCII.
tricky = st.text(alphabet=st.sampled_from('[]{}"\\ab\n\u00e9\u4e2d\U0001f600'), max_size=12)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky, inner, max_size=4),
    max_leaves=30,
)


def structure_depth(value) -> int:
    if isinstance(value, list):
        return 1 + max(map(structure_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(structure_depth, value.values()), default=0)
    return 0


def scanned_depth(text: str) -> int:
    """How deep a JSON parser's brackets go before it meets the end or an error."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


@settings(max_examples=400, deadline=None)
@given(value=values, ascii_only=st.booleans())
def test_the_depth_of_valid_json_is_exact(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    expected = structure_depth(value)
    assert nesting_depth(text, 0) == expected
    assert nesting_depth(text.encode(), 0) == expected


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=st.sampled_from('[]{}"\\a:,\u00e9'), max_size=80))
def test_the_depth_of_any_text_is_never_underestimated(text):
    assert nesting_depth(text, 0) >= scanned_depth(text)


@pytest.mark.parametrize("depth,ok", [(64, True), (65, False)])
def test_loads_refuses_exactly_above_the_bound(depth, ok):
    text = '{"k": "[[[ \\" {{{", "v": ' + "[" * (depth - 1) + '"]]]"' + "]" * (depth - 1) + "}"
    if ok:
        assert structure_depth(loads(text, "x", ValueError)) == depth
    else:
        with pytest.raises(ValueError, match="nested deeper than 64"):
            loads(text.encode(), "x", ValueError)
