"""Recipes: named re-derivations of what a registry claims, from proven values only.

A recipe (docs/design.md §Recipes) declares its name (``area/name``), a one-line help, typed
parameters, its default layout (the bundled reference contract's), and a *plan*: a generator
that yields what it needs to read and finally returns a :class:`Derivation`::

    def plan(self, p, clock):
        head = (yield Reads([f"heads[{p['subject']}]"]))[f"heads[{p['subject']}]"]
        policy = (yield Reads([f"policies[{p['subject']}][{head['policyVersion']}]"]))[...]
        return Derivation(holds=..., derived={...})

The plan never sees the RPC: it yields layout paths (:class:`Reads`), raw slots
(:class:`Slots`) or an event query (:class:`Logs`) and is sent back proven, typed values; the
pure derivation is ordinary code between the yields. The runner (:mod:`recompute.evaluator.runner`)
asks one ``eth_getProof`` per round. Later rounds can depend on earlier values (the policy
version before the policy).

Recipes register themselves with :func:`register`; the bundled ones live in the top-level
``recipes/`` package, a user's own modules are loaded with ``--recipes PATH`` or the
``RECOMPUTE_RECIPES`` environment variable (README §Recipes).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeAlias, TypeVar

from recompute.core.errors import OptionError, UsageError, literal
from recompute.core.hexdata import checksum_problem

# ---- what a plan yields -------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class Reads:
    """Layout paths of the recipe's contract; answered with ``{path: decoded value}``.

    ``block``: read at that earlier block instead of the pinned one (its header tied to the
    pinned block by parentHash links, its storage proven against its own stateRoot)."""

    paths: list[str]
    block: int | None = None

    def __init__(self, paths: list[str], block: int | None = None):
        # both fields at once: a plan yields ~3 of these per check per block, and a frozen
        # dataclass's generated __init__ sets each through object.__setattr__; frozen after
        fields = self.__dict__
        fields["paths"] = paths
        fields["block"] = block


@dataclass(frozen=True)
class Slots:
    """Raw storage slots of the recipe's contract, for shapes no layout names (an arbitrary
    ``struct:S:A:C`` on an unknown contract); answered with ``{slot: proven value}``."""

    slots: list[int]


@dataclass(frozen=True)
class Logs:
    """Events of the recipe's contract from ``from_block`` to the pinned block (inclusive),
    whose first topic is ``topic0``; answered with a list of ProvenLog in chain order."""

    topic0: bytes
    from_block: int
    extra_topics: tuple[bytes | None, ...] = ()


@dataclass(frozen=True)
class ReceiptsAt:
    """Every log of the recipe's contract in one block (by number, at or below the pin)."""

    block: int


@dataclass
class Derivation:
    """What a plan returns: whether the recipe's own predicate holds, and what it derived."""

    holds: bool
    derived: dict[str, Any]
    predicate: str = ""  # the predicate in words, for the report
    findings: list[dict[str, Any]] = field(default_factory=list)
    # When it does not hold: what was found and which condition failed, in words
    # ("status is OVERDUE; healthy means not OVERDUE"); the report's detail of a BAD verdict.
    failed: str = ""
    # What the verdict does not prove, in words (docs/design.md §Verdicts follow the normative
    # text): the evidence's ``bounds``, on GOOD and BAD alike.
    bounds: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Clock:
    """The pinned header's number and timestamp: the recipe's only notion of time
    (ERC-6372 timestamp mode: clock() is the block timestamp)."""

    number: int
    timestamp: int


@dataclass(frozen=True)
class ViewCheck:
    """A view function whose answer ``--compare-views`` sets beside a derived value."""

    signature: str  # e.g. "layerStatus(address,uint8)"
    args: tuple[Any, ...]  # ABI values of ``arg_types``
    arg_types: tuple[str, ...]
    returns: tuple[str, ...]
    # (the view's decoded answer, the derived values) -> {name: (view, derived)}
    compare: Callable[[tuple[Any, ...], dict[str, Any]], dict[str, tuple[Any, Any]]]


