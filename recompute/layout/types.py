"""The type model of a storage layout: solc's ``types`` table, classified and checked.

solc's storageLayout output names each type by an identifier (``t_uint64``,
``t_mapping(t_address,t_uint256)``, ``t_array(t_uint8)5_storage``, ...) and describes it
by ``encoding`` (``inplace``, ``mapping``, ``dynamic_array``, ``bytes``), ``label``,
``numberOfBytes`` and, depending on the kind, ``key``/``value``, ``base`` or ``members``
(solc docs, "Layout of State Variables in Storage" and its JSON output section).
:class:`TypeInfo` adds the one thing a reader needs that solc leaves in the identifier: the
*kind* of a value type (signed or not, address, fixed bytes, ...) and the length of a
static array.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, NoReturn

from recompute.core.errors import UsageError
from recompute.layout.slots import offset_slot

ENCODINGS = ("inplace", "mapping", "dynamic_array", "bytes")


class ValueKind(StrEnum):
    """What the bytes of a value type mean (solc leaves this in the type identifier)."""

    UINT = "uint"
    INT = "int"
    BOOL = "bool"
    ADDRESS = "address"
    FIXED_BYTES = "fixedbytes"
    ENUM = "enum"
    CONTRACT = "contract"
    FUNCTION_EXTERNAL = "function_external"
    FUNCTION_INTERNAL = "function_internal"
    UDVT = "udvt"


# Kinds a mapping key may have (solc: value types but function pointers, bytes, string).
KEY_KINDS = ("uint", "int", "bool", "address", "fixedbytes", "enum", "contract", "udvt",
             "bytes", "string")

_UINT = re.compile(r"^t_uint(\d+)$")
_INT = re.compile(r"^t_int(\d+)$")
_FIXED = re.compile(r"^t_bytes(\d+)$")
_STATIC_ARRAY = re.compile(r"^t_array\((.+)\)(\d+)_storage(_ptr)?$")
_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


@dataclass(frozen=True)
class Member:
    """A struct member or a state variable: a named place relative to a base slot."""

    label: str
    slot: int
    offset: int
    type_id: str
    contract: str | None = None
    ast_id: int | None = None


# One frozen class per kind of type: a reader matches on the class, so a mapping cannot be
# asked for its length nor a value type for its members (docs/design.md §Layouts).


@dataclass(frozen=True)
class ValueType:
    """A value type (``inplace``, at most 32 bytes, packed into slots)."""

    id: str
    label: str
    size: int  # numberOfBytes
    kind: ValueKind
    underlying: str | None = None  # user-defined value types (recompute extension)
    encoding: ClassVar[str] = "inplace"

    @property
    def bits(self) -> int:
        return self.size * 8


@dataclass(frozen=True)
class StructType:
    id: str
    label: str
    size: int
    members: tuple[Member, ...]
    kind: ClassVar[str] = "struct"
    encoding: ClassVar[str] = "inplace"

    def member(self, label: str) -> Member | None:
        for m in self.members:
            if m.label == label:
                return m
        return None


@dataclass(frozen=True)
class StaticArrayType:
    id: str
    label: str
    size: int
    base: str
    length: int
    kind: ClassVar[str] = "static_array"
    encoding: ClassVar[str] = "inplace"


@dataclass(frozen=True)
class DynamicArrayType:
    id: str
    label: str
    base: str
    size: ClassVar[int] = 32
    kind: ClassVar[str] = "dynamic_array"
    encoding: ClassVar[str] = "dynamic_array"


@dataclass(frozen=True)
class MappingType:
    id: str
    label: str
    key: str
    value: str
    size: ClassVar[int] = 32
    kind: ClassVar[str] = "mapping"
    encoding: ClassVar[str] = "mapping"


@dataclass(frozen=True)
class BytesType:
    """``bytes`` or ``string``: short values in the slot, long ones from keccak256(slot)."""

    id: str
    label: str
    is_string: bool
    size: ClassVar[int] = 32
    encoding: ClassVar[str] = "bytes"

    @property
    def kind(self) -> str:
        return "string" if self.is_string else "bytes"


TypeInfo = ValueType | StructType | StaticArrayType | DynamicArrayType | MappingType | BytesType


def references(t: TypeInfo) -> tuple[str, ...]:
    """The type identifiers ``t`` is built from (its edges in the types table)."""
    match t:
        case MappingType(key=key, value=value):
            return (key, value)
        case StaticArrayType(base=base) | DynamicArrayType(base=base):
            return (base,)
        case StructType(members=members):
            return tuple(m.type_id for m in members)
        case _:
            return ()


def _number(value: Any, what: str, origin: str, *, limit: int = 1 << 256) -> int:
    """A non-negative integer given as solc gives it: a decimal string or a JSON number."""
    if isinstance(value, bool):
        raise UsageError(f"{origin}: {what} must be a number, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 80:
        number = int(value)
    else:
        raise UsageError(f"{origin}: {what} must be a non-negative integer, got {value!r:.80}")
    if not 0 <= number < limit:
        raise UsageError(f"{origin}: {what} = {number} is out of range")
    return number


def parse_member(raw: Any, where: str, origin: str) -> Member:
    if not isinstance(raw, dict):
        raise UsageError(f"{origin}: {where} must be an object")
    for key in ("label", "slot", "offset", "type"):
        if key not in raw:
            raise UsageError(f"{origin}: {where} lacks {key!r}")
    label = raw["label"]
    if not isinstance(label, str) or not _IDENT.match(label):
        raise UsageError(f"{origin}: {where} has a bad label {label!r:.80}")
    if not isinstance(raw["type"], str):
        raise UsageError(f"{origin}: {where} ({label}) has a non-string type")
    contract = raw.get("contract")
    if contract is not None and not isinstance(contract, str):
        raise UsageError(f"{origin}: {where} ({label}) has a non-string contract")
    ast_id = raw.get("astId")
    if ast_id is not None and (isinstance(ast_id, bool) or not isinstance(ast_id, int)):
        raise UsageError(f"{origin}: {where} ({label}) has a non-integer astId")
    return Member(
        label=label,
        slot=_number(raw["slot"], f"{where} ({label}) slot", origin),
        offset=_number(raw["offset"], f"{where} ({label}) offset", origin, limit=32),
        type_id=raw["type"],
        contract=contract,
        ast_id=ast_id,
    )


_PREFIX_KINDS = (
    ("t_enum(", ValueKind.ENUM, None),
    ("t_contract(", ValueKind.CONTRACT, 160),
    ("t_function_external", ValueKind.FUNCTION_EXTERNAL, 192),
    ("t_function_internal", ValueKind.FUNCTION_INTERNAL, None),
    ("t_userDefinedValueType(", ValueKind.UDVT, None),
)


def value_kind(type_id: str, label: str) -> tuple[ValueKind, int | None]:
    """(kind, bit width if the identifier states one) of an ``inplace`` non-aggregate type."""
    if m := _UINT.match(type_id):
        return ValueKind.UINT, int(m.group(1))
    if m := _INT.match(type_id):
        return ValueKind.INT, int(m.group(1))
    if m := _FIXED.match(type_id):
        return ValueKind.FIXED_BYTES, int(m.group(1)) * 8
    if type_id == "t_bool":
        return ValueKind.BOOL, 8
    if type_id in ("t_address", "t_address_payable"):
        return ValueKind.ADDRESS, 160
    for prefix, kind, bits in _PREFIX_KINDS:
        if type_id.startswith(prefix):
            return kind, bits
    raise UsageError(f"unsupported value type {type_id!r:.120} ({label:.80})")


class _Entry:
    """One raw entry of the types table, with the checks every kind shares."""

    def __init__(self, type_id: str, raw: Any, origin: str):
        self.id = type_id
        self.where = f"types[{type_id!r}]"
        self.origin = origin
        if not isinstance(raw, dict):
            self.fail("must be an object")
        self.raw: dict[str, Any] = raw
        encoding = raw.get("encoding")
        if encoding not in ENCODINGS:
            self.fail(f"has unknown encoding {encoding!r:.40} (known: {', '.join(ENCODINGS)})")
        self.encoding: str = encoding
        label = raw.get("label")
        if not isinstance(label, str) or not label:
            self.fail("lacks a label")
        self.label: str = label
        if "numberOfBytes" not in raw:
            self.fail("lacks numberOfBytes")
        self.size = _number(raw["numberOfBytes"], f"{self.where} numberOfBytes", origin)
        if self.size == 0:
            self.fail("numberOfBytes must be positive")

    def fail(self, message: str) -> NoReturn:
        raise UsageError(f"{self.origin}: {self.where} {message}")

    def ref(self, field: str) -> str:
        value = self.raw.get(field)
        if not isinstance(value, str):
            self.fail(f"({self.encoding}) lacks {field!r}")
        return value

    def one_slot(self, what: str) -> None:
        if self.size != 32:
            self.fail(f"{what} occupies 32 bytes, not {self.size}")


def parse_type(type_id: str, raw: Any, origin: str) -> TypeInfo:
    """Check one entry of the types table on its own (references are checked by the caller)."""
    e = _Entry(type_id, raw, origin)
    match e.encoding:
        case "mapping":
            e.one_slot("a mapping")
            return MappingType(type_id, e.label, key=e.ref("key"), value=e.ref("value"))
        case "dynamic_array":
            e.one_slot("a dynamic array")
            return DynamicArrayType(type_id, e.label, base=e.ref("base"))
        case "bytes":
            e.one_slot("bytes/string")
            return _bytes_type(e)
    # inplace: struct, static array or value type
    if "members" in e.raw:
        return _struct_type(e)
    if "base" in e.raw:
        return _static_array_type(e)
    return _value_type(e)


def _bytes_type(e: _Entry) -> BytesType:
    if e.id.startswith("t_string") or e.label == "string":
        return BytesType(e.id, e.label, is_string=True)
    if e.id.startswith("t_bytes") or e.label == "bytes":
        return BytesType(e.id, e.label, is_string=False)
    e.fail("has encoding 'bytes' but is neither bytes nor string")


def _struct_type(e: _Entry) -> StructType:
    members_raw = e.raw["members"]
    if not isinstance(members_raw, list) or not members_raw:
        e.fail("members must be a non-empty list")
    members = tuple(parse_member(m, f"{e.where}.members[{i}]", e.origin)
                    for i, m in enumerate(members_raw))
    if e.size % 32:
        e.fail(f"a struct occupies whole slots, not {e.size} bytes")
    labels = [m.label for m in members]
    if len(set(labels)) != len(labels):
        e.fail("has duplicate member labels")
    return StructType(e.id, e.label, e.size, members)


def _static_array_type(e: _Entry) -> StaticArrayType:
    m = _STATIC_ARRAY.match(e.id)
    if not m:
        e.fail("has a base but its identifier does not state a length "
               "(expected t_array(BASE)N_storage)")
    if len(m.group(2)) > 78:
        e.fail("static array length does not fit in 256 bits")
    length = int(m.group(2))
    if length == 0:
        e.fail("static array of length 0")
    if e.size % 32:
        e.fail("a static array occupies whole slots")
    return StaticArrayType(e.id, e.label, e.size, base=e.ref("base"), length=length)


def _value_type(e: _Entry) -> ValueType:
    underlying = e.raw.get("underlying")
    if underlying is not None and not isinstance(underlying, str):
        e.fail("underlying must be a type identifier")
    try:
        kind, bits = value_kind(e.id, e.label)
    except UsageError as exc:
        raise UsageError(f"{e.origin}: {e.where}: {exc}") from None
    if e.size > 32:
        e.fail(f"a value type cannot exceed 32 bytes ({e.size})")
    if bits is not None and bits != e.size * 8:
        e.fail(f"numberOfBytes {e.size} disagrees with its identifier ({bits} bits)")
    return ValueType(e.id, e.label, e.size, kind, underlying=underlying)


def element_slots(base: TypeInfo) -> int:
    """Whole slots one non-packed element occupies."""
    return max(1, base.size // 32)


def per_slot(base: TypeInfo) -> int:
    """Elements of ``base`` in one slot: value types pack (32 // size), the rest don't."""
    return 32 // base.size if isinstance(base, ValueType) else 1


def array_slots(base: TypeInfo, length: int) -> int:
    """Slots a static array (or the data of a dynamic one) of ``length`` elements occupies."""
    if isinstance(base, ValueType):
        k = per_slot(base)
        return (length + k - 1) // k
    return length * element_slots(base)


def element_location(base: TypeInfo, data_slot: int, index: int) -> tuple[int, int]:
    """(slot, byte offset) of element ``index`` of an array whose data starts at ``data_slot``.

    solc docs: elements are stored like individual value types packed into slots; structs
    and arrays (and every other non-value element) start a new slot and take whole slots.
    """
    if isinstance(base, ValueType):
        k = per_slot(base)
        return offset_slot(data_slot, index // k), (index % k) * base.size
    return offset_slot(data_slot, index * element_slots(base)), 0
