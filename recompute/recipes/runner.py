"""The runner: read plan → prove → derive (docs/design.md §Recipes).

It drives a recipe's plan against one anchored block: every
:class:`~recompute.recipes.framework.Reads`
becomes a layout :class:`~recompute.layout.ReadPlan` proven with one ``eth_getProof`` per
round, every :class:`~recompute.recipes.framework.Slots` one ``eth_getProof`` of those raw slots;
every :class:`~recompute.recipes.framework.Logs` becomes receipts proven block by block against
receiptsRoot, each block tied to the pinned one by parentHash links (blocks whose
authenticated logsBloom excludes the contract or the topic are skipped: a bloom has no false
negatives). The plan's :class:`~recompute.recipes.framework.Derivation` and an optional expectation
decide the verdict; ``--compare-views`` only adds findings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

from recompute.core.anchor import AnchoredBlock, ancestor, ancestors
from recompute.core.errors import OptionError, Unverifiable, UsageError
from recompute.core.keccak import EMPTY_CODE_HASH, keccak256
from recompute.core.memo import memo_for
from recompute.core.outcome import Outcome, block_evidence
from recompute.core.prover import ProofStats, ProvenAccount, prove_account
from recompute.core.receipts import ProvenLog, prefetch_receipts, prove_receipts
from recompute.core.verdict import Verdict
from recompute.layout import Layout
from recompute.layout.reader import ReadPlan
from recompute.recipes.copies import Copier, copier
from recompute.recipes.digest import ReadEntry, ReadGroup, canonical, evidence_digest
from recompute.recipes.framework import (
    Clock,
    Derivation,
    Logs,
    Reads,
    ReceiptsAt,
    Recipe,
    Slots,
    parse_int_text,
)
from recompute.recipes.kept_plans import KeptPlan, PlanMemo, keeps


class Trace:
    """Everything the verifier consumed, for the evidence (a plain class: one is made per
    check per block)."""

    __slots__ = ("reads", "read_groups", "logs", "blocks_walked", "receipts_proven", "carried",
                 "stats")

    def __init__(self) -> None:
        self.reads: list[dict] = []  # {address, slot, value, path}
        # the kept entry lists ``reads`` was extended with, in order (the digest's parts: made
        # once per proven path); they cover ``reads`` only if nothing else was added to it
        self.read_groups: list[ReadGroup] = []
        self.logs: list[dict] = []
        self.blocks_walked = 0
        self.receipts_proven = 0
        self.carried: list[dict] = []  # reads and scans kept from a block below
        self.stats = ProofStats()


class Runner:
    def __init__(self, block: AnchoredBlock, address: bytes, layout: Layout):
        self.block = block
        self.address = address
        self.layout = layout
        self.trace = Trace()
        self._ancestors: list[AnchoredBlock] = [block]
        self.account: ProvenAccount | None = None  # the subject account at the pinned block
        # a combined read hands this runner's plan copies of the kept values; False: the plan
        # is a KeptPlan, which hands a recipe nothing kept (recompute.recipes.kept_plans)
        self.copies = True
        # (HandOut, kept entry) of each round answered from a kept read at the pinned block
        self.kept_reads: list[tuple[HandOut, tuple]] = []

    # ---- reads ------------------------------------------------------------------------

    def block_at(self, number: int | None) -> AnchoredBlock:
        """The pinned block, or an ancestor tied to it by parentHash links."""
        if number is None or number == self.block.number:
            return self.block
        if number < 0:
            raise UsageError(f"block {number} is not a block number")
        if number > self.block.number:  # nothing above the pin is anchored (issue #11)
            raise UsageError(f"block {number} is above the pinned block {self.block.number}: "
                             "only the pinned block and its ancestors can be read")
        at = ancestor(self.block, number)
        self.trace.blocks_walked = max(self.trace.blocks_walked, self.block.number - number)
        return at

    def read(self, paths: list[str], block: int | None = None) -> dict[str, Any]:
        at = self.block_at(block)
        accounts: list[ProvenAccount] = []
        results, known, requests = prove_paths(at, self.address, self.layout, paths, accounts)
        self.trace.stats.requests += requests
        self.note_account(accounts, at)
        return self.record_reads(results, known, at)

    def note_account(self, accounts: list[ProvenAccount], at: AnchoredBlock) -> None:
        if accounts and at is self.block and self.account is None:
            self.account = accounts[0]

    def record_reads(self, results: list, known: dict[int, int],
                     at: AnchoredBlock | None = None) -> dict[str, Any]:
        """Put proven ReadResults in this runner's trace; returns ``{path: value}``."""
        out = {}
        below = at if at is not None and at is not self.block else None
        for result in results:
            out[result.path] = result.value
            self.trace.reads += read_entries(self.address, result, known, below)
        return out

    def slots(self, request: Slots) -> dict[int, int]:
        wanted = list(dict.fromkeys(request.slots))
        account = prove_account(self.block, self.address, wanted, stats=self.trace.stats)
        self.note_account([account], self.block)
        return self.record_slots(wanted, account.storage)

    def record_slots(self, wanted: list[int], storage) -> dict[int, int]:
        """Put proven raw slots in this runner's trace; returns ``{slot: value}``."""
        for slot in wanted:
            self.trace.reads.append(ReadEntry(
                address="0x" + self.address.hex(),
                slot=f"0x{slot:064x}",
                value=f"0x{storage[slot]:064x}",
                path=f"slot:0x{slot:064x}",
            ))
        return {slot: storage[slot] for slot in wanted}

    # ---- events -----------------------------------------------------------------------

    def logs(self, request: Logs) -> list[ProvenLog]:
        """Matching logs from ``request.from_block`` up to the pinned block, in chain order.

        The scan is kept per (block hash, query) for the source (recompute.core.memo): at the
        next block up, the walk stops at the first ancestor whose scan is kept, takes that
        scan (``carried``, named by the header that proves it: it is on the parentHash chain
        from the pinned block) and proves only the blocks above it."""
        if request.from_block == self.block.number + 1:
            return []  # "after the pinned block, up to it": an empty range, not a mistake
        if request.from_block < 0:
            raise UsageError(f"block {request.from_block} is not a block number")
        if request.from_block > self.block.number:  # nothing above the pin (issue #11)
            raise UsageError(f"block {request.from_block} is above the pinned block "
                             f"{self.block.number}: only the pinned block and its ancestors can "
                             "be read")
        key = (self.address, request.topic0, request.from_block, tuple(request.extra_topics))
        memo = memo_for(self.block.source, "log-scans", 1 << 12)
        bits = [bloom_bits(item) for item in (self.address, request.topic0)]
        scan: list[AnchoredBlock] = []  # newest first: blocks to prove
        found: list[ProvenLog] = []
        entries: list[dict] = []
        proven = 0
        index = 0
        while self.block.number >= request.from_block:
            if index == len(self._ancestors):  # one more parentHash link down
                lowest = self._ancestors[-1]
                self._ancestors += ancestors(lowest, lowest.number - 1)[1:]
            block = self._ancestors[index]
            kept = memo.get((block.hash, key)) if memo is not None else None
            if kept is not None:
                found, entries, proven = list(kept[0]), list(kept[1]), kept[2]
                self.trace.carried.append({
                    "logs": "0x" + request.topic0.hex(), "from_block": request.from_block,
                    "through_block": block.number, "header": "0x" + block.hash.hex()})
                break
            scan.append(block)
            if block.number == request.from_block:
                break
            index += 1
        # the blocks whose bloom may hold the event, their receipts fetched in one go
        matching = [block for block in reversed(scan)
                    if all(bloom_has(block.header.logs_bloom, b) for b in bits)]
        prefetch_receipts(matching)
        for block in matching:
            # only the logs the recipe's contract emitted: anyone can emit the same event
            # signature from a contract of their own (issue #11); each is in the evidence
            logs = [log for log in prove_receipts(block).logs if log.address == self.address]
            proven += 1
            entries += [log.to_json() for log in logs]
            found += [log for log in logs if _matches(log, request)]
        if memo is not None and self.block.number >= request.from_block:
            memo.put((self.block.hash, key), (tuple(found), tuple(entries), proven))
        self.trace.logs += entries
        self.trace.receipts_proven += proven
        self.trace.blocks_walked = max(self.trace.blocks_walked,
                                       self.block.number - request.from_block)
        return found

    def receipts_at(self, request: ReceiptsAt) -> list[ProvenLog]:
        return self._contract_logs(self.block_at(request.block))

    def _contract_logs(self, block: AnchoredBlock) -> list[ProvenLog]:
        """The one way logs reach a plan: receipts proven against ``block``'s receiptsRoot,
        then only the logs *emitted by the recipe's contract* (anyone can emit the same event
        signature from a contract of their own: issue #11), each listed in the evidence."""
        proven = prove_receipts(block)
        self.trace.receipts_proven += 1
        logs = [log for log in proven.logs if log.address == self.address]
        self.trace.logs += [log.to_json() for log in logs]
        return logs

    # ---- the plan -----------------------------------------------------------------------

    def answer(self, request, recipe: Recipe):
        """Prove what one yielded request asks for."""
        if isinstance(request, Reads):
            return self.read(request.paths, request.block)
        if isinstance(request, Slots):
            return self.slots(request)
        if isinstance(request, Logs):
            return self.logs(request)
        if isinstance(request, ReceiptsAt):
            return self.receipts_at(request)
        raise TypeError(f"{recipe.name} yielded {request!r}")


