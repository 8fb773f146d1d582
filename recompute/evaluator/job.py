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

from typing import Any

from recompute.core.anchor import AnchoredBlock
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.outcome import Outcome
from recompute.core.prover import ProofStats
from recompute.evaluator.carry import (
    Carry,
    GroupRead,
    KeptRound,
    RoundsKept,
    carried_whole,
    remember,
)
from recompute.evaluator.evidence import BlockParts, outcome
from recompute.evaluator.job_record import Job
from recompute.evaluator.kept_plans import KeptPlan, keeps
from recompute.evaluator.runner import Runner, prove_contract
from recompute.layout import Layout
from recompute.recipes.base import Recipe
from recompute.recipes.plan import BlockClock, Reads, Slots

__all__ = ["Job", "step", "step_many"]  # Job: for those who import it from here


def step(recipe: Recipe, params: dict[str, Any], block: AnchoredBlock, address: bytes,
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

    Before the rounds, the jobs a kept plan answers whole are answered (carry.carried_whole);
    each round, every job's plan is handed its answer and makes its next request; after them,
    each kept plan remembers whether it was answered whole (carry.remember)."""
    clock = BlockClock(block.number, block.timestamp)
    carry = Carry(block)
    runners = [Runner(block, job.address, job.layout) for job in jobs]
    kept = [RoundsKept() for _ in jobs]
    plans = [_plan(job, runner, clock) for job, runner in zip(jobs, runners, strict=True)]
    results: list[Any] = [None] * len(jobs)
    answers: dict[int, Any] = {i: None for i in range(len(jobs))}
    for i in carried_whole(block, jobs, runners, plans, carry, results):
        del answers[i]
    while answers:
        requests = _next_requests(plans, answers, results)
        answers = _answer_round(block, jobs, runners, kept, requests, carry, results)
    remember(block, jobs, plans, kept, results, carry)
    return _outcomes(block, jobs, runners, results)


def _plan(job: Job, runner: Runner, clock: BlockClock) -> Any:
    """The job's plan at this block: a SplitRecipe's through the job's kept rounds
    (recompute.evaluator.kept_plans: handed the kept values themselves, it copies what it hands
    the recipe), any other recipe's generator."""
    if keeps(job.recipe):
        runner.copies = False
        return KeptPlan(job.recipe, job.params, clock, job.plan_memo)  # type: ignore[arg-type]
    return job.recipe.plan(job.params, clock)


def _next_requests(plans: list[Any], answers: dict[int, Any],
                   results: list[Any]) -> dict[int, Any]:
    """Each job's plan given its answer: its next request, or its result (a derivation, or the
    exception that ended it) put in ``results``."""
    requests: dict[int, Any] = {}
    for i, answer in answers.items():
        try:
            requests[i] = plans[i].send(answer)
        except StopIteration as done:
            results[i] = done.value
        except (Unverifiable, UsageError) as exc:
            results[i] = exc
    return requests


def _answer_round(block: AnchoredBlock, jobs: list[Job], runners: list[Runner],
                  kept: list[RoundsKept], requests: dict[int, Any], carry: Carry,
                  results: list[Any]) -> dict[int, Any]:
    """One round's answers: layout reads combined per contract, then raw slots combined per
    contract, then every other request by its own runner. A job whose request failed gets the
    exception in ``results`` and no answer."""
    answers: dict[int, Any] = {}

    def take(combined: dict[int, Any]) -> None:
        for i, answer in combined.items():
            if isinstance(answer, Exception):
                results[i] = answer
            else:
                answers[i] = answer

    reads: dict[int, Reads] = {}
    raw: dict[int, Slots] = {}
    others: dict[int, Any] = {}
    for i, request in requests.items():
        kept[i].asked += 1
        if isinstance(request, Reads):
            reads[i] = request
        elif isinstance(request, Slots):
            raw[i] = request
        else:
            others[i] = request
    take(_combined_reads(block, jobs, runners, kept, reads, carry))
    take(_combined_slots(block, jobs, runners, raw, carry))
    for i, request in others.items():
        try:
            answers[i] = runners[i].answer(request, jobs[i].recipe)
        except (Unverifiable, UsageError) as exc:
            results[i] = exc
    return answers


def _combined_reads(block: AnchoredBlock, jobs: list[Job], runners: list[Runner],
                    kept: list[RoundsKept], reads: dict[int, Reads],
                    carry: Carry) -> dict[int, Any]:
    """A round's layout reads, one combined read (Carry.read) per contract, layout digest and
    block read at."""
    groups: dict[tuple[bytes, str, int | None], list[int]] = {}
    number = block.number
    for i, request in reads.items():
        job = jobs[i]
        # by the descriptor's content, never its name: two layouts of one contract name may
        # place the same path in different slots
        below = None if request.block == number else request.block
        groups.setdefault((job.address, job.layout.digest, below), []).append(i)
    out: dict[int, Any] = {}
    for (address, _, at_number), members in groups.items():
        paths = [p for i in members for p in reads[i].paths]
        try:
            at = runners[members[0]].block_at(at_number)
            group = carry.read(at, address, jobs[members[0]].layout, paths)
        except Unverifiable as exc:
            out.update({i: exc for i in members})
            continue
        except UsageError:
            for i in members:  # one job's bad path must not sink the others: read alone
                try:
                    out[i] = runners[i].read(reads[i].paths, reads[i].block)
                except (Unverifiable, UsageError) as exc:
                    out[i] = exc
            continue
        _hand_out(members, runners, kept, reads, group, at, out)
    return out


def _hand_out(members: list[int], runners: list[Runner], kept: list[RoundsKept],
              reads: dict[int, Reads], group: GroupRead, at: AnchoredBlock,
              out: dict[int, Any]) -> None:
    """Each member's share of a combined read, put in ``out``: its values (copies of the kept
    ones' containers: a plan that alters what it was handed reaches neither the kept values
    nor a sibling check's), its trace's entries. One call per group of a round, not per
    check. A read kept at the pinned block is noted in each member's RoundsKept."""
    entry = group.entry if at is runners[members[0]].block else None
    for i in members:
        runner = runners[i]
        if group.requests:
            runner.trace.stats.requests += group.requests
        runner.note_account(group.accounts, at)
        handout = group.paths.handout(reads[i].paths)
        if entry is not None:
            kept[i].rounds.append(KeptRound(handout, entry))
        out[i] = handout.give(runner.trace, group.carried, runner.copies)


def _combined_slots(block: AnchoredBlock, jobs: list[Job], runners: list[Runner],
                    raw: dict[int, Slots], carry: Carry) -> dict[int, Any]:
    """Raw-slot reads of one round, one eth_getProof per contract (chunked if large) for
    every job that asks, as layout reads are combined; carried under Carry's rule."""
    groups: dict[bytes, list[int]] = {}
    for i in raw:
        groups.setdefault(jobs[i].address, []).append(i)
    out: dict[int, Any] = {}
    for address, members in groups.items():
        wanted = {i: list(dict.fromkeys(raw[i].slots)) for i in members}
        union = list(dict.fromkeys(s for i in members for s in wanted[i]))
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
                carry.keep(key, account.storage_root, dict(storage))
        except Unverifiable as exc:
            out.update({i: exc for i in members})
            continue
        except ValueError:  # a slot outside uint256 in one job: each job alone, as before
            for i in members:
                try:
                    out[i] = runners[i].slots(raw[i])
                except (Unverifiable, UsageError) as exc:
                    out[i] = exc
            continue
        for i in members:
            trace = runners[i].trace
            if carried is not None:  # the slots this check read, not its group's
                trace.carried.append({"slots": len(wanted[i]), **carried})
            trace.stats.requests += stats.requests
            trace.stats.slots += len(wanted[i])
            runners[i].note_account([account], block)
            out[i] = runners[i].record_slots(wanted[i], storage)
    return out


def _outcomes(block: AnchoredBlock, jobs: list[Job], runners: list[Runner],
              results: list[Any]) -> list[Outcome | Exception]:
    """Each job's outcome from its derivation, or the exception in its place."""
    out: list[Outcome | Exception] = []
    parts = BlockParts(block)
    for job, runner, result in zip(jobs, runners, results, strict=True):
        if not isinstance(result, Exception):
            try:
                result = outcome(block, job, runner.trace, runner.subject(), result, parts)
            except (Unverifiable, UsageError) as exc:
                result = exc
        out.append(result)
    return out
