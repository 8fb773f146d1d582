"""Every check at one anchored block: one :class:`Line` per check (docs/watch.md §Output).

The checks run as :func:`recompute.evaluator.job.step` runs one recipe (the same recipe runs on a
live node, on a vector and inside watch: docs/design.md §Recipes), all together through
:func:`recompute.evaluator.job.step_many`: the block is anchored once, and each round the layout
reads of every check of one contract are proven together. Its proof source is a
:class:`~recompute.sources.cache.SharedSource`: before the checks run, the slots each one read
at the previous block it was evaluated at are fetched in one ``eth_getProof`` per contract,
and the rounds are then answered from those (steady state: one call per contract per block).

An UNVERIFIABLE whose reason says the *node* is in trouble rather than the block
(:data:`NODE_TROUBLE`) is not a line about the block: :meth:`BlockEvaluator.evaluate` raises it,
and the caller retries the block (follow mode) or gives up on it after a few tries (range mode).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from recompute.core.anchor import AnchoredBlock
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.outcome import Outcome
from recompute.core.verdict import Verdict
from recompute.evaluator.job import Job, step_many
from recompute.evaluator.reference import reference_step_many
from recompute.watch.config import Check

# The node did not answer, answered with an error, or no longer knows the block (it was
# reorged away while its checks ran): try the block again rather than judge it.
NODE_TROUBLE = frozenset({"rpc-unreachable", "rpc-error", "block-unknown"})

# A JSON object as json.loads gives it: a line as written (Line.to_json), its anchor, its
# derived values, a stored audit value.
JsonObject = dict[str, Any]


@dataclass(frozen=True, init=False)
class Line:
    """One JSON line of the watch's stdout: a check's verdict at a block."""

    block: int | None  # None: node trouble before the first block was known (follow mode)
    hash: str | None
    check: str
    verdict: Verdict
    reason: str
    final: bool = False
    healthy: bool | None = None
    derived: JsonObject = field(default_factory=dict)
    evidence_digest: str | None = None
    detail: str = ""
    anchor: JsonObject | None = None  # how the block was anchored (README §Trust model)

    def __init__(self, block: int | None, hash: str | None, check: str, verdict: Verdict,
                 reason: str, final: bool = False, healthy: bool | None = None,
                 derived: JsonObject | None = None, evidence_digest: str | None = None,
                 detail: str = "", anchor: JsonObject | None = None):
        # the fields set at once (a frozen dataclass's own __init__ sets them one by one
        # through object.__setattr__: 4 us a line, 400 lines a block); frozen after, as before
        self.__dict__.update(block=block, hash=hash, check=check, verdict=verdict,
                             reason=reason, final=final, healthy=healthy,
                             derived={} if derived is None else derived,
                             evidence_digest=evidence_digest, detail=detail, anchor=anchor)

    def as_final(self) -> Line:
        if self.final:
            return self
        return Line(self.block, self.hash, self.check, self.verdict, self.reason, True,
                    self.healthy, self.derived, self.evidence_digest, self.detail, self.anchor)

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "block": self.block,
            "hash": self.hash,
            "check": self.check,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "final": self.final,
            "healthy": self.healthy,
            "derived": self.derived,
            "evidence_digest": self.evidence_digest,
        }
        if self.anchor is not None:
            out["anchor"] = self.anchor
        if self.detail:
            out["detail"] = self.detail
        return out


def anchor_summary(block: AnchoredBlock) -> JsonObject:
    """What a line says of its block's anchor: the method (``parent-link``: the head is the
    node's word unless ``confirmed_by`` lists a quorum), and the pin it hangs from."""
    return anchor_fields(block.anchor.method, block.anchor.detail)


