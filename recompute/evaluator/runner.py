"""The runner: one check's proofs at one anchored block (docs/design.md §Recipes).

A :class:`Runner` answers a recipe's requests for one check alone: every
:class:`~recompute.recipes.plan.Reads` becomes a layout :class:`~recompute.layout.ReadPlan`
proven with one ``eth_getProof`` per round, every :class:`~recompute.recipes.plan.Slots`
one ``eth_getProof`` of those raw slots; every :class:`~recompute.recipes.plan.Logs`
becomes receipts proven block by block against receiptsRoot, each block tied to the pinned one
by parentHash links (blocks whose authenticated logsBloom excludes the contract or the topic
are skipped: :mod:`recompute.core.bloom`). Each answer is recorded in the runner's
:class:`~recompute.evaluator.evidence.Trace`.

:func:`prove_contract` is the fast path's one way to an account: every account and slot it
uses, whoever asks (a runner, a combined read of many checks, the carry's account proof, the
subject account), is proven by :func:`recompute.core.prover.prove_account` against the anchored
block's stateRoot there. The rounds of many checks together are in
:mod:`recompute.evaluator.job`; the rules by which a kept value stands in for a proof in
:mod:`recompute.evaluator.carry`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from recompute.core.anchor import AnchoredBlock
from recompute.core.bloom import bloom_bits, bloom_has
from recompute.core.caching import (
    SHARED_NODES,
    ancestor,
    ancestors,
    keep_scan,
    kept_scan,
    prefetch_receipts,
    prove_receipts,
)
from recompute.core.errors import UsageError
from recompute.core.prover import ProofStats, ProvenAccount, prove_account
from recompute.core.receipts import ProvenLog
from recompute.evaluator.digest import ReadEntry
from recompute.evaluator.evidence import Trace
from recompute.evaluator.values import Decoded
from recompute.layout import Layout
from recompute.layout.reader import ReadPlan, ReadResult
from recompute.recipes.base import Recipe
from recompute.recipes.plan import Logs, Reads, ReceiptsAt, Slots


def prove_contract(block: AnchoredBlock, address: bytes, slots: Iterable[int] = (),
                   stats: ProofStats | None = None) -> ProvenAccount:
    """``address`` and ``slots`` proven at ``block`` (module docstring: the one path)."""
    return prove_account(block, address, slots, stats=stats, nodes=SHARED_NODES)


class Runner:
    def __init__(self, block: AnchoredBlock, address: bytes, layout: Layout):
        self.block = block
        self.address = address
        self.layout = layout
        self.trace = Trace()
        self._ancestors: list[AnchoredBlock] = [block]
        self.account: ProvenAccount | None = None  # the subject account at the pinned block
        # a combined read hands this runner's plan copies of the kept values; False: the plan
        # is a KeptPlan, which hands a recipe nothing kept (recompute.evaluator.kept_plans)
        self.copies = True

    # ---- reads ------------------------------------------------------------------------

    def block_at(self, number: int | None) -> AnchoredBlock:
        """The pinned block, or an ancestor tied to it by parentHash links."""
        if number is None or number == self.block.number:
            return self.block
        if number < 0:
            raise UsageError(f"block {number} is not a block number")
        if number > self.block.number:  # nothing above the pin is anchored
            raise UsageError(f"block {number} is above the pinned block {self.block.number}: "
                             "only the pinned block and its ancestors can be read")
        at = ancestor(self.block, number)
        self.trace.blocks_walked = max(self.trace.blocks_walked, self.block.number - number)
        return at

    def read(self, paths: list[str], block: int | None = None) -> dict[str, Decoded]:
        at = self.block_at(block)
        accounts: list[ProvenAccount] = []
        proven = prove_paths(at, self.address, self.layout, paths, accounts)
        self.trace.stats.requests += proven.requests
        self.note_account(accounts, at)
        return self.record_reads(proven.results, proven.known, at)

    def note_account(self, accounts: Sequence[ProvenAccount], at: AnchoredBlock) -> None:
        if accounts and at is self.block and self.account is None:
            self.account = accounts[0]

    def subject(self) -> ProvenAccount:
        """The subject account at the pinned block: the one a read proved, else proven now."""
        if self.account is None:
            self.account = prove_contract(self.block, self.address, stats=self.trace.stats)
        return self.account

    def record_reads(self, results: list[ReadResult], known: Mapping[int, int],
                     at: AnchoredBlock | None = None) -> dict[str, Decoded]:
        """Put proven ReadResults in this runner's trace; returns ``{path: value}``."""
        out = {}
        below = at if at is not None and at is not self.block else None
        for result in results:
            out[result.path] = result.value
            self.trace.reads += read_entries(self.address, result, known, below)
        return out

    def slots(self, request: Slots) -> dict[int, int]:
        wanted = list(dict.fromkeys(request.slots))
        account = prove_contract(self.block, self.address, wanted, stats=self.trace.stats)
        self.note_account([account], self.block)
        return self.record_slots(wanted, account.storage)

    def record_slots(self, wanted: list[int], storage: Mapping[int, int]) -> dict[int, int]:
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

        The scan is kept per (block hash, query) for the source (recompute.core.caching): at the
        next block up, the walk stops at the first ancestor whose scan is kept, takes that
        scan (``carried``, named by the header that proves it: it is on the parentHash chain
        from the pinned block) and proves only the blocks above it."""
        if request.from_block == self.block.number + 1:
            return []  # "after the pinned block, up to it": an empty range, not a mistake
        if request.from_block < 0:
            raise UsageError(f"block {request.from_block} is not a block number")
        if request.from_block > self.block.number:  # nothing above the pin is anchored
            raise UsageError(f"block {request.from_block} is above the pinned block "
                             f"{self.block.number}: only the pinned block and its ancestors can "
                             "be read")
        key = (self.address, request.topic0, request.from_block, tuple(request.extra_topics))
        bits = [bloom_bits(item) for item in (self.address, request.topic0)]
        scan: list[AnchoredBlock] = []  # newest first: blocks to prove
        found: list[ProvenLog] = []
        entries: list[dict[str, Any]] = []
        proven = 0
        index = 0
        while self.block.number >= request.from_block:
            if index == len(self._ancestors):  # one more parentHash link down
                lowest = self._ancestors[-1]
                self._ancestors += ancestors(lowest, lowest.number - 1)[1:]
            block = self._ancestors[index]
            kept = kept_scan(block, key)
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
            # signature from a contract of their own; each is in the evidence
            logs = [log for log in prove_receipts(block).logs if log.address == self.address]
            proven += 1
            entries += [log.to_json() for log in logs]
            found += [log for log in logs if _matches(log, request)]
        if self.block.number >= request.from_block:
            keep_scan(self.block, key, (tuple(found), tuple(entries), proven))
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
        signature from a contract of their own), each listed in the evidence."""
        proven = prove_receipts(block)
        self.trace.receipts_proven += 1
        logs = [log for log in proven.logs if log.address == self.address]
        self.trace.logs += [log.to_json() for log in logs]
        return logs

    # ---- the plan -----------------------------------------------------------------------

    def answer(self, request: object, recipe: Recipe) -> object:
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


