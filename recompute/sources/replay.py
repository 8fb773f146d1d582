"""Two more proof sources (docs/design.md §Sources): capture (live + record) and replay.

:class:`CaptureSource` wraps a live source and records every answer the verifier consumed;
:class:`ReplaySource` answers from such a record with no network, so a vector replays
through exactly the runner a live ``step`` uses. Headers are recorded as their RLP (the
bytes that hash to the block hash), not as the node's JSON.
"""

from __future__ import annotations

import copy
from typing import Any

from recompute.core.errors import Unverifiable, malformed_in
from recompute.core.header import Header
from recompute.core.hexdata import parse_data
from recompute.core.source import BlockRef
from recompute.sources.live import LiveSource


def _key(address: bytes, slots: list[int], block_hash: bytes) -> str:
    return f"0x{address.hex()}|{','.join(f'{s:x}' for s in slots)}|0x{block_hash.hex()}"


class CaptureSource:
    """A live source that keeps what it answered, in the order first asked."""

    def __init__(self, live: LiveSource):
        self.live = live
        self.label = live.label
        self.headers: dict[str, str] = {}  # hash -> rlp hex
        self.proofs: list[dict[str, Any]] = []
        self.receipts: dict[str, list[Any]] = {}

    def chain_id(self) -> int:
        return self.live.chain_id()

    def _keep_header(self, raw: dict[str, Any] | None) -> dict[str, Any] | None:
        if raw is not None:
            header = Header.from_rpc(raw)
            self.headers.setdefault("0x" + header.hash.hex(), "0x" + header.encoded.hex())
        return raw

    def block_by_number(self, number: BlockRef) -> dict[str, Any] | None:
        return self._keep_header(self.live.block_by_number(number))

    def block_by_hash(self, block_hash: bytes) -> dict[str, Any] | None:
        return self._keep_header(self.live.block_by_hash(block_hash))

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict[str, Any]:
        answer = self.live.get_proof(address, slots, block_hash)
        self.proofs.append({
            "address": "0x" + address.hex(),
            "slots": [f"0x{s:064x}" for s in slots],
            "block_hash": "0x" + block_hash.hex(),
            "answer": copy.deepcopy(answer),
        })
        return answer

    def block_receipts(self, block_hash: bytes) -> list[Any] | None:
        answer = self.live.block_receipts(block_hash)
        if answer is not None:
            self.receipts.setdefault("0x" + block_hash.hex(), copy.deepcopy(answer))
        return answer

    def transaction_receipt(self, tx_hash: str) -> dict[str, Any] | None:
        raise Unverifiable("rpc-error", "capture records whole blocks of receipts only "
                                        "(eth_getBlockReceipts)")

    def call(self, to: bytes, data: bytes, block_hash: bytes) -> bytes:
        return self.live.call(to, data, block_hash)


class ReplaySource:
    """Answers from a vector's record; anything not recorded is UNVERIFIABLE (rpc-error)."""

    def __init__(self, chain_id: int, headers: dict[str, str], proofs: list[dict[str, Any]],
                 receipts: dict[str, list[Any]], label: str = "vector"):
        self.label = label
        self._chain_id = chain_id
        self._headers: dict[bytes, Header] = {}
        for rlp_text in headers.values():
            header = Header.from_rlp(parse_data(rlp_text, "header rlp", _malformed))
            self._headers[header.hash] = header  # keyed by what it really hashes to
        self._proofs: dict[str, dict[str, Any]] = {}
        for entry in proofs:
            key = _key(parse_data(entry["address"], "proof address", _malformed, 20),
                       [int(s, 16) for s in entry["slots"]],
                       parse_data(entry["block_hash"], "proof block", _malformed, 32))
            self._proofs.setdefault(key, entry["answer"])
        self._receipts = {parse_data(h, "receipts block", _malformed, 32): r
                          for h, r in receipts.items()}

    def chain_id(self) -> int:
        return self._chain_id

    def block_by_number(self, number: BlockRef) -> dict[str, Any] | None:
        matches = [h for h in self._headers.values() if h.number == number]
        if number == "latest" and self._headers:
            matches = [max(self._headers.values(), key=lambda h: h.number)]
        return matches[0].to_rpc() if matches else None

    def block_by_hash(self, block_hash: bytes) -> dict[str, Any] | None:
        header = self._headers.get(block_hash)
        return header.to_rpc() if header else None

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict[str, Any]:
        answer = self._proofs.get(_key(address, slots, block_hash))
        if answer is None:
            raise Unverifiable("rpc-error", "the vector holds no eth_getProof answer for "
                                            f"0x{address.hex()} with those {len(slots)} slot(s)")
        return copy.deepcopy(answer)

    def block_receipts(self, block_hash: bytes) -> list[Any] | None:
        if block_hash not in self._receipts:
            raise Unverifiable("rpc-error", f"the vector holds no receipts of 0x{block_hash.hex()}")
        return copy.deepcopy(self._receipts[block_hash])

    def transaction_receipt(self, tx_hash: str) -> dict[str, Any] | None:
        raise Unverifiable("rpc-error", "the vector holds no per-transaction receipts")

    def call(self, to: bytes, data: bytes, block_hash: bytes) -> bytes:
        raise Unverifiable("rpc-error", "a vector replays proofs, not view calls")


_malformed = malformed_in("vector")
