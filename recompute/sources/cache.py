"""A proof source shared by every check of a watch: raw answers fetched once, served many times.

docs/design.md §Sources: "one eth_getProof per contract per round". A watch runs many checks at
every block, often on the same contract (four layers of one subject); each check's runner asks
for its own slots. :class:`SharedSource` sits *below* the verifier, on the untrusted side
(docs/design.md §Trust flow): it only keeps raw JSON and hands back, per request, an
``eth_getProof`` answer assembled from the account proof and the storage-proof entries it holds
for that block. :func:`recompute.core.prover.verify_account_proof` verifies each assembled answer
in full, exactly as a fresh one, so sharing can cost a verdict nothing but RPC calls.

Three things are shared:

- storage proofs per (block hash, address): a request asks the node only for the slots not
  held yet; :meth:`SharedSource.prefetch` asks for a whole set in one call (the watch prefetches
  the slots every check read at the previous block: steady state is one ``eth_getProof`` per
  contract per block);
- headers by hash (``eth_getBlockByHash``; a hash names one header forever): log-reading
  recipes walk the same ancestors block after block;
- receipts by block hash (``eth_getBlockReceipts``), for the same reason.

Nothing fetched by number is kept (``latest`` and block N change under a reorg).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, TypeVar

from recompute.core.source import BlockRef
from recompute.sources.live import LiveSource

_PROOF_BLOCKS = 64  # blocks whose storage proofs are kept
_HEADERS = 8192
_RECEIPTS = 512


_K = TypeVar("_K")
_V = TypeVar("_V")

# an account's proof as first answered, and its storage entries by slot
_Account = tuple[dict[str, Any], dict[int, Any]]


class _Lru(OrderedDict[_K, _V]):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def put(self, key: _K, value: _V) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


class SharedSource:
    """A :class:`~recompute.source.LiveSource` with the sharing described above."""

    def __init__(self, live: LiveSource):
        self.live = live
        self.label = live.label
        self.endpoint = live.endpoint
        self.addresses = live.addresses
        self._lock = threading.Lock()
        # block hash -> {address: _Account}
        self._proofs: _Lru[bytes, dict[bytes, _Account]] = _Lru(_PROOF_BLOCKS)
        self._headers: _Lru[bytes, dict[str, Any]] = _Lru(_HEADERS)
        self._receipts: _Lru[bytes, list[Any]] = _Lru(_RECEIPTS)
        self.proof_calls = 0  # eth_getProof requests sent, for metrics and benchmarks

    @property
    def calls(self) -> int:
        return self.live.calls

    # ---- pass-through (mutable answers) --------------------------------------------------

    def chain_id(self) -> int:
        return self.live.chain_id()

    def block_number(self) -> int:
        return self.live.block_number()

    def block_by_number(self, number: BlockRef) -> dict[str, Any] | None:
        return self.live.block_by_number(number)

    def transaction_receipt(self, tx_hash: str) -> dict[str, Any] | None:
        return self.live.transaction_receipt(tx_hash)

    def call(self, to: bytes, data: bytes, block_hash: bytes) -> bytes:
        return self.live.call(to, data, block_hash)

    # ---- by hash (immutable answers) -----------------------------------------------------

    def block_by_hash(self, block_hash: bytes) -> dict[str, Any] | None:
        with self._lock:
            held = self._headers.get(block_hash)
        if held is not None:
            return held
        answer = self.live.block_by_hash(block_hash)
        if answer is not None:
            with self._lock:
                self._headers.put(block_hash, answer)
        return answer

    def block_receipts(self, block_hash: bytes) -> list[Any] | None:
        with self._lock:
            held = self._receipts.get(block_hash)
        if held is not None:
            return held
        answer = self.live.block_receipts(block_hash)
        if answer is not None:
            with self._lock:
                self._receipts.put(block_hash, answer)
        return answer

    # ---- storage proofs ------------------------------------------------------------------

    def prefetch(self, address: bytes, slots: list[int], block_hash: bytes) -> None:
        """Fetch, in one request, every slot of ``slots`` not held yet for this block."""
        self.get_proof(address, slots, block_hash)

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict[str, Any]:
        with self._lock:
            accounts = self._proofs.get(block_hash)
            if accounts is None:
                accounts = {}
                self._proofs.put(block_hash, accounts)
            held = accounts.get(address)
            missing = [s for s in dict.fromkeys(slots) if held is None or s not in held[1]]
        if missing or held is None:  # nothing held for this account: ask (even for no slot)
            answer = self.live.get_proof(address, missing, block_hash)
            self.proof_calls += 1
            entries = answer.get("storageProof")
            if not isinstance(entries, list) or len(entries) != len(missing):
                # Not splittable by slot: hand it over as the node sent it, unshared; the
                # prover says what is wrong with it.
                return answer
            with self._lock:
                held = accounts.get(address)
                if held is None:
                    held = accounts[address] = (answer, {})
                for slot, entry in zip(missing, entries, strict=True):
                    held[1].setdefault(slot, entry)
        head, entries = held
        assembled = {k: v for k, v in head.items() if k != "storageProof"}
        assembled["storageProof"] = [entries[slot] for slot in slots]
        return assembled
