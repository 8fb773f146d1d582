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
  held yet; :meth:`SharedSource.prefetch` asks for a whole set in one call, and
  :meth:`SharedSource.prefetch_many` for the sets of several contracts in one JSON-RPC batch
  (the watch asks every contract's account proof of a block in one batch, then the slots of
  the contracts whose storageRoot changed in another: a quiet block is one HTTP request);
- headers by hash (``eth_getBlockByHash``; a hash names one header forever): log-reading
  recipes walk the same ancestors block after block; :meth:`SharedSource.prefetch_headers`
  fetches a range of them by number, in batches, for a walk down parent links;
- receipts by block hash (``eth_getBlockReceipts``), for the same reason.

Nothing fetched by number is kept (``latest`` and block N change under a reorg).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from recompute.core.errors import Unverifiable
from recompute.core.header import Header
from recompute.core.keccak import keccak256
from recompute.core.source import BlockRef
from recompute.sources.live import LiveSource

_PROOF_BLOCKS = 64  # blocks whose storage proofs are kept
_HEADERS = 8192
_RECEIPTS = 512
_WALK_AHEAD = 256  # headers fetched at once ahead of a walk down parent links


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
        self._next_parent: bytes | None = None  # parent of the last header asked by hash
        self._run = 0  # headers fetched ahead of the walk going on, 0: none

    @property
    def calls(self) -> int:
        return self.live.calls

    def tell_batches_refused(self, note: Callable[[str], object]) -> None:
        """Have ``note`` say it, once, if the endpoint refuses JSON-RPC batches."""
        self.live.client.on_refused = lambda: note(
            f"{self.label} does not take JSON-RPC batches: asked one call at a time from now "
            "on (one HTTP request per call)")

    def hold_window(self, blocks: int) -> None:
        """Follow mode (recompute.core.caching.keep_window): hold the raw headers and receipts of
        about the last ``blocks`` blocks (plus one walk ahead of headers), not the thousands a
        range audit walks: a following watch asks for each new block's and its parent's."""
        with self._lock:
            self._headers.size = min(self._headers.size, _WALK_AHEAD + blocks)
            self._receipts.size = min(self._receipts.size, blocks)

    # ---- pass-through (mutable answers) --------------------------------------------------

    def chain_id(self) -> int:
        return self.live.chain_id()

    def block_number(self) -> int:
        return self.live.block_number()

    def block_by_number(self, number: BlockRef) -> dict[str, Any] | None:
        answer = self.live.block_by_number(number)
        self._hold_header(answer)  # by its hash, never by its number
        return answer

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
            self._walk_ahead(block_hash, answer)
        return answer

    def _walk_ahead(self, block_hash: bytes, answer: dict[str, Any]) -> None:
        """A header asked by hash that is the parent of the last one asked (a walk down parent
        links, as a log scan's at the start of a range): the next headers below are fetched
        by number in one batch, twice as many each time the walk goes on (8 up to
        :data:`_WALK_AHEAD`)."""
        with self._lock:
            walking = block_hash == self._next_parent
            self._run = min(max(8, 2 * self._run), _WALK_AHEAD) if walking else 0
            self._next_parent = _parent_of(answer)
            run = self._run
        number = _number_of(answer)
        if not walking or number is None or number == 0:
            return
        lowest = self.prefetch_headers(list(range(max(0, number - run), number)))
        if lowest is not None:
            with self._lock:
                self._next_parent = _parent_of(lowest)

    def prefetch_headers(self, numbers: list[int]) -> dict[str, Any] | None:
        """Fetch, in JSON-RPC batches, the headers numbered ``numbers`` on the node's chain, and
        hold each under the hash it re-hashes to (a walk down parent links then asks for them
        by hash and finds them here). One that does not re-hash to the hash it claims is not
        held (the walk asks for it by hash and meets what is wrong with it itself). Returns
        the first one held (the lowest, for numbers in ascending order)."""
        first: dict[str, Any] | None = None
        for answer in self.live.blocks_by_number([n for n in numbers if n >= 0]):
            if self._hold_header(answer) and first is None and isinstance(answer, dict):
                first = answer
        return first

    def _hold_header(self, answer: object) -> bool:
        """Hold a header fetched by number under its hash, if it re-hashes to the hash it
        claims (a hash names one header forever; a number does not)."""
        if not isinstance(answer, dict) or "hash" not in answer:
            return False
        try:
            header = Header.from_rpc(answer)  # checks the claimed hash against the fields
        except (Unverifiable, ValueError):
            return False
        with self._lock:
            self._headers.put(header.hash, answer)
        return True

    def block_with_accounts(self, number: int, addresses: list[bytes]
                            ) -> dict[str, Any] | None:
        """The node's block ``number`` (as :meth:`block_by_number`), and in the same batch the
        account proofs of ``addresses`` at that number, held for the block's hash when the
        proof's first node is the block's state root (the node answered for that very
        block; a block that moved between the calls leaves nothing held). Raw answers: each
        proof is verified in full when it is used."""
        if not addresses:
            return self.block_by_number(number)
        answers = self.live.block_and_accounts(number, addresses)
        header_answer = answers[0]
        if isinstance(header_answer, Unverifiable):
            raise header_answer
        if not self._hold_header(header_answer):
            return header_answer  # type: ignore[return-value]  # None, or the caller says why
        assert isinstance(header_answer, dict)
        header = Header.from_rpc(header_answer)
        with self._lock:
            accounts = self._account_map(header.hash)
        self.proof_calls += len(addresses)
        for address, answer in zip(addresses, answers[1:], strict=True):
            if isinstance(answer, dict) and _rooted_in(answer, header.state_root):
                self._hold(accounts, address, [], answer)
        return header_answer

    def prefetch_receipts(self, hashes: list[bytes]) -> None:
        """Fetch, in JSON-RPC batches, the receipts of the blocks ``hashes`` not held yet (a
        log scan's blocks whose bloom matches). One that fails is not held (asked again when
        needed, which then meets the failure itself)."""
        with self._lock:
            wanted = [h for h in dict.fromkeys(hashes) if h not in self._receipts]
        if len(wanted) < 2:
            return
        for block_hash, answer in zip(wanted, self.live.blocks_receipts(wanted), strict=True):
            if isinstance(answer, list):
                with self._lock:
                    self._receipts.put(block_hash, answer)

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

    def prefetch_many(self, wanted: list[tuple[bytes, list[int]]], block_hash: bytes) -> None:
        """:meth:`prefetch` for several accounts of one block in one JSON-RPC batch (an
        account's own slots in one call, as :meth:`prefetch`): only what is not held yet is
        asked. A call that fails is not held (asked again when the proof is needed, which
        then meets the failure itself); a batch the node cannot answer raises."""
        asks = []
        with self._lock:
            accounts = self._account_map(block_hash)
            for address, slots in wanted:
                missing = self._missing(accounts.get(address), slots)
                if missing is not None:
                    asks.append((address, missing))
        if not asks:
            return
        if len(asks) == 1:
            self.get_proof(asks[0][0], asks[0][1], block_hash)
            return
        answers = self.live.get_proofs(asks, block_hash)
        self.proof_calls += len(asks)
        for (address, missing), answer in zip(asks, answers, strict=True):
            if isinstance(answer, dict):
                self._hold(accounts, address, missing, answer)

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict[str, Any]:
        with self._lock:
            accounts = self._account_map(block_hash)
            held = accounts.get(address)
            missing = self._missing(held, slots)
        if missing is not None:
            answer = self.live.get_proof(address, missing, block_hash)
            self.proof_calls += 1
            held = self._hold(accounts, address, missing, answer)
            if held is None:
                # Not splittable by slot: hand it over as the node sent it, unshared; the
                # prover says what is wrong with it.
                return answer
        assert held is not None
        head, entries = held
        assembled = {k: v for k, v in head.items() if k != "storageProof"}
        assembled["storageProof"] = [entries[slot] for slot in slots]
        return assembled

    def _account_map(self, block_hash: bytes) -> dict[bytes, _Account]:
        """The accounts held for a block (under the lock)."""
        accounts = self._proofs.get(block_hash)
        if accounts is None:
            accounts = {}
            self._proofs.put(block_hash, accounts)
        return accounts

    @staticmethod
    def _missing(held: _Account | None, slots: list[int]) -> list[int] | None:
        """The slots to ask for (``[]``: the account alone), None when all are held."""
        missing = [s for s in dict.fromkeys(slots) if held is None or s not in held[1]]
        return missing if missing or held is None else None

    def _hold(self, accounts: dict[bytes, _Account], address: bytes, missing: list[int],
              answer: dict[str, Any]) -> _Account | None:
        """Keep an answer's account proof and storage-proof entries; None when its entries do
        not line up with the slots asked (then nothing is kept)."""
        entries = answer.get("storageProof")
        if not isinstance(entries, list) or len(entries) != len(missing):
            return None
        with self._lock:
            held = accounts.get(address)
            if held is None:
                held = accounts[address] = (answer, {})
            for slot, entry in zip(missing, entries, strict=True):
                held[1].setdefault(slot, entry)
        return held


def _parent_of(answer: dict[str, Any]) -> bytes | None:
    text = answer.get("parentHash")
    try:
        return bytes.fromhex(text[2:]) if isinstance(text, str) and len(text) == 66 else None
    except ValueError:
        return None


def _number_of(answer: dict[str, Any]) -> int | None:
    text = answer.get("number")
    try:
        return int(text, 16) if isinstance(text, str) and text.startswith("0x") else None
    except ValueError:
        return None


def _rooted_in(answer: dict[str, Any], state_root: bytes) -> bool:
    """Does the raw account proof start at ``state_root``? (Only whether to keep it: it is
    verified in full, as any other, when used.)"""
    proof = answer.get("accountProof")
    if not isinstance(proof, list) or not proof or not isinstance(proof[0], str):
        return False
    try:
        return keccak256(bytes.fromhex(proof[0].removeprefix("0x"))) == state_root
    except ValueError:
        return False
