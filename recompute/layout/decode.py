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

from recompute.core.errors import UsageError
from recompute.layout.paths import Key
from recompute.layout.types import TypeInfo

WORD = 1 << 256


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


def decode_value(t: TypeInfo, raw: int, underlying: TypeInfo | None = None):
    """The value of a value type from its ``t.size`` bytes (already extracted, as an int)."""
    kind = t.kind
    if kind == "udvt":
        return decode_value(underlying, raw) if underlying else raw.to_bytes(t.size, "big")
    if kind in ("uint", "enum"):
        return raw
    if kind == "int":
        return raw - (1 << t.bits) if raw >> (t.bits - 1) else raw
    if kind == "bool":
        return raw != 0
    if kind in ("address", "contract"):
        return f"0x{raw:040x}"
    if kind in ("fixedbytes", "function_external", "function_internal"):
        return raw.to_bytes(t.size, "big")
    raise UsageError(f"{t.label} is not a value type")


def encode_value(t: TypeInfo, value, underlying: TypeInfo | None = None) -> int:
    """The ``t.size`` bytes (as an int) solc stores for ``value``; inverse of decode_value."""
    kind = t.kind
    if kind == "udvt":
        if underlying:
            return encode_value(underlying, value)
        return _bytes_value(t, value)
    if kind in ("uint", "enum"):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << t.bits:
            raise UsageError(f"{value!r} is not a {t.label}")
        return value
    if kind == "int":
        half = 1 << (t.bits - 1)
        if not isinstance(value, int) or isinstance(value, bool) or not -half <= value < half:
            raise UsageError(f"{value!r} is not a {t.label}")
        return value % (1 << t.bits)
    if kind == "bool":
        if not isinstance(value, bool):
            raise UsageError(f"{value!r} is not a bool")
        return int(value)
    if kind in ("address", "contract"):
        if not isinstance(value, str) or len(value) != 42 or not value.startswith(("0x", "0X")):
            raise UsageError(f"{value!r} is not an address (0x + 40 hex digits)")
        try:
            return int(value[2:], 16)
        except ValueError:
            raise UsageError(f"{value!r} is not an address (0x + 40 hex digits)") from None
    return _bytes_value(t, value)


def _bytes_value(t: TypeInfo, value) -> int:
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


def as_text(t: TypeInfo, data: bytes):
    if t.kind == "bytes":
        return bytes(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return InvalidUtf8(data)


# --- mapping keys ----------------------------------------------------------------------------

def key_preimage(t: TypeInfo, key: Key, underlying: TypeInfo | None = None) -> bytes:
    """h(k) of solc docs: value types padded to 32 bytes as in memory (unsigned and address
    left-padded with zeros, signed sign-extended, bytesN right-padded, bool 0/1), bytes and
    string keys unpadded. ``key`` is a :class:`recompute.layout.paths.Key`."""
    kind = t.kind
    where = f"key {key.text} at column {key.col}"
    if kind == "udvt":
        if underlying is None:
            raise UsageError(
                f"{where}: the key type {t.label} is a user-defined value type whose underlying "
                f"type the layout does not state; add \"underlying\" (e.g. \"t_uint256\") to "
                f"types[{t.id!r}] in the descriptor"
            )
        return key_preimage(underlying, key)
    if kind in ("uint", "enum", "int"):
        if key.kind not in ("int", "hex") or key.number is None:
            raise UsageError(f"{where}: a {t.label} key must be a number")
        if kind == "int":
            half = 1 << (t.bits - 1)
            if not -half <= key.number < half:
                raise UsageError(f"{where}: out of range for {t.label}")
        elif not 0 <= key.number < 1 << t.bits:
            raise UsageError(f"{where}: out of range for {t.label}")
        return (key.number % WORD).to_bytes(32, "big")
    if kind == "bool":
        if key.kind == "bool":
            return int(key.flag).to_bytes(32, "big")
        if key.kind == "int" and key.number in (0, 1):
            return key.number.to_bytes(32, "big")
        raise UsageError(f"{where}: a bool key must be true or false")
    if kind in ("address", "contract"):
        if key.kind != "hex" or len(key.digits) != 40:
            raise UsageError(f"{where}: a {t.label} key must be 0x followed by 40 hex digits")
        return key.number.to_bytes(32, "big")
    if kind == "fixedbytes":
        if key.kind == "hex" and len(key.digits) == 2 * t.size:
            data = bytes.fromhex(key.digits)
        elif key.kind == "string" and len(key.data) <= t.size:
            data = key.data
        else:
            raise UsageError(
                f"{where}: a {t.label} key must be 0x followed by {2 * t.size} hex digits "
                f"(or a string of at most {t.size} bytes)"
            )
        return data.ljust(32, b"\0")
    if kind == "string":
        if key.kind != "string":
            raise UsageError(f"{where}: a string key must be quoted (\"...\")")
        return key.data
    if kind == "bytes":
        if key.kind == "hex" and len(key.digits) % 2 == 0:
            return bytes.fromhex(key.digits)
        if key.kind == "string":
            return key.data
        raise UsageError(f"{where}: a bytes key must be 0x-hex with an even number of digits "
                         "(or a quoted string)")
    raise UsageError(f"{where}: a {t.label} cannot be a mapping key")


# --- JSON ------------------------------------------------------------------------------------

def to_json(layout, t: TypeInfo, value):
    """The JSON form of a decoded value of type ``t`` (see the module docstring)."""
    if t.kind == "udvt":
        under = layout.underlying(t)
        return to_json(layout, under, value) if under else "0x" + value.hex()
    if t.kind in ("uint", "int", "enum"):
        return str(value)
    if t.kind == "bool":
        return bool(value)
    if t.kind in ("address", "contract"):
        return value
    if t.kind in ("fixedbytes", "function_external", "function_internal", "bytes"):
        return "0x" + bytes(value).hex()
    if t.kind == "string":
        if isinstance(value, InvalidUtf8):
            return {"hex": "0x" + bytes(value).hex(), "invalid_utf8": True}
        return value
    if t.kind == "struct":
        out = {}
        for m in t.members:
            if m.label in value:
                out[m.label] = to_json(layout, layout.type(m.type_id), value[m.label])
        return out
    if t.kind in ("static_array", "dynamic_array"):
        base = layout.type(t.base)
        return [to_json(layout, base, v) for v in value]
    raise UsageError(f"a {t.label} has no value of its own")