def read_entries(address: bytes, result, known: dict[int, int],
                 below: AnchoredBlock | None = None) -> list[ReadEntry]:
    """The evidence's entries for one proven path: one per slot it was read from (``block``
    names the ancestor it was read at, if not the pinned block)."""
    out = []
    for slot in result.slots:
        entry = ReadEntry(address="0x" + address.hex(), slot=f"0x{slot:064x}",
                          value=f"0x{known[slot]:064x}",
                          path=result.slot_paths.get(slot, result.path))
        if below is not None:
            entry["block"] = below.number  # read at an ancestor of the pinned block
        out.append(entry)
    return out


def prove_paths(block: AnchoredBlock, address: bytes, layout: Layout, paths: list[str],
                accounts: list[ProvenAccount] | None = None):
    """Drive a ReadPlan over ``paths`` with one eth_getProof per round.

    Returns ``(results, known slot values, number of eth_getProof calls)``; each proven
    account is appended to ``accounts`` when given.
    """
    return _prove_paths(block, address, layout, paths, accounts)[:3]


def _prove_paths(block: AnchoredBlock, address: bytes, layout: Layout, paths: list[str],
                 accounts: list[ProvenAccount] | None = None):
    """:func:`prove_paths`, plus the proven storageRoot (None if no slot was asked)."""
    plan = ReadPlan(layout, list(dict.fromkeys(paths)))
    requests = 0
    root = None
    while slots := plan.next_round():
        account = prove_account(block, address, sorted(slots))
        if accounts is not None:
            accounts.append(account)
        plan.feed(account.storage)
        root = account.storage_root
        requests += 1
    return plan.results(), plan.known, requests, root


