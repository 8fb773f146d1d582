"""A recipe module of the L2 watch tests' own (loaded as a user's: ``--recipes``): the
scripted pair's registry keeps one number in slot 0."""

from __future__ import annotations

from recompute.recipe import INT, Derivation, Param, Slots, register
from recompute.recipes.base import SplitRecipe


@register
class SlotAtMost(SplitRecipe):
    name = "probe/slot-at-most"
    help = "The contract's slot 0 is at most cap."
    outputs = {"value": INT}
    params = (Param("cap", "uint", "the bound"),)
    layout = "amm-registry"  # a layout must be named; only the raw slot 0 is read

    def reads(self, p):
        return (yield Slots([0]))[0]

    def derive(self, p, inputs, clock):
        return Derivation(holds=inputs <= p["cap"], derived={"value": inputs},
                          predicate="slot 0 <= cap")
