"""Layout descriptors: load, validate, import from solc output, serialise.

A descriptor is solc's own ``storageLayout`` (the ``storage`` list in declaration and
inheritance order, and the ``types`` table, as solc reports them) plus a header
(``layouts/schema.json``)::

    {"format": "recompute-layout/1", "contract": "SOURCE:NAME", "compiler": "0.8.x+...",
     "storage": [...], "types": {...}}

Serialisation is deterministic (sorted keys, indent 2, ASCII, trailing newline), so importing
the same solc output twice gives byte-identical files (docs/design.md §Layouts: ``layouts/``
descriptor files, generated from solc's ``storageLayout`` output, one per contract).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from recompute.core.boundedjson import load_file
from recompute.core.errors import OptionError, UsageError
from recompute.core.jsontext import json_document
from recompute.data import LAYOUTS
from recompute.layout.solc_output import read as read_solc_output
from recompute.layout.types import (
    KEY_KINDS,
    DynamicArrayType,
    MappingType,
    Member,
    StaticArrayType,
    StructType,
    TypeInfo,
    ValueKind,
    ValueType,
    array_slots,
    parse_member,
    parse_type,
    references,
    value_kind,
)

FORMAT = "recompute-layout/1"
HEADER_KEYS = ("format", "contract", "compiler", "storage", "types", "provenance")
# provenance (optional): where an imported layout came from, e.g. {"kind": "sourcify",
# "compiler": "0.8.26+commit.8a97fa7a", "settings_sha256": "…"} (layout import of verified
# source, recompute/layout/verified_source.py)
PROVENANCE_KEYS = ("kind", "compiler", "settings_sha256", "target")
OPTIONAL_KEYS = ("runtimeCodeHash",)  # keccak256 of the runtime code the layout is for


@dataclass(frozen=True)
class Layout:
    """A validated descriptor. ``document`` is its normalised JSON form; ``digest`` the sha256
    of its canonical text, which names it exactly (two layouts of one contract name differ)."""

    contract: str | None
    compiler: str | None
    variables: tuple[Member, ...]
    types: Mapping[str, TypeInfo]
    document: dict[str, Any] = field(repr=False)
    origin: str = "<layout>"

    def type(self, type_id: str) -> TypeInfo:
        return self.types[type_id]

    def underlying(self, t: TypeInfo) -> ValueType | None:
        """The value type a user-defined value type wraps, if the descriptor states it."""
        if not isinstance(t, ValueType) or t.kind is not ValueKind.UDVT or t.underlying is None:
            return None
        return _underlying_type(t, self.origin)

    def variable(self, label: str) -> Member:
        found = [v for v in self.variables if v.label == label]
        if not found:
            names = ", ".join(v.label for v in self.variables) or "none"
            raise UsageError(f"unknown variable {label!r} in {self.name} (variables: {names})")
        if len(found) > 1:
            where = ", ".join(f"slot {v.slot} ({v.contract})" for v in found)
            raise UsageError(f"variable {label!r} is ambiguous in {self.name}: {where}")
        return found[0]

    @property
    def name(self) -> str:
        return self.contract or self.origin

    @cached_property
    def digest(self) -> str:
        # computed once per descriptor: ``document`` is never altered after validation, and
        # the watch groups every check's reads by it, round after round
        return hashlib.sha256(self.dumps().encode()).hexdigest()

    @cached_property
    def runtime_code_hash(self) -> bytes | None:
        """The runtime code hash the descriptor says it was generated for, if it says."""
        text = self.document.get("runtimeCodeHash")
        return bytes.fromhex(text[2:]) if text else None

    def dumps(self) -> str:
        return dumps(self.document)


def dumps(document: dict[str, Any]) -> str:
    """The canonical text of a descriptor: sorted keys, indent 2, ASCII, trailing newline."""
    return json_document(document, sort_keys=True) + "\n"


_NOT_UNDERLYING = (ValueKind.UDVT, ValueKind.FUNCTION_INTERNAL, ValueKind.FUNCTION_EXTERNAL)


def _underlying_type(t: ValueType, origin: str) -> ValueType:
    assert t.underlying is not None
    kind, bits = value_kind(t.underlying, t.underlying)
    if kind in _NOT_UNDERLYING or (bits is not None and bits != t.size * 8):
        raise UsageError(
            f"{origin}: types[{t.id!r}] underlying {t.underlying!r} is not a {t.size}-byte "
            "elementary value type"
        )
    return ValueType(t.underlying, t.underlying.removeprefix("t_"), t.size, kind)


def _check_place(m: Member, types: Mapping[str, TypeInfo], where: str, origin: str) -> None:
    if m.type_id not in types:
        raise UsageError(f"{origin}: {where} ({m.label}) refers to unknown type {m.type_id!r}")
    t = types[m.type_id]
    if isinstance(t, ValueType):
        if m.offset + t.size > 32:
            raise UsageError(
                f"{origin}: {where} ({m.label}) offset {m.offset} + {t.size} bytes crosses "
                "the slot boundary"
            )
    elif m.offset != 0:
        raise UsageError(f"{origin}: {where} ({m.label}) a {t.kind} must start a slot (offset 0)")


def _header(document: Any, origin: str) -> tuple[str | None, str | None, list[Any], dict[str, Any]]:
    if not isinstance(document, dict):
        raise UsageError(f"{origin}: a layout descriptor must be a JSON object")
    if document.get("format") != FORMAT:
        raise UsageError(
            f"{origin}: not a {FORMAT} descriptor (format = {document.get('format')!r:.60}); "
            "create one with `recompute layout import`"
        )
    unknown = sorted(set(document) - set(HEADER_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise UsageError(f"{origin}: unknown top-level keys {unknown}"[:300])
    contract = document.get("contract")
    if contract is not None and (not isinstance(contract, str) or ":" not in contract):
        raise UsageError(f"{origin}: contract must be 'SOURCE:NAME', got {contract!r:.80}")
    compiler = document.get("compiler")
    if compiler is not None and not isinstance(compiler, str):
        raise UsageError(f"{origin}: compiler must be a string or null")
    provenance = document.get("provenance")
    if provenance is not None and (
        not isinstance(provenance, dict) or set(provenance) - set(PROVENANCE_KEYS)
        or not all(isinstance(v, str) and len(v) <= 1024 for v in provenance.values())
    ):
        raise UsageError(f"{origin}: provenance must be an object of strings with keys among "
                         f"{', '.join(PROVENANCE_KEYS)}")
    code_hash = document.get("runtimeCodeHash")
    if code_hash is not None and not (isinstance(code_hash, str) and re.fullmatch(
            r"0x[0-9a-f]{64}", code_hash)):
        raise UsageError(f"{origin}: runtimeCodeHash must be 0x and 64 lower-case hex digits")
    storage_raw = document.get("storage")
    types_raw = document.get("types")
    if not isinstance(storage_raw, list):
        raise UsageError(f"{origin}: 'storage' must be a list")
    if not isinstance(types_raw, dict):
        raise UsageError(f"{origin}: 'types' must be an object")
    return contract, compiler, storage_raw, types_raw


def parse_descriptor(document: Any, origin: str = "<layout>") -> Layout:
    """Validate a descriptor document and build a :class:`Layout`; UsageError on any defect."""
    contract, compiler, storage_raw, types_raw = _header(document, origin)
    types = {tid: parse_type(tid, raw, origin) for tid, raw in types_raw.items()}
    variables = tuple(
        parse_member(v, f"storage[{i}]", origin) for i, v in enumerate(storage_raw)
    )
    for i, v in enumerate(variables):
        _check_place(v, types, f"storage[{i}]", origin)
    _check_no_cycle(types, origin)
    for t in types.values():
        _check_type(t, types, origin)
    for t in types.values():  # after the structs, so a wrong struct size is named as such
        if isinstance(t, StaticArrayType):
            need = array_slots(types[t.base], t.length) * 32
            if need != t.size:
                raise UsageError(
                    f"{origin}: types[{t.id!r}] {t.length} elements of {types[t.base].label} "
                    f"take {need} bytes, not numberOfBytes {t.size}"
                )
    return Layout(contract, compiler, variables, types, _normalise(document, types), origin)


def _check_type(t: TypeInfo, types: Mapping[str, TypeInfo], origin: str) -> None:
    """References exist, mapping keys are key types, struct members fit the struct."""
    where = f"types[{t.id!r}]"
    if isinstance(t, StructType):
        for j, m in enumerate(t.members):
            _check_place(m, types, f"{where}.members[{j}]", origin)
    for ref in references(t):
        if ref not in types:
            raise UsageError(f"{origin}: {where} refers to unknown type {ref!r:.120}")
    match t:
        case MappingType(key=key) if types[key].kind not in KEY_KINDS:
            raise UsageError(f"{origin}: {where} a {types[key].kind} cannot be a mapping key")
        case ValueType(kind=ValueKind.UDVT, underlying=str()):
            _underlying_type(t, origin)
        case StructType(members=members):
            end = max(m.slot + _slots_of(types[m.type_id]) for m in members)
            if end * 32 != t.size:
                raise UsageError(
                    f"{origin}: {where} members span {end} slots but numberOfBytes is {t.size}"
                )


def _slots_of(t: TypeInfo) -> int:
    return 1 if isinstance(t, ValueType) else t.size // 32


def _in_place(t: TypeInfo) -> tuple[str, ...]:
    """The types laid out *inside* ``t`` (struct members, a static array's elements): a type
    reached again only through these would occupy infinite storage."""
    match t:
        case StructType(members=members):
            return tuple(m.type_id for m in members)
        case StaticArrayType(base=base):
            return (base,)
        case _:
            return ()


def _check_no_cycle(types: Mapping[str, TypeInfo], origin: str) -> None:
    """No type may contain itself in place. Solidity allows a type to refer to itself only
    through storage laid out elsewhere (``struct S { S[] children; mapping(uint => S) m; }``);
    a struct holding itself, or a static array holding itself, directly or through other
    in-place types, cannot come from solc and would make sizing or reading it endless, so it is
    refused here. So is a dynamic array whose element is itself. The search is iterative, so a
    crafted chain of types cannot exhaust the stack."""
    for t in types.values():
        if isinstance(t, DynamicArrayType) and t.base == t.id:
            raise UsageError(f"{origin}: types[{t.id!r}] contains itself (an array of itself)")
    done: set[str] = set()
    for start in types:
        if start in done:
            continue
        path = [start]
        stack = [iter(_in_place(types[start]))]
        while stack:
            ref = next(stack[-1], None)
            if ref is None:
                stack.pop()
                done.add(path.pop())
            elif ref in path:
                cycle = [*path[path.index(ref):], ref]
                raise UsageError(f"{origin}: types[{ref!r}] contains itself "
                                 f"({' → '.join(cycle)})"[:400])
            elif ref in types and ref not in done:  # an unknown one is named by _check_type
                path.append(ref)
                stack.append(iter(_in_place(types[ref])))


def _normalise(document: dict[str, Any], parsed: Mapping[str, TypeInfo]) -> dict[str, Any]:
    """Numbers as solc writes them: slot and numberOfBytes decimal strings, offset an int."""

    def place(m: dict[str, Any]) -> dict[str, Any]:
        out = dict(m)
        out["slot"] = str(int(m["slot"]))
        out["offset"] = int(m["offset"])
        return out

    types = {}
    for tid, raw in document["types"].items():
        entry = dict(raw)
        entry["numberOfBytes"] = str(int(raw["numberOfBytes"]))
        if isinstance(parsed[tid], StructType):
            entry["members"] = [place(m) for m in raw["members"]]
        types[tid] = entry
    out = {
        "format": FORMAT,
        "contract": document.get("contract"),
        "compiler": document.get("compiler"),
        "storage": [place(v) for v in document["storage"]],
        "types": types,
    }
    if document.get("provenance") is not None:
        out["provenance"] = dict(document["provenance"])
    if document.get("runtimeCodeHash") is not None:
        out["runtimeCodeHash"] = document["runtimeCodeHash"]
    return out


# --- loading -------------------------------------------------------------------------------

def bundled_layouts() -> list[str]:
    not_layouts = ("schema.json", "sources.json")
    return sorted(p.stem for p in LAYOUTS.glob("*.json") if p.name not in not_layouts)


def _read_json(path: Path) -> Any:
    return load_file(path, str(path), UsageError)


def load_layout(name_or_path: str | Path) -> Layout:
    """A bundled descriptor by name, or a descriptor file by path.

    The two never overlap, so a file cannot hijack a bundled name: a string with no ``/`` that
    does not end in ``.json`` is always a bundled name (a file of that name in the working
    directory is ignored); anything else (a :class:`~pathlib.Path`, a string with a ``/`` or
    ending ``.json``) is always a file. Give ``./NAME`` to mean a file without a suffix.
    """
    text = str(name_or_path)
    is_name = isinstance(name_or_path, str) and "/" not in text and not text.endswith(".json")
    if not is_name:
        path = Path(text)
        return parse_descriptor(_read_json(path), str(path))
    known = bundled_layouts()
    if text not in known:  # a name is looked up, never made a path (too long, a NUL: no OSError)
        raise UsageError(f"no bundled layout {text[:100]!r} (bundled: "
                         f"{', '.join(known) or 'none'}); give a descriptor file as a path "
                         "(with a / or ending .json)")
    bundled = LAYOUTS / f"{text}.json"
    return parse_descriptor(_read_json(bundled), f"bundled layout {text}")


# --- importing solc output (recompute/layout/solc_output.py reads its shapes) ----------

def import_layout(input_json: Any, contract: str | None = None, compiler: str | None = None,
                  origin: str | None = None, provenance: dict[str, str] | None = None) -> Layout:
    """Build a descriptor from solc output.

    ``input_json`` is the parsed JSON (or a path to it) of one of: a bare storageLayout
    (``{"storage", "types"}``, what ``forge inspect C storageLayout --json`` prints); a build
    artifact with a ``storageLayout`` key (``contracts/build.mjs``, Hardhat, Foundry); a
    full solc standard-JSON output, ``solc --combined-json storage-layout`` output or a
    Hardhat build-info (``contract`` "SOURCE:NAME" selects one). ``compiler``
    supplies the compiler version when the input does not state it.
    """
    doc, where = _input_object(input_json, origin)
    found = read_solc_output(doc, contract, where)  # every field it reads, type-checked
    name = found.contract
    if name is None:
        raise OptionError("{where}: cannot tell which contract this layout belongs to; pass "
                          "{contract} SOURCE:NAME", ("contract",), where=where)
    if ":" not in name:
        raise UsageError(f"{where}: contract must be given as SOURCE:NAME, got {name!r:.120}")
    if compiler is not None and found.compiler is not None and compiler != found.compiler:
        raise UsageError(f"{where}: compiled by {found.compiler:.80}, not {compiler}")
    document = {
        "format": FORMAT,
        "contract": name,
        "compiler": compiler or found.compiler,
        "storage": found.storage,
        "types": found.types,
    }
    if provenance is not None:
        document["provenance"] = provenance
    return parse_descriptor(document, where)


def _input_object(input_json: Any, origin: str | None) -> tuple[Any, str]:
    """The parsed JSON (read from the file when given a path) and its origin."""
    if isinstance(input_json, (str, Path)):
        origin = origin or str(input_json)
        input_json = _read_json(Path(input_json))
    return input_json, origin or "<input>"


