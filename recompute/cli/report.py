"""Printing a command's outcome for people, or as one JSON object (the CLI's side of it)."""

from __future__ import annotations

import json

import click

from recompute.core.anchor import AnchoredBlock
from recompute.core.outcome import Outcome
from recompute.core.outside_text import visible
from recompute.core.verdict import REASONS, Verdict


def emit(outcome: Outcome, as_json: bool, human_lines: list[str] | None = None) -> int:
    """Print the outcome (stdout) and return its exit code."""
    if as_json:
        click.echo(json.dumps(outcome.to_json(), indent=2))
        return outcome.verdict.exit_code
    head = f"{outcome.verdict.value} ({outcome.reason})"
    if outcome.detail:
        head += f": {outcome.detail}"
    elif outcome.reason in REASONS and outcome.verdict is not Verdict.GOOD:
        head += f": {REASONS[outcome.reason]}"
    click.echo(visible(head))  # a node's message in the detail: only ever as text
    for line in human_lines or []:
        click.echo(visible(line))
    return outcome.verdict.exit_code


def say(text: str, err: bool = False) -> None:
    """One line for a person that quotes outside text (a store's check name, a layout's label,
    a vector's name): only ever as text (:func:`recompute.core.outside_text.visible`)."""
    click.echo(visible(text), err=err)


def anchor_lines(block: AnchoredBlock) -> list[str]:
    lines = [
        f"block {block.number} 0x{block.hash.hex()} (chain {block.chain_id}, "
        f"timestamp {block.timestamp})",
        f"state root 0x{block.state_root.hex()}",
        f"anchor {block.anchor.method}: trusts {block.anchor.trusts}",
    ]
    if block.anchor.method == "light-client":
        lc = block.anchor.detail
        lines.append(
            f"light client ({lc['network']}): trusted root {lc['trusted_root']}, finalized "
            f"beacon slot {lc['finalized_beacon_slot']} {lc['finalized_beacon_root']}, "
            f"sync-committee period {lc['sync_committee_period']}, participation "
            f"{lc['participation']}; execution header from the node: {lc['execution_header']}"
        )
    if block.anchor.method == "single-rpc":
        lines.append(
            "warning: single-rpc: the node itself said which block this is; pin it with "
            "--block-hash, --checkpoint or a --quorum of endpoints to not trust it"
        )
    return lines
