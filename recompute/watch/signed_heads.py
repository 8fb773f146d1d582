"""Follow mode's head authentication under the light-client anchor (``watch --beacon``):
which blocks the sync committee has signed, and which lines it has made final
(docs/lightclient.md §Following the head).

A new head's lines are written only once the head is at or below the light client's signed
optimistic header and linked to it by re-hashed parentHash links; they become final when the
light client's finalized header covers them. A node's fabricated children of a signed head
are therefore never evaluated (no GOOD or BAD line) and never final: the node alone cannot
make a block signed.

``refresh()`` asks for the light client's latest (optimistic, finalized) pair; the walk from a
new optimistic header down to the watch's tip asks the node for headers by hash, each
re-hashed, at most :data:`MAX_WALK` of them per refresh.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from recompute.core.anchor import AnchoredBlock, PayloadHeader
from recompute.core.errors import Unverifiable
from recompute.core.header import Header
from recompute.core.source import ProofSource

MAX_WALK = 8192  # headers fetched per refresh; a tip further below the signed head waits
KEEP = 1024  # signed blocks kept below the tip (the follower's window, follower.WINDOW)

Refresh = Callable[[], tuple[PayloadHeader, PayloadHeader]]  # (optimistic, finalized)


class SignedHeads:
    def __init__(self, refresh: Refresh):
        self.refresh_store = refresh
        self.optimistic: PayloadHeader | None = None
        self.finalized: PayloadHeader | None = None
        self.signed: dict[int, bytes] = {}  # number -> hash on the signed chain, tip and up

    def refresh(self, source: ProofSource, tip: AnchoredBlock) -> None:
        optimistic, finalized = self.refresh_store()
        self.finalized = finalized
        # the last walk serves only if it reached down to the tip: after a reorg the tip is
        # lower than it was, and the blocks between it and the last walk's end are not known
        covers_tip = bool(self.signed) and min(self.signed) <= tip.number
        if (self.optimistic is not None and optimistic.hash == self.optimistic.hash
                and covers_tip):
            return
        self.optimistic = optimistic
        signed = {optimistic.number: optimistic.hash}
        finalized_at = {finalized.number: finalized.hash}
        parent, number = optimistic.parent_hash, optimistic.number - 1
        for _ in range(MAX_WALK):
            if number < tip.number:
                break
            if self.signed.get(number) == parent and covers_tip:  # known from the last walk
                signed.update({n: h for n, h in self.signed.items() if n <= number})
                break
            raw = source.block_by_hash(parent)
            if raw is None:
                break  # the node does not have it (yet): lower blocks wait
            header = Header.from_rpc(raw)
            if header.hash != parent or header.number != number:
                raise Unverifiable(
                    "header-mismatch",
                    f"{source.label} returned for the signed chain's block {number} a header "
                    f"that hashes to 0x{header.hash.hex()}, not 0x{parent.hex()}")
            signed[number] = header.hash
            parent, number = header.parent_hash, number - 1
        if finalized_at.get(finalized.number) != signed.get(finalized.number, finalized.hash):
            raise Unverifiable(
                "invalid-consensus-proof",
                f"the finalized block {finalized.number} is not an ancestor of the signed head "
                f"{optimistic.number}")
        # what a follower can still ask about: its window below the tip and the finalized
        # block (the walks' merges would otherwise keep every block since the start)
        low = min(tip.number, finalized.number) - KEEP
        self.signed = {n: h for n, h in signed.items() if n >= low}

    def admits(self, source: ProofSource, tip: AnchoredBlock, header: Header) -> bool:
        """Is ``header`` (a child of ``tip`` the node serves) on the signed chain? Refreshes
        the light client when it does not know yet."""
        if self.signed.get(header.number) == header.hash:
            return True
        self.refresh(source, tip)
        return self.signed.get(header.number) == header.hash

    def holds(self, tip: AnchoredBlock) -> bool:
        """Is ``tip`` still on the signed chain? Then a node's other branch is not a reorg
        the watch follows (the committee has not moved off the tip)."""
        return self.signed.get(tip.number) == tip.hash

    def covers(self, chain: Mapping[int, AnchoredBlock], number: int) -> bool:
        """Is the verified block ``number`` an ancestor of (or) the finalized block?"""
        final = self.finalized
        if final is None or number > final.number or number not in chain:
            return False
        if final.number in chain:
            return chain[final.number].hash == final.hash
        return self.signed.get(number) == chain[number].hash \
            and self.signed.get(final.number) == final.hash
