"""Proof sources: where untrusted chain data comes from.

One interface, several implementations (docs/design.md §Sources): a live JSON-RPC endpoint here;
vector replay and capture build on the same methods. Everything a source returns is raw
JSON; :mod:`recompute.core.anchor` and :mod:`recompute.core.prover` decide what it proves.
"""

from __future__ import annotations

from typing import Any

from recompute.core.errors import malformed
from recompute.core.hexdata import parse_data, parse_quantity
from recompute.core.source import BlockRef
from recompute.sources.rpc import RpcClient, endpoint_addresses, normalise_url


class LiveSource:
    """A JSON-RPC endpoint, asked with the standard methods (EIP-1474, EIP-1186, EIP-1898)."""

    # eth_getProof requests it takes at once from one prover (recompute.core.prover): each
    # thread has its own kept-alive connection (RpcClient).
    max_in_flight = 2

    def __init__(self, url: str, timeout: float = 30.0):
        self.client = RpcClient(url, timeout=timeout)
        self.label = url
        self.endpoint = normalise_url(url)  # tells endpoints of a quorum apart
        self._chain_id: int | None = None

    @property
    def calls(self) -> int:
        return self.client.calls

    def addresses(self) -> frozenset[tuple[str, int]]:
        """The (address, port) pairs this endpoint's host resolves to (a quorum's hosts must
        differ: :func:`recompute.core.anchor.distinct_endpoints`)."""
        return endpoint_addresses(self.client.url)

    def chain_id(self) -> int:
        if self._chain_id is None:
            answer = self.client.request("eth_chainId", [])
            self._chain_id = parse_quantity(answer, "eth_chainId", malformed, bits=64)
        return self._chain_id

    def block_number(self) -> int:
        answer = self.client.request("eth_blockNumber", [])
        return parse_quantity(answer, "eth_blockNumber", malformed, bits=64)

    def block_by_number(self, number: BlockRef) -> dict[str, Any] | None:
        tag = number if isinstance(number, str) else hex(number)
        return self._block("eth_getBlockByNumber", tag)

    def block_by_hash(self, block_hash: bytes) -> dict[str, Any] | None:
        return self._block("eth_getBlockByHash", "0x" + block_hash.hex())

    def _block(self, method: str, ref: str) -> dict[str, Any] | None:
        answer = self.client.request(method, [ref, False])
        if answer is not None and not isinstance(answer, dict):
            raise malformed(f"{self.label} {method}: the block is not a JSON object")
        return answer

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict[str, Any]:
        keys = [f"0x{slot:064x}" for slot in slots]
        answer = self.client.request(
            "eth_getProof",
            ["0x" + address.hex(), keys, {"blockHash": "0x" + block_hash.hex()}],
        )
        if not isinstance(answer, dict):
            raise malformed(f"{self.label} eth_getProof: the answer is not a JSON object")
        return answer

    def block_receipts(self, block_hash: bytes) -> list[Any] | None:
        answer = self.client.request("eth_getBlockReceipts", ["0x" + block_hash.hex()])
        if answer is not None and not isinstance(answer, list):
            raise malformed(f"{self.label} eth_getBlockReceipts: the answer is not a list")
        return answer

    def transaction_receipt(self, tx_hash: str) -> dict[str, Any] | None:
        answer = self.client.request("eth_getTransactionReceipt", [tx_hash])
        if not isinstance(answer, dict):
            raise malformed(f"{self.label} eth_getTransactionReceipt {tx_hash}: no receipt")
        return answer

    def call(self, to: bytes, data: bytes, block_hash: bytes) -> bytes:
        """eth_call at a block: only for --compare-views, never for a verdict."""
        answer = self.client.request(
            "eth_call",
            [{"to": "0x" + to.hex(), "data": "0x" + data.hex()},
             {"blockHash": "0x" + block_hash.hex()}],
        )
        return parse_data(answer, "eth_call result", malformed)
