"""The finality tier of a dispute game, or the reason it is refused (pure; docs/l2.md §Tiers).

The rules are ``OptimismPortal2``'s for a withdrawal (contracts-bedrock 0.17.3,
src/L1/OptimismPortal2.sol ``checkWithdrawal`` and ``proveWithdrawalTransaction``), judged at
the pinned L1 block's timestamp, as the portal judges at ``block.timestamp``:

``final``     DEFENDER_WINS, more than the finality delay since it resolved, not blacklisted,
              created no earlier than the respected game type was last set (older games are
              retired), of the respected game type.
``resolved``  DEFENDER_WINS within the delay: only when asked for, and labelled.
``proposed``  IN_PROGRESS: only when asked for, and labelled.

A blacklisted, CHALLENGER_WINS, retired or not-respected game is refused with its own reason
whatever tier is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from recompute.core.clock import span
from recompute.core.errors import Unverifiable, literal
from recompute.l2.game import GameFacts, GameStatus

TIERS = ("final", "resolved", "proposed")  # strongest first
_RANK = {tier: rank for rank, tier in enumerate(TIERS)}


@dataclass(frozen=True)
class SystemFacts:
    """What the portal's proven storage and code say of every game."""

    respected_game_type: int
    respected_since: int  # respectedGameTypeUpdatedAt: games created before it are retired
    finality_delay: int  # DISPUTE_GAME_FINALITY_DELAY_SECONDS (the implementation's code)

    def to_json(self) -> dict[str, int]:
        return {"respected_game_type": self.respected_game_type,
                "respected_game_type_updated_at": self.respected_since,
                "finality_delay_s": self.finality_delay}


def tier_of(game: GameFacts, system: SystemFacts, l1_time: int, accept: str) -> str:
    """The tier of ``game`` at L1 time ``l1_time`` if it is ``accept`` or stronger, else
    Unverifiable with the reason it is not usable."""
    if accept not in _RANK:
        raise ValueError(f"unknown tier {accept!r}")
    shown = "0x" + game.address.hex()
    if game.blacklisted:
        raise Unverifiable("game-blacklisted", f"game {shown} is blacklisted by the portal: its "
                                               "root claim may not be relied on")
    if game.status is GameStatus.CHALLENGER_WINS:
        raise Unverifiable("game-challenger-wins", f"game {shown} resolved CHALLENGER_WINS: "
                                                   "its output root was shown wrong")
    if game.game_type != system.respected_game_type:
        raise Unverifiable("game-type-not-respected",
                           f"game {shown} is of type {game.game_type}; the portal respects "
                           f"type {system.respected_game_type}")
    if game.created_at < system.respected_since:
        raise Unverifiable("game-retired",
                           f"game {shown} was created at {game.created_at}, before the "
                           f"respected game type was last set ({system.respected_since}): "
                           "the portal no longer accepts it")
    if game.status is GameStatus.IN_PROGRESS:
        tier = "proposed"
    elif l1_time - game.resolved_at > system.finality_delay:
        tier = "final"
    else:
        tier = "resolved"
    if _RANK[tier] > _RANK[accept]:
        if tier == "proposed":
            why = "is still IN_PROGRESS (give {l2_finality} proposed to use an unresolved game)"
        else:
            left = system.finality_delay - (l1_time - game.resolved_at)
            why = literal(f"resolved DEFENDER_WINS {span(l1_time - game.resolved_at)} before "
                          f"the L1 block, within the {span(system.finality_delay)} finality "
                          f"delay ({span(left)} left; give ") + "{l2_finality} resolved to use it)"
        raise Unverifiable("game-not-final", literal(f"game {shown} ") + why, ("l2_finality",))
    return tier
