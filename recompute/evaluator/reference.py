"""The reference evaluator: the plain path the fast one must agree with (docs/design.md
§Soundness). It shares nothing with the fast path but the checkers and the recipes.

Every check at every block is evaluated on its own, from the terms of its recipe: the recipe's
own plan generator (no kept plan) is handed, for each request, what the checkers prove afresh
from a source that keeps nothing (:class:`PlainSource`, the node itself below any shared
cache): every read by its own ``eth_getProof``, walked by the general MPT walk with no node
cache (:func:`recompute.core.prover.prove_account_plainly`); every ancestor by its own
parentHash walk (:func:`recompute.core.anchor.ancestor`); every block's receipts proven anew
(:func:`recompute.core.receipts.prove_receipts`, after the bloom rule of
:mod:`recompute.core.bloom`: a bloom has no false negatives, and a block it excludes lists no
log in the evidence either way). Nothing is carried from a block below, shared with another
check or prefetched. The evidence is assembled here, and its digest is the sha256 of the
canonical JSON of its four parts (docs/watch.md §Evidence digest): no runner, no carry, no
kept text, no digest code of the fast path. What it takes from the fast path's modules is only
how values are written (:func:`~recompute.evaluator.evidence.json_value`, ``typed_value``,
``normalise``, ``expectation_holds``, the JSON text of :mod:`recompute.core.jsontext`) and the
``--compare-views`` calls, which add findings only.

Used by the differential tests and by ``recompute watch --reference`` / ``recompute step
--reference``, for users who want to cross-check the fast path at the price of speed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from recompute.core.anchor import AnchoredBlock, ancestor, ancestors, served_by
from recompute.core.bloom import bloom_bits, bloom_has
from recompute.core.errors import OptionError, Unverifiable, UsageError
from recompute.core.jsontext import canonical_json, json_line
from recompute.core.keccak import EMPTY_CODE_HASH
from recompute.core.outcome import Outcome, block_evidence
from recompute.core.prover import ProvenAccount, prove_account_plainly
from recompute.core.receipts import ProvenLog, prove_receipts
from recompute.core.verdict import Verdict
from recompute.evaluator.evidence import (
    compare_with_views,
    expectation_holds,
    json_value,
    typed_value,
)
from recompute.evaluator.job_record import Job, normalise
from recompute.evaluator.values import Decoded, JSONValue
from recompute.layout import Layout
from recompute.layout.reader import ReadPlan
from recompute.recipes.base import Recipe
from recompute.recipes.plan import BlockClock, Derivation, Logs, Params, Reads, ReceiptsAt, Slots
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


@dataclass
class _Consumed:
    """What one check consumed at one block, for its evidence."""

    reads: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    receipts_proven: int = 0
    blocks_walked: int = 0
    account: ProvenAccount | None = None  # the subject account at the pinned block


def reference_step_many(block: AnchoredBlock, jobs: list[Job]) -> list[Outcome | Exception]:
    """:func:`recompute.evaluator.job.step_many`'s answer, found the plain way: each check on
    its own, from nothing (module docstring). A check that fails gets its exception in its
    place, as there."""
    return [_reference_one(block, job) for job in jobs]


def reference_step(recipe: Recipe, params: Params, block: AnchoredBlock,
                   address: bytes, layout: Layout, expect: dict[str, str] | None = None,
                   compare_views: bool = False) -> Outcome:
    """:func:`recompute.evaluator.job.step`, the plain way; UNVERIFIABLE as an exception."""
    (result,) = reference_step_many(block, [Job(recipe, params, address, layout, expect,
                                                compare_views)])
    if isinstance(result, Exception):
        raise result
    return result


def _reference_one(block: AnchoredBlock, check: Job) -> Outcome | Exception:
    fresh = served_by(block, PlainSource(block.source))
    used = _Consumed()
    try:
        plan = check.recipe.plan(check.params, BlockClock(block.number, block.timestamp))
        answer: object = None
        while True:
            try:
                request = plan.send(answer)
            except StopIteration as done:
                derivation = done.value
                break
            answer = _answer(fresh, check, request, used)
        if used.account is None:  # the subject account, proven the plain way too
            used.account = prove_account_plainly(fresh, check.address)
        return _outcome(fresh, check, used, used.account, derivation)
    except (Unverifiable, UsageError) as exc:
        return exc


# ---- each request, from the checkers ----------------------------------------------------------


def _answer(block: AnchoredBlock, check: Job, request: object, used: _Consumed) -> object:
    if isinstance(request, Reads):
        return _reads(block, check, request, used)
    if isinstance(request, Slots):
        return _slots(block, check, request, used)
    if isinstance(request, Logs):
        return _logs(block, check, request, used)
    if isinstance(request, ReceiptsAt):
        at = _block_at(block, request.block, used)
        used.receipts_proven += 1
        return _contract_logs(at, check.address, used)
    raise TypeError(f"{check.recipe.name} yielded {request!r}")


def _block_at(block: AnchoredBlock, number: int | None, used: _Consumed) -> AnchoredBlock:
    """The pinned block, or its ancestor ``number`` by its own parentHash walk."""
    if number is None or number == block.number:
        return block
    if number < 0:
        raise UsageError(f"block {number} is not a block number")
    if number > block.number:  # nothing above the pin is anchored
        raise UsageError(f"block {number} is above the pinned block {block.number}: "
                         "only the pinned block and its ancestors can be read")
    used.blocks_walked = max(used.blocks_walked, block.number - number)
    return ancestor(block, number)


def _reads(block: AnchoredBlock, check: Job, request: Reads,
           used: _Consumed) -> dict[str, Decoded]:
    at = _block_at(block, request.block, used)
    plan = ReadPlan(check.layout, list(dict.fromkeys(request.paths)))
    while slots := plan.next_round():
        account = prove_account_plainly(at, check.address, sorted(slots))
        used.requests += 1
        if at is block and used.account is None:
            used.account = account
        plan.feed(account.storage)
    out = {}
    for result in plan.results():
        out[result.path] = result.value
        for slot in result.slots:
            entry: dict[str, JSONValue] = {
                "address": "0x" + check.address.hex(), "slot": f"0x{slot:064x}",
                "value": f"0x{plan.known[slot]:064x}",
                "path": result.slot_paths.get(slot, result.path)}
            if at is not block:
                entry["block"] = at.number  # read at an ancestor of the pinned block
            used.reads.append(entry)
    return out


def _slots(block: AnchoredBlock, check: Job, request: Slots, used: _Consumed) -> dict[int, int]:
    wanted = list(dict.fromkeys(request.slots))
    account = prove_account_plainly(block, check.address, wanted)
    used.requests += 1
    if used.account is None:
        used.account = account
    for slot in wanted:
        used.reads.append({"address": "0x" + check.address.hex(), "slot": f"0x{slot:064x}",
                           "value": f"0x{account.storage[slot]:064x}",
                           "path": f"slot:0x{slot:064x}"})
    return {slot: account.storage[slot] for slot in wanted}


def _logs(block: AnchoredBlock, check: Job, request: Logs,
          used: _Consumed) -> list[ProvenLog]:
    """The contract's logs from ``request.from_block`` up to the pinned block, in chain
    order: every block's receipts proven, unless its bloom excludes the contract or topic."""
    if request.from_block == block.number + 1:
        return []  # "after the pinned block, up to it": an empty range
    if request.from_block < 0:
        raise UsageError(f"block {request.from_block} is not a block number")
    if request.from_block > block.number:
        raise UsageError(f"block {request.from_block} is above the pinned block "
                         f"{block.number}: only the pinned block and its ancestors can be read")
    bits = [bloom_bits(item) for item in (check.address, request.topic0)]
    found = []
    for at in reversed(ancestors(block, request.from_block)):
        if all(bloom_has(at.header.logs_bloom, b) for b in bits):
            used.receipts_proven += 1
            found += [log for log in _contract_logs(at, check.address, used)
                      if _matches(log, request)]
    used.blocks_walked = max(used.blocks_walked, block.number - request.from_block)
    return found


