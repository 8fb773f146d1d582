"""The devnet L2's named moments: for each, the exact command that checks it through the L1
anchor (``argv``, naming the L2 RPC URL as the manifest gives it) and its expected verdict.

Every moment is read at one L1 block, ``l2.settled`` (recompute/devnet/l2_games.py): there the
games ``final-good`` and ``final-bad`` are final, ``in-delay`` is resolved but in its finality
delay, ``challenger-wins`` lost to its challenger and ``blacklisted`` is blacklisted in the
portal. A game's L2 block is the L2 twin of an AMM moment (the same registry state as on L1),
so a verdict the anchor lets through is that AMM moment's (recompute/devnet/moments.py);
the others are UNVERIFIABLE with the reason the anchor gives.
"""

from __future__ import annotations

from typing import Any

from recompute.devnet.driver import HistoryError
from recompute.devnet.moments import ABOUT

UNVERIFIABLE = "UNVERIFIABLE"

# label -> (game (named by --l2-game, or the one the anchor must choose), expected reason when
#           UNVERIFIABLE (None: the AMM moment's verdict), what, extra options, the node asked
#           ("rpc": honest, "lying_rpc": the lying one))
L2_MOMENTS: dict[str, tuple[str, str | None, str, tuple[str, ...], str]] = {
    "l2.final-good": ("final-good", None, "a final game (resolved DEFENDER_WINS, its finality "
                      "delay over) proposes the L2 block of amm.due", (), "rpc"),
    "l2.final-bad": ("final-bad", None, "a final game proposes the L2 block of amm.overdue",
                     (), "rpc"),
    "l2.in-delay": ("in-delay", "game-not-final", "a game resolved DEFENDER_WINS in the L1 "
                    "block itself: in its finality delay", (), "rpc"),
    "l2.in-delay-resolved": ("in-delay", None, "the same game, judged with --l2-finality "
                             "resolved: the verdict of amm.after-cycle-1, labelled resolved",
                             ("--l2-finality", "resolved"), "rpc"),
    "l2.challenger-wins": ("challenger-wins", "game-challenger-wins", "a game whose root is "
                           "not the L2 block's output root, attacked: CHALLENGER_WINS", (),
                           "rpc"),
    "l2.blacklisted": ("blacklisted", "game-blacklisted", "a game resolved DEFENDER_WINS, then "
                       "blacklisted in the portal by the guardian", (), "rpc"),
    "l2.lying-node": ("final-good", "", "the final game's block asked of the lying L2 node "
                      "(every registry storage value raised by one): never a verdict", (),
                      "lying_rpc"),
    "l2.newest-game": ("final-bad", None, "no game named: the newest usable one is final-bad "
                       "(in-delay is not final, blacklisted and challenger-wins are refused)",
                       (), "rpc"),
}
UNNAMED = {"l2.newest-game"}  # moments whose command lets the anchor choose the game


def describe_l2(section: dict[str, Any], l1_rpc: str) -> None:
    """Write ``section["moments"]`` (the manifest's ``l2`` section, its ``rpc`` and
    ``lying_rpc`` known): each moment's L1 block, game, L2 block, argv and verdict."""
    settled = section["settled"]
    portal = section["l1"]["contracts"]["OptimismPortal2"]
    moments: dict[str, Any] = {}
    for label, (name, reason, text, extra, node) in L2_MOMENTS.items():
        game = section["games"][name]
        about = ABOUT[game["l2_moment"]]
        address = section["contracts"].get(about["contract"])
        if address is None:
            raise HistoryError(f"{label}: no {about['contract']} on the L2")
        params = about["params"](section)
        argv = ["recompute", "step", about["recipe"], "--rpc", section[node],
                "--l2-portal", portal, "--l1-rpc", l1_rpc,
                "--l1-block-hash", settled["hash"],
                *([] if label in UNNAMED else ["--l2-game", game["address"]]),
                "--at", str(settled["timestamp"]), "--address", address]
        if about["layout"]:
            argv += ["--layout", about["layout"]]
        for key, value in params.items():
            argv += ["--param", f"{key}={value}"]
        argv += list(extra)
        moments[label] = {
            "l1": {key: settled[key] for key in ("number", "hash", "timestamp")},
            "game": name, "game_address": game["address"], "l2_block": game["l2_block"],
            "l2_block_hash": game["output_root"]["block_hash"], "l2_moment": game["l2_moment"],
            "recipe": about["recipe"], "address": address, "params": params, "node": node,
            "argv": argv, "verdict": UNVERIFIABLE if reason is not None else about["verdict"],
            **({"reason": reason} if reason else {}), "text": text}
    section["moments"] = moments