# What a plan yields, and the generator it is. The value sent back depends on the request:
# ``{path: decoded value}`` for Reads, ``{slot: int}`` for Slots, ``list[ProvenLog]`` for Logs
# and ReceiptsAt; decoded values are the layout's (ints, bytes, bools, dicts, lists), so the
# answer is typed where it is read.
Request: TypeAlias = "Reads | Slots | Logs | ReceiptsAt"
Plan: TypeAlias = "Generator[Request, Any, Derivation]"
# A recipe's parameters, as its Param declarations parse them (:meth:`Recipe.parse_params`).
Params: TypeAlias = dict[str, Any]
# A decoded struct of the recipe's layout (field name -> value), or a record a derivation makes
# of such values; read-only (a kept plan hands a derivation mapping proxies).
Struct: TypeAlias = Mapping[str, Any]


# ---- parameters -----------------------------------------------------------------------------


_KINDS = ("address", "uint", "int", "bytes32", "str", "file", "bool")


def _bad_param(name: str, text: str, what: str) -> OptionError:
    """``--param NAME=TEXT`` and what is wrong with it, the option worded by the caller."""
    return OptionError("{param} " + literal(name) + "={text!r}" + what, ("param",), text=text)


def _address_text(name: str, text: str) -> str:
    if not re.fullmatch(r"0x[0-9a-fA-F]{40}", text):
        raise _bad_param(name, text, " is not an address (0x + 40 hex digits)")
    problem = checksum_problem(text[2:])
    if problem:
        raise _bad_param(name, text, f" {problem}")
    return "0x" + text[2:].lower()


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    help: str
    default: Any = None
    required: bool = True

    def parse(self, text: str) -> Any:
        """A value given on the command line as text."""
        if self.kind == "address":
            return _address_text(self.name, text)
        if self.kind in ("uint", "int"):
            try:
                value = int(text, 0)
            except ValueError:
                raise _bad_param(self.name, text, " is not an integer") from None
            if self.kind == "uint" and not 0 <= value < 1 << 256:
                raise _bad_param(self.name, text, " is not a uint256")
            return value
        if self.kind == "bytes32":
            if not re.fullmatch(r"0x[0-9a-fA-F]{64}", text):
                raise _bad_param(self.name, text, " is not 32 bytes of 0x-hex")
            return "0x" + text[2:].lower()
        if self.kind == "bool":
            if text.lower() not in ("true", "false", "1", "0"):
                raise _bad_param(self.name, text, " is not true/false")
            return text.lower() in ("true", "1")
        if self.kind == "file":
            path = Path(text)
            if not path.is_file():
                raise _bad_param(self.name, text, ": no such file")
            return path
        return text


# ---- derived values an --expect may name ---------------------------------------------------

_DECIMAL = re.compile(r"-?[0-9]{1,80}\Z")
_HEXNUM = re.compile(r"0[xX][0-9a-fA-F]{1,64}\Z")


def parse_int_text(text: str) -> int | None:
    """An integer written in decimal or 0x-hex (at most 256 bits' worth of digits), or None."""
    text = text.strip()
    if _DECIMAL.match(text):
        return int(text)
    if _HEXNUM.match(text):
        return int(text, 16)
    return None


@dataclass(frozen=True)
class Output:
    """The type of one derived value, so that ``--expect k=v`` is checked when the command or
    checks.toml is parsed, before any node is asked. Kinds: ``int``
    (decimal or 0x-hex), ``bool``, ``hex`` (0x bytes, compared lower-case), ``enum`` (one of
    ``choices``, any case), ``text`` (compared as written), ``json`` (a table: not
    expectable)."""

    kind: str
    choices: tuple[str, ...] = ()
    unit: str = ""  # how a report shows it: "time" (Unix seconds), "amount"; "" as it is

    def parse(self, text: str, where: str) -> str:
        """The expected value's canonical text (as :func:`normalise` writes derived values)."""
        text = text.strip()
        if self.kind == "int":
            value = parse_int_text(text)
            if value is None:
                raise UsageError(f"{where}={text!r} is not an integer (decimal or 0x-hex)")
            return str(value)
        if self.kind == "bool":
            if text.lower() not in ("true", "false"):
                raise UsageError(f"{where}={text!r} is not true or false")
            return text.lower()
        if self.kind == "hex":
            if not re.fullmatch(r"0[xX]([0-9a-fA-F]{2})*", text):
                raise UsageError(f"{where}={text!r} is not 0x-hex bytes")
            return text.lower()
        if self.kind == "enum":
            for choice in self.choices:
                if text.upper() == choice.upper():
                    return choice
            raise UsageError(f"{where}={text!r} is not one of {', '.join(self.choices)}")
        if self.kind == "json":
            raise UsageError(f"{where}: a table of values cannot be expected; expect one of its "
                             "scalar neighbours")
        return text


