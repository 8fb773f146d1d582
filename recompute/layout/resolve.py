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

from eth_hash.auto import keccak

from recompute.core.errors import UsageError
from recompute.layout.decode import key_preimage
from recompute.layout.descriptor import Layout
from recompute.layout.paths import IndexStep, MemberStep, Path, parse_path
from recompute.layout.types import TypeInfo, element_location, element_slots, per_slot

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
    data: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"op": self.op, "text": self.text, **self.data}


@dataclass(frozen=True)
class BoundCheck:
    """``index`` must be below the proven length word at ``length_slot`` (of ``array``)."""

    array: str
    length_slot: int
    index: int

    def to_json(self) -> dict:
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
    length_of: TypeInfo | None = None  # set when the path ends in `.length`

    @property
    def type_label(self) -> str:
        return "uint256" if self.length_of is not None else self.type.label

    def to_json(self) -> dict:
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
    if key.kind not in ("int", "hex") or key.number is None or key.number < 0:
        raise UsageError(
            f"{path.text}: index {key.text} at column {key.col} into {what} must be a "
            "non-negative number"
        )
    if key.number >= WORD:
        raise UsageError(f"{path.text}: index {key.text} at column {key.col} exceeds 2**256")
    return key.number


def _element(layout: Layout, t: TypeInfo, data: int, i: int, sub: str) -> tuple[int, int, Step]:
    base = layout.type(t.base)
    slot, offset = element_location(base, data, i)
    if base.is_value and per_slot(base) > 1:
        k = per_slot(base)
        text = (f"{sub}: + ⌊index / {k} per slot⌋ = {show(data)} + ⌊{i} / {k}⌋ = {show(slot)}, "
                f"byte offset (index mod {k}) × {base.size} = {offset}")
        info = {"perSlot": k, "elementBytes": base.size}
    else:
        n = element_slots(base)
        text = f"{sub}: + index × {n} slot(s) per element = {show(data)} + {i} × {n} = {show(slot)}"
        info = {"elementSlots": n}
    step = Step("index", text, {"index": str(i), "base": hex32(data), "slot": hex32(slot),
                                "offset": offset, **info})
    return slot, offset, step


def resolve(layout: Layout, path: str | Path) -> Location:
    """Where ``path`` lives; :class:`UsageError` for unknown names, wrong keys, static bounds."""
    p = parse_path(path) if isinstance(path, str) else path
    var = layout.variable(p.root)
    t = layout.type(var.type_id)
    slot, offset = var.slot, var.offset
    steps = [Step("variable",
                  f"{p.root}: declared at slot {show(slot)}, byte offset {offset} ({t.label})",
                  {"name": p.root, "slot": hex32(slot), "offset": offset})]
    checks: list[BoundCheck] = []
    length_of = None
    for n, step in enumerate(p.steps):
        here = p.prefix(n)
        sub = p.prefix(n + 1)
        if length_of is not None:
            raise UsageError(f"{p.text}: nothing can follow .length (column {step.col})")
        if isinstance(step, MemberStep):
            if t.kind == "struct":
                m = t.member(step.name)
                if m is None:
                    names = ", ".join(x.label for x in t.members)
                    raise UsageError(f"{p.text}: {t.label} has no member {step.name!r} at column "
                                     f"{step.col} (members: {names})")
                new = (slot + m.slot) % WORD
                steps.append(Step(
                    "member",
                    f"{sub}: + member slot {m.slot} = {show(slot)} + {m.slot} = {show(new)}, "
                    f"byte offset {m.offset}",
                    {"member": m.label, "memberSlot": str(m.slot), "base": hex32(slot),
                     "slot": hex32(new), "offset": m.offset},
                ))
                slot, offset, t = new, m.offset, layout.type(m.type_id)
            elif step.name == "length" and t.kind in ("dynamic_array", "bytes", "string"):
                length_of = t
                if t.kind == "dynamic_array":
                    text = f"{sub}: the length of {here} is the whole word at slot {show(slot)}"
                else:
                    text = (f"{sub}: the length of {here} is encoded at slot {show(slot)} "
                            "(short form: lowest byte = 2·length; long form: word = 2·length+1)")
                steps.append(Step("length", text, {"slot": hex32(slot)}))
            elif t.kind == "mapping":
                raise UsageError(f"{p.text}: {here} is a mapping; index it with [key] "
                                 f"(column {step.col})")
            else:
                hint = " (only dynamic arrays, bytes and string have .length)" \
                    if step.name == "length" else ""
                raise UsageError(f"{p.text}: {here} is a {t.label} and has no member "
                                 f"{step.name!r} at column {step.col}{hint}")
            continue
        # IndexStep
        if t.kind == "mapping":
            kt = layout.type(t.key)
            kb = key_preimage(kt, step.key, layout.underlying(kt))
            preimage = kb + slot.to_bytes(32, "big")
            new = int.from_bytes(keccak(preimage), "big")
            hashed = kt.kind in ("bytes", "string")
            form = "key" if hashed else "pad32(key)"
            steps.append(Step(
                "mapping",
                f"{sub}: keccak256({form} ‖ pad32(slot)) = keccak256(0x{kb.hex()} ‖ "
                f"{hex32(slot)}) = {hex32(new)}",
                {"key": step.key.text, "keyType": kt.label, "keyBytes": "0x" + kb.hex(),
                 "base": hex32(slot), "preimage": "0x" + preimage.hex(), "slot": hex32(new)},
            ))
            slot, offset, t = new, 0, layout.type(t.value)
        elif t.kind == "static_array":
            i = _index(step, p, t.label)
            if i >= t.length:
                raise UsageError(f"{p.text}: index {i} at column {step.key.col} is out of bounds "
                                 f"for {t.label} (length {t.length})")
            slot, offset, s = _element(layout, t, slot, i, sub)
            steps.append(s)
            t = layout.type(t.base)
        elif t.kind == "dynamic_array":
            i = _index(step, p, t.label)
            checks.append(BoundCheck(here, slot, i))
            data = int.from_bytes(keccak(slot.to_bytes(32, "big")), "big")
            steps.append(Step(
                "array-data",
                f"{sub}: data of {here} starts at keccak256(pad32(slot)) = "
                f"keccak256({hex32(slot)}) = {hex32(data)} (index < proven length of {here}, "
                "checked at read time)",
                {"base": hex32(slot), "slot": hex32(data), "lengthSlot": hex32(slot)},
            ))
            slot, offset, s = _element(layout, t, data, i, sub)
            steps.append(s)
            t = layout.type(t.base)
        else:
            raise UsageError(f"{p.text}: {here} is a {t.label} and cannot be indexed "
                             f"(column {step.col})")
    if length_of is not None:
        return Location(p.text, t, slot, 0, 32, tuple(steps), tuple(checks), length_of)
    if t.is_value:
        steps.append(Step(
            "value",
            f"value: bytes [{offset}, {offset + t.size}) of slot {show(slot)}, counted from "
            f"the low-order end ({t.label})",
            {"slot": hex32(slot), "offset": offset, "size": t.size},
        ))
    return Location(p.text, t, slot, offset, t.size, tuple(steps), tuple(checks))
