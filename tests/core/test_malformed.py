"""Malformed outside bytes are refused with a clear error: no traceback, no hang."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompute.core.errors import Unverifiable
from recompute.core.header import Header
from recompute.core.keccak import keccak256
from recompute.core.mpt import InvalidProof, verify
from tests.core.fixturedata import exchanges

PRAGUE = next(r["result"] for n, _, r in exchanges("eth_getBlockByNumber")
              if n == "get-block-prague-fork.io")
ENCODED = Header.from_rpc(PRAGUE).encoded


@pytest.mark.parametrize("data,why", [
    (ENCODED[:-1], "truncated"),
    (ENCODED[:10], "truncated header"),
    (ENCODED + b"\x00", "trailing byte"),
    (b"\xb8\x01\x05", "non-canonical: one byte < 0x80 as a long string"),
    (b"\x81\x05", "non-canonical: single byte below 0x80 encoded as a string"),
    (b"\xb8\x05abcde", "non-canonical: short string with a long-form length"),
    (b"\xf8\x02\x01\x02", "non-canonical: short list with a long-form length"),
    (b"\xbb\xff\xff\xff\xff", "length far beyond the data"),
    (b"\xff" + b"\xff" * 8, "oversized length of length"),
    (b"", "empty"),
    (b"\xc0", "an empty list"),
])
def test_header_rlp_is_refused(data, why):
    with pytest.raises(Unverifiable) as caught:
        Header.from_rlp(data)
    assert caught.value.reason == "rpc-malformed", why


def test_header_with_a_leading_zero_integer_is_refused():
    import rlp

    items = rlp.decode(ENCODED)
    items[8] = b"\x00" + items[8]  # number with a leading zero byte
    with pytest.raises(Unverifiable, match="leading zero"):
        Header.from_rlp_items(items)


@pytest.mark.parametrize("field,value", [
    ("number", "0xzz"), ("number", "12"), ("number", ""), ("number", None),
    ("stateRoot", "0x1234"), ("stateRoot", "0x" + "g" * 64), ("miner", 5),
    ("nonce", "0x00"), ("logsBloom", "0x00"), ("timestamp", "0x" + "f" * 65),
])
def test_header_json_with_bad_values_is_refused(field, value):
    block = dict(PRAGUE)
    block[field] = value
    with pytest.raises(Unverifiable) as caught:
        Header.from_rpc(block)
    assert caught.value.reason in {"rpc-malformed"}
    assert field in caught.value.detail or "fields" in caught.value.detail


def test_header_json_missing_an_earlier_fork_field_is_refused():
    block = dict(PRAGUE)
    del block["withdrawalsRoot"]  # Prague fields present, a Shanghai one missing
    with pytest.raises(Unverifiable, match="field set"):
        Header.from_rpc(block)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_crash_the_header_decoder(data):
    try:
        Header.from_rlp(data)
    except Unverifiable as exc:
        assert exc.reason == "rpc-malformed"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=80) | st.binary(max_size=80).map(lambda b: "0x" + b.hex()),
                max_size=6))
def test_arbitrary_proof_lists_never_crash_the_verifier(proof):
    with pytest.raises(InvalidProof):
        verify(keccak256(b"root"), keccak256(b"key"), proof)


@pytest.mark.parametrize("proof", ["0x", None, {"a": 1}, [1, 2], ["0x0"], ["0xc0"], ["0x80"]])
def test_non_list_or_non_hex_proofs_are_invalid(proof):
    with pytest.raises(InvalidProof):
        verify(keccak256(b"root"), keccak256(b"key"), proof)
