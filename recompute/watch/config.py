"""checks.toml: the checks a watch evaluates at every block (docs/watch.md §checks.toml).

::

    recipes = ["my_recipes/"]          # optional: the recipe code it needs (given with --recipes)

    [[check]]
    name = "lying-meter-cap"           # unique; names the JSON lines and the metrics
    recipe = "8312/cap-conservation"   # as `recompute recipes` lists it
    address = "0x0165878A594ca255338adfa4d48449f69242Eb8F"
    layout = "meter-aggregate-budget-lying"   # optional: the recipe's reference layout
    healthy = "GOOD"                   # optional: GOOD (default) or BAD
    since = 67                         # optional: first block the check is evaluated at
    params = { shape = "struct:…", key = "0x…" }
    expect = { within_cap = "true" }   # optional, as `step --expect`

Every mistake (bad TOML, an unknown key, an unknown recipe, a bad parameter, a missing or
malformed address, a duplicate name) is one :class:`UsageError` line naming the file and the
check: exit 64, before any node is asked.

A checks file runs no code of its own: its ``recipes`` entries only declare the user recipe
modules its checks need, and each must be one the user named (``--recipes PATH`` or
``$RECOMPUTE_RECIPES``; compared after resolving both), or the file is refused before any module
is imported. The modules loaded are the ones the user named.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recompute.core.boundedjson import MAX_DEPTH, nesting_depth, read_limited
from recompute.core.errors import OptionError, UsageError, within
from recompute.core.hexdata import parse_address
from recompute.core.verdict import Verdict
from recompute.layout import Layout, load_layout
from recompute.recipes.base import Recipe
from recompute.recipes.registry import get_recipe, named_recipe_paths

_TOP_KEYS = {"check", "recipes"}
_CHECK_KEYS = {"name", "recipe", "address", "layout", "healthy", "since", "params", "expect"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}\Z")
_HEALTHY = {"GOOD": Verdict.GOOD, "VERIFIED-GOOD": Verdict.GOOD,
            "BAD": Verdict.BAD, "VERIFIED-BAD": Verdict.BAD}


@dataclass(frozen=True)
class Check:
    """One parsed check: what :func:`recompute.evaluator.job.step` needs, plus its healthy
    verdict."""

    name: str
    recipe: Recipe
    params: dict[str, Any]  # the recipe's parameters as checks.toml gives them
    address: bytes
    layout: Layout
    healthy: Verdict = Verdict.GOOD
    expect: dict[str, str] | None = None
    since: int = 0

    def is_healthy(self, verdict: Verdict) -> bool | None:
        """True/False for a verified verdict; None for UNVERIFIABLE (no evidence either way)."""
        if verdict is Verdict.UNVERIFIABLE:
            return None
        return verdict is self.healthy


MAX_CONFIG_BYTES = 1 << 20  # a checks.toml of thousands of checks is well under this


def load_config(path: str | Path, recipe_paths: list[str] | tuple[str, ...] = ()
                ) -> list[Check]:
    """Read, bound (size, nesting, UTF-8) and parse a checks.toml: one UsageError line for any
    defect. ``recipe_paths``: the ``--recipes`` paths the user named (the only user recipe code
    loaded, with ``$RECOMPUTE_RECIPES``)."""
    return parse_config_text(read_config_text(path), Path(path), recipe_paths)


def read_config_text(path: str | Path) -> str:
    """A checks.toml's text, bounded (a regular file of at most :data:`MAX_CONFIG_BYTES`, UTF-8):
    for parsing, and for each later read that hashes it (a file rewritten or swapped for a FIFO
    since it was parsed is one line, not a crash or a hang)."""
    path = Path(path)
    try:
        if not path.is_file():
            raise OptionError("{config} {path}: no such file" if not path.exists()
                              else "{config} {path}: not a file", ("config",), path=path)
    except OSError as exc:
        raise OptionError("{config} {path}: {problem}", ("config",), path=path,
                          problem=exc.strerror or exc) from None
    raw = read_limited(path, str(path), UsageError, MAX_CONFIG_BYTES)
    if len(raw) > MAX_CONFIG_BYTES:
        raise UsageError(f"{path}: larger than {MAX_CONFIG_BYTES:,} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text (is it a TOML file?)") from None


def parse_config_text(text: str, path: Path,
                      recipe_paths: list[str] | tuple[str, ...] = ()) -> list[Check]:
    """A checks.toml's text (from the file, or as a segment task carries it): bounded in size
    and nesting before TOML parses it, then every field checked."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_CONFIG_BYTES:
        raise UsageError(f"{path}: larger than {MAX_CONFIG_BYTES:,} bytes")
    if nesting_depth(text) > MAX_DEPTH:
        raise UsageError(f"{path}: nests deeper than {MAX_DEPTH} levels")
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{path}: not valid TOML ({str(exc)[:200]})") from None
    return parse_config(data, path, recipe_paths)


