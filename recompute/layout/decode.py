"""Slot words → typed values, and keys → the bytes solc hashes (solc docs, storage layout).

Value representation (Python → JSON, see :func:`to_json`):

- ``uintN``, ``intN`` (sign-extended), enums → ``int`` → decimal string
- ``bool`` → ``bool``
- ``address``, contracts → lowercase ``0x`` + 40 hex ``str`` (lowercase, not EIP-55, so a
  value compares equal whatever case a node or a user wrote it in)
- ``bytesN``, ``bytes``, function pointers (external: 24 bytes = address ‖ selector as the
  ABI encodes them; internal: 8 opaque bytes) → ``bytes`` → ``0x``-hex
- ``string`` → ``str``; not valid UTF-8 → :class:`InvalidUtf8` (``bytes``) →
  ``{"hex": "0x…", "invalid_utf8": true}``
- user-defined value types → their underlying type if the descriptor states it
  (``"underlying"``), else raw ``bytes`` (solc's layout output does not say what they wrap)
- structs → ``dict`` (mapping members omitted, as solc's getters omit them), arrays → ``list``
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from recompute.core.errors import UsageError
from recompute.core.hexdata import checksum_problem
from recompute.layout.paths import BoolKey, HexKey, IntKey, Key, StringKey
from recompute.layout.types import (
    BytesType,
    DynamicArrayType,
    StaticArrayType,
    StructType,
    TypeInfo,
    ValueKind,
    ValueType,
)

if TYPE_CHECKING:  # the descriptor imports this module; the type is only for annotations
    from recompute.layout.descriptor import Layout

WORD = 1 << 256
K = ValueKind


class InvalidUtf8(bytes):
    """The bytes of a ``string`` that are not valid UTF-8."""


class StorageMismatch(UsageError):
    """A proven word cannot be what solc writes for the layout's type (wrong layout?)."""


def extract(word: int, offset: int, size: int) -> int:
    """Bytes [offset, offset+size) of a slot, counted from the low-order end (solc packing)."""
    return (word >> (8 * offset)) & ((1 << (8 * size)) - 1)


def insert(word: int, offset: int, size: int, raw: int) -> int:
    """``word`` with bytes [offset, offset+size) replaced by ``raw`` (the inverse of extract)."""
    mask = ((1 << (8 * size)) - 1) << (8 * offset)
    return (word & ~mask) | ((raw << (8 * offset)) & mask)


def decode_value(t: ValueType, raw: int, underlying: ValueType | None = None) -> Any:
    """The value of a value type from its ``t.size`` bytes (already extracted, as an int)."""
    match t.kind:
        case K.UDVT:
            return decode_value(underlying, raw) if underlying else raw.to_bytes(t.size, "big")
        case K.UINT | K.ENUM:
            return raw
        case K.INT:
            return raw - (1 << t.bits) if raw >> (t.bits - 1) else raw
        case K.BOOL:
            return raw != 0
        case K.ADDRESS | K.CONTRACT:
            return f"0x{raw:040x}"
        case K.FIXED_BYTES | K.FUNCTION_EXTERNAL | K.FUNCTION_INTERNAL:
            return raw.to_bytes(t.size, "big")


