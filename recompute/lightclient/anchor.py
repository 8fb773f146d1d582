"""From the light client's authenticated execution header to an anchored block
(the ``light-client`` anchor of recompute.core.anchor; docs/lightclient.md).

``--block finalized`` (the default) is the store's finalized execution block; ``--block
latest`` the newest optimistic header signed by 2/3 of the sync committee; ``--block N`` at
or below one of them is reached by re-hashed parentHash links down from the lowest of the two
that covers it (as ``--checkpoint`` does). The evidence records what the pin rests on: the
trusted root, the finalized beacon slot and root, the sync-committee period and the
participation of the last signature applied.
"""

from __future__ import annotations

from recompute.core.anchor import AnchoredBlock, PayloadHeader, by_payload_header
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.source import ProofSource
from recompute.lightclient.sync import ExecutionHeader, LightClientStore

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


def evidence(store: LightClientStore, trusted_root: bytes, pinned: ExecutionHeader) -> dict:
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
        raise UsageError(f"--block {block!r}: with --beacon give N, finalized, safe or latest")
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
                    block: int | str | None = None) -> AnchoredBlock:
    """Anchor ``block`` (see module doc) by a synced store; proofs come from ``source``."""
    pinned, down_to = choose(store, block)
    detail = evidence(store, trusted_root, pinned)
    if not isinstance(block, int):  # a tag (finalized, safe, latest): who decided its block
        detail["tag"] = block or "finalized"
        detail["tag_decided_by"] = "light-client"
    return by_payload_header(source, payload_header(pinned), detail, down_to)
