"""What a recipe author imports (docs/design.md §Recipes, docs/library.md): the stable names of the
recipe framework, and the hash and slot arithmetic a plan that asks for raw ``Slots`` needs, so
that a user's own recipe module never imports the package's internals.

    from recompute.recipe import Derivation, Param, Reads, Recipe, register
    from recompute.recipe import keccak256, mapping_slot, struct_member_slot, array_element_slot

A layout path (``Reads(["cap[0x…]"])``) is the first choice: the layout engine finds the slot,
packing included, and says how. The helpers are for a contract without a descriptor: slot
numbers come back as ints, which ``Slots([...])`` asks for.
"""

from __future__ import annotations

from recompute.core.errors import ArgumentError
from recompute.core.hexdata import as_data, as_uint256
from recompute.core.keccak import keccak256
from recompute.layout import slots as _slots
from recompute.recipes.base import Recipe
from recompute.recipes.outputs import BOOL, HEX, INT, TABLE, TEXT, Output, enum
from recompute.recipes.params import Param
from recompute.recipes.plan import BlockClock, Derivation, Logs, Reads, ReceiptsAt, Slots, ViewCheck
from recompute.recipes.registry import register

__all__ = ["BOOL", "HEX", "INT", "TABLE", "TEXT", "BlockClock", "Derivation", "Logs",
           "Output", "Param", "ReceiptsAt", "Reads", "Recipe", "Slots", "ViewCheck",
           "array_element_slot", "enum", "keccak256", "mapping_slot", "register",
           "struct_member_slot"]


def mapping_slot(key: int | str | bytes, slot: int | str, *, unpadded: bool = False) -> int:
    """The slot of ``mapping[key]`` for a mapping declared at ``slot`` (solc: keccak256(h(key) ‖
    pad32(slot))). ``key`` as Solidity pads a value-type key: an int (a uint, an enum; 0/1 for a
    bool), an address (20 bytes or 0x + 40 hex digits: left-padded), or a 32-byte word (bytes or
    0x + 64 hex digits: a bytes32 key, or any key padded already). A ``string`` or ``bytes`` key
    is hashed as it is: give its bytes with ``unpadded=True``. For a nested mapping, the outer
    slot is the inner one's: ``mapping_slot(b, mapping_slot(a, p))`` is ``m[a][b]``."""
    base = as_uint256(slot, "slot")
    if unpadded:
        if not isinstance(key, (bytes, bytearray)):
            raise ArgumentError(f"key: a string or bytes key is given as bytes with "
                                f"unpadded=True, not {type(key).__name__}")
        return _slots.mapping_slot(bytes(key), base)
    return _slots.mapping_slot(_key_word(key), base)


def _key_word(key: object) -> bytes:
    if isinstance(key, (bytes, bytearray, str)) and len(key) in (20, 42):
        return bytes(12) + as_data(key, "key", 20, "an address")
    if isinstance(key, (bytes, bytearray, str)) and len(key) in (32, 66):
        return as_data(key, "key", 32, "a 32-byte word")
    if isinstance(key, int) and not isinstance(key, bool):
        return as_uint256(key, "key").to_bytes(32, "big")
    raise ArgumentError(f"key: {key!r} is not a mapping key (an int, an address of 20 bytes or "
                        "0x + 40 hex digits, or a 32-byte word; string and bytes keys with "
                        "unpadded=True)")


def array_element_slot(slot: int | str, index: int, element_slots: int = 1) -> int:
    """The first slot of element ``index`` of a dynamic array declared at ``slot`` (its length
    is at ``slot``, its data from keccak256(pad32(slot))), each element taking
    ``element_slots`` whole slots (1 for a 32-byte value, N for a struct of N slots). Elements
    smaller than 32 bytes share slots (solc packs them): read such an array through a layout."""
    for name, value in (("index", index), ("element_slots", element_slots)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ArgumentError(f"{name}: {value!r} is not a non-negative int")
    return _slots.offset_slot(_slots.data_slot(as_uint256(slot, "slot")), index * element_slots)


def struct_member_slot(base: int | str, member: int) -> int:
    """The slot of a struct member ``member`` slots into a struct that starts at ``base`` (the
    member's slot in ``recompute layout show``), mod 2**256 as the EVM adds."""
    if isinstance(member, bool) or not isinstance(member, int) or member < 0:
        raise ArgumentError(f"member: {member!r} is not a non-negative int")
    return _slots.offset_slot(as_uint256(base, "base"), member)
