"""The reference evaluator: the plain path the fast one must agree with (docs/design.md
§Soundness).

Every check at every block is run on its own, from nothing: a fresh proof source
(:class:`PlainSource`, the node itself below any shared cache, which cannot be weakly
referenced, so no memo of :mod:`recompute.core.caching` is ever kept for it: no parent headers,
ancestors, receipts or log scans), the recipe's own plan generator (no kept plan), every read
proven by its own ``eth_getProof`` and every proof walked on its own by the general MPT walk
with no node cache (:func:`recompute.core.prover.prove_account_plainly`); nothing is carried
from a block below, shared with another check or prefetched, and the evidence digest is
computed from the entries themselves (no kept texts). What is the same as the fast path is
what decides the answer, not how it is found: the recipe, the layout reader, the receipts'
proof, the bloom rule (a bloom has no false negatives: a block it excludes holds no log of the
contract and topic, and lists none in the evidence either way) and the evidence's assembly.

Used by the differential tests and by ``recompute watch --reference`` / ``recompute step
--reference``, for users who want to cross-check the fast path at the price of speed.
"""

from __future__ import annotations

from typing import Any

from recompute.core.anchor import AnchoredBlock, served_by
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.outcome import Outcome
from recompute.core.prover import ProvenAccount, prove_account_plainly
from recompute.layout.reader import ReadPlan
from recompute.recipes.evidence import BlockParts, outcome
from recompute.recipes.framework import Clock, Slots
from recompute.recipes.job import Job
from recompute.recipes.runner import Runner
from recompute.sources.cache import SharedSource


class PlainSource:
    """The node itself, asked afresh: a thin stand-in made for one check at one block. It
    keeps nothing, hands nothing ahead of time (no ``prefetch``) and, having no
    ``__weakref__``, gets no memo (:func:`recompute.core.caching.memo_for` returns None)."""

    __slots__ = ("node", "label", "endpoint")

    def __init__(self, source: Any):
        # below a watch's SharedSource: its raw answers are not asked
        self.node = source.live if isinstance(source, SharedSource) else source
        self.label = getattr(self.node, "label", "the node")
        self.endpoint = getattr(self.node, "endpoint", self.label)

    @property
    def max_in_flight(self) -> int:
        return 1

    def chain_id(self) -> int:
        return int(self.node.chain_id())

    def block_number(self) -> int:
        return int(self.node.block_number())

    def block_by_number(self, number: Any) -> dict[str, Any] | None:
        return self.node.block_by_number(number)

    def block_by_hash(self, block_hash: bytes) -> dict[str, Any] | None:
        return self.node.block_by_hash(block_hash)

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict[str, Any]:
        return self.node.get_proof(address, slots, block_hash)

    def block_receipts(self, block_hash: bytes) -> list[Any] | None:
        return self.node.block_receipts(block_hash)

    def transaction_receipt(self, tx_hash: str) -> dict[str, Any] | None:
        return self.node.transaction_receipt(tx_hash)

    def call(self, to: bytes, data: bytes, block_hash: bytes) -> bytes:
        return self.node.call(to, data, block_hash)


class PlainRunner(Runner):
    """A :class:`~recompute.recipes.runner.Runner` whose reads and raw slots are proven the
    plain way, one request a round (its logs and receipts are the runner's own walk, which,
    on a :class:`PlainSource`, keeps no scan, header or receipts)."""

    def read(self, paths: list[str], block: int | None = None) -> dict[str, Any]:
        at = self.block_at(block)
        plan = ReadPlan(self.layout, list(dict.fromkeys(paths)))
        accounts: list[ProvenAccount] = []
        while slots := plan.next_round():
            account = prove_account_plainly(at, self.address, sorted(slots))
            accounts.append(account)
            plan.feed(account.storage)
            self.trace.stats.requests += 1
        self.note_account(accounts, at)
        return self.record_reads(plan.results(), plan.known, at)

    def slots(self, request: Slots) -> dict[int, int]:
        wanted = list(dict.fromkeys(request.slots))
        account = prove_account_plainly(self.block, self.address, wanted)
        self.trace.stats.requests += 1
        self.note_account([account], self.block)
        return self.record_slots(wanted, account.storage)


def reference_step_many(block: AnchoredBlock, jobs: list[Job]) -> list[Outcome | Exception]:
    """:func:`recompute.recipes.job.step_many`'s answer, found the plain way: each job on
    its own, from nothing (module docstring). A job that fails gets its exception in its
    place, as there."""
    return [_reference_one(block, job) for job in jobs]


def reference_step(recipe: Any, params: dict[str, Any], block: AnchoredBlock, address: bytes,
                   layout: Any, expect: dict[str, str] | None = None,
                   compare_views: bool = False) -> Outcome:
    """:func:`recompute.recipes.job.step`, the plain way; UNVERIFIABLE as an exception."""
    (outcome,) = reference_step_many(block, [Job(recipe, params, address, layout, expect,
                                                 compare_views)])
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def _reference_one(block: AnchoredBlock, job: Job) -> Outcome | Exception:
    fresh = served_by(block, PlainSource(block.source))
    runner = PlainRunner(fresh, job.address, job.layout)
    try:
        plan = job.recipe.plan(job.params, Clock(block.number, block.timestamp))
        answer = None
        while True:
            try:
                request = plan.send(answer)
            except StopIteration as done:
                derivation = done.value
                break
            answer = runner.answer(request, job.recipe)
        if runner.account is None:  # the subject account, proven the plain way too
            runner.note_account([prove_account_plainly(fresh, job.address)], fresh)
        return outcome(fresh, job, runner.trace, runner.subject(), derivation,
                       BlockParts(fresh))
    except (Unverifiable, UsageError) as exc:
        return exc