def parse_config(data: dict[str, Any], path: Path,
                 recipe_paths: list[str] | tuple[str, ...] = ()) -> list[Check]:
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise UsageError(f"{path}: unknown key {unknown[0]!r} (expected [[check]] tables)")
    extra = data.get("recipes", [])
    if not isinstance(extra, list) or not all(isinstance(p, str) for p in extra):
        raise UsageError(f"{path}: recipes must be a list of paths")
    _declared_recipes_named(path, extra, recipe_paths)
    extra = list(recipe_paths)
    entries = data.get("check")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path}: no [[check]] tables: a watch needs at least one check")
    checks: list[Check] = []
    names: set[str] = set()
    layouts: dict[str, Layout] = {}  # one descriptor object per layout named: reads group by it
    for index, entry in enumerate(entries, start=1):
        check = _parse_check(entry, index, path, extra, layouts)
        if check.name in names:
            raise UsageError(f"{path}: two checks are named {check.name!r}")
        names.add(check.name)
        checks.append(check)
    return checks


def _declared_recipes_named(path: Path, declared: list[str],
                            recipe_paths: list[str] | tuple[str, ...]) -> None:
    """Each recipe module or folder the file declares is one the user named, or one line
    (exit 64) saying how to name it; checked before any recipe is looked up, so nothing the
    file names is imported."""
    if not declared:
        return
    named = named_recipe_paths(recipe_paths)
    for entry in declared:
        real = os.path.realpath(_relative(path, entry))
        if real not in named:
            raise OptionError("{path} names recipe code in {real}: recompute runs recipe code "
                              "only from paths you name; add {recipes} {quoted} to run it",
                              ("recipes",), path=path, real=real, quoted=shlex.quote(real))


def _parse_check(entry: object, index: int, path: Path, extra: list[str],
                 layouts: dict[str, Layout]) -> Check:
    where = f"{path}: check #{index}"
    if not isinstance(entry, dict):
        raise UsageError(f"{where} is not a table")
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise UsageError(f"{where}: name must be 1-100 characters of letters, digits and ._:/- "
                         f"(got {name!r})")
    where = f"{path}: check {name!r}"
    unknown = sorted(set(entry) - _CHECK_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} "
                         f"(keys: {', '.join(sorted(_CHECK_KEYS))})")
    try:
        return _build(entry, name, path, extra, layouts)
    except UsageError as exc:
        raise within(where, exc) from None


def _build(entry: dict[str, Any], name: str, path: Path, extra: list[str],
           layouts: dict[str, Layout]) -> Check:
    recipe_name = entry.get("recipe")
    if not isinstance(recipe_name, str):
        raise UsageError("recipe is missing (e.g. recipe = \"amm/layer-status\")")
    recipe = get_recipe(recipe_name, extra)
    if "address" not in entry:
        raise UsageError("address is missing (the registry's 0x address)")
    address = parse_address(entry["address"], "address")
    layout_name = entry.get("layout", recipe.layout)
    if not isinstance(layout_name, str):
        raise UsageError("layout must be a layout name or file")
    if layout_name not in layouts:  # read once per config: every check of it shares it
        layouts[layout_name] = load_layout(layout_name)
    layout = layouts[layout_name]
    healthy_text = entry.get("healthy", "GOOD")
    if not isinstance(healthy_text, str) or healthy_text.upper() not in _HEALTHY:
        raise UsageError(f"healthy = {healthy_text!r}: give GOOD or BAD")
    since = entry.get("since", 0)
    if isinstance(since, bool) or not isinstance(since, int) or since < 0:
        raise UsageError(f"since = {since!r} is not a block number")
    params = recipe.parse_params(_texts(entry.get("params", {}), "params", recipe, path))
    expect = recipe.parse_expect(_texts(entry.get("expect", {}), "expect", None, path),
                                 "expect") or None
    return Check(name, recipe, params, address, layout, _HEALTHY[healthy_text.upper()],
                 expect, since)


def _texts(table: object, key: str, recipe: Recipe | None, path: Path) -> dict[str, str]:
    """A TOML table of values as the text a user would give on the command line; a recipe's
    file parameters are relative to the config file's folder."""
    if not isinstance(table, dict):
        raise UsageError(f"{key} must be a table (e.g. {key} = {{ subject = \"0x…\" }})")
    kinds = {p.name: p.kind for p in recipe.params} if recipe else {}
    out = {}
    for k, value in table.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int | str):
            text = str(value)
        else:
            raise UsageError(f"{key}.{k} = {value!r}: give a string, an integer or a boolean")
        if kinds.get(k) == "file":
            text = str(_relative(path, text))
        out[k] = text
    return out


def _relative(config: Path, text: str) -> Path:
    given = Path(text)
    return given if given.is_absolute() else config.parent / given
