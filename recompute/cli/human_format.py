"""Values as a person reads them: checksummed addresses, values formatted by their type, aligned
tables, never a Python repr. ``--json`` output does not come through here (it is unchanged).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from recompute.core.hexdata import eip55
from recompute.core.jsontext import json_text, shown_json
from recompute.core.outside_text import visible
from recompute.layout.types import DynamicArrayType, StaticArrayType, StructType

if TYPE_CHECKING:
    from recompute.layout.descriptor import Layout
    from recompute.layout.types import TypeInfo

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}\Z")


def checksum(address: str | bytes) -> str:
    """EIP-55 mixed-case checksum encoding: hex digit i is upper case when nibble i of
    keccak256(lowercase hex) is 8 or more."""
    text = address.hex() if isinstance(address, bytes) else address.lower().removeprefix("0x")
    if len(text) != 40:
        raise ValueError(f"not a 20-byte address: {address!r}")
    return "0x" + eip55(text)


def _role_name(text: str) -> str | None:
    """The name of an ERC-8447 reserved role id (32 bytes of 0x-hex), or None."""
    if len(text) != 66 or not text.startswith("0x"):
        return None
    from recompute.recipes.sai_registry import ROLE_NAMES  # only for a bytes32: cold imports

    return ROLE_NAMES.get(text.lower())


def plain(value: object) -> str:
    """A JSON-able value (derived values, findings) for a person."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        role = _role_name(value)
        if role:
            return f"{visible(value)} ({role})"
        return checksum(value) if _ADDRESS.match(value) else visible(value)
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    if isinstance(value, dict):  # a table keyed by ERC-8447 reserved roles: by their names
        return "{" + ", ".join(f"{_role_name(str(k)) or visible(str(k))}: {plain(v)}"
                               for k, v in value.items()) + "}"
    return visible(shown_json(value))


def _leaf(t: TypeInfo, value: object, layout: Layout) -> str:
    kind = t.kind
    if kind == "udvt":
        under = layout.underlying(t)
        return _leaf(under, value, layout) if under is not None else str(value)
    if kind in ("address", "contract"):
        return checksum(value) if isinstance(value, str) and _ADDRESS.match(value) else str(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind == "string":
        if isinstance(value, dict):  # {"hex": ..., "invalid_utf8": true}
            return f"{value.get('hex')} (not UTF-8)"
        return visible(json_text(value, ascii=False))
    return visible(value)  # numbers (already decimal text), 0x-hex bytes


def value_rows(layout: Layout, t: TypeInfo, path: str,
               value: object) -> list[tuple[str, str, str]]:
    """(path, type, value) rows for the JSON form of a decoded value of type ``t``: a struct
    is expanded into one row per member, an array into one row per element."""
    if isinstance(t, StructType) and isinstance(value, dict):
        rows: list[tuple[str, str, str]] = []
        for member in t.members:
            if member.label in value:
                rows += value_rows(layout, layout.type(member.type_id), f"{path}.{member.label}",
                                   value[member.label])
        return rows
    if isinstance(t, StaticArrayType | DynamicArrayType) and isinstance(value, list):
        base = layout.type(t.base)
        rows = []
        for i, element in enumerate(value):
            rows += value_rows(layout, base, f"{path}[{i}]", element)
        if not value:
            rows.append((path, t.label, "[] (empty)"))
        return rows
    return [(path, t.label, _leaf(t, value, layout))]


def table(rows: Sequence[tuple[object, ...]], headers: tuple[str, ...] | None = None,
          indent: str = "") -> list[str]:
    """Left-aligned columns, two spaces apart; the last column is never padded."""
    every = ([headers] if headers else []) + [tuple(map(str, r)) for r in rows]
    if not every:
        return []
    widths = [max(len(r[i]) for r in every) for i in range(len(every[0]) - 1)]
    out = []
    for row in every:
        cells = [cell.ljust(w) for cell, w in zip(row, widths, strict=False)] + [row[-1]]
        out.append((indent + "  ".join(cells)).rstrip())
    return out
