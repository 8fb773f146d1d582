"""Every rule by which a kept value may stand in for a fresh proof in the fast path
(docs/design.md §Soundness, rows 7 to 9).

- **Carried reads and raw slots** (:class:`Carry`): a combined read is kept per source
  (recompute.core.caching) under (contract, the layout's digest, the paths or slots asked), as a
  :class:`Kept` record naming the storageRoot it was proven under and the header it was proven
  at. At a later block it stands in for the proof only when that block's own account proof of
  the contract shows the same storageRoot (the same trie: the same words, so the same decoded
  values). A read at an ancestor is kept under the ancestor's hash, which names its state
  alone. "The same layout" is one notion: the descriptor's digest (its whole content), in the
  key and in the grouping of a round's reads (recompute.evaluator.job).
- **Hand-outs, shares, carried notes** (:class:`Share`, :class:`HandOut`,
  :class:`CarriedNotes`): made whole from one kept entry and never altered (every record here
  that is frozen holds only read-only containers: mapping proxies and tuples); a kept read
  holds the hand-outs of the sets of paths its checks asked, kept and found under the exact
  paths asked (:func:`paths_key`), and a set asked later is given one made then; a check is
  handed copies of the kept containers and a carried note of its own.
- **A kept plan answered whole** (:func:`carried_whole`, :func:`remember`): a job whose every
  round, at the last block it ran them, was answered from a kept read of its contract at that
  block under one storageRoot (:class:`RoundsKept`) is answered at a later block without its
  rounds when this block's account proof shows that root; its trace gets what the rounds would
  give it (:class:`KeptTrace`) and its derivation runs with this block's clock.

The derivation always runs with the new block's clock; the evidence names the header the
values were proven at (``carried``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from recompute.core.anchor import AnchoredBlock
from recompute.core.caching import memo_for
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.prover import ProvenAccount
from recompute.evaluator.copies import Copier, copier
from recompute.evaluator.digest import ReadEntry, ReadGroup
from recompute.evaluator.evidence import Trace
from recompute.evaluator.job_record import Job
from recompute.evaluator.kept_plans import Inputs, KeptPlan
from recompute.evaluator.runner import Runner, prove_contract, prove_paths, read_entries
from recompute.evaluator.values import Decoded, JSONValue
from recompute.layout import Layout
from recompute.recipes.plan import Derivation

V = TypeVar("V")
PathsKey = str | tuple[str, ...]  # the paths a check asked: one path alone, or all in order


def paths_key(paths: Sequence[str]) -> PathsKey:
    """The key a hand-out is kept and found under (:class:`KeptPaths`): the paths exactly as
    asked."""
    key = paths[0] if len(paths) == 1 else tuple(paths)
    return key


@dataclass(frozen=True, slots=True)
class Kept(Generic[V]):
    """A value kept from the block it was proven at, under the contract's storageRoot there."""

    root: bytes  # the storageRoot the value was proven under
    value: V
    proven_hash: bytes  # the header it was proven at
    proven_number: int


@dataclass(frozen=True, slots=True)
class Share:
    """One proven path of a combined read, as every check that asked it shares it."""

    value: Decoded  # kept, never handed out: each check gets copy(value)
    copy: Copier | None  # recompute.evaluator.copies.copier(value); None: nothing to copy
    entries: ReadGroup  # the evidence's entries for the path (never altered once made)


@dataclass(frozen=True, slots=True)
class CarriedNotes:
    """The evidence's notes for reads carried from one kept entry (``{"reads": [paths],
    contract, storage_root, proven_at, header}``): each check that carried paths from it gets
    a note of its own, made from the entry's ``base`` and the paths it asked."""

    base: Mapping[str, JSONValue]  # Carry.evidence of the entry: the same at every block

    @classmethod
    def of(cls, carry: Carry, entry: Kept[KeptPaths], address: bytes) -> CarriedNotes:
        """The notes of reads carried from ``entry``, a combined read kept by ``carry``."""
        return cls(MappingProxyType(carry.evidence(entry, address)))

    def note(self, asked: Sequence[str]) -> dict[str, JSONValue]:
        return {"reads": list(asked), **self.base}


