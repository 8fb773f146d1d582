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

from recompute.core.errors import UsageError

ENCODINGS = ("inplace", "mapping", "dynamic_array", "bytes")

# Value kinds: decoded from a byte range of one slot.
VALUE_KINDS = (
    "uint", "int", "bool", "address", "fixedbytes", "enum", "contract",
    "function_external", "function_internal", "udvt",
)
# Kinds a mapping key may have (solc: value types, contracts, enums, UDVTs, bytes, string).
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


@dataclass(frozen=True)
class TypeInfo:
    id: str
    encoding: str
    label: str
    size: int  # numberOfBytes
    kind: str
    key: str | None = None
    value: str | None = None
    base: str | None = None
    length: int | None = None  # static arrays
    members: tuple[Member, ...] = ()
    underlying: str | None = None  # user-defined value types (recompute extension)

    @property
    def is_value(self) -> bool:
        return self.kind in VALUE_KINDS

    @property
    def bits(self) -> int:
        return self.size * 8

    def member(self, label: str) -> Member | None:
        for m in self.members:
            if m.label == label:
                return m
        return None


def _number(value, what: str, origin: str, *, limit: int = 1 << 256) -> int:
    """A non-negative integer given as solc gives it: a decimal string or a JSON number."""
    if isinstance(value, bool):
        raise UsageError(f"{origin}: {what} must be a number, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"[0-9]{1,80}", value):  # 2**256 has 78
        number = int(value)
    else:
        raise UsageError(f"{origin}: {what} must be a non-negative integer, got {value!r}")
    if not 0 <= number < limit:
        raise UsageError(f"{origin}: {what} = {number} is out of range")
    return number


def parse_member(raw, where: str, origin: str) -> Member:
    if not isinstance(raw, dict):
        raise UsageError(f"{origin}: {where} must be an object")
    for key in ("label", "slot", "offset", "type"):
        if key not in raw:
            raise UsageError(f"{origin}: {where} lacks {key!r}")
    label = raw["label"]
    if not isinstance(label, str) or not _IDENT.match(label):
        raise UsageError(f"{origin}: {where} has a bad label {label!r}")
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


def _value_kind(type_id: str, label: str) -> tuple[str, int | None]:
    """(kind, bit width if the identifier states one) of an ``inplace`` non-aggregate type."""
    if m := _UINT.match(type_id):
        return "uint", int(m.group(1))
    if m := _INT.match(type_id):
        return "int", int(m.group(1))
    if m := _FIXED.match(type_id):
        return "fixedbytes", int(m.group(1)) * 8
    if type_id == "t_bool":
        return "bool", 8
    if type_id in ("t_address", "t_address_payable"):
        return "address", 160
    if type_id.startswith("t_enum("):
        return "enum", None
    if type_id.startswith("t_contract("):
        return "contract", 160
    if type_id.startswith("t_function_external"):
        return "function_external", 192
    if type_id.startswith("t_function_internal"):
        return "function_internal", None
    if type_id.startswith("t_userDefinedValueType("):
        return "udvt", None
    raise UsageError(f"unsupported value type {type_id!r} ({label})")


def parse_type(type_id: str, raw, origin: str) -> TypeInfo:
    """Check one entry of the types table on its own (references are checked by the caller)."""
    where = f"types[{type_id!r}]"
    if not isinstance(raw, dict):
        raise UsageError(f"{origin}: {where} must be an object")
    encoding = raw.get("encoding")
    if encoding not in ENCODINGS:
        raise UsageError(
            f"{origin}: {where} has unknown encoding {encoding!r} (known: {', '.join(ENCODINGS)})"
        )
    label = raw.get("label")
    if not isinstance(label, str) or not label:
        raise UsageError(f"{origin}: {where} lacks a label")
    if "numberOfBytes" not in raw:
        raise UsageError(f"{origin}: {where} lacks numberOfBytes")
    size = _number(raw["numberOfBytes"], f"{where} numberOfBytes", origin)
    if size == 0:
        raise UsageError(f"{origin}: {where} numberOfBytes must be positive")
    underlying = raw.get("underlying")
    if underlying is not None and not isinstance(underlying, str):
        raise UsageError(f"{origin}: {where} underlying must be a type identifier")

    def ref(field: str) -> str:
        value = raw.get(field)
        if not isinstance(value, str):
            raise UsageError(f"{origin}: {where} ({encoding}) lacks {field!r}")
        return value

    if encoding == "mapping":
        if size != 32:
            raise UsageError(f"{origin}: {where} a mapping occupies 32 bytes, not {size}")
        return TypeInfo(type_id, encoding, label, size, "mapping", key=ref("key"),
                        value=ref("value"))
    if encoding == "dynamic_array":
        if size != 32:
            raise UsageError(f"{origin}: {where} a dynamic array occupies 32 bytes, not {size}")
        return TypeInfo(type_id, encoding, label, size, "dynamic_array", base=ref("base"))
    if encoding == "bytes":
        if size != 32:
            raise UsageError(f"{origin}: {where} bytes/string occupy 32 bytes, not {size}")
        if type_id.startswith("t_string") or label == "string":
            kind = "string"
        elif type_id.startswith("t_bytes") or label == "bytes":
            kind = "bytes"
        else:
            raise UsageError(f"{origin}: {where} has encoding 'bytes' but is neither bytes nor "
                             "string")
        return TypeInfo(type_id, encoding, label, size, kind)
    # inplace: struct, static array or value type
    if "members" in raw:
        members_raw = raw["members"]
        if not isinstance(members_raw, list) or not members_raw:
            raise UsageError(f"{origin}: {where} members must be a non-empty list")
        members = tuple(
            parse_member(m, f"{where}.members[{i}]", origin) for i, m in enumerate(members_raw)
        )
        if size % 32:
            raise UsageError(f"{origin}: {where} a struct occupies whole slots, not {size} bytes")
        labels = [m.label for m in members]
        if len(set(labels)) != len(labels):
            raise UsageError(f"{origin}: {where} has duplicate member labels")
        return TypeInfo(type_id, encoding, label, size, "struct", members=members)
    if "base" in raw:
        m = _STATIC_ARRAY.match(type_id)
        if not m:
            raise UsageError(
                f"{origin}: {where} has a base but its identifier does not state a length "
                "(expected t_array(BASE)N_storage)"
            )
        length = int(m.group(2))
        if length == 0:
            raise UsageError(f"{origin}: {where} static array of length 0")
        if size % 32:
            raise UsageError(f"{origin}: {where} a static array occupies whole slots")
        return TypeInfo(type_id, encoding, label, size, "static_array", base=ref("base"),
                        length=length)
    try:
        kind, bits = _value_kind(type_id, label)
    except UsageError as exc:
        raise UsageError(f"{origin}: {where}: {exc}") from None
    if size > 32:
        raise UsageError(f"{origin}: {where} a value type cannot exceed 32 bytes ({size})")
    if bits is not None and bits != size * 8:
        raise UsageError(
            f"{origin}: {where} numberOfBytes {size} disagrees with its identifier ({bits} bits)"
        )
    return TypeInfo(type_id, encoding, label, size, kind, underlying=underlying)


def element_slots(base: TypeInfo) -> int:
    """Whole slots one non-packed element occupies."""
    return max(1, base.size // 32)


def per_slot(base: TypeInfo) -> int:
    """Elements of ``base`` in one slot: value types pack (32 // size), the rest don't."""
    return 32 // base.size if base.is_value else 1


def array_slots(base: TypeInfo, length: int) -> int:
    """Slots a static array (or the data of a dynamic one) of ``length`` elements occupies."""
    if base.is_value:
        k = per_slot(base)
        return (length + k - 1) // k
    return length * element_slots(base)


def element_location(base: TypeInfo, data_slot: int, index: int) -> tuple[int, int]:
    """(slot, byte offset) of element ``index`` of an array whose data starts at ``data_slot``.

    solc docs: elements are stored like individual value types packed into slots; structs
    and arrays (and every other non-value element) start a new slot and take whole slots.
    """
    if base.is_value:
        k = per_slot(base)
        return (data_slot + index // k) % (1 << 256), (index % k) * base.size
    return (data_slot + index * element_slots(base)) % (1 << 256), 0