def encode_value(t: ValueType, value: Any, underlying: ValueType | None = None) -> int:
    """The ``t.size`` bytes (as an int) solc stores for ``value``; inverse of decode_value."""
    match t.kind:
        case K.UDVT:
            return encode_value(underlying, value) if underlying else _bytes_value(t, value)
        case K.UINT | K.ENUM:
            if not _is_int(value) or not 0 <= value < 1 << t.bits:
                raise UsageError(f"{value!r} is not a {t.label}")
            return int(value)
        case K.INT:
            half = 1 << (t.bits - 1)
            if not _is_int(value) or not -half <= value < half:
                raise UsageError(f"{value!r} is not a {t.label}")
            return int(value) % (1 << t.bits)
        case K.BOOL:
            if not isinstance(value, bool):
                raise UsageError(f"{value!r} is not a bool")
            return int(value)
        case K.ADDRESS | K.CONTRACT:
            return _address_value(value)
        case _:
            return _bytes_value(t, value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _address_value(value: Any) -> int:
    if not isinstance(value, str) or len(value) != 42 or not value.startswith(("0x", "0X")):
        raise UsageError(f"{value!r} is not an address (0x + 40 hex digits)")
    try:
        return int(value[2:], 16)
    except ValueError:
        raise UsageError(f"{value!r} is not an address (0x + 40 hex digits)") from None


def _bytes_value(t: ValueType, value: Any) -> int:
    if not isinstance(value, (bytes, bytearray)) or len(value) != t.size:
        raise UsageError(f"{value!r} is not {t.size} bytes ({t.label})")
    return int.from_bytes(value, "big")


# --- bytes and string ------------------------------------------------------------------------

def bytes_header(word: int, what: str) -> tuple[bool, int]:
    """(long form?, length) of a ``bytes``/``string`` slot.

    solc docs: up to 31 bytes live in the slot itself, left-aligned, with ``length * 2`` in
    the lowest byte; from 32 bytes on the slot holds ``length * 2 + 1`` and the data starts
    at ``keccak256(slot)``.
    """
    if word & 1:
        length = (word - 1) // 2
        if length < 32:
            raise StorageMismatch(
                f"{what}: slot word 0x{word:x} is a long-form length of {length} < 32 bytes, "
                "which solc never writes (is the layout right?)"
            )
        return True, length
    length = (word & 0xFF) // 2
    if length > 31:
        raise StorageMismatch(
            f"{what}: slot word 0x{word:x} claims a short value of {length} > 31 bytes "
            "(is the layout right?)"
        )
    return False, length


def short_bytes(word: int, length: int) -> bytes:
    return word.to_bytes(32, "big")[:length]


def long_bytes(words: list[int], length: int) -> bytes:
    return b"".join(w.to_bytes(32, "big") for w in words)[:length]


def as_text(t: BytesType, data: bytes) -> bytes | str:
    if not t.is_string:
        return bytes(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return InvalidUtf8(data)


# --- mapping keys ----------------------------------------------------------------------------

def key_preimage(t: TypeInfo, key: Key, underlying: ValueType | None = None) -> bytes:
    """h(k) of solc docs: value types padded to 32 bytes as in memory (unsigned and address
    left-padded with zeros, signed sign-extended, bytesN right-padded, bool 0/1), bytes and
    string keys unpadded. ``key`` is a :class:`recompute.layout.paths.Key`."""
    where = f"key {key.text} at column {key.col}"
    match t:
        case BytesType(is_string=True):
            if not isinstance(key, StringKey):
                raise UsageError(f"{where}: a string key must be quoted (\"...\")")
            return key.data
        case BytesType(is_string=False):
            return _bytes_key(key, where)
        case ValueType(kind=K.UDVT):
            if underlying is None:
                raise UsageError(
                    f"{where}: the key type {t.label} is a user-defined value type whose "
                    f"underlying type the layout does not state; add \"underlying\" (e.g. "
                    f"\"t_uint256\") to types[{t.id!r}] in the descriptor"
                )
            return key_preimage(underlying, key)
        case ValueType():
            return _value_key(t, key, where)
    raise UsageError(f"{where}: a {t.label} cannot be a mapping key")


def _value_key(t: ValueType, key: Key, where: str) -> bytes:
    match t.kind:
        case K.UINT | K.ENUM | K.INT:
            return _number_key(t, key, where)
        case K.BOOL:
            if isinstance(key, BoolKey):
                return int(key.flag).to_bytes(32, "big")
            if isinstance(key, IntKey) and key.number in (0, 1):
                return key.number.to_bytes(32, "big")
            raise UsageError(f"{where}: a bool key must be true or false")
        case K.ADDRESS | K.CONTRACT:
            if not isinstance(key, HexKey) or len(key.digits) != 40:
                raise UsageError(f"{where}: a {t.label} key must be 0x followed by 40 hex digits")
            problem = checksum_problem(key.text[2:])  # as written: its case is a checksum
            if problem:
                raise UsageError(f"{where}: {problem}")
            return bytes.fromhex(key.digits).rjust(32, b"\0")
        case K.FIXED_BYTES:
            return _fixed_bytes_key(t, key, where)
    raise UsageError(f"{where}: a {t.label} cannot be a mapping key")


def _number_key(t: ValueType, key: Key, where: str) -> bytes:
    number = key.number if isinstance(key, IntKey | HexKey) else None
    if number is None:
        raise UsageError(f"{where}: a {t.label} key must be a number")
    if t.kind is K.INT:
        half = 1 << (t.bits - 1)
        if not -half <= number < half:
            raise UsageError(f"{where}: out of range for {t.label}")
    elif not 0 <= number < 1 << t.bits:
        raise UsageError(f"{where}: out of range for {t.label}")
    return (number % WORD).to_bytes(32, "big")


def _fixed_bytes_key(t: ValueType, key: Key, where: str) -> bytes:
    if isinstance(key, HexKey) and len(key.digits) == 2 * t.size:
        data = bytes.fromhex(key.digits)
    elif isinstance(key, StringKey) and len(key.data) <= t.size:
        data = key.data
    else:
        raise UsageError(
            f"{where}: a {t.label} key must be 0x followed by {2 * t.size} hex digits "
            f"(or a string of at most {t.size} bytes)"
        )
    return data.ljust(32, b"\0")


def _bytes_key(key: Key, where: str) -> bytes:
    if isinstance(key, HexKey) and len(key.digits) % 2 == 0:
        return bytes.fromhex(key.digits)
    if isinstance(key, StringKey):
        return key.data
    raise UsageError(f"{where}: a bytes key must be 0x-hex with an even number of digits "
                     "(or a quoted string)")


# --- JSON ------------------------------------------------------------------------------------

def to_json(layout: Layout, t: TypeInfo, value: Any) -> Any:
    """The JSON form of a decoded value of type ``t`` (see the module docstring)."""
    match t:
        case ValueType(kind=K.UDVT):
            under = layout.underlying(t)
            return to_json(layout, under, value) if under else "0x" + value.hex()
        case ValueType(kind=K.UINT | K.INT | K.ENUM):
            return str(value)
        case ValueType(kind=K.BOOL):
            return bool(value)
        case ValueType(kind=K.ADDRESS | K.CONTRACT):
            return value
        case ValueType() | BytesType(is_string=False):
            return "0x" + bytes(value).hex()
        case BytesType(is_string=True):
            if isinstance(value, InvalidUtf8):
                return {"hex": "0x" + bytes(value).hex(), "invalid_utf8": True}
            return value
        case StructType(members=members):
            return {m.label: to_json(layout, layout.type(m.type_id), value[m.label])
                    for m in members if m.label in value}
        case StaticArrayType(base=base) | DynamicArrayType(base=base):
            base_type = layout.type(base)
            return [to_json(layout, base_type, v) for v in value]
    raise UsageError(f"a {t.label} has no value of its own")
