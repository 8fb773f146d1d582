"""Path → slot, byte offset, size and type, with every derivation step written out.

The arithmetic is solc's (docs, "Layout of State Variables in Storage"):

- a state variable sits at the slot and offset the descriptor gives;
- a mapping value for key ``k`` of a mapping at slot ``p`` sits at
  ``keccak256(h(k) ‖ pad32(p))`` (``h`` in :func:`recompute.layout.decode.key_preimage`);
- a dynamic array keeps its length at ``p`` and its data from ``keccak256(pad32(p))``;
- array elements pack like value types (``32 // size`` per slot) when they are value types,
  otherwise take ``numberOfBytes / 32`` whole slots each;
- a struct member is at the struct's slot plus the member's ``slot``, at its ``offset``.

Slots wrap modulo 2**256. Resolution is static: an index into a dynamic array is checked
against the *proven* length at read time (:class:`BoundCheck`), never here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from recompute.core.errors import UsageError
from recompute.layout.decode import key_preimage
from recompute.layout.descriptor import Layout
from recompute.layout.paths import HexKey, IndexStep, IntKey, MemberStep, Path, parse_path
from recompute.layout.slots import data_slot, mapping_slot, offset_slot
from recompute.layout.types import (
    BytesType,
    DynamicArrayType,
    MappingType,
    StaticArrayType,
    StructType,
    TypeInfo,
    ValueType,
    element_location,
    element_slots,
    per_slot,
)

WORD = 1 << 256


def hex32(n: int) -> str:
    return f"0x{n:064x}"


def show(n: int) -> str:
    """A slot as an auditor reads it: decimal when small, full 32-byte hex otherwise."""
    return str(n) if n < 1 << 32 else hex32(n)


@dataclass(frozen=True)
class Step:
    """One derivation step: ``text`` for people, ``data`` (JSON-able) for programs."""

    op: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "text": self.text, **self.data}


@dataclass(frozen=True)
class BoundCheck:
    """``index`` must be below the proven length word at ``length_slot`` (of ``array``)."""

    array: str
    length_slot: int
    index: int

    def to_json(self) -> dict[str, Any]:
        return {"array": self.array, "lengthSlot": hex32(self.length_slot),
                "index": str(self.index)}


@dataclass(frozen=True)
class Location:
    path: str
    type: TypeInfo
    slot: int
    offset: int
    size: int
    steps: tuple[Step, ...]
    checks: tuple[BoundCheck, ...] = ()
    length_of: DynamicArrayType | BytesType | None = None  # set when the path ends in `.length`

    @property
    def type_label(self) -> str:
        return "uint256" if self.length_of is not None else self.type.label

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "type": self.type_label,
            "slot": hex32(self.slot),
            "offset": self.offset,
            "size": self.size,
            "steps": [s.to_json() for s in self.steps],
            "boundChecks": [c.to_json() for c in self.checks],
        }


def _index(step: IndexStep, path: Path, what: str) -> int:
    key = step.key
    number = key.number if isinstance(key, IntKey | HexKey) else None
    if number is None or number < 0:
        raise UsageError(
            f"{path.text}: index {key.text} at column {key.col} into {what} must be a "
            "non-negative number"
        )
    if number >= WORD:
        raise UsageError(f"{path.text}: index {key.text} at column {key.col} exceeds 2**256")
    return number


def _element(layout: Layout, base_id: str, data: int, i: int, sub: str) -> tuple[int, int, Step]:
    base = layout.type(base_id)
    slot, offset = element_location(base, data, i)
    if isinstance(base, ValueType) and per_slot(base) > 1:
        k = per_slot(base)
        text = (f"{sub}: + ⌊index / {k} per slot⌋ = {show(data)} + ⌊{i} / {k}⌋ = {show(slot)}, "
                f"byte offset (index mod {k}) × {base.size} = {offset}")
        info: dict[str, Any] = {"perSlot": k, "elementBytes": base.size}
    else:
        n = element_slots(base)
        text = f"{sub}: + index × {n} slot(s) per element = {show(data)} + {i} × {n} = {show(slot)}"
        info = {"elementSlots": n}
    step = Step("index", text, {"index": str(i), "base": hex32(data), "slot": hex32(slot),
                                "offset": offset, **info})
    return slot, offset, step


@dataclass
class _Walk:
    """Where a path stands while it is resolved step by step."""

    layout: Layout
    path: Path
    t: TypeInfo
    slot: int
    offset: int
    steps: list[Step]
    checks: list[BoundCheck] = field(default_factory=list)
    length_of: DynamicArrayType | BytesType | None = None

    def member(self, step: MemberStep, here: str, sub: str) -> None:
        p, t, slot = self.path, self.t, self.slot
        match t:
            case StructType():
                m = t.member(step.name)
                if m is None:
                    names = ", ".join(x.label for x in t.members)
                    raise UsageError(f"{p.text}: {t.label} has no member {step.name!r} at column "
                                     f"{step.col} (members: {names})")
                new = offset_slot(slot, m.slot)
                self.steps.append(Step(
                    "member",
                    f"{sub}: + member slot {m.slot} = {show(slot)} + {m.slot} = {show(new)}, "
                    f"byte offset {m.offset}",
                    {"member": m.label, "memberSlot": str(m.slot), "base": hex32(slot),
                     "slot": hex32(new), "offset": m.offset},
                ))
                self.slot, self.offset, self.t = new, m.offset, self.layout.type(m.type_id)
            case DynamicArrayType() | BytesType() if step.name == "length":
                self.length_of = t
                if isinstance(t, DynamicArrayType):
                    text = f"{sub}: the length of {here} is the whole word at slot {show(slot)}"
                else:
                    text = (f"{sub}: the length of {here} is encoded at slot {show(slot)} "
                            "(short form: lowest byte = 2·length; long form: word = 2·length+1)")
                self.steps.append(Step("length", text, {"slot": hex32(slot)}))
            case MappingType():
                raise UsageError(f"{p.text}: {here} is a mapping; index it with [key] "
                                 f"(column {step.col})")
            case _:
                hint = " (only dynamic arrays, bytes and string have .length)" \
                    if step.name == "length" else ""
                raise UsageError(f"{p.text}: {here} is a {t.label} and has no member "
                                 f"{step.name!r} at column {step.col}{hint}")

    def index(self, step: IndexStep, here: str, sub: str) -> None:
        p, t, slot = self.path, self.t, self.slot
        match t:
            case MappingType():
                kt = self.layout.type(t.key)
                kb = key_preimage(kt, step.key, self.layout.underlying(kt))
                preimage = kb + slot.to_bytes(32, "big")
                new = mapping_slot(kb, slot)
                form = "key" if isinstance(kt, BytesType) else "pad32(key)"
                self.steps.append(Step(
                    "mapping",
                    f"{sub}: keccak256({form} ‖ pad32(slot)) = keccak256(0x{kb.hex()} ‖ "
                    f"{hex32(slot)}) = {hex32(new)}",
                    {"key": step.key.text, "keyType": kt.label, "keyBytes": "0x" + kb.hex(),
                     "base": hex32(slot), "preimage": "0x" + preimage.hex(), "slot": hex32(new)},
                ))
                self.slot, self.offset, self.t = new, 0, self.layout.type(t.value)
            case StaticArrayType():
                i = _index(step, p, t.label)
                if i >= t.length:
                    raise UsageError(f"{p.text}: index {i} at column {step.key.col} is out of "
                                     f"bounds for {t.label} (length {t.length})")
                self.slot, self.offset, s = _element(self.layout, t.base, slot, i, sub)
                self.steps.append(s)
                self.t = self.layout.type(t.base)
            case DynamicArrayType():
                i = _index(step, p, t.label)
                self.checks.append(BoundCheck(here, slot, i))
                data = data_slot(slot)
                self.steps.append(Step(
                    "array-data",
                    f"{sub}: data of {here} starts at keccak256(pad32(slot)) = "
                    f"keccak256({hex32(slot)}) = {hex32(data)} (index < proven length of "
                    f"{here}, checked at read time)",
                    {"base": hex32(slot), "slot": hex32(data), "lengthSlot": hex32(slot)},
                ))
                self.slot, self.offset, s = _element(self.layout, t.base, data, i, sub)
                self.steps.append(s)
                self.t = self.layout.type(t.base)
            case _:
                raise UsageError(f"{p.text}: {here} is a {t.label} and cannot be indexed "
                                 f"(column {step.col})")


def resolve(layout: Layout, path: str | Path) -> Location:
    """Where ``path`` lives; :class:`UsageError` for unknown names, wrong keys, static bounds."""
    p = parse_path(path) if isinstance(path, str) else path
    var = layout.variable(p.root)
    t = layout.type(var.type_id)
    walk = _Walk(layout, p, t, var.slot, var.offset, [Step(
        "variable",
        f"{p.root}: declared at slot {show(var.slot)}, byte offset {var.offset} ({t.label})",
        {"name": p.root, "slot": hex32(var.slot), "offset": var.offset})])
    for n, step in enumerate(p.steps):
        if walk.length_of is not None:
            raise UsageError(f"{p.text}: nothing can follow .length (column {step.col})")
        if isinstance(step, MemberStep):
            walk.member(step, p.prefix(n), p.prefix(n + 1))
        else:
            walk.index(step, p.prefix(n), p.prefix(n + 1))
    steps, checks = tuple(walk.steps), tuple(walk.checks)
    if walk.length_of is not None:
        return Location(p.text, walk.t, walk.slot, 0, 32, steps, checks, walk.length_of)
    if isinstance(walk.t, ValueType):
        steps += (Step(
            "value",
            f"value: bytes [{walk.offset}, {walk.offset + walk.t.size}) of slot "
            f"{show(walk.slot)}, counted from the low-order end ({walk.t.label})",
            {"slot": hex32(walk.slot), "offset": walk.offset, "size": walk.t.size},
        ),)
    return Location(p.text, walk.t, walk.slot, walk.offset, walk.t.size, steps, checks)
