"""From the light client's authenticated execution header to an anchored block
(the ``light-client`` anchor of recompute.core.anchor; docs/lightclient.md).

``--block finalized`` (the default) is the store's finalized execution block; ``--block
latest`` the newest optimistic header signed by 2/3 of the sync committee; ``--block N`` at
or below one of them is reached from the lowest of the two that covers it
(:func:`recompute.core.hops.reach`: hops through the history storage contract, or re-hashed
parentHash links as ``--checkpoint`` walks). The evidence records what the pin rests on: the
trusted root, the finalized beacon slot and root, the sync-committee period and the
participation of the last signature applied.
"""

from __future__ import annotations

from typing import Any

from recompute.core.anchor import AnchoredBlock, PayloadHeader, aged, by_payload_header
from recompute.core.clock import SYSTEM, Clock, span
from recompute.core.errors import OptionError, Unverifiable, literal
from recompute.core.hops import reach
from recompute.core.source import ProofSource
from recompute.lightclient.sync import ExecutionHeader, LightClientStore, execution_header
from recompute.lightclient.weak_subjectivity import network_period_epochs, network_period_seconds

# The block tags a light client can answer (the execution API's names): ``safe`` is served
# by the finalized block, which is at least as safe.
TAGS = ("finalized", "safe", "latest")


def payload_header(execution: ExecutionHeader) -> PayloadHeader:
    """The core's view of an authenticated execution header."""
    return PayloadHeader(
        hash=execution.block_hash,
        parent_hash=execution.parent_hash,
        state_root=execution.state_root,
        receipts_root=execution.receipts_root,
        logs_bloom=execution.logs_bloom,
        number=execution.block_number,
        timestamp=execution.timestamp,
    )


def evidence(store: LightClientStore, trusted_root: bytes,
             pinned: ExecutionHeader) -> dict[str, Any]:
    """What a light-client pin rests on, for the anchor's evidence."""
    finalized = store.finalized_header
    signers, size = store.last_participation or (None, None)
    return {
        "trusted_root": "0x" + bytes(trusted_root).hex(),
        "network": store.network.name,
        "finalized_beacon_slot": finalized.slot,
        "finalized_beacon_root": "0x" + finalized.beacon_root.hex(),
        "sync_committee_period": store.sync_period,
        "participation": None if signers is None else f"{signers}/{size}",
        "pinned_beacon_slot": pinned.beacon_slot,
        "pinned_beacon_root": "0x" + pinned.beacon_root.hex(),
        "pinned_finalized": pinned.finalized,
        "pinned_block_hash": "0x" + pinned.block_hash.hex(),
    }


def choose(store: LightClientStore, block: int | str | None) -> tuple[ExecutionHeader, int | None]:
    """The authenticated header to start from for ``block``, and the number to walk down to
    (None: the header itself)."""
    if block is None or block in ("finalized", "safe"):
        return store.finalized_execution(), None
    if block == "latest":
        return store.optimistic_execution(), None
    if not isinstance(block, int):
        raise OptionError("{block} {text!r}: with {beacon} give N, finalized, safe or latest",
                          ("block", "beacon"), text=block)
    finalized = store.finalized_execution()
    if block <= finalized.block_number:
        return finalized, block
    optimistic = store.optimistic_execution()
    if block <= optimistic.block_number:
        return optimistic, block
    raise Unverifiable(
        "block-unknown",
        f"block {block} is above the newest block the sync committee signed "
        f"({optimistic.block_number}; finalized {finalized.block_number})",
    )


def by_light_client(source: ProofSource, store: LightClientStore, trusted_root: bytes,
                    block: int | str | None = None, clock: Clock = SYSTEM,
                    history: str = "auto") -> AnchoredBlock:
    """Anchor ``block`` (see module doc) by a synced store; proofs come from ``source``.

    The header it starts from must be recent by ``clock`` (:func:`check_current`): a beacon
    node that withholds updates keeps the store on an old, validly signed header, and that
    must not pick the block a verdict is about. ``--block N`` below the finalized header is
    final whatever the store's age: judged as asked, its age recorded. ``history`` is how a
    block below the signed one is reached (:func:`recompute.core.hops.reach`)."""
    pinned, down_to = choose(store, block)
    if not (isinstance(block, int) and pinned.finalized):
        check_current(store, pinned, clock)
    detail = evidence(store, trusted_root, pinned)
    if not isinstance(block, int):  # a tag (finalized, safe, latest): who decided its block
        detail["tag"] = block or "finalized"
        detail["tag_decided_by"] = "light-client"
    top = by_payload_header(source, payload_header(pinned), detail)
    return aged(top if down_to is None else reach(top, down_to, history), clock)


def check_current(store: LightClientStore, pinned: ExecutionHeader, clock: Clock) -> None:
    """``stale-anchor`` naming the lag when ``pinned`` is older than the clock allows: the
    finalized header by ``clock.max_anchor_age``, the optimistic one by the much smaller
    ``clock.max_head_age``. The age is the execution payload's timestamp, which the sync
    committee signed (through the execution branch) and which on a real chain is the slot's
    time (bellatrix beacon-chain §process_execution_payload: ``payload.timestamp ==
    compute_timestamp_at_slot(state, state.slot)``); the lag in slots is the current slot
    (phase0 fork-choice §get_current_slot, from the network's genesis time) minus the
    header's."""
    if pinned.finalized:
        bound, option, what = clock.max_anchor_age, "max_anchor_age", "finalized"
    else:
        bound, option, what = clock.max_head_age, "max_head_age", "optimistic"
    age = clock.age(pinned.timestamp)
    if age <= bound:
        return
    network = store.network
    slots = ""
    if network.genesis_time:  # a network whose slots follow its genesis time
        lag = network.slot_at_time(clock.now()) - pinned.beacon_slot
        slots = f", {lag} slots behind the current slot"
    clock.check_fresh(pinned.timestamp, bound,
                      literal(f"the light client's {what} block {pinned.block_number} (beacon "
                              f"slot {pinned.beacon_slot}{slots})"), option)


def check_checkpoint(store: LightClientStore, clock: Clock, what: str = "trusted root") -> None:
    """A store bootstrapped from (or resumed at) a header older than the weak-subjectivity
    period is refused (``stale-anchor``) unless ``clock.accept_old_checkpoint``: past it, a
    committee that has since withdrawn its stake could sign another history unpunished
    (consensus-specs phase0 and electra weak-subjectivity guides; the period per network:
    :mod:`recompute.lightclient.weak_subjectivity`)."""
    if clock.accept_old_checkpoint:
        return
    header = execution_header(store.network, store.finalized_header, finalized=True)
    bound = network_period_seconds(store.network, header.beacon_slot)
    age = clock.age(header.timestamp)
    if age > bound:
        raise Unverifiable(
            "stale-anchor",
            literal(f"the {what} (beacon slot {header.beacon_slot}, block {header.block_number}) "
                    f"is {span(age)} old by the {clock.kind} clock, more than the "
                    f"weak-subjectivity bound {span(bound)} "
                    f"({network_period_epochs(store.network, header.beacon_slot)} epochs): "
                    "take a recent trusted "
                    "root, or give ") + "{accept_old_checkpoint} if you know this one is safe",
            ("accept_old_checkpoint",))