@dataclass(frozen=True, slots=True)
class HandOut:
    """What a check that asks these paths of a combined read is handed, made with the read for
    each set of paths its checks asked (and anew for a set asked later): the paths each once,
    in order; the evidence's entries of all of them as one ReadGroup (the same entries, in the
    same order, as one group per path: the digest's text is the same); the kept values
    themselves (read-only, handed only to a KeptPlan, which hands a recipe copies); and each
    path's copier, for any other plan."""

    asked: tuple[str, ...]
    entries: ReadGroup
    values: MappingProxyType[str, Decoded]
    copies: tuple[tuple[str, Copier], ...]

    @classmethod
    def of(cls, paths: Sequence[str], shares: Mapping[str, Share]) -> HandOut:
        asked = tuple(dict.fromkeys(paths))
        entries = ReadGroup([e for path in asked for e in shares[path].entries])
        values = MappingProxyType({path: shares[path].value for path in asked})
        copies = tuple((path, c) for path in asked if (c := shares[path].copy) is not None)
        return cls(asked, entries, values, copies)

    def give(self, trace: Trace, carried: CarriedNotes | None,
             copies: bool) -> Mapping[str, Decoded]:
        """Put the entries (and the carried note) in ``trace``; the values to hand the plan:
        the kept ones, read-only (``copies`` False: a KeptPlan's), else a copy of each
        container."""
        if carried is not None:  # the paths this check read, not its group's
            trace.carried.append(carried.note(self.asked))
        trace.reads += self.entries
        trace.read_groups.append(self.entries)
        if not copies:
            return self.values
        out = self.values.copy()
        for path, copy in self.copies:
            out[path] = copy(out[path])
        return out


@dataclass(frozen=True, slots=True)
class KeptPaths:
    """A combined read's kept value: per path its Share, and the hand-outs of the sets of
    paths asked when it was read (:meth:`of`). Made whole, never altered: a set of paths asked
    later is handed a hand-out made for it then."""

    shares: Mapping[str, Share]
    handouts: Mapping[PathsKey, HandOut]

    @classmethod
    def of(cls, shares: dict[str, Share], asked: Iterable[Sequence[str]]) -> KeptPaths:
        """The kept read of ``shares``, with the hand-out of each set of paths in ``asked``."""
        handouts = {paths_key(paths): HandOut.of(paths, shares) for paths in asked}
        return cls(MappingProxyType(shares), MappingProxyType(handouts))

    def handout(self, paths: Sequence[str]) -> HandOut:
        """The hand-out of exactly ``paths``."""
        handout = self.handouts.get(paths_key(paths))
        return handout if handout is not None else HandOut.of(paths, self.shares)


@dataclass(frozen=True, slots=True)
class GroupRead:
    """One round's combined read of a group (one contract, one layout digest, one block): its
    kept value, what proving it cost, the account proofs made, the carried notes (None: proven
    now), and its kept entry (None: not kept)."""

    paths: KeptPaths
    requests: int
    accounts: tuple[ProvenAccount, ...]
    carried: CarriedNotes | None
    entry: Kept[KeptPaths] | None


@dataclass(frozen=True, slots=True)
class KeptRound:
    """A round of a check answered at the pinned block from a kept read (carried, or proven
    now and kept): the hand-out it was given and the kept entry."""

    handout: HandOut
    entry: Kept[KeptPaths]


@dataclass(slots=True)
class RoundsKept:
    """How one check's rounds were answered at one block: the rounds answered from a kept read
    at the pinned block, and how many rounds were asked in all."""

    rounds: list[KeptRound] = field(default_factory=list)
    asked: int = 0

    def whole_root(self) -> bytes | None:
        """The storageRoot every round was answered under, when every round asked was answered
        from a kept read at the pinned block under that one root; else None."""
        if not self.rounds or len(self.rounds) != self.asked:
            return None
        root = self.rounds[0].entry.root
        return root if all(r.entry.root == root for r in self.rounds) else None


