"""The proof-source interface: where untrusted chain data comes from (docs/design.md §Sources).

Core code (anchors, the prover, receipts) asks for raw JSON through this protocol only;
:mod:`recompute.sources` implements it (a live node, a vector replay, a capture, the watch
cache). Nothing a source returns is trusted until the core has checked it.
"""

from __future__ import annotations

from typing import Protocol

BlockRef = int | str  # a number, or "latest"


class ProofSource(Protocol):
    label: str

    def chain_id(self) -> int: ...

    def block_by_number(self, number: BlockRef) -> dict | None: ...

    def block_by_hash(self, block_hash: bytes) -> dict | None: ...

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict: ...

    def block_receipts(self, block_hash: bytes) -> list | None: ...

    def transaction_receipt(self, tx_hash: str) -> dict | None: ...
