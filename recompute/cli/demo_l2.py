"""``recompute demo``'s L2 part: the devnet's OP-stack L2 (``devnet up --l2``), its blocks
pinned through the L1 dispute games (recompute/l2/op_stack_anchor.py), a few of its named
moments shown with their verdicts: a final game's, one in its finality delay, one its
challenger won, and the lying L2 node."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recompute.core.anchor import anchor_block
from recompute.core.clock import Clock
from recompute.core.errors import Unverifiable
from recompute.evaluator.job import step
from recompute.l2.op_stack_anchor import OpStackRequest, by_output_root
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource

MOMENTS = ("l2.final-bad", "l2.in-delay", "l2.challenger-wins", "l2.lying-node")


def _verdict(manifest: dict[str, Any], label: str) -> tuple[str, str]:
    """``(verdict, reason)`` of an L2 moment, judged here as its command judges it."""
    l2 = manifest["l2"]
    moment, settled = l2["moments"][label], l2["settled"]
    l1 = anchor_block([LiveSource(manifest["rpc"])],
                      block_hash=bytes.fromhex(settled["hash"][2:]))
    request = OpStackRequest(portal=bytes.fromhex(l2["l1"]["contracts"]["OptimismPortal2"][2:]),
                             game=bytes.fromhex(moment["game_address"][2:]))
    recipe = get_recipe(moment["recipe"])
    try:
        block = by_output_root(l1, LiveSource(l2[moment["node"]]), request,
                               Clock(at=settled["timestamp"]))
        outcome = step(recipe, recipe.parse_params(moment["params"]), block,
                       bytes.fromhex(moment["address"][2:]), load_layout(recipe.layout))
    except Unverifiable as exc:
        return "UNVERIFIABLE", exc.reason
    return outcome.verdict.value, ""


def run_l2_part(manifest: dict[str, Any], echo: Callable[[str], None]) -> None:
    l2 = manifest["l2"]
    echo(f"OP-stack L2 (chain {l2['chain_id']}): its blocks pinned through the dispute games of "
         f"the real OP contracts on L1 (portal {l2['l1']['contracts']['OptimismPortal2']})")
    for label in MOMENTS:
        moment = l2["moments"][label]
        verdict, reason = _verdict(manifest, label)
        shown = f"{verdict} ({reason})" if verdict == "UNVERIFIABLE" else verdict
        echo(f"{shown:<36} {label}: {moment['text']}")
    echo("  = recompute " + " ".join(l2["moments"]["l2.final-bad"]["argv"][1:]))
