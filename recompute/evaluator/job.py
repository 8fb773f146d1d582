"""A job: one recipe run at one anchored block, proven, then recorded (docs/design.md
§Recipes, §Soundness). What an auditor reads first.

:func:`step` runs one check; :func:`step_many` runs many in lockstep: each round, every job's
layout reads of the same contract (and the same layout, by its digest) are proven together,
one ``eth_getProof`` per contract per round, so N checks cost about as many round trips as one.
Every answer a plan is handed is proven against the pinned block's header (or an ancestor tied
to it by parentHash links) by :mod:`recompute.evaluator.runner`, or stands in for such a proof
under one of the rules of :mod:`recompute.evaluator.carry` (a storageRoot this block's own
account proof shows). The plan's :class:`~recompute.recipes.plan.Derivation` and an
optional expectation then decide the verdict (:mod:`recompute.evaluator.evidence`);
``--compare-views`` only adds findings.
"""

from __future__ import annotations

from types import MappingProxyType

from recompute.core.anchor import AnchoredBlock
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.outcome import Outcome
from recompute.core.prover import ProofStats
from recompute.evaluator.carry import (
    Carry,
    GroupRead,
    KeptRound,
    carried_whole,
    remember,
)
from recompute.evaluator.check_state import CheckState, DrivenPlan
from recompute.evaluator.evidence import BlockParts, outcome
from recompute.evaluator.job_record import Job
from recompute.evaluator.kept_plans import KeptPlan, keeps
from recompute.evaluator.runner import Runner, prove_contract
from recompute.layout import Layout
from recompute.recipes.base import Recipe
from recompute.recipes.plan import BlockClock, Params, Reads, Request, Slots

__all__ = ["Job", "step", "step_many"]  # Job: for those who import it from here

Answered = list[tuple[CheckState, object]]  # (check, its answer or the exception in its place)


def step(recipe: Recipe, params: Params, block: AnchoredBlock, address: bytes,
         layout: Layout, expect: dict[str, str] | None = None,
         compare_views: bool = False) -> Outcome:
    """Run one recipe at one anchored block; UNVERIFIABLE comes back as an exception."""
    (result,) = step_many(block, [Job(recipe, params, address, layout, expect, compare_views)])
    if isinstance(result, Exception):
        raise result
    return result


def step_many(block: AnchoredBlock, jobs: list[Job]) -> list[Outcome | Exception]:
    """Run many recipes at one block in lockstep (module docstring). A job that fails
    (UNVERIFIABLE, a usage error) gets its exception in its place; the others go on.

    Each job is one :class:`~recompute.evaluator.check_state.CheckState`. Before the rounds,
    the jobs a kept plan answers whole are answered (carry.carried_whole); each round, every
    going job's plan is handed its answer and makes its next request; after them, each kept
    plan remembers whether it was answered whole (carry.remember)."""
    clock = BlockClock(block.number, block.timestamp)
    carry = Carry(block)
    checks = [_check(block, job, clock) for job in jobs]
    going: list[CheckState] = []
    for check in checks:
        plan = check.kept_plan
        whole = None if plan is None else carried_whole(block, check.job, check.runner, plan,
                                                        carry)
        if whole is None:
            going.append(check)
        else:
            check.result = whole
    while going:
        going = _answer_round(block, _next_requests(going), carry)
    for check in checks:
        if (plan := check.kept_plan) is not None:
            remember(block, check.job, plan, check.kept, check.result, carry)
    return _outcomes(block, checks)


def _check(block: AnchoredBlock, job: Job, clock: BlockClock) -> CheckState:
    """The job's record at this block, with its plan: a SplitRecipe's through the job's kept
    rounds (recompute.evaluator.kept_plans: handed the kept values themselves, it copies what
    it hands the recipe), any other recipe's generator."""
    runner = Runner(block, job.address, job.layout)
    plan: DrivenPlan
    if keeps(job.recipe):
        runner.copies = False
        plan = KeptPlan(job.recipe, job.params, clock, job.plan_memo)  # type: ignore[arg-type]
    else:
        plan = job.recipe.plan(job.params, clock)
    return CheckState(job, runner, plan)


def _next_requests(going: list[CheckState]) -> list[tuple[CheckState, Request]]:
    """Each going check's plan given its answer: its next request, or its result (a
    derivation, or the exception that ended it)."""
    requests: list[tuple[CheckState, Request]] = []
    for check in going:
        try:
            requests.append((check, check.plan.send(check.answer)))
        except StopIteration as done:
            check.result = done.value
        except (Unverifiable, UsageError) as exc:
            check.result = exc
    return requests


