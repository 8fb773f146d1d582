"""A recipe module of the differential's own (loaded as a user's: ``--recipes``), for the reuse
rules the bundled recipes do not reach (docs/design.md §Soundness): a split recipe whose reads
ask one layout path alone (the first path of another check's combined read: a hand-out must be
found by every path asked) and then a raw slot (a round that is no kept layout read: its job is
never answered whole; its trace mixes read groups with entries of no group, so the digest is
taken from the entries); and a recipe that reads at an ancestor of the pinned block."""

from __future__ import annotations

from recompute.recipe import INT, Derivation, Param, Reads, Recipe, Slots, register
from recompute.recipes.base import SplitRecipe


@register
class SpentThenCap(SplitRecipe):
    name = "probe/spent-then-cap-slot"
    help = "spentRoot[root][period] (a layout read) <= the word at cap_slot (a raw slot)."
    outputs = {"spent": INT, "cap": INT}
    params = (Param("root", "bytes32", "the tree's rootId"), Param("period", "uint", "a period"),
              Param("cap_slot", "uint", "the raw slot of cap[root]"))
    layout = "meter-aggregate-budget-lying"

    def reads(self, p):
        path = f"spentRoot[{p['root']}][{p['period']}]"
        spent = (yield Reads([path]))[path]
        cap = (yield Slots([p["cap_slot"]]))[p["cap_slot"]]
        return spent, cap

    def derive(self, p, inputs, clock):
        spent, cap = inputs
        return Derivation(holds=spent <= cap, derived={"spent": spent, "cap": cap},
                          predicate="spent <= cap")


@register
class SpentBefore(Recipe):
    name = "probe/spent-before"
    help = "spentRoot[root][period] two blocks below the pinned one <= at the pinned one."
    outputs = {"before": INT, "now": INT}
    params = (Param("root", "bytes32", "the tree's rootId"), Param("period", "uint", "a period"))
    layout = "meter-aggregate-budget-lying"

    def plan(self, p, clock):
        """A read at an ancestor (its header tied to the pinned block by parentHash links):
        kept by the ancestor's hash, found through the ancestors kept by hash."""
        path = f"spentRoot[{p['root']}][{p['period']}]"
        before = (yield Reads([path], block=max(clock.number - 2, 0)))[path]
        now = (yield Reads([path]))[path]
        return Derivation(holds=before <= now, derived={"before": before, "now": now},
                          predicate="before <= now")
