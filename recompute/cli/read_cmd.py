"""``recompute read``: named storage variables, proven and decoded through a layout."""

from __future__ import annotations

import sys

import click

from recompute.cli import cli
from recompute.cli.options import chain_options
from recompute.cli.report import anchor_lines, emit
from recompute.core.errors import Unverifiable
from recompute.core.hexdata import parse_address
from recompute.core.outcome import Outcome, block_evidence
from recompute.core.prover import ProofStats, prove_account
from recompute.core.verdict import Verdict
from recompute.layout import load_layout
from recompute.layout.reader import ReadPlan


@cli.command("read")
@chain_options
@click.option("--layout", "layout_name", required=True, metavar="L",
              help="Bundled layout name (layouts/L.json) or a descriptor file path.")
@click.option("--address", required=True, metavar="A", help="The contract to read.")
@click.argument("paths", nargs=-1, required=True)
def read_command(chain, as_json, layout_name, address,
                 paths):
    """Prove and decode storage variables by path, e.g. 'checkpoints[0xab..][2]'."""
    contract = parse_address(address)
    layout = load_layout(layout_name)
    plan = ReadPlan(layout, paths)  # every path parsed and resolved before any RPC
    evidence: dict = {}
    stats = ProofStats()
    try:
        anchored = chain.anchor()
        evidence.update(block_evidence(anchored))
        account = None
        while slots := plan.next_round():
            account = prove_account(anchored, contract, sorted(slots), stats=stats)
            plan.feed(account.storage)
        if account is None:  # nothing to read (cannot happen with a path), prove the account
            account = prove_account(anchored, contract, [], stats=stats)
    except Unverifiable as exc:
        sys.exit(emit(Outcome.unverifiable(exc, evidence), as_json))
    results = plan.results()
    evidence["layout"] = layout.name
    evidence["account"] = account.to_json()
    evidence["proof_requests"] = stats.requests
    evidence["values"] = [result.to_json() for result in results]
    lines = anchor_lines(anchored)
    lines.append(f"contract 0x{contract.hex()} (layout {layout.name}), "
                 f"{stats.slots} slot(s) proven in {stats.requests} eth_getProof call(s)")
    for result in results:
        value = result.to_json()["value"]
        lines.append(f"{result.path} ({result.type_label}) = {value}")
        for slot in result.slots:
            lines.append(f"    slot 0x{slot:064x}")
    sys.exit(emit(Outcome(Verdict.GOOD, "ok", evidence), as_json, lines))
