"""Which recipes exist: :func:`register` makes a recipe class known by its name; the bundled
ones are the modules of this package, a user's own are loaded only from paths the user named
(``--recipes PATH``, ``$RECOMPUTE_RECIPES``; README §Recipes); :func:`get_recipe` imports only
the area a bundled name needs."""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path

from recompute.core.errors import OptionError, UsageError
from recompute.recipes.base import Recipe

_REGISTRY: dict[str, Recipe] = {}


def register(cls: type[Recipe]) -> type[Recipe]:
    """Class decorator: make a recipe known by its name."""
    if not re.fullmatch(r"[a-z0-9]+/[a-z0-9-]+", cls.name or ""):
        raise ValueError(f"recipe name {cls.name!r} is not area/name")
    if cls.name in _REGISTRY and type(_REGISTRY[cls.name]) is not cls:
        raise ValueError(f"two recipes are named {cls.name}")
    _REGISTRY[cls.name] = cls()
    return cls


def _environment_paths() -> list[str]:
    env = os.environ.get("RECOMPUTE_RECIPES")
    return [p for p in env.split(os.pathsep) if p] if env else []


def named_recipe_paths(given: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The recipe modules and folders the user named: ``given`` (``--recipes PATH`` values),
    then ``$RECOMPUTE_RECIPES``, each resolved (realpath), in order, once. Recipe code runs
    only from these: a file the user is handed (a checks.toml) may declare the code it needs,
    never add to it."""
    out: list[str] = []
    for path in [*given, *_environment_paths()]:
        real = os.path.realpath(path)
        if real not in out:
            out.append(real)
    return out


def load_recipes(extra: list[str] | None = None) -> dict[str, Recipe]:
    """The bundled recipes (package ``recipes``) plus a user's modules or folders: ``extra``
    (paths the user named: ``--recipes``) and ``$RECOMPUTE_RECIPES``. Never pass a path read
    from a file here (:func:`named_recipe_paths`)."""
    import pkgutil

    bundled = importlib.import_module("recompute.recipes")
    for info in pkgutil.iter_modules(bundled.__path__):
        importlib.import_module(f"recompute.recipes.{info.name}")
    paths = list(extra or []) + _environment_paths()
    for path in paths:
        _load_user_module(Path(path))
    return dict(sorted(_REGISTRY.items()))


def _load_user_module(path: Path) -> None:
    import importlib.util

    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise OptionError("{recipes} {path}: no such recipe module or folder", ("recipes",),
                          path=path)
    for file in files:
        name = f"recompute_user_recipes.{file.stem}"
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, file)
        if spec is None or spec.loader is None:
            raise UsageError(f"recipe module {file} cannot be loaded as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a user's module: report it as one line
            del sys.modules[name]
            raise UsageError(f"recipe module {file} failed to load: {exc}") from None


# area -> the bundled module that registers that area's recipes: ``get_recipe`` imports only
# the one a name needs when no user recipes are given (one cold verdict does not pay for every
# recipe module; README §Performance). tests/core/test_cold_imports.py keeps it equal to what
# the modules register.
BUNDLED_AREAS: dict[str, str] = {"8312": "erc8312", "amm": "amm", "sai": "sai"}


def _bundled_only(name: str, extra: list[str] | None) -> Recipe | None:
    """The bundled recipe ``name`` from its area's module alone; None when user recipes are
    given (they load everything, so that a clash of names is still refused) or the name is
    not a bundled one."""
    if extra or os.environ.get("RECOMPUTE_RECIPES"):
        return None
    module = BUNDLED_AREAS.get(name.partition("/")[0])
    if module is None:
        return None
    importlib.import_module(f"recompute.recipes.{module}")
    return _REGISTRY.get(name)


def bundled_recipes() -> dict[str, Recipe]:
    """The bundled recipes alone (no user module is loaded), by name."""
    for module in BUNDLED_AREAS.values():
        importlib.import_module(f"recompute.recipes.{module}")
    return {name: recipe for name, recipe in sorted(_REGISTRY.items())
            if type(recipe).__module__.startswith("recompute.recipes.")}


def get_recipe(name: str, extra: list[str] | None = None) -> Recipe:
    recipe = _bundled_only(name, extra)
    if recipe is not None:
        return recipe
    recipes = load_recipes(extra)
    if name not in recipes:
        raise UsageError(
            f"unknown recipe {name!r}; `recompute recipes` lists them ({', '.join(recipes)})"
        )
    return recipes[name]
