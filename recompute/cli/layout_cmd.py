"""``recompute layout import|show|slot`` (docs/design.md §Module map).

- ``import INPUT [--contract SOURCE:NAME] [--compiler V] [--solc PATH] -o OUT.json``: a
  descriptor from solc output (bare storageLayout, build artifact, or standard-JSON output),
  or compiled from verified source;
- ``show LAYOUT``: every state variable with slot, byte offset, size and type;
- ``slot LAYOUT PATH``: where a path lives and each step of the derivation.

LAYOUT is a bundled name (``layouts/<name>.json``) or a descriptor file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from recompute.cli import cli
from recompute.cli.complete import complete_layout
from recompute.cli.report import say
from recompute.core.errors import UsageError
from recompute.core.jsontext import json_document
from recompute.disk.whole_file import write_whole
from recompute.layout import Layout, import_layout, load_layout, resolve, verified_source
from recompute.layout.resolve import hex32, show
from recompute.layout.types import (
    BytesType,
    DynamicArrayType,
    MappingType,
    StaticArrayType,
    StructType,
    TypeInfo,
)


@cli.group("layout")
def layout_group() -> None:
    """Storage-layout descriptors: import from solc output, show, derive slots."""


@layout_group.command("import")
@click.argument("input_path", metavar="INPUT")
@click.option("--contract", "-c", metavar="SOURCE:NAME",
              help="Which contract of a standard-JSON output (or name a bare storageLayout).")
@click.option("--compiler", metavar="VERSION",
              help="Compiler version to record when the input does not state it.")
@click.option("-o", "--out", "out", required=True, metavar="OUT.json",
              help="Where to write the descriptor ('-' for stdout).")
@click.option("--solc", "solc", metavar="PATH",
              help="Verified source: the solc-js package (or node_modules folder holding it) to "
                   "compile with, instead of $RECOMPUTE_SOLC or recompute's checked cache.")
def import_cmd(input_path: str, contract: str | None, compiler: str | None, out: str,
               solc: str | None) -> None:
    """Turn solc's storageLayout output into a recompute layout descriptor, or compile verified
    source into one: a Sourcify folder (metadata.json + sources/) or a saved Etherscan
    getsourcecode answer, with exactly the compiler and settings they name."""
    kind = verified_source.detect(Path(input_path))
    if kind is not None:
        layout = _import_verified(Path(input_path), kind, contract, compiler, solc)
    else:
        layout = import_layout(Path(input_path), contract=contract, compiler=compiler)
    text = layout.dumps()
    if out == "-":
        sys.stdout.write(text)
        return
    try:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_whole(out, text, named=True, encoding="ascii")
    except OSError as exc:
        raise UsageError(f"{out}: cannot write ({exc.strerror or exc})") from None
    say(f"wrote {out}: {layout.contract}, {len(layout.variables)} state variables", err=True)


def _import_verified(path: Path, kind: str, contract: str | None, compiler: str | None,
                     solc: str | None) -> Layout:
    if kind == "sourcify":
        source = verified_source.load_sourcify(path)
    else:
        source = verified_source.load_etherscan(path, contract)
    if source.target is None:  # both loaders name one; compile_storage_layout's own check
        raise UsageError(f"{source.origin}: no contract to compile was named")
    target = ":".join(source.target)
    if kind == "sourcify" and contract is not None and contract not in (target,
                                                                        source.target[1]):
        raise UsageError(f"{path}: the verified contract is {target}, not {contract}")
    if compiler is not None and compiler.removeprefix("v") not in (source.version,
                                                                   source.compiler):
        raise UsageError(f"{path}: the source names compiler {source.compiler}, not {compiler}")
    storage_layout, ran = verified_source.compile_storage_layout(source, solc)
    provenance = {"kind": kind, "compiler": ran, "settings_sha256": source.settings_sha256(),
                  "target": target}
    return import_layout(storage_layout, contract=target, compiler=ran, origin=str(path),
                         provenance=provenance)


@layout_group.command("show")
@click.argument("layout_name", metavar="LAYOUT", shell_complete=complete_layout)
@click.option("--depth", type=click.IntRange(0, 16), default=0, show_default=True,
              help="Expand struct members this many levels deep (their slots are absolute).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show_cmd(layout_name: str, depth: int, as_json: bool) -> None:
    """Every state variable with its slot, byte offset, size and type."""
    layout = load_layout(layout_name)
    rows: list[dict[str, Any]] = []
    for v in layout.variables:
        t = layout.type(v.type_id)
        row: dict[str, Any] = {"name": v.label, "slot": str(v.slot), "offset": v.offset,
                               "size": t.size, "type": t.label, "typeId": t.id}
        if depth:
            row["members"] = _members(layout, t, v.slot, depth)
        rows.append(row)
    if as_json:
        click.echo(json_document({"contract": layout.contract, "compiler": layout.compiler,
                                  "variables": rows}))
        return
    say(f"{layout.contract}  (compiler {layout.compiler or 'unknown'})")
    flat: list[tuple[str, str, str, str, str]] = []

    def add(row: dict[str, Any], level: int) -> None:
        slot = row["slot"] if row["slot"].startswith("+") else show(int(row["slot"]))
        name = row["name"] if not level or row["name"].startswith("[") else "." + row["name"]
        flat.append((slot, str(row["offset"]), str(row["size"]), "  " * level + name,
                     row["type"]))
        for member in row.get("members", []):
            add(member, level + 1)

    for row in rows:
        add(row, 0)
    width = max([4] + [len(r[0]) for r in flat])
    name_width = max([20] + [len(r[3]) for r in flat])
    say(f"{'slot':>{width}}  offset  size  {'name':<{name_width}}  type")
    for slot, offset, size, name, type_label in flat:
        say(f"{slot:>{width}}  {offset:>6}  {size:>4}  {name:<{name_width}}  {type_label}")


def _members(layout: Layout, t: TypeInfo, base_slot: int | None, depth: int,
             prefix: str = "") -> list[dict[str, Any]]:
    """A struct's members (recursively to ``depth``), each at its absolute slot; through a
    mapping's value (``[key]``) or an array's element (``[i]``) the slots are relative to the
    entry's own slot (``+N``), which depends on the key or index (``layout slot`` derives it)."""
    if depth < 1:
        return []
    if isinstance(t, MappingType):
        return _members(layout, layout.type(t.value), None, depth, prefix + "[key]")
    if isinstance(t, StaticArrayType | DynamicArrayType):
        return _members(layout, layout.type(t.base), None, depth, prefix + "[i]")
    if not isinstance(t, StructType):
        return []
    out = []
    for m in t.members:
        mt = layout.type(m.type_id)
        slot = str((base_slot + m.slot) % (1 << 256)) if base_slot is not None else f"+{m.slot}"
        row: dict[str, Any] = {"name": prefix + "." + m.label if prefix else m.label, "slot": slot,
               "offset": m.offset, "size": mt.size, "type": mt.label, "typeId": mt.id}
        if depth > 1:
            inner = _members(layout, mt, (base_slot + m.slot) % (1 << 256)
                             if base_slot is not None else None, depth - 1)
            if inner:
                row["members"] = inner
        out.append(row)
    return out


