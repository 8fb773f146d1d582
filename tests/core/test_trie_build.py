"""The trie root built from whole contents (recompute.core.trie_build) against py-trie's
HexaryTrie, an independent implementation, on drawn contents: ordered lists as a block's
receipts are keyed, and any keys, including keys that are prefixes of others. The real geth
receipts of the bundled chain are checked against their headers in tests/core/test_receipts.py.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from trie.hexary import HexaryTrie

from recompute.core import rlpcodec
from recompute.core.keccak import EMPTY_TRIE_ROOT
from recompute.core.trie_build import ordered_trie_root, trie_root

VALUES = st.binary(min_size=1, max_size=80)


def hexary(items: dict[bytes, bytes]) -> bytes:
    trie = HexaryTrie({})
    for key, value in items.items():
        trie[key] = value
    return trie.root_hash


@settings(max_examples=150, deadline=None)
@given(st.lists(VALUES, max_size=300))
def test_an_ordered_trie_has_py_tries_root(values):
    expected = hexary({rlpcodec.encode(i): v for i, v in enumerate(values)})
    assert ordered_trie_root(values) == expected


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.binary(max_size=6), VALUES, max_size=40))
def test_any_keys_give_py_tries_root(items):
    assert trie_root(items) == hexary(items)


def test_the_empty_trie_and_one_key_prefix_of_another():
    assert trie_root({}) == EMPTY_TRIE_ROOT
    items = {b"\x12": b"a", b"\x12\x34": b"b" * 40, b"\x13": b"c"}
    assert trie_root(items) == hexary(items)
