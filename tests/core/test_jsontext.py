"""recompute.core.jsontext.encoder: the prebuilt C encoder writes what json.dumps writes with
the same options (expected values: json.dumps itself), on every JSON shape."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from recompute.core.jsontext import encoder

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