@layout_group.command("slot")
@click.argument("layout_name", metavar="LAYOUT", shell_complete=complete_layout)
@click.argument("path", metavar="PATH")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def slot_cmd(layout_name: str, path: str, as_json: bool) -> None:
    """Where PATH lives: slot, byte offset, size, and each derivation step."""
    layout = load_layout(layout_name)
    loc = resolve(layout, path)
    if as_json:
        click.echo(json_document(loc.to_json(), ascii=False))
        return
    say(f"path    {loc.path}")
    say(f"type    {loc.type_label}")
    click.echo(f"slot    {hex32(loc.slot)}" + (f"  ({loc.slot})" if loc.slot < 1 << 64 else ""))
    click.echo(f"offset  {loc.offset}")
    click.echo(f"size    {loc.size}")
    if isinstance(loc.type, BytesType) and loc.length_of is None:
        click.echo("note    bytes/string: if the length is 32 or more the data lives at "
                   "keccak256(slot) onwards (decided at read time)")
    if isinstance(loc.type, DynamicArrayType) and loc.length_of is None:
        click.echo("note    a whole dynamic array reads its length at this slot, then the "
                   "elements from keccak256(slot)")
    click.echo("steps")
    for i, step in enumerate(loc.steps, 1):
        say(f"  {i}. {step.text}")
    for c in loc.checks:
        say(f"bound   index {c.index} < length of {c.array} (the word at slot "
            f"{show(c.length_slot)}): checked against the proven length at read time")