def anchor_fields(method: str, detail: JsonObject) -> JsonObject:
    """:func:`anchor_summary` of an anchor given as its method and detail (a stored one)."""
    out: JsonObject = {"method": method}
    for key in ("root_anchor", "root_number", "pinned_hash", "quorum", "confirmed_by",
                "pinned_number", "history_path"):
        if key in detail:
            out[key] = detail[key]
    if method == "op-stack":  # an L2 block: the game it rests on (docs/l2.md)
        out.update(game=detail["game"]["address"], tier=detail["tier"],
                   l1_block=detail["l1"]["block"]["number"])
        if "basis" in detail:  # a standard release's registry root (docs/l2.md)
            out["basis"] = detail["basis"]
        if "pinned_number" in detail:
            out["game_block"] = detail["pinned_number"]
    return out


def unverifiable_lines(checks: list[Check], number: int | None, block_hash: str | None,
                       error: Unverifiable, detail: str | None = None) -> list[Line]:
    """Lines for a block the node could not be asked about (never final); ``detail``: the
    error's detail as the caller words it (the command line names its flags), else the
    library's words."""
    said = error.detail if detail is None else detail
    return [Line(number, block_hash, c.name, Verdict.UNVERIFIABLE, error.reason,
                 detail=said) for c in checks if number is None or number >= c.since]


