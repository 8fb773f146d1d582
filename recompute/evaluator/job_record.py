"""A check to evaluate: one recipe with its parameters, contract and layout (:class:`Job`),
and how a derived value is written where it is compared with text (:func:`normalise`).

The records the evaluator's modules share (``job``, ``carry``, ``evidence``), kept apart so
that none of them imports another only for a type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from recompute.core.jsontext import canonical_json
from recompute.evaluator.kept_plans import PlanMemo
from recompute.layout import Layout
from recompute.recipes.base import Recipe
from recompute.recipes.plan import Params


def normalise(value: object) -> str:
    """How a derived value compares with ``--expect k=v`` text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value.lower() if value.startswith("0x") else value
    return canonical_json(value)



@dataclass
class Job:
    """One recipe run at a block: what ``step`` and ``watch`` evaluate."""

    recipe: Recipe
    params: Params
    address: bytes
    layout: Layout
    expect: dict[str, str] | None = None
    compare_views: bool = False
    # a SplitRecipe's rounds kept per answer across the blocks this job is run at
    plan_memo: PlanMemo = field(default_factory=PlanMemo, compare=False, repr=False)

    @cached_property
    def contract_text(self) -> str:
        return "0x" + self.address.hex()

    @cached_property
    def evidence_params(self) -> dict[str, str]:
        """The parameters as the evidence writes them (made once: a watch asks the same job
        at every block)."""
        return {k: normalise(v) if not hasattr(v, "as_posix") else str(v)
                for k, v in self.params.items()}
