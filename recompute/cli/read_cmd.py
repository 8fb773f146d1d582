"""``recompute read``: named storage variables, proven and decoded through a layout."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from recompute.cli import cli
from recompute.cli.complete import complete_layout
from recompute.cli.flags import cli_outcome
from recompute.cli.human_format import checksum, table, value_rows
from recompute.cli.options import Chain, chain_options
from recompute.cli.report import anchor_lines, emit
from recompute.core.anchor import AnchoredBlock
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.hexdata import parse_address
from recompute.core.outcome import Outcome, block_evidence
from recompute.core.prover import ProofStats, ProvenAccount, prove_account
from recompute.core.verdict import Verdict
from recompute.layout import Layout, load_layout
from recompute.layout.reader import ReadPlan, ReadResult
from recompute.layout.resolve import hex32

DEFAULT_MAX_ELEMENTS = 32


@cli.command("read")
@chain_options
@click.option("--layout", "layout_name", required=True, metavar="L", shell_complete=complete_layout,
              help="Bundled layout name (layouts/L.json) or a descriptor file path.")
@click.option("--address", required=True, metavar="A", help="The contract to read.")
@click.option("--all", "read_every", is_flag=True,
              help="Every variable of the layout (mappings need a key and are listed only).")
@click.option("--max-elements", type=int, metavar="N",
              help="Read at most the first N elements of each whole dynamic array "
                   "(default with --all: 32).")
@click.argument("paths", nargs=-1)
def read_command(chain: Chain, as_json: bool, layout_name: str, address: str, read_every: bool,
                 max_elements: int | None, paths: tuple[str, ...]) -> None:
    """Prove and decode storage variables by path, e.g. 'checkpoints[0xab..][2]'."""
    contract = parse_address(address, "--address")
    layout = load_layout(layout_name)
    if max_elements is not None and max_elements < 0:
        raise UsageError("--max-elements must be 0 or more")
    mappings: list[str] = []
    if read_every:
        if max_elements is None:
            max_elements = DEFAULT_MAX_ELEMENTS
        paths, mappings = _every_variable(layout, paths)
    if not paths and not mappings:
        raise UsageError("give a PATH to read (e.g. 'owner', 'heads[0xab..].status') or --all")
    # every path parsed and resolved before any RPC
    plan = ReadPlan(layout, paths, max_elements=max_elements)
    evidence: dict[str, Any] = {}
    stats = ProofStats()
    try:
        anchored = chain.anchor()
        evidence.update(block_evidence(anchored))
        account = _prove_rounds(anchored, contract, plan, stats)
    except Unverifiable as exc:
        sys.exit(emit(cli_outcome(exc, evidence), as_json))
    results = plan.results()
    evidence["layout"] = layout.name
    evidence["account"] = account.to_json()
    evidence["proof_requests"] = stats.requests
    evidence["values"] = [result.to_json() for result in results]
    if mappings:
        evidence["mappings_not_read"] = mappings
    lines = anchor_lines(anchored)
    lines.append(f"contract {checksum(contract)} (layout {layout.name}), "
                 f"{stats.slots} slot(s) proven in {stats.requests} eth_getProof call(s)")
    rows = _value_rows(layout, results)
    if rows:  # (none when every variable is a mapping: --all lists them below)
        lines += table(rows, ("path", "type", "value"), indent="  ")
    lines += _notes(results, max_elements, mappings)
    if not read_every:
        lines.append("slots:")
        lines += table([(result.path, " ".join(hex32(s) for s in result.slots))
                        for result in results], indent="  ")
    sys.exit(emit(Outcome(Verdict.GOOD, "ok", evidence), as_json, lines))


def _every_variable(layout: Layout, paths: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """--all: the given paths plus every variable that is not a mapping; the mappings (they need
    a key) are returned apart, to be listed only."""
    mappings: list[str] = []
    for variable in layout.variables:
        if layout.type(variable.type_id).kind == "mapping":
            mappings.append(variable.label)
        elif variable.label not in paths:
            paths += (variable.label,)
    return paths, mappings


def _prove_rounds(anchored: AnchoredBlock, contract: bytes, plan: ReadPlan,
                  stats: ProofStats) -> ProvenAccount:
    """Prove the plan's slots round by round (a dynamic array's length before its elements);
    the account proven last."""
    account = None
    while slots := plan.next_round():
        account = prove_account(anchored, contract, sorted(slots), stats=stats)
        plan.feed(account.storage)
    if account is None:  # nothing to read (cannot happen with a path), prove the account
        account = prove_account(anchored, contract, [], stats=stats)
    return account


def _value_rows(layout: Layout, results: Sequence[ReadResult]) -> list[tuple[str, str, str]]:
    """The (path, type, value) rows of the table, a struct or array one row per member."""
    rows: list[tuple[str, str, str]] = []
    for result in results:
        shown = result.to_json()["value"]
        if result.location.length_of is not None:  # `.length`: a plain number
            rows.append((result.path, result.type_label, shown))
        else:
            rows += value_rows(layout, result.location.type, result.path, shown)
    return rows


def _notes(results: Sequence[ReadResult], max_elements: int | None,
           mappings: list[str]) -> list[str]:
    """What was not shown: arrays cut at --max-elements, mappings not read."""
    lines = []
    for result in results:
        for name, length in result.truncated.items():
            lines.append(f"note: {name} has {length} elements; the first {max_elements} are "
                         "shown (--max-elements)")
    if mappings:
        lines.append(f"note: not read, mappings (read an entry by key, e.g. {mappings[0]}[KEY]): "
                     + ", ".join(mappings))
    return lines