class BlockEvaluator:
    """Evaluates every check at a block; remembers which slots each check read.

    ``reference``: every check evaluated the plain way instead
    (:func:`recompute.evaluator.reference.reference_step_many`: fresh proofs of every read, nothing
    kept, shared or prefetched), for users who cross-check the fast path (docs/watch.md
    §Reference mode); the lines are the same."""

    def __init__(self, checks: list[Check], reference: bool = False):
        self.checks = checks
        self.reference = reference
        self._learned: dict[str, list[JsonObject]] = {}  # check -> its reads at the last block
        self._jobs: dict[str, Job] = {}
        self._addresses: set[str] = set()  # every contract a check read
        self._roots: dict[bytes, object] = {}  # raw storageHash per contract at the last block
        self._lock = threading.Lock()

    def active(self, number: int) -> list[Check]:
        return [c for c in self.checks if number >= c.since]

    def evaluate(self, block: AnchoredBlock, final: bool = False) -> list[Line]:
        """Every active check's line at ``block`` (``final``: already deep enough, as a range
        audit knows before it evaluates: the lines are made final at once)."""
        checks = self.active(block.number)
        jobs = [self._job(c) for c in checks]
        if self.reference:
            outcomes = reference_step_many(block, jobs)
        else:
            self._prefetch(block, checks)
            outcomes = step_many(block, jobs)
        for outcome in outcomes:  # node trouble: no line about the block, try it again
            if isinstance(outcome, Unverifiable) and outcome.reason in NODE_TROUBLE:
                raise outcome
        lines = []
        learned: list[tuple[str, list[JsonObject]]] = []
        block_hash = "0x" + block.hash.hex()
        number = block.number
        anchor = anchor_summary(block)
        for check, outcome in zip(checks, outcomes, strict=True):
            if not isinstance(outcome, Outcome):  # an exception in its place (rarely)
                if isinstance(outcome, UsageError):  # the check cannot be asked: config error
                    raise UsageError(f"check {check.name!r} at block {block.number}: {outcome}")
                if isinstance(outcome, Unverifiable):
                    lines.append(Line(block.number, block_hash, check.name,
                                      Verdict.UNVERIFIABLE, outcome.reason, final,
                                      detail=outcome.detail, anchor=anchor))
                    continue
                if isinstance(outcome, Exception):
                    raise outcome
            evidence = outcome.evidence
            learned.append((check.name, evidence["reads"]))
            lines.append(Line(number, block_hash, check.name, outcome.verdict, outcome.reason,
                              final, check.is_healthy(outcome.verdict), evidence["derived"],
                              evidence["evidence_digest"], outcome.detail, anchor))
        self._learn(learned)
        return lines

    def _job(self, check: Check) -> Job:
        job = self._jobs.get(check.name)
        if job is None:  # one per check: what it computes once is kept (evidence params)
            job = self._jobs[check.name] = Job(check.recipe, check.params, check.address,
                                               check.layout, check.expect)
        return job

    def _learn(self, learned: list[tuple[str, list[JsonObject]]]) -> None:
        """Each check's reads at this block (the evidence's own entries, never altered,
        decoded only when a root changes), all under one lock."""
        with self._lock:
            for name, reads in learned:
                self._learned[name] = reads
                if reads:  # a recipe reads its own contract only
                    self._addresses.add(reads[0]["address"])

    def addresses(self) -> list[bytes]:
        """Every contract a check read (at the blocks evaluated so far)."""
        with self._lock:
            return [bytes.fromhex(text[2:]) for text in sorted(self._addresses)]

    def prepare(self, block: AnchoredBlock) -> None:
        """Fetch ahead (a helper thread of :func:`recompute.watch.lookahead.in_order`) the
        account proof of every contract the checks read, in one JSON-RPC batch: the one
        request a block whose storageRoots did not change needs. Raw answers into the shared
        source; nothing is verified or decided here."""
        prefetch_many = getattr(block.source, "prefetch_many", None)
        if self.reference or prefetch_many is None:
            return
        prefetch_many([(a, []) for a in self.addresses()], block.hash)

    def _slots_of(self, address: str, checks: list[Check]) -> list[int]:
        with self._lock:
            return sorted({int(read["slot"], 16) for check in checks
                           for read in self._learned.get(check.name, ())
                           if read["address"] == address})

    def _prefetch(self, block: AnchoredBlock, checks: list[Check]) -> None:
        prefetch_many = getattr(block.source, "prefetch_many", None)
        if prefetch_many is None:
            return
        addresses = self.addresses()
        with self._lock:
            roots = dict(self._roots)
        # The accounts alone first, all in one batch: where the node's storageHash is the one
        # it gave at the last block, the runner will carry the proven reads
        # (recompute.evaluator.carry Carry, which decides on the *verified* root) and needs no
        # slot proofs. This raw comparison only saves a request; a lie here costs a later
        # request, not a verdict. Then the slots of every contract whose root changed, in one
        # more batch. An answer that fails here is asked again by the checks themselves (and
        # each gets its own UNVERIFIABLE line if the node keeps answering so); node trouble
        # is raised at once.
        wanted = []
        for address, answer in self._ask(block, [(a, []) for a in addresses if a in roots],
                                         prefetch_many):
            if answer is None or _storage_hash(answer) == roots[address]:
                continue
            wanted.append(address)
        wanted += [a for a in addresses if a not in roots]
        asks = [(a, slots) for a in wanted if (slots := self._slots_of("0x" + a.hex(), checks))]
        answers = self._ask(block, asks, prefetch_many)
        with self._lock:
            for address, answer in answers:
                if answer is not None:
                    self._roots[address] = _storage_hash(answer)

    @staticmethod
    def _ask(block: AnchoredBlock, asks: list[tuple[bytes, list[int]]],
             prefetch_many: Callable[[list[tuple[bytes, list[int]]], bytes], None]
             ) -> list[tuple[bytes, JsonObject | None]]:
        """Each ``(address, slots)`` of ``asks`` fetched into the shared source in one batch,
        then its raw answer (None where it failed, unless for node trouble: raised). A batch
        answer that is not one reply per call asked raises (``rpc-malformed``): the block
        cannot be judged from that endpoint's word."""
        prefetch_many(asks, block.hash)  # the shared source's (recompute.sources.cache)
        out: list[tuple[bytes, JsonObject | None]] = []
        for address, slots in asks:
            try:
                out.append((address, block.source.get_proof(address, slots, block.hash)))
            except Unverifiable as exc:
                if exc.reason in NODE_TROUBLE:
                    raise
                out.append((address, None))
        return out


def _storage_hash(answer: object) -> object:
    return answer.get("storageHash") if isinstance(answer, dict) else None
