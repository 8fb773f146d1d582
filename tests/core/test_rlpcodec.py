"""The strict RLP codec equals pyrlp's strict decoding on every input, and refuses each
non-canonical form by itself (Yellow Paper App. B). Expected values come from pyrlp, an
independent implementation, and from hand-written encodings."""

from __future__ import annotations

import pytest
import rlp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from recompute.core import rlpcodec

items = st.recursive(
    st.binary(max_size=80),
    lambda children: st.lists(children, max_size=6),
    max_leaves=30,
)


def _depth(item) -> int:
    return 1 + max(map(_depth, item), default=0) if isinstance(item, list) else 0


def _pyrlp(data: bytes):
    try:
        return ("ok", rlp.decode(data, strict=True))
    except rlp.exceptions.DecodingError:
        return ("error", None)


def _ours(data: bytes):
    try:
        return ("ok", rlpcodec.decode(data))
    except rlpcodec.RlpError:
        return ("error", None)


@settings(max_examples=400, deadline=None)
@given(items)
def test_encode_equals_pyrlp_and_round_trips(item):
    assume(_depth(item) <= rlpcodec.MAX_DEPTH)
    encoded = rlpcodec.encode(item)
    assert encoded == rlp.encode(item)
    assert rlpcodec.decode(encoded) == rlp.decode(encoded, strict=True)


@settings(max_examples=1500, deadline=None)
@given(st.binary(min_size=1, max_size=120))
def test_decode_agrees_with_pyrlp_on_arbitrary_bytes(data):
    assert _ours(data) == _pyrlp(data)


@settings(max_examples=600, deadline=None)
@given(items, st.data())
def test_decode_agrees_with_pyrlp_on_mutated_encodings(item, data):
    encoded = bytearray(rlpcodec.encode(item))
    index = data.draw(st.integers(0, len(encoded) - 1))
    encoded[index] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(encoded)))
    assume(_depth(item) <= rlpcodec.MAX_DEPTH)
    for candidate in (bytes(encoded), bytes(encoded[:cut]) or b"\x80"):
        assert _ours(candidate) == _pyrlp(candidate)


@pytest.mark.parametrize("data, why", [
    (bytes.fromhex("8105"), "single byte below 0x80 wrapped as a string"),
    (bytes.fromhex("b803") + b"abc", "long-form length for 3 bytes"),
    (bytes.fromhex("b90038") + b"a" * 56, "length with a leading zero byte"),
    (bytes.fromhex("f803") + bytes.fromhex("010203"), "long-form list length for 3 bytes"),
    (bytes.fromhex("c3") + bytes.fromhex("8301"), "string runs past its list"),
    (bytes.fromhex("83") + b"ab", "string runs past the input"),
    (bytes.fromhex("c0c0"), "trailing bytes"),
    (b"", "empty input"),
])
def test_non_canonical_forms_are_refused(data, why):
    with pytest.raises(rlpcodec.RlpError):
        rlpcodec.decode(data)


def test_nesting_beyond_the_bound_is_refused():
    deep: list = []
    for _ in range(rlpcodec.MAX_DEPTH - 1):
        deep = [deep]
    assert rlpcodec.decode(rlp.encode(deep)) == deep  # MAX_DEPTH nested lists: allowed
    with pytest.raises(rlpcodec.RlpError, match="nested deeper"):
        rlpcodec.decode(rlp.encode([deep]))


def test_integers_encode_without_leading_zeros():
    assert rlpcodec.encode(0) == b"\x80"
    assert rlpcodec.encode(127) == b"\x7f"
    assert rlpcodec.encode(128) == bytes.fromhex("8180")
    assert rlpcodec.encode(1024) == bytes.fromhex("820400")
