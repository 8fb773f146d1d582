"""The recipe base classes: :class:`Recipe` (a name, parameters, outputs, a plan) and
:class:`SplitRecipe` (a plan that is its reads, then a derivation from them and the block's
clock, so that a watch can keep the reads across blocks)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Generic, TypeVar

from recompute.core.errors import OptionError, UsageError
from recompute.recipes.outputs import Output
from recompute.recipes.params import Param
from recompute.recipes.plan import BlockClock, Derivation, Params, Plan, Request, ViewCheck


class Recipe:
    name: str = ""
    help: str = ""
    params: tuple[Param, ...] = ()
    layout: str = ""  # default layout: the bundled reference contract's
    positional: tuple[str, ...] = ()  # params that may follow RPC ADDRESS on the command line
    section: str = ""  # the specification section it implements, for the listing
    outputs: dict[str, Output] = {}  # derived values and their types (empty: not declared)

    def plan(self, p: Params, clock: BlockClock) -> Plan:
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

    def derive(self, p: Params, inputs: Inputs, clock: BlockClock) -> Derivation:
        raise NotImplementedError

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        inputs = yield from self.reads(p)
        return self.derive(p, inputs, clock)
