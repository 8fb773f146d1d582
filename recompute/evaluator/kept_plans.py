"""A split recipe's read plan kept per check across blocks.

A :class:`~recompute.recipes.base.SplitRecipe`'s reads make their requests from the
parameters and the values read alone (no clock), so a check whose values at this block are
the ones it was handed at an earlier block makes the same requests again and ends with the same
inputs. A watch evaluates the same check at every block, and most blocks change nothing it
reads: the reads generator, its path texts and the policy-and-floor combination then run once
per *set of values*, not once per block.

:class:`PlanMemo` (one per check: ``Job.plan_memo``) keeps the rounds as a tree: each
:class:`Round` holds the request the plan makes there and, per answer handed to it, what came
next (the next round, or the :class:`Inputs` the reads returned). :class:`KeptPlan` stands in
for the plan's generator in :func:`recompute.evaluator.job.step_many`: it hands out a kept
request while every answer so far *equals* (``==``, the whole value) one kept at that round,
and at the end runs the recipe's :meth:`derive` with this block's clock on the kept inputs,
read-only. An answer that differs in any value goes to the real reads generator, re-driven with
the kept answers along the way (copies) and checked to ask what it asked before, then handed
the new answer; what it does from there is kept too.

Every check still gets every round's values proven (or carried, named by their header) and
listed in its evidence: the runner answers a kept request as any other. Nothing kept is handed
to a recipe: an answer is kept as given (the combined read's kept values themselves, which
nothing alters: ``Runner.copies``) and copied for the generator, the inputs are handed to every
derivation read-only (``copies.frozen``), so a recipe that alters what it is handed reaches
neither a sibling check nor a later block.

Why :class:`KeptPlan` is written by hand, not as a generator: it replaces the generator
``SplitRecipe.plan`` returns (``reads`` then ``derive``), which ``step_many`` drives with
``send``. A generator cannot be started part-way or rewound: to answer a round from the memo
it would have to be re-run from its first request at every block, which is the cost the memo
exists to save. So KeptPlan is the one object with a generator's ``send`` protocol (the next
request, or StopIteration carrying the Derivation) that walks the memo's tree without running
the recipe, and starts the real reads generator only when an answer is not a kept one
(:meth:`KeptPlan._redrive`: re-driven with the kept answers, and checked to ask what it asked
before). Nothing else in the package is a hand-written generator.
"""

from __future__ import annotations

import copy
from collections.abc import Generator
from typing import Any

from recompute.core.errors import UsageError
from recompute.evaluator.copies import Copier, copier, frozen
from recompute.recipes.base import SplitRecipe
from recompute.recipes.plan import BlockClock, Derivation, Params, Reads, Request

MOST_ANSWERS = 8  # different answers kept per round: a value that keeps changing is re-planned


class Inputs:
    """Where the reads ended: the inputs they returned, read-only (copies.frozen: the same
    object handed to the derivation at every block), or a private copy copied for each
    derivation when they hold what cannot be frozen."""

    __slots__ = ("value", "copy")

    def __init__(self, value: object):
        read_only = frozen(value)
        self.copy: Copier | None = None
        if read_only is None and value is not None:
            self.copy = copier(value) or copy.deepcopy
            read_only = self.copy(value)
        self.value = read_only

    def handed(self) -> object:
        return self.value if self.copy is None else self.copy(self.value)


class Round:
    """One point of a plan: the request made there; per answer, what came next. An answer
    is kept as it was given: values nobody alters (a combined read's kept values, or a read's
    own), never handed to a recipe (a live reads generator gets a copy)."""

    __slots__ = ("request", "next")

    def __init__(self, request: Request):
        self.request = request
        self.next: list[tuple[object, Round | Inputs]] = []

    def after(self, answer: object) -> tuple[object, Round | Inputs] | None:
        for kept in self.next:
            if kept[0] is answer or kept[0] == answer:  # the very values, or equal ones
                return kept
        return None

    def add(self, answer: object, then: Round | Inputs) -> None:
        if len(self.next) >= MOST_ANSWERS:
            del self.next[0]  # the oldest answer
        self.next.append((answer, then))


def _copy(answer: object) -> object:
    """What a live reads generator is handed: a copy of the answer's containers."""
    copy_of = copier(answer)
    return answer if copy_of is None else copy_of(answer)