class Carry:
    """Values kept from an earlier block, reused while the contract's storage is the same
    (module docstring): kept per source under :meth:`read_key` or :meth:`slots_key`."""

    def __init__(self, block: AnchoredBlock):
        self.block = block
        self.memo = memo_for(block.source, "carried-reads", 1 << 14)
        self._accounts: dict[bytes, ProvenAccount] = {}

    def account(self, address: bytes) -> ProvenAccount:
        """The contract's account proven at this block (once per contract per block)."""
        if address not in self._accounts:
            self._accounts[address] = prove_contract(self.block, address)
        return self._accounts[address]

    def read_key(self, at: AnchoredBlock, address: bytes, layout: Layout,
                 paths: list[str]) -> tuple[Hashable, ...]:
        """The key of a combined read: the contract, the layout's digest (its content: two
        layouts may place one path in different slots), the paths; at an ancestor, its hash
        too (it names that state alone)."""
        key: tuple[Hashable, ...] = ("reads", address, layout.digest, tuple(paths))
        if at is not self.block:
            key = ("reads-at", at.hash, *key[1:])
        return key

    @staticmethod
    def slots_key(address: bytes, slots: list[int]) -> tuple[Hashable, ...]:
        return ("slots", address, tuple(slots))

    def kept(self, key: Hashable, address: bytes, same_block: bool = False) -> Kept[Any] | None:
        """The kept entry for ``key`` if this block's storageRoot of ``address`` is the one
        it was proven under (one account proof per contract per block), else None; with
        ``same_block`` (the key names the block's hash) no proof is needed."""
        entry: Kept[Any] | None = self.memo.get(key) if self.memo is not None else None
        if entry is None or same_block:
            return entry
        return entry if entry.root == self.account(address).storage_root else None

    def keep(self, key: Hashable, root: bytes | None, value: V,
             at: AnchoredBlock | None = None) -> Kept[V] | None:
        """Keep ``value`` proven under ``root`` at ``at``; the kept entry (None: not kept)."""
        at = at or self.block
        if self.memo is None or root is None:
            return None
        entry = Kept(root, value, at.hash, at.number)
        self.memo.put(key, entry)
        return entry

    def evidence(self, entry: Kept[Any], address: bytes) -> dict[str, JSONValue]:
        """The evidence's note of a value carried from ``entry``."""
        return {"contract": "0x" + address.hex(), "storage_root": "0x" + entry.root.hex(),
                "proven_at": entry.proven_number, "header": "0x" + entry.proven_hash.hex()}

    def read(self, at: AnchoredBlock, address: bytes, layout: Layout,
             paths: list[str], asked: Iterable[Sequence[str]]) -> GroupRead:
        """A group's combined read of ``paths`` at ``at`` (this block or an ancestor): carried
        from a kept entry when :meth:`kept` allows, else proven (prove_paths) and kept. Per
        path: the value, how to copy it, the evidence's entries; made once for every check
        that asked the path (and for later blocks while carried), with the hand-outs of the
        sets of paths its checks ``asked``."""
        key = self.read_key(at, address, layout, paths)
        entry: Kept[KeptPaths] | None = self.kept(key, address, at is not self.block)
        if entry is not None:
            # the account proof that allowed the carry
            accounts = (self.account(address),) if at is self.block else ()
            return GroupRead(entry.value, 0, accounts, CarriedNotes.of(self, entry, address),
                             entry)
        proven_accounts: list[ProvenAccount] = []
        proven = prove_paths(at, address, layout, paths, proven_accounts)
        below = at if at is not self.block else None
        kept = KeptPaths.of({r.path: Share(r.value, copier(r.value),
                                           ReadGroup(read_entries(address, r, proven.known,
                                                                  below)))
                             for r in proven.results}, asked)
        return GroupRead(kept, proven.requests, tuple(proven_accounts), None,
                         self.keep(key, proven.root, kept, at))