def _answer_round(block: AnchoredBlock, requests: list[tuple[CheckState, Request]],
                  carry: Carry) -> list[CheckState]:
    """One round's answers: layout reads combined per contract, then raw slots combined per
    contract, then every other request by its own runner. The checks answered, each with its
    answer; a check whose request failed gets the exception as its result, and no answer."""
    answered: list[CheckState] = []

    def take(combined: Answered) -> None:
        for check, answer in combined:
            if isinstance(answer, Exception):
                check.result = answer
            else:
                check.answer = answer
                answered.append(check)

    reads: list[tuple[CheckState, Reads]] = []
    raw: list[tuple[CheckState, Slots]] = []
    others: list[tuple[CheckState, Request]] = []
    for check, request in requests:
        check.kept.asked += 1
        if isinstance(request, Reads):
            reads.append((check, request))
        elif isinstance(request, Slots):
            raw.append((check, request))
        else:
            others.append((check, request))
    take(_combined_reads(block, reads, carry))
    take(_combined_slots(block, raw, carry))
    for check, request in others:
        try:
            check.answer = check.runner.answer(request, check.job.recipe)
        except (Unverifiable, UsageError) as exc:
            check.result = exc
        else:
            answered.append(check)
    return answered


def _combined_reads(block: AnchoredBlock, reads: list[tuple[CheckState, Reads]],
                    carry: Carry) -> Answered:
    """A round's layout reads, one combined read (Carry.read) per contract, layout digest and
    block read at."""
    groups: dict[tuple[bytes, str, int | None], list[tuple[CheckState, Reads]]] = {}
    number = block.number
    for check, request in reads:
        job = check.job
        # by the descriptor's content, never its name: two layouts of one contract name may
        # place the same path in different slots
        below = None if request.block == number else request.block
        groups.setdefault((job.address, job.layout.digest, below), []).append((check, request))
    out: Answered = []
    for (address, _, at_number), members in groups.items():
        first = members[0][0]
        paths = [p for _, request in members for p in request.paths]
        try:
            at = first.runner.block_at(at_number)
            group = carry.read(at, address, first.job.layout, paths,
                               [request.paths for _, request in members])
        except Unverifiable as exc:
            out += [(check, exc) for check, _ in members]
            continue
        except UsageError:
            for check, request in members:  # one job's bad path must not sink the others
                try:
                    out.append((check, check.runner.read(request.paths, request.block)))
                except (Unverifiable, UsageError) as exc:
                    out.append((check, exc))
            continue
        _hand_out(members, group, at, out)
    return out


def _hand_out(members: list[tuple[CheckState, Reads]], group: GroupRead, at: AnchoredBlock,
              out: Answered) -> None:
    """Each member's share of a combined read, put in ``out``: its values (copies of the kept
    ones' containers: a plan that alters what it was handed reaches neither the kept values
    nor a sibling check's), its trace's entries. One call per group of a round, not per
    check. A read kept at the pinned block is noted in each member's RoundsKept."""
    entry = group.entry if at is members[0][0].runner.block else None
    for check, request in members:
        runner = check.runner
        if group.requests:
            runner.trace.stats.requests += group.requests
        runner.note_account(group.accounts, at)
        handout = group.paths.handout(request.paths)
        if entry is not None:
            check.kept.rounds.append(KeptRound(handout, entry))
        out.append((check, handout.give(runner.trace, group.carried, runner.copies)))


def _combined_slots(block: AnchoredBlock, raw: list[tuple[CheckState, Slots]],
                    carry: Carry) -> Answered:
    """Raw-slot reads of one round, one eth_getProof per contract (chunked if large) for
    every job that asks, as layout reads are combined; carried under Carry's rule."""
    groups: dict[bytes, list[tuple[CheckState, Slots]]] = {}
    for check, request in raw:
        groups.setdefault(check.job.address, []).append((check, request))
    out: Answered = []
    for address, members in groups.items():
        wanted = [list(dict.fromkeys(request.slots)) for _, request in members]
        union = list(dict.fromkeys(s for slots in wanted for s in slots))
        stats = ProofStats()
        key = carry.slots_key(address, union)
        carried = None
        try:
            entry = carry.kept(key, address)
            if entry is not None:
                storage = entry.value
                carried = carry.evidence(entry, address)  # each check adds its count
                account = carry.account(address)  # the proof that allowed the carry
            else:
                account = prove_contract(block, address, union, stats=stats)
                storage = account.storage
                carry.keep(key, account.storage_root, MappingProxyType(dict(storage)))
        except Unverifiable as exc:
            out += [(check, exc) for check, _ in members]
            continue
        except ValueError:  # a slot outside uint256 in one job: each job alone, as before
            for check, request in members:
                try:
                    out.append((check, check.runner.slots(request)))
                except (Unverifiable, UsageError) as exc:
                    out.append((check, exc))
            continue
        for (check, _), slots in zip(members, wanted, strict=True):
            trace = check.runner.trace
            if carried is not None:  # the slots this check read, not its group's
                trace.carried.append({"slots": len(slots), **carried})
            trace.stats.requests += stats.requests
            trace.stats.slots += len(slots)
            check.runner.note_account((account,), block)
            out.append((check, check.runner.record_slots(slots, storage)))
    return out


def _outcomes(block: AnchoredBlock, checks: list[CheckState]) -> list[Outcome | Exception]:
    """Each job's outcome from its derivation, or the exception in its place."""
    out: list[Outcome | Exception] = []
    parts = BlockParts(block)
    for check in checks:
        result = check.result
        if isinstance(result, Exception):
            out.append(result)
            continue
        try:
            out.append(outcome(block, check.job, check.runner.trace, check.runner.subject(),
                               result, parts))  # type: ignore[arg-type]
        except (Unverifiable, UsageError) as exc:
            out.append(exc)
    return out