class Carry:
    """Reads kept from an earlier block, to be reused while the contract's storage is the
    same (README §Performance, docs/watch.md): kept per source (recompute.core.memo) under
    (contract, layout, the paths or slots asked); reused at a later block only when that
    block's own account proof shows the storageRoot they were proven under (the same trie,
    so the same words and the same decoded values). The derivation still runs with the new
    block's clock; the evidence names the header the values were proven at."""

    def __init__(self, block: AnchoredBlock):
        self.block = block
        self.memo = memo_for(block.source, "carried-reads", 1 << 14)
        self._accounts: dict[bytes, ProvenAccount] = {}

    def account(self, address: bytes) -> ProvenAccount:
        """The contract's account proven at this block (once per contract per block)."""
        if address not in self._accounts:
            self._accounts[address] = prove_account(self.block, address, [])
        return self._accounts[address]

    def kept(self, key: tuple, address: bytes, same_block: bool = False):
        """The kept entry for ``key`` if this block's storageRoot of ``address`` is the one
        it was proven under (one account proof per contract per block), else None; with
        ``same_block`` (the key names the block's hash) no proof is needed."""
        entry = self.memo.get(key) if self.memo is not None else None
        if entry is None or same_block:
            return entry
        return entry if entry[0] == self.account(address).storage_root else None

    def keep(self, key: tuple, root: bytes | None, value,
             at: AnchoredBlock | None = None) -> tuple | None:
        """Keep ``value`` proven under ``root`` at ``at``; the kept entry (None: not kept)."""
        at = at or self.block
        if self.memo is None or root is None:
            return None
        entry = (root, value, at.hash, at.number)
        self.memo.put(key, entry)
        return entry

    def evidence(self, entry, address: bytes, what: dict) -> dict:
        root, _, proven_hash, proven_number = entry
        return {**what, "contract": "0x" + address.hex(), "storage_root": "0x" + root.hex(),
                "proven_at": proven_number, "header": "0x" + proven_hash.hex()}


def _matches(log: ProvenLog, request: Logs) -> bool:
    if not log.topics or log.topics[0] != request.topic0:
        return False
    for i, topic in enumerate(request.extra_topics, start=1):
        if topic is not None and (len(log.topics) <= i or log.topics[i] != topic):
            return False
    return True


