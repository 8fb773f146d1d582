"""One check through one block's rounds (recompute.evaluator.job.step_many): what is driven
(:class:`DrivenPlan`) and the record of where each check stands (:class:`CheckState`), one
record per check in place of lists kept side by side and matched by their index."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from recompute.evaluator.carry import RoundsKept
from recompute.evaluator.job_record import Job
from recompute.evaluator.kept_plans import KeptPlan
from recompute.evaluator.runner import Runner
from recompute.recipes.plan import Derivation, Request


class DrivenPlan(Protocol):
    """What ``step_many`` drives round by round: a recipe's plan generator
    (recompute.recipes.plan.Plan) or a :class:`~recompute.evaluator.kept_plans.KeptPlan`.
    ``send`` hands it the last round's answer (None first) and returns its next request; it
    ends with StopIteration carrying the Derivation, or with the recipe's own exception."""

    def send(self, answer: object, /) -> Request: ...


@dataclass(slots=True, eq=False)
class CheckState:
    """One check at one block (a plain record: made per check per block, altered as its rounds
    go): its job, its runner (proofs and trace), its plan, how its rounds were answered (for
    the carry rules: recompute.evaluator.carry.RoundsKept), the answer its plan is handed next,
    and, once it ended, its result: the Derivation, or the exception that ended it."""

    job: Job
    runner: Runner
    plan: DrivenPlan
    kept: RoundsKept = field(default_factory=RoundsKept)
    answer: object = None
    result: Derivation | Exception | None = None

    @property
    def kept_plan(self) -> KeptPlan | None:
        """The plan, when it is a KeptPlan (the carry rules' concern), else None."""
        return self.plan if isinstance(self.plan, KeptPlan) else None
