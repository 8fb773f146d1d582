"""What a recipe author imports (docs/design.md §Recipes): the stable names of the recipe
framework, so that a user's own recipe module never imports the package's internals.

    from recompute.recipe import Derivation, Param, Reads, Recipe, register
"""

from recompute.recipes.framework import (
    BOOL,
    HEX,
    INT,
    TABLE,
    TEXT,
    Clock,
    Derivation,
    Logs,
    Output,
    Param,
    Reads,
    ReceiptsAt,
    Recipe,
    Slots,
    ViewCheck,
    enum,
    register,
)

__all__ = ["BOOL", "HEX", "INT", "TABLE", "TEXT", "Clock", "Derivation", "Logs", "Output",
           "Param", "ReceiptsAt", "Reads", "Recipe", "Slots", "ViewCheck", "enum", "register"]
