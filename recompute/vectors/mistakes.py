"""The wrong-but-plausible methods ``vectors verify --tamper`` runs, registered by recipe name.

A recipe may name mistakes of its own (``Recipe.mistakes()``); the AMM and ERC-8447 ones live in
``recipes/amm_mistakes.py`` and ``recipes/sai_mistakes.py`` and are registered here, beside the
tamper mode that uses them: the recipes never import their mistakes (docs/design.md §Vectors).
"""

from __future__ import annotations

from collections.abc import Callable

from recompute.recipes import amm_mistakes, sai_mistakes
from recompute.recipes.amm import Commitment, LayerStatus, RestoreClaim, SignalStatus, StateRoot
from recompute.recipes.framework import Recipe
from recompute.recipes.sai import Charter, Member, Revision, Roster

# recipe name -> its registered mistakes (rule id -> mistaken method)
REGISTERED: dict[str, Callable[[], dict[str, Recipe]]] = {
    LayerStatus.name: amm_mistakes.layer_status_mistakes,
    SignalStatus.name: amm_mistakes.signal_status_mistakes,
    StateRoot.name: amm_mistakes.state_root_mistakes,
    RestoreClaim.name: amm_mistakes.restore_claim_mistakes,
    Commitment.name: amm_mistakes.commitment_mistakes,
    Member.name: sai_mistakes.member_mistakes,
    Roster.name: sai_mistakes.roster_mistakes,
    Revision.name: sai_mistakes.revision_mistakes,
    Charter.name: sai_mistakes.charter_mistakes,
}


def mistakes_of(recipe: Recipe) -> dict[str, Recipe]:
    """Every mistaken method of ``recipe``: its own, then the registered ones (rule id ->
    method)."""
    registered = REGISTERED.get(recipe.name)
    return {**recipe.mistakes(), **(registered() if registered is not None else {})}
