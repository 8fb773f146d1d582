"""Printing a command's outcome for people, or as one JSON object (the CLI's side of it)."""

from __future__ import annotations

from typing import Any

import click

from recompute.core.anchor import AnchoredBlock
from recompute.core.clock import span
from recompute.core.jsontext import json_document
from recompute.core.outcome import Outcome
from recompute.core.outside_text import visible
from recompute.core.verdict import REASONS, Verdict


def emit(outcome: Outcome, as_json: bool, human_lines: list[str] | None = None) -> int:
    """Print the outcome (stdout) and return its exit code."""
    if as_json:
        click.echo(json_document(outcome.to_json()))
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
    if block.anchor.method == "op-stack":
        lines += l2_lines(block.anchor.detail)
    if block.anchor.method == "single-rpc":
        lines.append(
            "warning: single-rpc: the node itself said which block this is; pin it with "
            "--block-hash, --checkpoint or a --quorum of endpoints to not trust it"
        )
    return lines


def registry_line(detail: dict[str, Any]) -> str:
    """The tier line of an L2 block anchored by a standard release's AnchorStateRegistry."""
    registry, game = detail["anchor_state_registry"], detail["game"]
    held = (f"anchor game {game['address']} (type {game['game_type']})"
            if game["address"] is not None else "starting anchor root")
    return (f"L2 TIER FINAL: the AnchorStateRegistry {registry['address']} "
            f"({registry['implementation']}, by its listed implementation address on "
            f"{detail['l1_network']}) holds the {held}; output root {detail['output_root']} "
            f"names L2 block {game['l2_block_number']}")


def l2_lines(detail: dict[str, Any]) -> list[str]:
    """The op-stack anchor's lines: the L1 block, the game and its tier, the tier in capitals
    and a warning line when it is not final (docs/l2.md §Tiers)."""
    l1, game, tier = detail["l1"], detail["game"], detail["tier"]
    if detail.get("basis") == "anchor-state-registry":
        return [f"L1 block {l1['block']['number']} {l1['block']['hash']} (anchor "
                f"{l1['anchor']['method']}: trusts {l1['anchor']['trusts']})",
                registry_line(detail) + (f", {reached_from(detail['history_path'])}"
                                         if detail.get("history_path") else "")]
    resolved = (f"resolved {span(game['resolved_ago_s'])} before the L1 block"
                if game["resolved_ago_s"] is not None else "not resolved")
    path = detail.get("history_path")
    lines = [
        f"L1 block {l1['block']['number']} {l1['block']['hash']} (anchor "
        f"{l1['anchor']['method']}: trusts {l1['anchor']['trusts']})",
        f"L2 TIER {tier.upper()}: game {game['address']} ({game['implementation']}, type "
        f"{game['game_type']}) {game['status']}, {resolved}; finality delay "
        f"{span(detail['finality_delay_s'])}; output root {detail['output_root']} names L2 "
        f"block {game['l2_block_number']}"
        + (f", {reached_from(path)}" if path else ""),
    ]
    if tier != "final":
        lines.append(f"warning: tier {tier}: the game is not final (asked for with "
                     f"--l2-finality {tier}); its root claim can still be overturned")
    return lines


def reached_from(path: dict[str, Any]) -> str:
    """How a block below the pinned one was reached from it (``history_path``), in words."""
    if path["via"] == "history-contract":
        hops = path["hops"]
        return (f"block {hops[-1]['block']} proven from it by {len(hops)} history-contract "
                "hop(s)")
    return f"{path['headers_walked']} parent link(s) down to this block ({path['why']})"
