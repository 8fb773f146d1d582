"""The proof-source interface: where untrusted chain data comes from (docs/design.md §Sources).

Core code (anchors, the prover, receipts) asks for raw JSON through this protocol only;
:mod:`recompute.sources` implements it (a live node, a vector replay, a capture, the watch
cache). Nothing a source returns is trusted until the core has checked it.
"""

from __future__ import annotations

from typing import Any, Protocol

BlockRef = int | str  # a number, or "latest"


class ProofSource(Protocol):
    """Every answer is the node's JSON as decoded (``None`` where the node knows no such block
    or receipt): untrusted, checked by the core before any of it is used."""

    label: str

    def chain_id(self) -> int: ...

    def block_by_number(self, number: BlockRef) -> dict[str, Any] | None: ...

    def block_by_hash(self, block_hash: bytes) -> dict[str, Any] | None: ...

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict[str, Any]: ...

    def block_receipts(self, block_hash: bytes) -> list[Any] | None: ...

    def transaction_receipt(self, tx_hash: str) -> dict[str, Any] | None: ...
