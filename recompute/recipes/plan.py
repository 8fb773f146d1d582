"""What a recipe's plan yields, is answered with and returns: the requests (:class:`Reads`,
:class:`Slots`, :class:`Logs`, :class:`ReceiptsAt`), the :class:`Derivation`, the pinned
block's :class:`BlockClock`, a :class:`ViewCheck`.

Recipes are named re-derivations of what a registry claims, from proven values only.

A recipe (docs/design.md §Recipes) declares its name (``area/name``), a one-line help, typed
parameters, its default layout (the bundled reference contract's), and a *plan*: a generator
that yields what it needs to read and finally returns a :class:`Derivation`::

    def plan(self, p, clock):
        head = (yield Reads([f"heads[{p['subject']}]"]))[f"heads[{p['subject']}]"]
        policy = (yield Reads([f"policies[{p['subject']}][{head['policyVersion']}]"]))[...]
        return Derivation(holds=..., derived={...})

The plan never sees the RPC: it yields layout paths (:class:`Reads`), raw slots
(:class:`Slots`) or an event query (:class:`Logs`) and is sent back proven, typed values; the
pure derivation is ordinary code between the yields. The runner
(:mod:`recompute.evaluator.runner`) asks one ``eth_getProof`` per round. Later rounds can depend
on earlier values (the policy version before the policy).

Recipes (:mod:`recompute.recipes.base`) register themselves with
:func:`recompute.recipes.registry.register`; the bundled ones are the modules of this package,
a user's own modules are loaded with ``--recipes PATH`` or the ``RECOMPUTE_RECIPES`` environment
variable (README §Recipes).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias


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
class BlockClock:
    """The pinned header's number and timestamp: the recipe's only notion of time
    (ERC-6372 timestamp mode: clock() is the block timestamp). Not the clock a verdict's
    freshness is judged by (:class:`recompute.core.clock.Clock`, wall time and age bounds):
    a plan sees only the block it is about."""

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
