"""The static-word ABI encoder equals eth_abi's ``encode`` (an independent implementation) on
the types recipes hash, and refuses what it does not know."""

from __future__ import annotations

import pytest
from eth_abi import encode as abi_encode
from hypothesis import given, settings
from hypothesis import strategies as st

from recompute.core.abiword import encode_static

VALUES = {
    "bytes32": st.binary(min_size=32, max_size=32),
    "uint8": st.integers(0, 255),
    "uint48": st.integers(0, (1 << 48) - 1),
    "uint256": st.integers(0, (1 << 256) - 1),
    "address": st.binary(min_size=20, max_size=20),
    "bool": st.booleans(),
}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(sorted(VALUES)), max_size=6).flatmap(
    lambda types: st.tuples(st.just(types), st.tuples(*[VALUES[t] for t in types]))))
def test_equals_eth_abi(case):
    types, values = case
    assert encode_static(types, list(values)) == abi_encode(types, list(values))


@pytest.mark.parametrize("kind, value", [
    ("uint8", 256), ("uint8", -1), ("bytes32", b"\x00" * 31), ("string", "x"),
    ("uint7", 1), ("address", b"\x00" * 32), ("bool", 1), ("uint256", True),
])
def test_refuses(kind, value):
    with pytest.raises(ValueError):
        encode_static([kind], [value])
