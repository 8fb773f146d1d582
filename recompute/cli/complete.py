"""Shell completion of the names a user types most: recipes and bundled layouts.

click completes options and commands by itself; these add the values (README §Shell completion:
``eval "$(_RECOMPUTE_COMPLETE=bash_source recompute)"``). A completion never fails: a broken
user recipe folder just completes nothing.
"""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem


def complete_recipe(ctx: click.Context, param: click.Parameter,
                    incomplete: str) -> list[CompletionItem]:
    from recompute.recipes.registry import load_recipes

    try:
        recipes = load_recipes()
    except Exception:  # noqa: BLE001 -- a completion must never print a traceback
        return []
    return [CompletionItem(name, help=recipe.help) for name, recipe in recipes.items()
            if name.startswith(incomplete)]


def complete_layout(ctx: click.Context, param: click.Parameter,
                    incomplete: str) -> list[CompletionItem]:
    from recompute.layout import bundled_layouts

    if "/" in incomplete or incomplete.startswith("."):
        return [CompletionItem(incomplete, type="file")]  # a descriptor file: the shell's paths
    return [CompletionItem(name) for name in bundled_layouts() if name.startswith(incomplete)]
