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


def choose(store: LightClientStore, block: int | str | None, clock: Clock = SYSTEM
           ) -> tuple[ExecutionHeader, int | None, str | None]:
    """The authenticated header to start from for ``block``, the number to walk down to
    (None: the header itself), and the bound it was judged current by (``max_head_age``,
    ``max_anchor_age``; None: a final block judged as asked). Each header is judged by its
    own bound (:func:`check_latest`, :func:`check_current`)."""
    if block is None or block in ("finalized", "safe"):
        finalized = store.finalized_execution()
        check_current(store, finalized, clock)
        return finalized, None, "max_anchor_age"
    if block == "latest":
        return check_latest(store, clock), None, "max_head_age"
    if not isinstance(block, int):
        raise OptionError("{block} {text!r}: with {beacon} give N, finalized, safe or latest",
                          ("block", "beacon"), text=block)
    finalized = store.finalized_execution()
    if block <= finalized.block_number:
        return finalized, block, None  # final whatever the store's age: judged as asked
    optimistic = store.optimistic_execution()
    if block <= optimistic.block_number:
        check_current(store, optimistic, clock, head=True)
        return optimistic, block, "max_head_age"
    raise Unverifiable(
        "block-unknown",
        f"block {block} is above the newest block the sync committee signed "
        f"({optimistic.block_number}; finalized {finalized.block_number})",
    )


def by_light_client(source: ProofSource, store: LightClientStore, trusted_root: bytes,
                    block: int | str | None = None, clock: Clock = SYSTEM,
                    history: str = "auto") -> AnchoredBlock:
    """Anchor ``block`` (see module doc) by a synced store; proofs come from ``source``.

    The header it starts from must be recent by ``clock``, each by its own bound: the
    finalized header by ``max_anchor_age``, the optimistic one (``latest``, or ``N`` above the
    finalized block) by ``max_head_age``, whatever the beacon node sent (:func:`check_latest`:
    a beacon node that withholds updates keeps the store on an old, validly signed header, and
    that must not pick the block a verdict is about). ``--block N`` below the finalized header
    is final whatever the store's age: judged as asked, its age recorded. The evidence says
    which header and which bound decided (``judged_header``, ``age_bound``,
    ``age_bound_s``). ``history`` is how a block below the signed one is reached
    (:func:`recompute.core.hops.reach`)."""
    pinned, down_to, bound = choose(store, block, clock)
    detail = evidence(store, trusted_root, pinned)
    detail.update(judged_header=_JUDGED[bound] if bound else None, age_bound=bound,
                  age_bound_s=None if bound is None else _seconds(getattr(clock, bound)))
    if not isinstance(block, int):  # a tag (finalized, safe, latest): who decided its block
        detail["tag"] = block or "finalized"
        detail["tag_decided_by"] = "light-client"
    top = by_payload_header(source, payload_header(pinned), detail)
    return aged(top if down_to is None else reach(top, down_to, history), clock)


# which header a bound judges (the evidence's ``judged_header``)
_JUDGED = {"max_head_age": "optimistic", "max_anchor_age": "finalized"}


def _seconds(bound: float) -> int | float:
    return int(bound) if bound == int(bound) else bound


def check_latest(store: LightClientStore, clock: Clock) -> ExecutionHeader:
    """The header ``latest`` is about, judged by ``clock.max_head_age`` whatever the beacon
    node sent: the store's optimistic header, which must be newer than its finalized one. A
    store that applied no update newer than its finalized header (the beacon node sent none,
    or only older ones, which are skipped as not newer) has no ``latest``: ``stale-anchor``
    naming the finalized header's lag, never the finalized header under the finalized bound
    (which would let a beacon node that withholds updates stretch ``--max-head-age`` to
    ``--max-anchor-age``)."""
    optimistic = store.optimistic_execution()
    if not optimistic.finalized:
        check_current(store, optimistic, clock, head=True)
        return optimistic
    age = clock.age(optimistic.timestamp)
    raise Unverifiable(
        "stale-anchor",
        literal(f"the light client applied no update newer than its finalized block "
                f"{optimistic.block_number} (beacon slot {optimistic.beacon_slot}"
                f"{_slots_behind(store, optimistic, clock)}, {span(age)} old by the "
                f"{clock.kind} clock): the beacon node sent no newer signed header, so there "
                "is no ") + "{block} latest" + literal(" to judge within ") + "{max_head_age} "
        + literal(f"{span(clock.max_head_age)}: the beacon node lags or withholds updates; "
                  "ask another, or give ") + "{block} finalized",
        ("block", "max_head_age"))


def check_current(store: LightClientStore, pinned: ExecutionHeader, clock: Clock,
                  head: bool = False) -> None:
    """``stale-anchor`` naming the lag when ``pinned`` is older than the clock allows: by
    ``clock.max_head_age`` when it stands for the head (``head``: ``latest``, the optimistic
    header), else by ``clock.max_anchor_age`` (the finalized header). The bound is the
    caller's (the tag's), never read from the header: an optimistic header that is the
    finalized one is still judged as the head. The age is the execution payload's timestamp,
    which the sync committee signed (through the execution branch) and which on a real chain
    is the slot's time (bellatrix beacon-chain §process_execution_payload:
    ``payload.timestamp == compute_timestamp_at_slot(state, state.slot)``); the lag in slots
    is the current slot (phase0 fork-choice §get_current_slot, from the network's genesis
    time) minus the header's."""
    if head:
        bound, option, what = clock.max_head_age, "max_head_age", "optimistic"
    else:
        bound, option, what = clock.max_anchor_age, "max_anchor_age", "finalized"
    age = clock.age(pinned.timestamp)
    if age <= bound:
        return
    slots = _slots_behind(store, pinned, clock)
    clock.check_fresh(pinned.timestamp, bound,
                      literal(f"the light client's {what} block {pinned.block_number} (beacon "
                              f"slot {pinned.beacon_slot}{slots})"), option)


def _slots_behind(store: LightClientStore, pinned: ExecutionHeader, clock: Clock) -> str:
    network = store.network
    if not network.genesis_time:  # the devnet's slots do not follow a clock
        return ""
    lag = network.slot_at_time(clock.now()) - pinned.beacon_slot
    return f", {lag} slots behind the current slot"


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
