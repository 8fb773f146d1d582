"""keccak256, the one hash of the execution layer (eth-hash with its pycryptodome backend)."""

from __future__ import annotations

from eth_hash.auto import keccak as _keccak


def keccak256(data: bytes) -> bytes:
    return _keccak(data)


EMPTY_TRIE_ROOT = keccak256(b"\x80")  # keccak256(rlp(b""))
EMPTY_CODE_HASH = keccak256(b"")