@dataclass(frozen=True, slots=True)
class KeptTrace:
    """What a job answered whole puts in its trace at every block (:func:`carried_whole`),
    made once from the kept reads that answered its rounds at one block, all proven under
    ``root``: their entries, their digest groups, and each round's carried note (naming the
    header the values were proven at), as those rounds' hand-outs give them when carried.
    Never altered: each trace gets lists of its own (the entries and notes themselves are
    shared: written out, never altered)."""

    root: bytes
    reads: tuple[ReadEntry, ...]
    groups: tuple[ReadGroup, ...]
    notes: tuple[dict[str, JSONValue], ...]

    @classmethod
    def of(cls, root: bytes, rounds: Sequence[KeptRound], carry: Carry,
           address: bytes) -> KeptTrace:
        groups = tuple(r.handout.entries for r in rounds)
        notes = tuple(CarriedNotes.of(carry, r.entry, address).note(r.handout.asked)
                      for r in rounds)
        return cls(root, tuple(e for group in groups for e in group), groups, notes)

    def enter(self, trace: Trace) -> None:
        trace.reads += self.reads
        trace.read_groups += self.groups
        trace.carried += self.notes


@dataclass(frozen=True, slots=True)
class AnsweredWhole:
    """How a kept plan's last block went when every round was answered from kept reads
    (``PlanMemo.last``): the source, what those reads put in its trace, the Inputs it ended
    with."""

    source: object
    trace: KeptTrace
    leaf: Inputs


def carried_whole(block: AnchoredBlock, job: Job, runner: Runner, plan: KeptPlan,
                  carry: Carry) -> Derivation | Exception | None:
    """The job answered whole before the rounds, its derivation (or the exception that ended
    it); None: the rounds run. A KeptPlan is answered whole when every round, at the last
    block its job ran them (``PlanMemo.last``, same source), was answered from a kept read of
    its contract at that block, and this block's own account proof shows the storageRoot
    those reads were proven under. That is Carry's rule for a group (the same trie: the same
    words, the same values), applied to the job: its rounds would be answered with the same
    values, so ask the kept requests and end with the kept inputs. Its trace gets what the
    rounds would give it (the same entries; the carried notes naming the header the values
    were proven at; the account proof that allowed the carry); its derivation runs with this
    block's clock. Output is the rounds' own (the lines' bytes: same values, entries, digest)."""
    last = plan.memo.last
    if not isinstance(last, AnsweredWhole) or last.source is not block.source:
        return None
    try:
        account = carry.account(job.address)
    except Unverifiable:
        return None  # the rounds meet it, as without the kept plan
    if account.storage_root != last.trace.root:
        return None
    runner.note_account((account,), block)
    last.trace.enter(runner.trace)
    try:
        return plan.derive(last.leaf)
    except (Unverifiable, UsageError) as exc:
        return exc


def remember(block: AnchoredBlock, job: Job, plan: KeptPlan, rounds: RoundsKept,
             result: Derivation | Exception | None, carry: Carry) -> None:
    """For a KeptPlan that ran its rounds at this block: ``PlanMemo.last`` (AnsweredWhole)
    when every round was answered from a kept read at this block under one storageRoot
    (:meth:`RoundsKept.whole_root`) and it ended in a derivation, else None (the next block
    runs the rounds)."""
    if not plan.sends:
        return  # answered whole (its last is still the same)
    root, leaf = rounds.whole_root(), plan.leaf
    if root is None or leaf is None or isinstance(result, Exception):
        plan.memo.last = None
    else:
        plan.memo.last = AnsweredWhole(
            block.source, KeptTrace.of(root, rounds.rounds, carry, job.address), leaf)