def bloom_bits(item: bytes) -> tuple[tuple[int, int], ...]:
    """Yellow Paper §4.3.1 M3:2048: the three (byte, mask) pairs keccak256(item) sets."""
    digest = keccak256(item)
    out = []
    for i in (0, 2, 4):
        bit = int.from_bytes(digest[i : i + 2], "big") & 2047
        out.append((255 - bit // 8, 1 << (bit % 8)))
    return tuple(out)


def bloom_has(bloom: bytes, bits: tuple[tuple[int, int], ...]) -> bool:
    return all(bloom[byte] & mask for byte, mask in bits)


# ---- one step: recipe + expectations + views -> outcome ----------------------------------


def normalise(value: Any) -> str:
    """How a derived value compares with ``--expect k=v`` text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value.lower() if value.startswith("0x") else value
    return json.dumps(value, sort_keys=True)


@dataclass
class Job:
    """One recipe run at a block: what ``step`` and ``watch`` evaluate."""

    recipe: Recipe
    params: dict
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


def step(recipe: Recipe, params: dict, block: AnchoredBlock, address: bytes, layout: Layout,
         expect: dict[str, str] | None = None, compare_views: bool = False) -> Outcome:
    """Run one recipe at one anchored block; UNVERIFIABLE comes back as an exception."""
    (outcome,) = step_many(block, [Job(recipe, params, address, layout, expect, compare_views)])
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def step_many(block: AnchoredBlock, jobs: list[Job]) -> list[Outcome | Exception]:
    """Run many recipes at one block in lockstep: each round, every job's layout reads of the
    same contract are proven together (one eth_getProof per contract per round), so N checks
    cost about as many round trips as one. A job that fails (UNVERIFIABLE, a usage error)
    gets its exception in its place; the others go on."""
    clock = Clock(block.number, block.timestamp)
    carry = Carry(block)
    runners = [Runner(block, job.address, job.layout) for job in jobs]
    plans = [_plan(job, runner, clock) for job, runner in zip(jobs, runners, strict=True)]
    results: list[Any] = [None] * len(jobs)
    answers: dict[int, Any] = {i: None for i in range(len(jobs))}
    for i in _carried_whole(block, jobs, runners, plans, carry, results):
        del answers[i]
    while answers:
        requests = _next_requests(plans, answers, results)
        answers = _answer_round(block, jobs, runners, requests, carry, results)
    _remember(block, jobs, plans, runners, results, carry)
    return _outcomes(block, jobs, runners, results)


def _plan(job: Job, runner: Runner, clock: Clock):
    """The job's plan at this block: a SplitRecipe's through the job's kept rounds
    (recompute.recipes.kept_plans: handed the kept values themselves, it copies what it hands
    the recipe), any other recipe's generator."""
    if keeps(job.recipe):
        runner.copies = False
        return KeptPlan(job.recipe, job.params, clock, job.plan_memo)  # type: ignore[arg-type]
    return job.recipe.plan(job.params, clock)


def _carried_whole(block: AnchoredBlock, jobs: list[Job], runners: list[Runner], plans: list,
                   carry: Carry, results: list[Any]) -> list[int]:
    """The jobs answered whole before the rounds: a KeptPlan whose every round, at the last
    block its job ran them (``PlanMemo.last``, same source), was answered from a kept read of
    its contract at that block, when this block's own account proof shows the storageRoot
    those reads were proven under. That is Carry's rule for a group (the same trie: the same
    words, the same values), applied to the job: its rounds would be answered with the same
    values, so ask the kept requests and end with the kept inputs. Its trace gets what the
    rounds would give it (the same entries; the carried notes naming the header the values
    were proven at; the account proof that allowed the carry); its derivation runs with this
    block's clock. Output is the rounds' own (the lines' bytes: same values, entries, digest)."""
    done = []
    for i, plan in enumerate(plans):
        if not isinstance(plan, KeptPlan) or plan.memo.last is None:
            continue
        source, kept, leaf = plan.memo.last
        if source is not block.source:
            continue
        runner = runners[i]
        try:
            account = carry.account(jobs[i].address)
        except Unverifiable:
            continue  # the rounds meet it, as without the kept plan
        if account.storage_root != kept.root:
            continue
        runner.note_account([account], block)
        kept.enter(runner.trace)
        done.append(i)
        try:
            results[i] = plan.derive(leaf)
        except (Unverifiable, UsageError) as exc:
            results[i] = exc
    return done


def _remember(block: AnchoredBlock, jobs: list[Job], plans: list, runners: list[Runner],
              results: list[Any], carry: Carry) -> None:
    """For each KeptPlan that ran its rounds at this block: ``PlanMemo.last`` (the source,
    a KeptTrace, the Inputs it ended with) when every round was answered from a kept read at
    this block and it ended in a derivation, else None (the next block runs the rounds)."""
    for job, plan, runner, result in zip(jobs, plans, runners, results, strict=True):
        if not isinstance(plan, KeptPlan) or not plan.sends:
            continue  # not a kept plan, or answered whole (its last is still the same)
        kept = runner.kept_reads
        root = kept[0][1][0] if kept else None  # the storageRoot at this block: every
        # round's kept read was proven under it (Carry.kept) or proven now
        whole = (root is not None and plan.leaf is not None and len(kept) == plan.sends - 1
                 and all(entry[0] == root for _, entry in kept)
                 and not isinstance(result, Exception))
        plan.memo.last = (block.source, KeptTrace(root, kept, carry, job.address),
                          plan.leaf) if whole else None


class KeptTrace:
    """What a job answered whole puts in its trace at every block (_carried_whole), made once
    from the kept reads that answered its rounds at one block, all proven under ``root``:
    their entries, their digest groups, and each round's carried note (naming the header the
    values were proven at), as those rounds' hand-outs give them when carried. Never altered:
    each trace gets lists of its own."""

    __slots__ = ("root", "reads", "groups", "notes")

    def __init__(self, root: bytes, kept: list[tuple[HandOut, tuple]], carry: Carry,
                 address: bytes):
        self.root = root
        self.groups = [handout.entries for handout, _ in kept]
        self.reads = [e for group in self.groups for e in group]
        self.notes = [handout.carried_note(carry, address, entry) for handout, entry in kept]

    def enter(self, trace: Trace) -> None:
        trace.reads += self.reads
        trace.read_groups += self.groups
        trace.carried += self.notes


def _next_requests(plans: list, answers: dict[int, Any], results: list[Any]) -> dict[int, Any]:
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
                  requests: dict[int, Any], carry: Carry, results: list[Any]) -> dict[int, Any]:
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
        if isinstance(request, Reads):
            reads[i] = request
        elif isinstance(request, Slots):
            raw[i] = request
        else:
            others[i] = request
    take(_combined_reads(block, jobs, runners, reads, carry))
    take(_combined_slots(block, jobs, runners, raw, carry))
    for i, request in others.items():
        try:
            answers[i] = runners[i].answer(request, jobs[i].recipe)
        except (Unverifiable, UsageError) as exc:
            results[i] = exc
    return answers


def _outcomes(block: AnchoredBlock, jobs: list[Job], runners: list[Runner],
              results: list[Any]) -> list[Outcome | Exception]:
    """Each job's outcome from its derivation, or the exception in its place."""
    out: list[Outcome | Exception] = []
    parts = BlockParts(block)
    for job, runner, result in zip(jobs, runners, results, strict=True):
        if not isinstance(result, Exception):
            try:
                result = _outcome(block, job, runner, result, parts)
            except (Unverifiable, UsageError) as exc:
                result = exc
        out.append(result)
    return out


def _combined_reads(block, jobs, runners, reads: dict[int, Reads], carry: Carry) -> dict[int, Any]:
    groups: dict[tuple[bytes, str, int | None], list[int]] = {}
    number = block.number
    for i, request in reads.items():
        at = request.block
        job = jobs[i]
        # by the descriptor's content, never its name: two layouts of one contract name may
        # place the same path in different slots (issue #11)
        groups.setdefault((job.address, job.layout.digest, None if at == number else at),
                          []).append(i)
    out: dict[int, Any] = {}
    for (address, _, at_number), members in groups.items():
        paths = [p for i in members for p in reads[i].paths]
        accounts: list[ProvenAccount] = []
        layout = jobs[members[0]].layout
        key = ("reads", address, id(layout), tuple(paths))
        carried = None
        try:
            at = runners[members[0]].block_at(at_number)
            if at is not block:  # an earlier block's reads: its hash alone names its state
                key = ("reads-at", at.hash, *key[1:])
            entry = carry.kept(key, address, at is not block)
            if entry is not None and entry[1][2] is layout:  # the very layout (id reuse)
                shares, handouts = entry[1][3], entry[1][5]
                requests = 0
                carried = CarriedNotes.of(carry, entry, address)
                if at is block:  # the account proof that allowed the carry
                    accounts.append(carry.account(address))
            else:
                results, known, requests, root = _prove_paths(at, address, layout, paths,
                                                              accounts)
                below = at if at is not block else None
                # per path: the value, how to copy it, the evidence's entries; made once for
                # every check that asked the path (and for later blocks while carried)
                shares = {r.path: Share(r.value, copier(r.value),
                                        ReadGroup(read_entries(address, r, known, below)))
                          for r in results}
                handouts = {}
                entry = carry.keep(key, root, (results, known, layout, shares, {}, handouts), at)
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
        # the kept values, never handed out themselves: each check gets its own copy of a
        # container (_hand_out), so a plan that alters what it was handed reaches neither the
        # kept values nor a sibling check's; the words, slots and evidence entries are shared
        _hand_out(members, runners, reads, shares, handouts, at, accounts, requests, carried,
                  out, entry if at is block else None)
    return out


class Share(NamedTuple):
    """One proven path of a combined read, as every check that asked it shares it."""

    value: Any  # kept, never handed out: each check gets copy(value)
    copy: Copier | None  # recompute.recipes.copies.copier(value); None: nothing to copy
    entries: ReadGroup  # the evidence's entries for the path


class CarriedNotes:
    """The evidence's notes for reads carried from one kept entry (``{"reads": [paths],
    contract, storage_root, proven_at, header}``): one per set of paths asked, made once and
    kept with the entry, the same note in the evidence of every check (and every later block)
    that carried those paths from it. Never altered once made."""

    __slots__ = ("base", "notes")

    def __init__(self, base: dict, notes: dict):
        self.base = base  # Carry.evidence of the entry: the same at every block it is kept
        self.notes = notes  # paths asked -> note, kept with the entry

    @classmethod
    def of(cls, carry: Carry, entry: tuple, address: bytes) -> CarriedNotes:
        """The notes of reads carried from ``entry``, a combined read kept by ``carry``."""
        return cls(carry.evidence(entry, address, {}), entry[1][4])

    def note(self, asked) -> dict:
        key = asked[0] if len(asked) == 1 else tuple(asked)
        note = self.notes.get(key)
        if note is None:
            note = self.notes[key] = {"reads": list(asked), **self.base}
        return note


def _hand_out(members: list[int], runners: list[Runner], reads: dict[int, Reads],
              shares: dict[str, Share], handouts: dict, at: AnchoredBlock,
              accounts: list[ProvenAccount], requests: int, carried: CarriedNotes | None,
              out: dict[int, Any], entry: tuple | None = None) -> None:
    """Each member's share of a combined read, put in ``out``: its values (copies of the kept
    ones' containers), its trace's entries. One call per group of a round, not per check.
    ``entry``: the kept read's entry, when read at the pinned block (each runner notes it:
    Runner.kept_reads)."""
    for i in members:
        runner = runners[i]
        trace = runner.trace
        if requests:
            trace.stats.requests += requests
        runner.note_account(accounts, at)
        paths = reads[i].paths
        key = paths[0] if len(paths) == 1 else tuple(paths)
        handout = handouts.get(key)
        if handout is None:
            handout = handouts[key] = HandOut.of(paths, shares)
        if entry:
            runner.kept_reads.append((handout, entry))
        out[i] = handout.give(trace, carried, runner.copies)


class HandOut:
    """What a check that asks these paths of a combined read is handed, made once per set of
    paths and kept with the read (with its Share values, while they are carried): the paths
    each once, in order; the evidence's entries of all of them as one ReadGroup (the same
    entries, in the same order, as one group per path: the digest's text is the same); the
    kept values themselves (never altered, handed only to a KeptPlan, which hands a recipe
    copies); and each path's copier, for any other plan. Never altered once made."""

    __slots__ = ("asked", "entries", "values", "copies", "note")

    def __init__(self, asked: list[str], entries: ReadGroup, values: dict[str, Any],
                 copies: list[tuple[str, Copier]]):
        self.asked, self.entries, self.values, self.copies = asked, entries, values, copies
        # the carried note of these paths: made from the same kept entry as this hand-out,
        # so the same at every block that carries them (CarriedNotes.note)
        self.note: dict | None = None

    @classmethod
    def of(cls, paths: list[str], shares: dict[str, Share]) -> HandOut:
        asked = list(dict.fromkeys(paths))
        entries = ReadGroup([e for path in asked for e in shares[path].entries])
        values = {path: shares[path].value for path in asked}
        copies = [(path, shares[path].copy) for path in asked if shares[path].copy is not None]
        return cls(asked, entries, values, copies)  # type: ignore[arg-type]

    def give(self, trace: Trace, carried: CarriedNotes | None, copies: bool) -> dict[str, Any]:
        """Put the entries (and the carried note) in ``trace``; the values to hand the plan:
        the kept ones (``copies`` False: a KeptPlan's), else a copy of each container."""
        if carried is not None:  # the paths this check read, not its group's
            trace.carried.append(self.note or self._note(carried))
        trace.reads += self.entries
        trace.read_groups.append(self.entries)
        if not copies:
            return self.values
        out = self.values.copy()
        for path, copy in self.copies:
            out[path] = copy(out[path])
        return out

    def carried_note(self, carry: Carry, address: bytes, entry: tuple) -> dict:
        """The note of these paths carried from ``entry``, the kept read this hand-out was
        made from (the one :meth:`give` puts when the group's read is carried)."""
        return self.note or self._note(CarriedNotes.of(carry, entry, address))

    def _note(self, carried: CarriedNotes) -> dict:
        note = self.note = carried.note(self.asked)
        return note


def _combined_slots(block, jobs, runners, raw: dict[int, Slots], carry: Carry) -> dict[int, Any]:
    """Raw-slot reads of one round, one eth_getProof per contract (chunked if large) for
    every job that asks, as layout reads are combined."""
    groups: dict[bytes, list[int]] = {}
    for i in raw:
        groups.setdefault(jobs[i].address, []).append(i)
    out: dict[int, Any] = {}
    for address, members in groups.items():
        wanted = {i: list(dict.fromkeys(raw[i].slots)) for i in members}
        union = list(dict.fromkeys(s for i in members for s in wanted[i]))
        stats = ProofStats()
        key = ("slots", address, tuple(union))
        carried = None
        try:
            entry = carry.kept(key, address)
            if entry is not None:
                storage = entry[1]
                carried = carry.evidence(entry, address, {})  # each check adds its count
                account = carry.account(address)  # the proof that allowed the carry
            else:
                account = prove_account(block, address, union, stats=stats)
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
            if carried is not None:  # the slots this check read, not its group's
                runners[i].trace.carried.append({"slots": len(wanted[i]), **carried})
            runners[i].trace.stats.requests += stats.requests
            runners[i].trace.stats.slots += len(wanted[i])
            runners[i].note_account([account], block)
            out[i] = runners[i].record_slots(wanted[i], storage)
    return out


class BlockParts:
    """What every outcome at one block says of the block, made once per block: the evidence's
    block fields and the block's canonical text for the digest."""

    def __init__(self, block: AnchoredBlock):
        self.evidence = block_evidence(block)
        self.block_text = canonical(self.evidence["block"])


def _outcome(block: AnchoredBlock, job: Job, runner: Runner, derivation: Derivation,
             parts: BlockParts | None = None) -> Outcome:
    recipe, params, address, layout = job.recipe, job.params, job.address, job.layout
    expect, compare_views = job.expect, job.compare_views
    derived = derivation.derived
    account = subject_account(block, job, runner)
    parts = parts or BlockParts(block)
    trace = runner.trace
    evidence = {
        **parts.evidence,
        "recipe": recipe.name,
        "params": dict(job.evidence_params),
        "contract": job.contract_text,
        "layout": layout.name,
        "reads": trace.reads,
        "logs": trace.logs,
        "proof_requests": trace.stats.requests,
        "receipts_proven": trace.receipts_proven,
        "blocks_walked": trace.blocks_walked,
        **({"carried": trace.carried} if trace.carried else {}),
        "predicate": derivation.predicate,
        "derived": {k: _json_value(v) for k, v in derived.items()},
        "findings": list(derivation.findings),
        **({"bounds": list(derivation.bounds)} if derivation.bounds else {}),
    }
    recorded = layout.runtime_code_hash
    if recorded is not None and recorded != account.code_hash:
        evidence["findings"].append({
            "finding": "code-hash-differs",
            "detail": "the proven code is not the code this layout was generated for",
            "layout_code_hash": "0x" + recorded.hex(),
            "proven_code_hash": "0x" + account.code_hash.hex()})
    if compare_views:
        evidence["views"] = compare_with_views(recipe, params, block, address, derived)
        for view in evidence["views"]:
            if view["agrees"] is False:
                evidence["findings"].append({"finding": "view-disagrees", **view})
    if expect:
        results = []
        for key, text in expect.items():
            if key not in derived:
                raise OptionError(
                    "{expect} {key}: {name} derives no {key!r} (it derives: {derived})",
                    ("expect",), key=key, name=recipe.name, derived=", ".join(derived))
            got = normalise(derived[key])
            results.append({"key": key, "expected": text, "derived": got,
                            "holds": expectation_holds(derived[key], text)})
        evidence["expectations"] = results
        holds = all(r["holds"] for r in results)
        detail = "" if holds else "; ".join(
            f"{r['key']} is {r['derived']}, expected {r['expected']}" for r in results
            if not r["holds"])
    else:
        holds = derivation.holds
        detail = "" if holds else (derivation.failed or _found(derivation))
    evidence["evidence_digest"] = evidence_digest(parts.block_text, evidence["reads"],
                                                  evidence["logs"], evidence["derived"],
                                                  trace.read_groups)
    if holds:
        return Outcome(Verdict.GOOD, "ok", evidence)
    return Outcome(Verdict.BAD, "predicate-failed", evidence, detail)


def _found(derivation: Derivation) -> str:
    """A BAD verdict's detail when the recipe says no more: what it derived, then what
    should have held."""
    found = ", ".join(f"{k} = {_json_value(v)}" for k, v in derivation.derived.items())
    return f"found {found}; healthy means {derivation.predicate}"


def subject_account(block: AnchoredBlock, job: Job, runner: Runner) -> ProvenAccount:
    """The recipe's contract at the pinned block, which must be a contract: an account proven
    absent, or without code (a mistyped address, an externally owned account, a block before
    deployment) reads as zeros everywhere, so no verdict can be drawn from it (issue #11):
    ``no-contract``."""
    account = runner.account or prove_account(block, job.address, [],
                                              stats=runner.trace.stats)
    if not account.exists or account.code_hash == EMPTY_CODE_HASH:
        what = "does not exist" if not account.exists else "has no code"
        raise Unverifiable("no-contract", f"account 0x{job.address.hex()} {what} at block "
                           f"{block.number} (proven against its stateRoot): check the address "
                           "and that the contract was deployed by then")
    return account


def expectation_holds(value: Any, text: str) -> bool:
    """Does a derived value equal the expected text? Integers compare as numbers (decimal or
    0x-hex: ``0x69113928`` is ``1762736424``), booleans as true/false, the rest as text."""
    if isinstance(value, bool):
        return normalise(value) == text.strip().lower()
    if isinstance(value, int):
        return parse_int_text(text) == value
    return normalise(value) == _normal_text(text)


def _normal_text(text: str) -> str:
    lowered = text.strip()
    if lowered.lower() in ("true", "false"):
        return lowered.lower()
    if lowered.startswith(("0x", "0X")):
        return lowered.lower()
    if lowered.lstrip("-").isdigit():
        return str(int(lowered))
    return lowered


def _json_value(value: Any) -> Any:
    kind = value.__class__  # the common kinds first (exactly str, exactly int: not bool)
    if kind is str:
        return value
    if kind is int:
        return str(value)
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    return value


def compare_with_views(recipe: Recipe, params: dict, block: AnchoredBlock, address: bytes,
                       derived: dict) -> list[dict]:
    """Call each view the recipe names at the same block; record agreement per value."""
    from eth_abi import decode as abi_decode  # only --compare-views needs the full ABI codec
    from eth_abi import encode as abi_encode

    out = []
    for check in recipe.views(params):
        selector = keccak256(check.signature.encode())[:4]
        data = selector + abi_encode(list(check.arg_types), list(check.args))
        try:
            raw = block.source.call(address, data, block.hash)
            returned = tuple(abi_decode(list(check.returns), raw))
        except Unverifiable as exc:  # the node would not call it: nothing was compared
            out.append({"view": check.signature, "compared": False, "agrees": None,
                        "skipped": exc.reason, "detail": exc.detail[:160]})
            continue
        except Exception as exc:  # a view that reverts or returns garbage is itself a finding
            out.append({"view": check.signature, "agrees": False, "error": str(exc)[:160]})
            continue
        for name, (view_value, derived_value) in check.compare(returned, derived).items():
            out.append({
                "view": check.signature,
                "value": name,
                "view_says": _json_value(view_value),
                "storage_says": _json_value(derived_value),
                "compared": True,
                "agrees": normalise(view_value) == normalise(derived_value),
            })
    return out
