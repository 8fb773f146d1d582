"""Where Solidity keeps a value in storage (solc docs, "Layout of State Variables in Storage"):
the slot arithmetic the layout engine resolves paths with and recipes compute raw slots with.

- ``mapping[k]`` declared at slot ``p``: ``keccak256(h(k) ‖ pad32(p))``, ``h(k)`` the key padded
  to 32 bytes for value types, the bytes themselves for ``string`` and ``bytes`` keys;
- a dynamic array (and a long ``bytes``/``string``) declared at ``p`` keeps its length (or
  length word) at ``p`` and its data from ``keccak256(pad32(p))``;
- a struct member at ``k`` slots into its struct, or an element ``k`` slots into its data, is at
  ``base + k``, modulo 2**256 as the EVM adds slot numbers.
"""

from __future__ import annotations

from recompute.core.keccak import keccak256

WORD = 1 << 256


def mapping_slot(key: bytes, slot: int) -> int:
    """The slot of ``mapping[key]`` for a mapping declared at ``slot``; ``key`` is ``h(k)``."""
    return int.from_bytes(keccak256(key + slot.to_bytes(32, "big")), "big")


def data_slot(slot: int) -> int:
    """Where the data of a dynamic array (or long bytes/string) declared at ``slot`` starts."""
    return int.from_bytes(keccak256(slot.to_bytes(32, "big")), "big")


def offset_slot(base: int, slots: int) -> int:
    """``slots`` slots above ``base`` (a struct's member, an array's element), mod 2**256."""
    return (base + slots) % WORD