INT, BOOL, HEX, TEXT, TABLE = Output("int"), Output("bool"), Output("hex"), Output("text"), \
    Output("json")
TIME, AMOUNT = Output("int", unit="time"), Output("int", unit="amount")  # ints, shown so


def enum(*choices: str) -> Output:
    return Output("enum", tuple(choices))


# ---- the recipe base and its registry -----------------------------------------------------


class Recipe:
    name: str = ""
    help: str = ""
    params: tuple[Param, ...] = ()
    layout: str = ""  # default layout: the bundled reference contract's
    positional: tuple[str, ...] = ()  # params that may follow RPC ADDRESS on the command line
    section: str = ""  # the seed section it implements, for the listing
    outputs: dict[str, Output] = {}  # derived values and their types (empty: not declared)

    def plan(self, p: Params, clock: Clock) -> Plan:
        raise NotImplementedError

    def views(self, p: Params) -> list[ViewCheck]:
        """View functions to compare under --compare-views (none by default)."""
        return []

    def mistakes(self) -> dict[str, Recipe]:
        """Wrong-but-plausible methods of deriving the same answer (``vectors verify
        --tamper`` checks that every vector of this recipe tells each one apart)."""
        return {}

    def parse_expect(self, given: dict[str, str], where: str = "expect") -> dict[str, str]:
        """Expected derived values checked against :attr:`outputs`; their canonical text.
        A recipe that declares no outputs (a user's) gets its values compared as written."""
        if not self.outputs:
            return dict(given)
        out: dict[str, str] = {}
        for key, text in given.items():
            if key not in self.outputs:
                raise UsageError(f"{where} {key}: {self.name} derives no {key!r} "
                                 f"(it derives: {', '.join(self.outputs)})")
            out[key] = self.outputs[key].parse(text, f"{where} {key}")
        return out

    def parse_params(self, given: dict[str, str]) -> Params:
        known = {p.name: p for p in self.params}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise UsageError(
                f"{self.name} has no parameter {unknown[0]!r} "
                f"(parameters: {', '.join(known) or 'none'})"
            )
        out: Params = {}
        for param in self.params:
            if param.name in given:
                out[param.name] = param.parse(given[param.name])
            elif param.required and param.default is None:
                raise OptionError("{name} needs {param} {key}=… ({help})", ("param",),
                                  name=self.name, key=param.name, help=param.help)
            else:
                out[param.name] = param.default
        return out


Inputs = TypeVar("Inputs")  # what a SplitRecipe's reads make of the values, for its derive


class SplitRecipe(Recipe, Generic[Inputs]):
    """A recipe whose plan is its reads, then a derivation: :meth:`reads` yields
    what it reads and returns the inputs it made of the values, *without the clock*, so the
    requests it makes are a function of the parameters and the values read alone;
    :meth:`derive` turns those inputs and the pinned block's clock into the Derivation. Its
    :meth:`plan` is the one, the same rounds and the same Derivation; a watch keeps a check's
    rounds per answer across blocks (recompute.evaluator.kept_plans) and runs only
    :meth:`derive` at a block whose values are the ones it kept, handing it those inputs
    read-only (dicts as mapping proxies, lists as tuples: read them, build new values, never
    alter them). A subclass that overrides :meth:`plan` itself is run as any recipe."""

    def reads(self, p: Params) -> Generator[Request, Any, Inputs]:
        raise NotImplementedError

    def derive(self, p: Params, inputs: Inputs, clock: Clock) -> Derivation:
        raise NotImplementedError

    def plan(self, p: Params, clock: Clock) -> Plan:
        inputs = yield from self.reads(p)
        return self.derive(p, inputs, clock)


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
