"""What a recipe author imports (docs/design.md §Recipes): the stable names of the recipe
framework, so that a user's own recipe module never imports the package's internals.

    from recompute.recipe import Derivation, Param, Reads, Recipe, register
"""

from recompute.recipes.framework import (
    Clock,
    Derivation,
    Logs,
    Param,
    Reads,
    ReceiptsAt,
    Recipe,
    Slots,
    ViewCheck,
    register,
)

__all__ = ["Clock", "Derivation", "Logs", "Param", "ReceiptsAt", "Reads", "Recipe", "Slots",
           "ViewCheck", "register"]
