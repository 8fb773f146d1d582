"""The wrong-but-plausible methods ``vectors verify --tamper`` runs, registered by recipe name.

A recipe may name mistakes of its own (``Recipe.mistakes()``); the AMM and ERC-8447 ones live
beside the tamper mode that uses them (``vectors/amm_mistakes.py``, ``vectors/sai_mistakes.py``)
and are registered here: the recipes never import their mistakes (docs/design.md §Vectors).
"""

from __future__ import annotations

from collections.abc import Callable

from recompute.recipes.amm import Commitment, LayerStatus, RestoreClaim, SignalStatus, StateRoot
from recompute.recipes.base import Recipe
from recompute.recipes.sai import Charter, Member, Revision, Roster
from recompute.vectors.amm_mistakes import (
    commitment_mistakes,
    layer_status_mistakes,
    restore_claim_mistakes,
    signal_status_mistakes,
    state_root_mistakes,
)
from recompute.vectors.sai_mistakes import (
    charter_mistakes,
    member_mistakes,
    revision_mistakes,
    roster_mistakes,
)

# recipe name -> its registered mistakes (rule id -> mistaken method)
REGISTERED: dict[str, Callable[[], dict[str, Recipe]]] = {
    LayerStatus.name: layer_status_mistakes,
    SignalStatus.name: signal_status_mistakes,
    StateRoot.name: state_root_mistakes,
    RestoreClaim.name: restore_claim_mistakes,
    Commitment.name: commitment_mistakes,
    Member.name: member_mistakes,
    Roster.name: roster_mistakes,
    Revision.name: revision_mistakes,
    Charter.name: charter_mistakes,
}


def mistakes_of(recipe: Recipe) -> dict[str, Recipe]:
    """Every mistaken method of ``recipe``: its own, then the registered ones (rule id ->
    method)."""
    registered = REGISTERED.get(recipe.name)
    return {**recipe.mistakes(), **(registered() if registered is not None else {})}