def _contract_logs(block: AnchoredBlock, address: bytes, used: _Consumed) -> list[ProvenLog]:
    """The block's receipts proven, then only the logs the recipe's contract emitted (anyone
    can emit the same event signature from a contract of their own), each in the evidence."""
    logs = [log for log in prove_receipts(block).logs if log.address == address]
    used.logs += [log.to_json() for log in logs]
    return logs


def _matches(log: ProvenLog, request: Logs) -> bool:
    if not log.topics or log.topics[0] != request.topic0:
        return False
    return all(topic is None or (len(log.topics) > i and log.topics[i] == topic)
               for i, topic in enumerate(request.extra_topics, start=1))


# ---- the outcome -------------------------------------------------------------------------------


def _outcome(block: AnchoredBlock, check: Job, used: _Consumed, account: ProvenAccount,
             derivation: Derivation) -> Outcome:
    """The verdict from the derivation (or the expectations), with its evidence
    (docs/watch.md §Evidence digest), assembled here."""
    if not account.exists or account.code_hash == EMPTY_CODE_HASH:
        what = "does not exist" if not account.exists else "has no code"
        raise Unverifiable("no-contract", f"account 0x{check.address.hex()} {what} at block "
                           f"{block.number} (proven against its stateRoot): check the address "
                           "and that the contract was deployed by then")
    derived = {k: json_value(v) for k, v in derivation.derived.items()}
    evidence: dict[str, Any] = {
        **block_evidence(block),
        "recipe": check.recipe.name,
        "params": {k: normalise(v) if not hasattr(v, "as_posix") else str(v)
                   for k, v in check.params.items()},
        "contract": "0x" + check.address.hex(),
        "layout": check.layout.name,
        "reads": used.reads,
        "logs": used.logs,
        "proof_requests": used.requests,
        "receipts_proven": used.receipts_proven,
        "blocks_walked": used.blocks_walked,
        "predicate": derivation.predicate,
        "derived": derived,
        "findings": list(derivation.findings),
        **({"bounds": list(derivation.bounds)} if derivation.bounds else {}),
    }
    recorded = check.layout.runtime_code_hash
    if recorded is not None and recorded != account.code_hash:
        evidence["findings"].append({
            "finding": "code-hash-differs",
            "detail": "the proven code is not the code this layout was generated for",
            "layout_code_hash": "0x" + recorded.hex(),
            "proven_code_hash": "0x" + account.code_hash.hex()})
    if check.compare_views:
        evidence["views"] = compare_with_views(check.recipe, check.params, block,
                                               check.address, derivation.derived)
        evidence["findings"] += [{"finding": "view-disagrees", **view}
                                 for view in evidence["views"] if view["agrees"] is False]
    if check.expect:
        results = []
        for key, text in check.expect.items():
            if key not in derivation.derived:
                raise OptionError(
                    "{expect} {key}: {name} derives no {key!r} (it derives: {derived})",
                    ("expect",), key=key, name=check.recipe.name,
                    derived=", ".join(derivation.derived))
            value = derivation.derived[key]
            results.append({"key": key, "expected": text, "derived": normalise(value),
                            "holds": expectation_holds(value, text)})
        evidence["expectations"] = results
        holds = all(r["holds"] for r in results)
        detail = "; ".join(f"{r['key']} is {r['derived']}, expected {r['expected']}"
                           for r in results if not r["holds"])
    else:
        holds = derivation.holds
        found = ", ".join(f"{k} = {_json_text(v)}" for k, v in derived.items())
        detail = "" if holds else (derivation.failed
                                   or f"found {found}; healthy means {derivation.predicate}")
    digested = {"block": evidence["block"], "derived": derived, "logs": used.logs,
                "reads": used.reads}
    evidence["evidence_digest"] = hashlib.sha256(
        canonical_json(digested).encode()).hexdigest()
    values = {k: typed_value(v) for k, v in derivation.derived.items()}
    if holds:
        return Outcome(Verdict.GOOD, "ok", evidence, values=values)
    return Outcome(Verdict.BAD, "predicate-failed", evidence, detail, values)


def _json_text(value: Any) -> str:
    """A derived value in a detail: a text bare, anything else as JSON writes it."""
    return value if isinstance(value, str) else json_line(value)
