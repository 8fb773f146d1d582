"""``recompute vectors capture|verify``: pinned conformance vectors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from recompute.cli import cli
from recompute.cli.beacon_options import beacon_options, light_client_anchor
from recompute.cli.clock_options import current_clock
from recompute.cli.complete import complete_layout, complete_recipe
from recompute.cli.flags import cli_detail
from recompute.cli.l2_options import l2_options
from recompute.cli.options import Chain, single_rpc_options, unique_pairs
from recompute.cli.recipes_cmd import RECIPES_OPTION
from recompute.cli.report import say
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.hexdata import parse_address, parse_hash
from recompute.core.verdict import EXIT_UNVERIFIABLE
from recompute.data import VECTORS
from recompute.disk.whole_file import write_whole
from recompute.sources.live import LiveSource
from recompute.vectors import (
    capture_step,
    dumps,
    find_suites,
    load_json,
    peer_method_pinned,
    read_suite,
    tamper_counts,
    verify_paths,
)
from recompute.vectors.suite import add_to_suite


@cli.group("vectors")
def vectors_group() -> None:
    """Capture a step as a self-contained vector; verify vectors offline."""


@vectors_group.command("capture")
@click.argument("recipe_name", metavar="RECIPE", shell_complete=complete_recipe)
@single_rpc_options
@beacon_options
@l2_options
@click.option("--address", required=True, metavar="A")
@click.option("--layout", "layout_name", metavar="L", shell_complete=complete_layout)
@click.option("--param", "params", multiple=True, metavar="K=V")
@click.option("--expect", "expects", multiple=True, metavar="K=V")
@click.option("--name", metavar="NAME", help="The vector's name (default: the output's stem).")
@click.option("--description", default="", metavar="TEXT")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@RECIPES_OPTION
def capture_command(recipe_name: str, chain: Chain, address: str, layout_name: str | None,
                    params: tuple[str, ...], expects: tuple[str, ...], name: str | None,
                    description: str, out: Path, recipe_paths: tuple[str, ...]) -> None:
    """Run a step live and write everything it consumed as one vector file.

    A vector is always pinned by hash: give --block-hash H; or -b N|TAG and the node's hash
    for that block is pinned (said on stderr); or --beacon URL --trusted-root R and the light
    client's block (finalized unless -b says latest or N) is pinned; or --l2-portal (or
    --chain) with an L1 anchor, and the L2 block pinned through L1 is (docs/l2.md).
    """
    (source,) = _one_source(chain)
    parse_address(address, "--address")
    given, expect = unique_pairs(params, "--param"), unique_pairs(expects, "--expect")
    light_client = chain.light_client() if not chain.l2_options.given else None
    if chain.l2_options.given:
        try:
            anchored = chain.anchor()
        except Unverifiable as exc:
            click.echo(f"UNVERIFIABLE ({exc.reason}): {cli_detail(exc)}")
            sys.exit(EXIT_UNVERIFIABLE)
        pinned, game = anchored.hash, anchored.anchor.detail["game"]
        click.echo(f"pinning L2 block {anchored.number} 0x{pinned.hex()} through L1: game "
                   f"{game['address']}, tier {anchored.anchor.detail['tier']}", err=True)
    elif light_client is not None:
        if chain.block_hash is not None:
            raise UsageError("--beacon pins the block itself; give it or --block-hash, not both")
        try:
            pinned = light_client_anchor(source, light_client, chain.block,
                                         current_clock()).hash
        except Unverifiable as exc:
            click.echo(f"UNVERIFIABLE ({exc.reason}): {cli_detail(exc)}")
            sys.exit(EXIT_UNVERIFIABLE)
        click.echo(f"pinned by the light client: 0x{pinned.hex()}")
    elif chain.block_hash is not None:
        if chain.block is not None:
            raise UsageError("--block-hash pins the block itself; give it or -b/--block, not both")
        pinned = parse_hash(chain.block_hash, "--block-hash")
    elif chain.block is not None:
        anchored = chain.with_(rpcs=(source.label,)).anchor()
        pinned = anchored.hash
        click.echo(f"pinning block {anchored.number} 0x{pinned.hex()} as the node named it "
                   f"for --block {chain.block}", err=True)
    else:
        raise UsageError("give --block-hash H, -b/--block N|TAG (to pin the node's hash) or "
                         "--beacon URL --trusted-root R")
    vector = capture_step(recipe_name, given, address, layout_name, source.label, pinned,
                          expect, name or out.stem, description, list(recipe_paths),
                          timeout=chain.timeout())
    out.parent.mkdir(parents=True, exist_ok=True)
    write_whole(out, dumps(vector), named=True)
    click.echo(f"wrote {out}: {vector['expected']['verdict']} ({vector['expected']['reason']}), "
               f"{len(vector['proofs'])} proof answer(s), {len(vector['receipts'])} block(s) "
               "of receipts")


@vectors_group.command("verify")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--tamper", "do_tamper", is_flag=True,
              help="Also mutate every vector; pass only if every mutation makes it fail.")
def verify_command(paths: tuple[Path, ...], do_tamper: bool) -> None:
    """Replay vectors with no network (default: the bundled suite)."""
    files = list(paths) or [VECTORS]
    results = verify_paths(files)
    if not results:
        raise UsageError(f"no vector found in {', '.join(map(str, files))}")
    failed = 0
    for result in results:
        unlisted = (" (unlisted: no suite.json pins it; `recompute vectors add` does)"
                    if result.listed is False else "")
        if result.passed:
            say(f"PASS {result.name}{unlisted}")
        else:
            failed += 1
            named = result.name  # a peer suite's entry; a file's: the file to open and fix
            if result.file is not None:
                named = result.file if Path(result.file).stem == result.name else (
                    f"{result.file} ({result.name})")
            say(f"FAIL {named}{unlisted}: {result.detail}")
    undetected: list[str] = []
    if do_tamper:
        counts = tamper_counts(_loadable(_vector_files(files)))
        peers, peer_undetected = _peer_methods(files)
        undetected = counts.undetected + peer_undetected
        for line in undetected:
            say(f"UNDETECTED {line}")
        methods = counts.methods + peers
        told = counts.told_apart + peers - len(peer_undetected)
        click.echo(f"tamper: {counts.mutations} data mutation(s) tried, {counts.caught} caught; "
                   f"{methods} wrong method(s) tried, {told} told apart; {len(undetected)} "
                   "not detected")
    tail = f", {len(undetected)} not detected by tamper" if do_tamper else ""
    click.echo(f"{len(results) - failed} passed, {failed} failed{tail}")
    sys.exit(1 if failed or undetected else 0)


def _one_source(chain: Chain) -> list[LiveSource]:
    sources = chain.sources()
    if len(sources) != 1:
        raise UsageError("vectors capture asks one node: give one -r/--rpc-url")
    return sources


def _peer_methods(paths: list[Path]) -> tuple[int, list[str]]:
    """The peer aggregate-budget suites must tell the per-edge method apart: how many were
    tried, and those that did not."""
    tried, out = 0, []
    for suite in find_suites(paths)[0]:
        parsed = read_suite(suite)
        if parsed.profile == "aggregate_budget.v0":
            for entry in parsed.entries:
                tried += 1
                if not peer_method_pinned(entry):
                    out.append(f"{entry}: method 'per-edge maximum' gives the same outcome "
                               "on every vector")
    return tried, out


def _vector_files(paths: list[Path]) -> list[Path]:
    suites, loose = find_suites(paths)
    files = list(loose)
    for suite in suites:
        try:
            parsed = read_suite(suite)
        except UsageError:
            continue  # verify already failed it
        if parsed.profile == "recompute-vectors.v1":
            files += parsed.entries
        else:  # a peer suite's files are not recompute vectors
            peer = {entry.resolve() for entry in parsed.entries}
            files = [f for f in files if f.resolve() not in peer]
    return list(dict.fromkeys(f.resolve() for f in files))


def _loadable(files: list[Path]) -> list[dict[str, Any]]:
    """The vectors that load (a malformed one already failed verify: nothing to tamper)."""
    out = []
    for file in files:
        try:
            out.append(load_json(file))
        except UsageError:
            continue
    return out


@vectors_group.command("add")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--suite", "suite_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The suite.json to pin them in, created if it does not exist (default: the "
                   "nearest one above the first file).")
def add_command(files: tuple[Path, ...], suite_path: Path | None) -> None:
    """Pin vector files into a suite.json (each must verify first)."""
    suite, pinned = add_to_suite(list(files), suite_path)
    for path in pinned:
        say(f"pinned {path}")
    click.echo(f"{suite}: {len(pinned)} file(s) pinned")
