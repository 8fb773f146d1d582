"""``recompute layout import|show|slot`` (docs/design.md §Module map).

- ``import INPUT [--contract SOURCE:NAME] [--compiler V] -o OUT.json``: a descriptor from
  solc output (bare storageLayout, build artifact, or standard-JSON output);
- ``show LAYOUT``: every state variable with slot, byte offset, size and type;
- ``slot LAYOUT PATH``: where a path lives and each step of the derivation.

LAYOUT is a bundled name (``layouts/<name>.json``) or a descriptor file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from recompute.cli import cli
from recompute.core.errors import UsageError
from recompute.layout import import_layout, load_layout, resolve
from recompute.layout.resolve import hex32, show
from recompute.layout.types import BytesType, DynamicArrayType


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
def import_cmd(input_path: str, contract: str | None, compiler: str | None, out: str) -> None:
    """Turn solc's storageLayout output into a recompute layout descriptor."""
    layout = import_layout(Path(input_path), contract=contract, compiler=compiler)
    text = layout.dumps()
    if out == "-":
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text, encoding="ascii")
    except OSError as exc:
        raise UsageError(f"{out}: cannot write ({exc.strerror or exc})") from None
    click.echo(f"wrote {out}: {layout.contract}, {len(layout.variables)} state variables", err=True)


@layout_group.command("show")
@click.argument("layout_name", metavar="LAYOUT")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show_cmd(layout_name: str, as_json: bool) -> None:
    """Every state variable with its slot, byte offset, size and type."""
    layout = load_layout(layout_name)
    rows = []
    for v in layout.variables:
        t = layout.type(v.type_id)
        rows.append({"name": v.label, "slot": str(v.slot), "offset": v.offset, "size": t.size,
                     "type": t.label, "typeId": t.id})
    if as_json:
        click.echo(json.dumps({"contract": layout.contract, "compiler": layout.compiler,
                               "variables": rows}, indent=2))
        return
    click.echo(f"{layout.contract}  (compiler {layout.compiler or 'unknown'})")
    width = max([4] + [len(show(v.slot)) for v in layout.variables])
    click.echo(f"{'slot':>{width}}  offset  size  {'name':<20}  type")
    for r, v in zip(rows, layout.variables, strict=True):
        click.echo(f"{show(v.slot):>{width}}  {r['offset']:>6}  {r['size']:>4}  "
                   f"{r['name']:<20}  {r['type']}")


@layout_group.command("slot")
@click.argument("layout_name", metavar="LAYOUT")
@click.argument("path", metavar="PATH")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def slot_cmd(layout_name: str, path: str, as_json: bool) -> None:
    """Where PATH lives: slot, byte offset, size, and each derivation step."""
    layout = load_layout(layout_name)
    loc = resolve(layout, path)
    if as_json:
        click.echo(json.dumps(loc.to_json(), indent=2, ensure_ascii=False))
        return
    click.echo(f"path    {loc.path}")
    click.echo(f"type    {loc.type_label}")
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
        click.echo(f"  {i}. {step.text}")
    for c in loc.checks:
        click.echo(f"bound   index {c.index} < length of {c.array} (the word at slot "
                   f"{show(c.length_slot)}): checked against the proven length at read time")