class PlanMemo:
    """One check's kept rounds (its recipe and parameters are the job's, fixed), and how its
    last block went when every round was answered from kept reads (``last``: the source, what
    those reads put in its trace, the Inputs it ended with: recompute.evaluator.carry's
    ``remember`` sets it, ``carried_whole`` uses it)."""

    __slots__ = ("first", "last")

    def __init__(self) -> None:
        self.first: Round | None = None
        # the carry's record of the last block (recompute.evaluator.carry.AnsweredWhole, which
        # this module does not import: the carry rules build on kept plans, not the reverse)
        self.last: object | None = None


def keeps(recipe: object) -> bool:
    """Whether ``recipe``'s plan is its reads then its derivation (not overridden)."""
    return getattr(type(recipe), "plan", None) is SplitRecipe.plan


class KeptPlan:
    """A plan generator's ``send`` for a SplitRecipe, answered from ``memo`` while the values
    are the kept ones (module docstring). Only :class:`Reads` requests are kept."""

    __slots__ = ("recipe", "params", "clock", "memo", "at", "trail", "live", "sends", "leaf")

    def __init__(self, recipe: SplitRecipe[Any], params: Params, clock: BlockClock,
                 memo: PlanMemo):
        self.recipe, self.params, self.clock, self.memo = recipe, params, clock, memo
        self.at: Round | None = None  # the round whose request was handed out last
        self.trail: list[tuple[object, Round | Inputs]] = []  # the kept answers so far
        # the reads generator, once an answer is not a kept one
        self.live: Generator[Request, object, object] | None = None
        self.sends = 0  # calls to send: the requests made are one fewer at the end
        self.leaf: Inputs | None = None  # the inputs derived from, once derived

    def send(self, answer: object, /) -> Request:
        """The next request; StopIteration with the Derivation at the end (a generator's
        ``send``). The recipe's own exceptions pass through."""
        self.sends += 1
        at = self.at
        if at is None:  # the first request: of the parameters alone
            first = self.memo.first
            if first is not None:
                self.at = first
                return first.request
            self.live = self.recipe.reads(self.params)
            return self._went(self._next(None), None, None)
        if self.live is None:
            kept = at.after(answer)
            if kept is not None:
                then = kept[1]
                if isinstance(then, Inputs):
                    raise StopIteration(self.derive(then))
                self.trail.append(kept)
                self.at = then
                return then.request
            self._redrive()  # a value not seen at this round: the reads decide
        return self._went(self._next(_copy(answer)), at, answer)

    def derive(self, leaf: Inputs) -> Derivation:
        """The recipe's derivation of ``leaf``'s inputs with this block's clock."""
        self.leaf = leaf
        return self.recipe.derive(self.params, leaf.handed(), self.clock)

    def _next(self, answer: object) -> Request | Inputs:
        """The reads generator handed ``answer``: its request, or Inputs if it returned."""
        assert self.live is not None  # started by send or _redrive before any answer
        try:
            return self.live.send(answer)
        except StopIteration as done:
            return Inputs(done.value)

    def _went(self, step: Request | Inputs, at: Round | None, answer: object) -> Request:
        """Keep where the reads went after ``answer`` at ``at`` (the first round when ``at``
        is None); the request, or StopIteration with this block's Derivation."""
        if isinstance(step, Inputs):
            if at is not None:
                at.add(answer, step)
            raise StopIteration(self.derive(step))
        if not isinstance(step, Reads):  # only layout reads are kept; the rest is live
            self.at = Round(step)  # unkept: never reached from the memo
            return step  # any other request, handed on
        then = Round(step)
        if at is None:
            self.memo.first = then
        else:
            at.add(answer, then)
        self.at = then
        return step

    def _redrive(self) -> None:
        """A reads generator brought to the round in hand: handed copies of the kept
        answers, asking at each round what it asked when they were kept."""
        live = self.recipe.reads(self.params)
        self.live = live
        first = self.memo.first
        asked = [first.request if first is not None else None]
        got = [self._next(None)]
        for answer, then in self.trail:
            got.append(self._next(_copy(answer)))
            asked.append(then.request)  # type: ignore[union-attr]  # the trail: rounds only
        if got != asked:
            raise UsageError(f"recipe {self.recipe.name}: its reads asked for other values "
                             "than with the same parameters and values before (a SplitRecipe's "
                             "reads must depend on nothing else)")
