"""``recompute recipes`` and ``recompute step RECIPE``."""

from __future__ import annotations

import sys
from typing import Any

import click

from recompute.cli import cli
from recompute.cli.complete import complete_layout, complete_recipe
from recompute.cli.flags import cli_outcome
from recompute.cli.human_format import checksum, plain
from recompute.cli.options import Chain, chain_options, unique_pairs
from recompute.cli.report import anchor_lines, emit
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.hexdata import parse_address
from recompute.core.jsontext import json_document
from recompute.core.outcome import Outcome, block_evidence
from recompute.evaluator.job import step
from recompute.evaluator.reference import reference_step
from recompute.layout import Layout, load_layout
from recompute.recipes.base import Recipe
from recompute.recipes.registry import get_recipe, load_recipes

RECIPES_OPTION = click.option(
    "--recipes", "recipe_paths", multiple=True, metavar="PATH",
    help="A module or folder of your own recipes (also $RECOMPUTE_RECIPES).")


@cli.command("recipes")
@click.argument("name_filter", metavar="[FILTER]", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@RECIPES_OPTION
def recipes_command(name_filter: str | None, as_json: bool, recipe_paths: tuple[str, ...]) -> None:
    """List every recipe (or those whose name contains FILTER) with its parameters and its
    short positional form."""
    recipes = {name: recipe for name, recipe in load_recipes(list(recipe_paths)).items()
               if not name_filter or name_filter.lower() in name.lower()}
    if name_filter and not recipes:
        raise UsageError(f"no recipe name contains {name_filter!r}; `recompute recipes` lists "
                         "them all")
    if as_json:
        click.echo(json_document({"recipes": [_recipe_json(r) for r in recipes.values()]},
                                 ascii=False))
        return
    for name, recipe in recipes.items():
        click.echo(f"{name}  {recipe.help}")
        click.echo(f"    default layout: {recipe.layout}    ({recipe.section})")
        for param in recipe.params:
            optional = "" if param.required and param.default is None else " (optional)"
            click.echo(f"    --param {param.name}=<{param.kind}>{optional}  {param.help}")
        click.echo(f"    short form: {_short_form(recipe)}")


def _short_form(recipe: Recipe) -> str:
    """``recompute step NAME RPC ADDRESS SUBJECT …`` (the thread's command line), then the
    required parameters that have no position as ``--param``."""
    rest = [f"--param {p.name}=<{p.kind}>" for p in recipe.params
            if p.required and p.default is None and p.name not in recipe.positional]
    return " ".join(["recompute step", recipe.name, "RPC", "ADDRESS",
                     *(n.upper() for n in recipe.positional), *rest])


def _recipe_json(recipe: Recipe) -> dict[str, Any]:
    return {
        "name": recipe.name, "help": recipe.help, "section": recipe.section,
        "layout": recipe.layout, "positional": list(recipe.positional),
        "short_form": _short_form(recipe),
        "params": [{"name": p.name, "kind": p.kind, "help": p.help,
                    "required": p.required and p.default is None,
                    "default": None if p.default is None else str(p.default)}
                   for p in recipe.params],
    }


@cli.command("step")
@click.argument("recipe_name", metavar="RECIPE", shell_complete=complete_recipe)
@click.argument("positional", nargs=-1, metavar="[RPC ADDRESS ARGS...]")
@chain_options
@click.option("--address", metavar="A", help="The registry's address.")
@click.option("--layout", "layout_name", metavar="L", shell_complete=complete_layout,
              help="Layout name or file (default: the recipe's reference layout).")
@click.option("--param", "params", multiple=True, metavar="K=V", help="A recipe parameter.")
@click.option("--expect", "expects", multiple=True, metavar="K=V",
              help="Expected derived value; the verdict is GOOD/BAD against it.")
@click.option("--compare-views", is_flag=True,
              help="Also call the registry's view functions and report disagreements.")
@click.option("--reference", is_flag=True,
              help="Prove every read the plain way (one request a round, no node cache): "
                   "slower, to cross-check the fast path.")
@RECIPES_OPTION
def step_command(recipe_name: str, positional: tuple[str, ...], chain: Chain, as_json: bool,
                 address: str | None, layout_name: str | None, params: tuple[str, ...],
                 expects: tuple[str, ...], compare_views: bool, reference: bool,
                 recipe_paths: tuple[str, ...]) -> None:
    """Run one recipe at one anchored block: prove, decode, re-derive, judge.

    The short form RECIPE RPC ADDRESS ARGS... (the ERC-8312 thread's command line) is the same
    as --rpc RPC --address ADDRESS --param NAME=ARG for the recipe's positional parameters,
    at --block latest unless a block is given.
    """
    recipe = get_recipe(recipe_name, list(recipe_paths))
    given = unique_pairs(params, "--param")
    if positional:
        chain, address = _positional(recipe, positional, chain, address, given)
    if address is None:
        raise UsageError("give --address A (or the short form RECIPE RPC ADDRESS ...)")
    contract = parse_address(address, "--address")
    layout = load_layout(layout_name or recipe.layout)
    parsed = recipe.parse_params(given)
    # before any node is asked
    expect = recipe.parse_expect(unique_pairs(expects, "--expect"), "--expect")
    evidence: dict[str, Any] = {"recipe": recipe.name}
    try:
        anchored = chain.anchor()
        evidence.update(block_evidence(anchored))
        run = reference_step if reference else step
        outcome = run(recipe, parsed, anchored, contract, layout, expect, compare_views)
    except Unverifiable as exc:
        sys.exit(emit(cli_outcome(exc, evidence), as_json))
    lines = anchor_lines(anchored)
    lines.append(f"{recipe.name} on {checksum(contract)} ({_read_through(outcome, layout)}): "
                 f"{len(outcome.evidence['reads'])} slot(s) in "
                 f"{outcome.evidence['proof_requests']} eth_getProof call(s), "
                 f"{outcome.evidence['receipts_proven']} block(s) of receipts")
    derived = outcome.evidence["derived"]
    width = max((len(key) for key in derived), default=0)
    lines += [f"    {key:<{width}} = {plain(value)}" for key, value in derived.items()]
    if compare_views:
        views = outcome.evidence.get("views", [])
        compared = [v for v in views if "skipped" not in v]
        disagreeing = sum(1 for v in compared if not v["agrees"])
        skipped = len(views) - len(compared)
        lines.append(f"views: {len(compared)} value(s) compared, {disagreeing} disagreed"
                     + (f", {skipped} skipped" if skipped else ""))
    lines += [f"bound: {bound}" for bound in outcome.evidence.get("bounds", [])]
    for finding in outcome.evidence["findings"]:
        if finding.get("finding") == "view-disagrees":
            lines.append(f"finding view-disagrees: {finding['view']} says "
                         f"{finding.get('value')} = {plain(finding.get('view_says'))}, "
                         f"storage says {plain(finding.get('storage_says'))}")
    for view in outcome.evidence.get("views", []):
        if view.get("compared") is False:
            lines.append(f"view {view['view']} not compared: the node would not call it "
                         f"({view['skipped']})")
    sys.exit(emit(outcome, as_json, lines))


def _read_through(outcome: Outcome, layout: Layout) -> str:
    """What the reads went through: the layout, or raw slots when the recipe read no path of
    it (``8312/cap-conservation`` with ``cap:N`` or ``struct:S:A:C`` keys)."""
    reads = outcome.evidence["reads"]
    if reads and all(str(read.get("path", "")).startswith("slot:") for read in reads):
        return "raw slots, no layout"
    return f"layout {layout.name}"


def _positional(recipe: Recipe, positional: tuple[str, ...], chain: Chain, address: str | None,
                given: dict[str, str]) -> tuple[Chain, str | None]:
    args = list(positional)
    if not chain.rpcs and args and args[0].startswith(("http://", "https://")):
        chain = chain.with_(rpcs=(args.pop(0),))
    if address is None and args and args[0].startswith("0x") and len(args[0]) == 42:
        address = args.pop(0)
    if len(args) > len(recipe.positional):
        names = " ".join(n.upper() for n in recipe.positional) or "no further arguments"
        raise UsageError(f"{recipe.name} takes RPC ADDRESS {names}; got {len(args)} more "
                         "argument(s) than that")
    for name, value in zip(recipe.positional, args, strict=False):
        if name in given:
            raise UsageError(f"{name} is given both as an argument and as --param {name}=")
        given[name] = value
    if chain.block is None and chain.block_hash is None and chain.light_client() is None:
        chain = chain.with_(block="latest")  # (with --beacon the light client's finalized)
    return chain, address


def step_main() -> None:
    """The ``recompute-step`` command: ``recompute step`` under the name the thread uses."""
    from recompute.cli import main

    main(["step", *sys.argv[1:]])