def _matches(log: ProvenLog, request: Logs) -> bool:
    if not log.topics or log.topics[0] != request.topic0:
        return False
    for i, topic in enumerate(request.extra_topics, start=1):
        if topic is not None and (len(log.topics) <= i or log.topics[i] != topic):
            return False
    return True


def read_entries(address: bytes, result: ReadResult, known: Mapping[int, int],
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


class ProvenPaths:
    """What :func:`prove_paths` proved: the paths' results, every slot value known, the
    number of eth_getProof calls, and the storageRoot they were proven under (None if no slot
    was asked)."""

    __slots__ = ("results", "known", "requests", "root")

    def __init__(self, results: list[ReadResult], known: dict[int, int], requests: int,
                 root: bytes | None):
        self.results, self.known, self.requests, self.root = results, known, requests, root


def prove_paths(block: AnchoredBlock, address: bytes, layout: Layout, paths: list[str],
                accounts: list[ProvenAccount] | None = None) -> ProvenPaths:
    """Drive a ReadPlan over ``paths`` with one eth_getProof per round; each proven account
    is appended to ``accounts`` when given."""
    plan = ReadPlan(layout, list(dict.fromkeys(paths)))
    requests = 0
    root = None
    while slots := plan.next_round():
        account = prove_contract(block, address, sorted(slots))
        if accounts is not None:
            accounts.append(account)
        plan.feed(account.storage)
        root = account.storage_root
        requests += 1
    return ProvenPaths(plan.results(), plan.known, requests, root)
