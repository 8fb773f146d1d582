"""``recompute recipes`` and ``recompute step RECIPE``."""

from __future__ import annotations

import sys

import click

from recompute.cli import cli
from recompute.cli.options import anchored_block, chain_options
from recompute.cli.report import anchor_lines, emit
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.hexdata import parse_address
from recompute.core.outcome import Outcome, block_evidence
from recompute.layout import load_layout
from recompute.recipes.framework import get_recipe, load_recipes
from recompute.recipes.runner import step

RECIPES_OPTION = click.option(
    "--recipes", "recipe_paths", multiple=True, metavar="PATH",
    help="A module or folder of your own recipes (also $RECOMPUTE_RECIPES).")


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise UsageError(f"{option} {text!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


@cli.command("recipes")
@RECIPES_OPTION
def recipes_command(recipe_paths):
    """List every recipe with its parameters."""
    for name, recipe in load_recipes(list(recipe_paths)).items():
        click.echo(f"{name}  {recipe.help}")
        click.echo(f"    default layout: {recipe.layout}    ({recipe.section})")
        for param in recipe.params:
            optional = "" if param.required and param.default is None else " (optional)"
            click.echo(f"    --param {param.name}=<{param.kind}>{optional}  {param.help}")


@cli.command("step")
@click.argument("recipe_name", metavar="RECIPE")
@click.argument("positional", nargs=-1, metavar="[RPC ADDRESS ARGS...]")
@chain_options
@click.option("--address", metavar="A", help="The registry's address.")
@click.option("--layout", "layout_name", metavar="L",
              help="Layout name or file (default: the recipe's reference layout).")
@click.option("--param", "params", multiple=True, metavar="K=V", help="A recipe parameter.")
@click.option("--expect", "expects", multiple=True, metavar="K=V",
              help="Expected derived value; the verdict is GOOD/BAD against it.")
@click.option("--compare-views", is_flag=True,
              help="Also call the registry's view functions and report disagreements.")
@RECIPES_OPTION
def step_command(recipe_name, positional, rpcs, block, block_hash, quorum, checkpoint, as_json,
                 address, layout_name, params, expects, compare_views, recipe_paths):
    """Run one recipe at one anchored block: prove, decode, re-derive, judge.

    The short form RECIPE RPC ADDRESS ARGS... (the ERC-8312 thread's command line) is the same
    as --rpc RPC --address ADDRESS --param NAME=ARG for the recipe's positional parameters,
    at --block latest unless a block is given.
    """
    recipe = get_recipe(recipe_name, list(recipe_paths))
    given = _pairs(params, "--param")
    if positional:
        rpcs, address, block = _positional(recipe, positional, rpcs, address, block, block_hash,
                                           given)
    if address is None:
        raise UsageError("give --address A (or the short form RECIPE RPC ADDRESS ...)")
    contract = parse_address(address)
    layout = load_layout(layout_name or recipe.layout)
    parsed = recipe.parse_params(given)
    expect = recipe.parse_expect(_pairs(expects, "--expect"))  # before any node is asked
    evidence: dict = {"recipe": recipe.name}
    try:
        anchored = anchored_block(rpcs, block, block_hash, quorum, checkpoint)
        evidence.update(block_evidence(anchored))
        outcome = step(recipe, parsed, anchored, contract, layout, expect, compare_views)
    except Unverifiable as exc:
        sys.exit(emit(Outcome.unverifiable(exc, evidence), as_json))
    lines = anchor_lines(anchored)
    lines.append(f"{recipe.name} on 0x{contract.hex()} (layout {layout.name}): "
                 f"{len(outcome.evidence['reads'])} slot(s) in "
                 f"{outcome.evidence['proof_requests']} eth_getProof call(s), "
                 f"{outcome.evidence['receipts_proven']} block(s) of receipts")
    for key, value in outcome.evidence["derived"].items():
        lines.append(f"    {key} = {value}")
    for finding in outcome.evidence["findings"]:
        if finding.get("finding") == "view-disagrees":
            lines.append(f"finding view-disagrees: {finding['view']} says "
                         f"{finding.get('value')} = {finding.get('view_says')}, "
                         f"storage says {finding.get('storage_says')}")
    for view in outcome.evidence.get("views", []):
        if view.get("compared") is False:
            lines.append(f"view {view['view']} not compared: the node would not call it "
                         f"({view['skipped']})")
    sys.exit(emit(outcome, as_json, lines))


def _positional(recipe, args, rpcs, address, block, block_hash, given):
    args = list(args)
    if not rpcs and args and args[0].startswith(("http://", "https://")):
        rpcs = (args.pop(0),)
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
    if block is None and block_hash is None:
        block = "latest"
    return rpcs, address, block


def step_main() -> None:
    """The ``recompute-step`` command: ``recompute step`` under the name the thread uses."""
    from recompute.cli import main

    main(["step", *sys.argv[1:]])
