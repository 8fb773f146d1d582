"""The light-client store: from one trusted beacon block root to authenticated execution
headers (consensus-specs altair sync-protocol §Light client initialization and §Light client
state updates, with the capella / deneb / electra modifications).

A :class:`LightClientStore` is immutable: :func:`bootstrap` makes the first one, and
:meth:`LightClientStore.apply_update` validates an update and returns the next store, or
raises ``Unverifiable('invalid-consensus-proof', …)`` and changes nothing. What it trusts:
the one block root given to :func:`bootstrap`, and a 2/3 supermajority of each period's sync
committee. What it yields: :class:`ExecutionHeader`, only for headers it has verified.

Not implemented, on purpose: process_light_client_store_force_update (it promotes a header
no finality proof covers to finalized when sync stalls; recompute would rather answer
UNVERIFIABLE than pin an unfinalized block as final).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from recompute.lightclient.bls import InvalidKey, fast_aggregate_verify
from recompute.lightclient.failures import INVALID, Unverifiable, invalid
from recompute.lightclient.networks import LC_FORKS, Network
from recompute.lightclient.proofs import (
    current_sync_committee_gindex_at_slot,
    finalized_root_gindex_at_slot,
    is_valid_light_client_header,
    is_valid_normalized_merkle_branch,
    next_sync_committee_gindex_at_slot,
    sync_committee_signing_root,
)
from recompute.lightclient.ssz import (
    LightClientBootstrap,
    LightClientHeader,
    LightClientUpdate,
    SyncCommittee,
)

# altair sync-protocol §Preset
MIN_SYNC_COMMITTEE_PARTICIPANTS = 1
GENESIS_SLOT = 0


class StaleUpdate(Unverifiable):
    """A well-formed update that brings nothing new (the spec's 'update is relevant' check):
    its attested header is not newer than the finalized one and it supplies no committee.
    A syncing client may skip it; it is never applied."""

    def __init__(self, detail: str):
        super().__init__(INVALID, detail)


_MINT = object()


@dataclass(frozen=True)
class ExecutionHeader:
    """Execution-block fields the light client has authenticated: the execution header sits
    under a beacon header's body_root (branch at EXECUTION_PAYLOAD_GINDEX 25), and that beacon
    header is the trusted one, or signed by 2/3 of a sync committee reached from it (attested,
    ``finalized=False``), or proven finalized in such a header's state (``finalized=True``).

    Only this package constructs it. ``transactions_root``/``withdrawals_root`` are SSZ roots
    (not the trie roots) and electra's requests hash is absent, so the block's RLP header
    cannot be rebuilt from a light-client header: ``block_hash`` is the anchor to pin."""

    block_hash: bytes
    parent_hash: bytes
    state_root: bytes
    receipts_root: bytes
    logs_bloom: bytes
    block_number: int
    timestamp: int
    beacon_slot: int
    beacon_root: bytes
    finalized: bool
    _mint: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._mint is not _MINT:
            raise TypeError("only recompute.lightclient constructs an ExecutionHeader")


def execution_header(network: Network, header: LightClientHeader,
                     finalized: bool) -> ExecutionHeader:
    """The authenticated execution fields of a header the store holds (already checked by
    is_valid_light_client_header when it entered the store; checked again here)."""
    if not network.is_active("capella", header.slot) or header.is_empty():
        raise invalid(f"the header at slot {header.slot} has no execution payload (pre-capella)")
    if not is_valid_light_client_header(network, header):
        raise invalid(f"execution branch of the header at slot {header.slot} does not verify")
    execution = header.execution
    return ExecutionHeader(
        block_hash=bytes(execution.block_hash),
        parent_hash=bytes(execution.parent_hash),
        state_root=bytes(execution.state_root),
        receipts_root=bytes(execution.receipts_root),
        logs_bloom=bytes(execution.logs_bloom),
        block_number=int(execution.block_number),
        timestamp=int(execution.timestamp),
        beacon_slot=header.slot,
        beacon_root=header.beacon_root,
        finalized=finalized,
        _mint=_MINT,
    )


@dataclass(frozen=True, eq=False)
class LightClientStore:
    """altair sync-protocol §LightClientStore, immutable, plus the network it follows and the
    participation of the last signature it applied. ``next_sync_committee`` all-zero means
    'not known yet' (§is_next_sync_committee_known)."""

    network: Network
    finalized_header: LightClientHeader
    current_sync_committee: SyncCommittee
    next_sync_committee: SyncCommittee
    optimistic_header: LightClientHeader
    best_valid_update: LightClientUpdate | None = None
    previous_max_active_participants: int = 0
    current_max_active_participants: int = 0
    last_participation: tuple[int, int] | None = None  # (signers, committee size)

    @property
    def sync_period(self) -> int:
        return self.network.period_at_slot(self.finalized_header.slot)

    @property
    def next_sync_committee_known(self) -> bool:
        return not self.next_sync_committee.is_zero()

    def finalized_execution(self) -> ExecutionHeader:
        """The execution header of the finalized beacon header."""
        return execution_header(self.network, self.finalized_header, finalized=True)

    def optimistic_execution(self) -> ExecutionHeader:
        """The execution header of the optimistic (attested, not yet finalized) header."""
        finalized = self.optimistic_header.beacon_root == self.finalized_header.beacon_root
        return execution_header(self.network, self.optimistic_header, finalized=finalized)

    def apply_update(self, update: LightClientUpdate, *, current_slot: int) -> LightClientStore:
        """altair sync-protocol §process_light_client_update (and §process_light_client_
        finality_update / §process_light_client_optimistic_update, whose updates arrive here
        in LightClientUpdate form): validate, then return the store with the update applied.
        ``current_slot`` is the local clock's slot (no signature may come from the future)."""
        validate_light_client_update(self, update, current_slot)
        return process_validated_update(self, update)


def bootstrap(trusted_block_root: bytes, data: LightClientBootstrap,
              network: Network) -> LightClientStore:
    """altair sync-protocol §initialize_light_client_store: the bootstrap's header must hash
    to the trusted root, and its current sync committee must be proven in that header's
    state (gindex 54, or 86 from electra on, chosen by the header's slot)."""
    header = data.header
    _check_fork(network, data.version, header.slot, "bootstrap")
    if header.beacon_root != bytes(trusted_block_root):
        raise invalid(f"bootstrap header root 0x{header.beacon_root.hex()} is not the trusted "
                      f"block root 0x{bytes(trusted_block_root).hex()}")
    if not is_valid_light_client_header(network, header):
        raise invalid(f"execution branch of the bootstrap header (slot {header.slot}) does not "
                      "verify")
    if not is_valid_normalized_merkle_branch(
        leaf=data.current_sync_committee.root,
        branch=data.current_sync_committee_branch,
        gindex=current_sync_committee_gindex_at_slot(network, header.slot),
        root=bytes(header.beacon.state_root),
    ):
        raise invalid(f"current_sync_committee_branch of the bootstrap (slot {header.slot}) does "
                      "not verify")
    return LightClientStore(
        network=network,
        finalized_header=header,
        current_sync_committee=data.current_sync_committee,
        next_sync_committee=SyncCommittee.zero(network.sync_committee_size),
        optimistic_header=header,
    )


def has_supermajority(signers: int, size: int) -> bool:
    return signers * 3 >= size * 2


def validate_light_client_update(store: LightClientStore, update: LightClientUpdate,
                                 current_slot: int) -> None:
    """altair sync-protocol §validate_light_client_update, every assert a one-line
    ``invalid-consensus-proof`` (or :class:`StaleUpdate` for the relevance check). The spec's
    steps in its order; the period, finality and next-sync-committee steps in helpers named
    after them."""
    network = store.network
    aggregate = update.sync_aggregate
    signers, size = aggregate.participants, len(aggregate.bits)
    attested = update.attested_header
    attested_slot, finalized_slot = attested.slot, update.finalized_header.slot
    what = f"{update.kind} attested at slot {attested_slot}"
    _check_fork(network, update.version, attested_slot, what)

    # recompute requires a 2/3 supermajority of the sync committee for every update before
    # anything of it is applied, optimistic header included: the trust model of recompute's
    # light-client anchor is "one checkpoint root + 2/3 of the sync committee". This is
    # stricter than the spec, where MIN_SYNC_COMMITTEE_PARTICIPANTS (1) is only the floor
    # for an update to be valid, 2/3 is the supermajority for applying finality, and the
    # optimistic header may move on more than half the recent maximum participation.
    if signers < MIN_SYNC_COMMITTEE_PARTICIPANTS or not has_supermajority(signers, size):
        raise invalid(f"{what}: {signers}/{size} sync committee signers, below the 2/3 "
                      "supermajority")

    if not is_valid_light_client_header(network, attested):
        raise invalid(f"{what}: execution branch of the attested header does not verify")
    if not current_slot >= update.signature_slot > attested_slot >= finalized_slot:
        raise invalid(f"{what}: slots out of order (current {current_slot} >= signature "
                      f"{update.signature_slot} > attested {attested_slot} >= finalized "
                      f"{finalized_slot} fails)")
    store_period = store.sync_period
    signature_period = _check_signature_period(store, update, what)

    attested_period = network.period_at_slot(attested_slot)
    is_sync_update = is_sync_committee_update(update)
    update_has_next_sync_committee = (not store.next_sync_committee_known and is_sync_update
                                      and attested_period == store_period)
    if not (attested_slot > store.finalized_header.slot or update_has_next_sync_committee):
        raise StaleUpdate(f"{what}: not newer than the finalized header (slot "
                          f"{store.finalized_header.slot}) and brings no new sync committee")

    _check_finality_branch(network, update, what)
    _check_next_sync_committee_branch(store, update, is_sync_update, attested_period, what)

    committee = (store.current_sync_committee if signature_period == store_period
                 else store.next_sync_committee)
    verify_sync_aggregate(network, update, committee)


def _check_signature_period(store: LightClientStore, update: LightClientUpdate,
                            what: str) -> int:
    """§validate_light_client_update "Verify update does not skip a sync committee period":
    the signature's period is the store's, or the next when its committee is known."""
    store_period = store.sync_period
    signature_period = store.network.period_at_slot(update.signature_slot)
    if signature_period < store_period:
        raise invalid(f"{what}: signed in period {signature_period}, before the store's period "
                      f"{store_period} (the trusted period)")
    allowed = (store_period, store_period + 1) if store.next_sync_committee_known else (
        store_period,)
    if signature_period not in allowed:
        raise invalid(f"{what}: signed in period {signature_period}, but the store (period "
                      f"{store_period}) knows committees only for period(s) "
                      f"{', '.join(map(str, allowed))}")
    return signature_period


def _check_finality_branch(network: Network, update: LightClientUpdate, what: str) -> None:
    """§validate_light_client_update "Verify that the finality_branch, if present, confirms
    finalized_header to match the finalized checkpoint root saved in the state of
    attested_header"."""
    finalized_slot = update.finalized_header.slot
    if not is_finality_update(update):
        if not update.finalized_header.is_empty():
            raise invalid(f"{what}: a finalized header without a finality branch")
        return
    if finalized_slot == GENESIS_SLOT:
        if not update.finalized_header.is_empty():
            raise invalid(f"{what}: a finalized header at the genesis slot must be empty")
        finalized_root = bytes(32)
    else:
        if not is_valid_light_client_header(network, update.finalized_header):
            raise invalid(f"{what}: execution branch of the finalized header (slot "
                          f"{finalized_slot}) does not verify")
        finalized_root = update.finalized_header.beacon_root
    attested = update.attested_header
    if not is_valid_normalized_merkle_branch(
        leaf=finalized_root,
        branch=update.finality_branch,
        gindex=finalized_root_gindex_at_slot(network, attested.slot),
        root=bytes(attested.beacon.state_root),
    ):
        raise invalid(f"{what}: finality_branch does not verify")


def _check_next_sync_committee_branch(store: LightClientStore, update: LightClientUpdate,
                                      is_sync_update: bool, attested_period: int,
                                      what: str) -> None:
    """§validate_light_client_update "Verify that the next_sync_committee, if present,
    actually is the next sync committee saved in the state of the attested_header"."""
    if not is_sync_update:
        if not update.next_sync_committee.is_zero():
            raise invalid(f"{what}: a next sync committee without a branch")
        return
    if (attested_period == store.sync_period and store.next_sync_committee_known
            and update.next_sync_committee.root != store.next_sync_committee.root):
        raise invalid(f"{what}: next sync committee differs from the one already known")
    attested = update.attested_header
    if not is_valid_normalized_merkle_branch(
        leaf=update.next_sync_committee.root,
        branch=update.next_sync_committee_branch,
        gindex=next_sync_committee_gindex_at_slot(store.network, attested.slot),
        root=bytes(attested.beacon.state_root),
    ):
        raise invalid(f"{what}: next_sync_committee_branch does not verify")


def verify_sync_aggregate(network: Network, update: LightClientUpdate,
                          committee: SyncCommittee) -> None:
    """The last check of §validate_light_client_update: FastAggregateVerify of the committee
    members whose bits are set, over the attested header's signing root."""
    aggregate = update.sync_aggregate
    what = f"{update.kind} attested at slot {update.attested_header.slot}"
    if len(aggregate.bits) != len(committee.pubkeys):
        raise invalid(f"{what}: {len(aggregate.bits)} participation bits for a committee of "
                      f"{len(committee.pubkeys)}")
    signers = [key for bit, key in zip(aggregate.bits, committee.pubkeys, strict=True) if bit]
    message = sync_committee_signing_root(network, update.attested_header.beacon_root,
                                          update.signature_slot)
    try:
        valid = fast_aggregate_verify(signers, message, aggregate.signature)
    except InvalidKey as error:
        raise invalid(f"{what}: a sync committee key fails KeyValidate ({error})") from None
    if not valid:
        raise invalid(f"{what}: sync committee signature does not verify ({len(signers)}/"
                      f"{len(committee.pubkeys)} signers, fork version "
                      f"0x{network.fork_at_slot(max(update.signature_slot, 1) - 1).version.hex()})")


def process_validated_update(store: LightClientStore,
                             update: LightClientUpdate) -> LightClientStore:
    """The state changes of altair sync-protocol §process_light_client_update, for an update
    :func:`validate_light_client_update` accepted."""
    network = store.network
    signers, size = update.sync_aggregate.participants, len(update.sync_aggregate.bits)
    best = store.best_valid_update
    if best is None or is_better_update(network, update, best):
        best = update
    store = replace(
        store,
        best_valid_update=best,
        current_max_active_participants=max(store.current_max_active_participants, signers),
        last_participation=(signers, size),
    )
    if (signers > get_safety_threshold(store)
            and update.attested_header.slot > store.optimistic_header.slot):
        store = replace(store, optimistic_header=update.attested_header)

    update_has_finalized_next_sync_committee = (
        not store.next_sync_committee_known
        and is_sync_committee_update(update)
        and is_finality_update(update)
        and network.period_at_slot(update.finalized_header.slot)
        == network.period_at_slot(update.attested_header.slot)
    )
    if has_supermajority(signers, size) and (
        update.finalized_header.slot > store.finalized_header.slot
        or update_has_finalized_next_sync_committee
    ):
        store = replace(apply_light_client_update(store, update), best_valid_update=None)
    return store


def apply_light_client_update(store: LightClientStore,
                              update: LightClientUpdate) -> LightClientStore:
    """altair sync-protocol §apply_light_client_update. No checks of its own: call it only
    with an update :func:`validate_light_client_update` accepted."""
    network = store.network
    store_period = store.sync_period
    finalized_period = network.period_at_slot(update.finalized_header.slot)
    if not store.next_sync_committee_known:
        if finalized_period != store_period:
            raise invalid(f"update finalizes period {finalized_period} while the store's next "
                          f"committee (period {store_period + 1}) is unknown")
        store = replace(store, next_sync_committee=update.next_sync_committee)
    elif finalized_period == store_period + 1:
        store = replace(
            store,
            current_sync_committee=store.next_sync_committee,
            next_sync_committee=update.next_sync_committee,
            previous_max_active_participants=store.current_max_active_participants,
            current_max_active_participants=0,
        )
    if update.finalized_header.slot > store.finalized_header.slot:
        store = replace(store, finalized_header=update.finalized_header)
        if store.finalized_header.slot > store.optimistic_header.slot:
            store = replace(store, optimistic_header=store.finalized_header)
    return store


def is_sync_committee_update(update: LightClientUpdate) -> bool:
    """altair sync-protocol §is_sync_committee_update."""
    return any(any(node) for node in update.next_sync_committee_branch)


def is_finality_update(update: LightClientUpdate) -> bool:
    """altair sync-protocol §is_finality_update."""
    return any(any(node) for node in update.finality_branch)


def get_safety_threshold(store: LightClientStore) -> int:
    """altair sync-protocol §get_safety_threshold."""
    return max(store.previous_max_active_participants, store.current_max_active_participants) // 2


def is_better_update(network: Network, new: LightClientUpdate, old: LightClientUpdate) -> bool:
    """altair sync-protocol §is_better_update: which of two valid updates to keep as the
    period's best (supermajority, relevant committee, finality, participation, age)."""
    size = len(new.sync_aggregate.bits)
    new_signers, old_signers = new.sync_aggregate.participants, old.sync_aggregate.participants
    new_super = has_supermajority(new_signers, size)
    old_super = has_supermajority(old_signers, size)
    if new_super != old_super:
        return new_super
    if not new_super and new_signers != old_signers:
        return new_signers > old_signers

    def relevant_committee(update: LightClientUpdate) -> bool:
        return is_sync_committee_update(update) and (
            network.period_at_slot(update.attested_header.slot)
            == network.period_at_slot(update.signature_slot))

    if relevant_committee(new) != relevant_committee(old):
        return relevant_committee(new)
    new_finality, old_finality = is_finality_update(new), is_finality_update(old)
    if new_finality != old_finality:
        return new_finality

    def committee_finality(update: LightClientUpdate) -> bool:
        return (network.period_at_slot(update.finalized_header.slot)
                == network.period_at_slot(update.attested_header.slot))

    if new_finality and committee_finality(new) != committee_finality(old):
        return committee_finality(new)
    if new_signers != old_signers:
        return new_signers > old_signers
    if new.attested_header.slot != old.attested_header.slot:
        return new.attested_header.slot < old.attested_header.slot
    return new.signature_slot < old.signature_slot


def verify_committee_chain(updates: Sequence[LightClientUpdate], later: SyncCommittee,
                           network: Network) -> None:
    """Check updates of consecutive periods that come *before* a trusted store's period as a
    chain among themselves: each update's next sync committee is proven in its attested
    state, update k+1 is signed by 2/3 of update k's next committee, and the last update's
    next committee is ``later`` (the trusted store's current committee).

    This shows the committees link up to the trusted one; it does not authenticate the older
    headers (trust flows forward from a checkpoint, not backward), and the first update's own
    signature cannot be checked (its committee is in none of them). Nothing is applied."""
    if not updates:
        raise invalid("an empty chain of updates")
    for index, update in enumerate(updates):
        attested = update.attested_header
        what = f"update attested at slot {attested.slot}"
        _check_fork(network, update.version, attested.slot, what)
        period = network.period_at_slot(attested.slot)
        if index and period != network.period_at_slot(updates[index - 1].attested_header.slot) + 1:
            raise invalid(f"{what}: period {period} does not follow the previous update's")
        if network.period_at_slot(update.signature_slot) != period:
            raise invalid(f"{what}: signed in another period than it attests")
        if not is_valid_light_client_header(network, attested):
            raise invalid(f"{what}: execution branch of the attested header does not verify")
        if not is_sync_committee_update(update) or not is_valid_normalized_merkle_branch(
            leaf=update.next_sync_committee.root,
            branch=update.next_sync_committee_branch,
            gindex=next_sync_committee_gindex_at_slot(network, attested.slot),
            root=bytes(attested.beacon.state_root),
        ):
            raise invalid(f"{what}: next_sync_committee_branch does not verify")
        if index:
            signers = update.sync_aggregate.participants
            if not has_supermajority(signers, len(update.sync_aggregate.bits)):
                raise invalid(f"{what}: {signers} signers, below the 2/3 supermajority")
            verify_sync_aggregate(network, update, updates[index - 1].next_sync_committee)
    if updates[-1].next_sync_committee.root != later.root:
        raise invalid("the last update's next sync committee is not the trusted committee")


def _check_fork(network: Network, version: str, slot: int, what: str) -> None:
    """The data's fork (beacon API ``version``) must be the network's fork at the header's
    slot: it fixes the branch depths and the gindices."""
    fork = network.fork_at_slot(slot).name
    if fork not in LC_FORKS:
        raise invalid(f"{what}: the network's fork at slot {slot} is {fork}, which has no "
                      "light-client data this client reads")
    if version != fork:
        raise invalid(f"{what}: data of fork {version}, but slot {slot} is in {fork} on "
                      f"{network.name}")
