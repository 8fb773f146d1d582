"""Proof sources: where untrusted chain data comes from.

One interface, several implementations (docs/design.md §Sources): a live JSON-RPC endpoint here;
vector replay and capture build on the same methods. Everything a source returns is raw
JSON; :mod:`recompute.core.anchor` and :mod:`recompute.core.prover` decide what it proves.
"""

from __future__ import annotations

from typing import Any

from recompute.core.errors import Unverifiable, malformed
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
        # the eth_chainId answer asked with the first header (one request for an anchor)
        self._chain_answer: object = None

    @property
    def calls(self) -> int:
        return self.client.calls

    def addresses(self) -> frozenset[tuple[str, int]]:
        """The (address, port) pairs this endpoint's host resolves to (a quorum's hosts must
        differ: :func:`recompute.core.anchor.distinct_endpoints`)."""
        return endpoint_addresses(self.client.url)

    def chain_id(self) -> int:
        if self._chain_id is None:
            answer = self._chain_answer
            if answer is None or isinstance(answer, Unverifiable):
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
        if self._chain_id is None and self._chain_answer is None:
            # the first header comes with the chain id in one JSON-RPC batch: anchoring a
            # block (recompute.core.anchor) asks both, one request where batches are taken
            answer, self._chain_answer = self.client.batch([(method, [ref, False]),
                                                            ("eth_chainId", [])])
            if isinstance(answer, Unverifiable):
                raise answer
        else:
            answer = self.client.request(method, [ref, False])
        if answer is not None and not isinstance(answer, dict):
            raise malformed(f"{self.label} {method}: the block is not a JSON object")
        return answer

    @property
    def batches(self) -> bool | None:
        """Whether the endpoint takes JSON-RPC batches (None: not asked one yet)."""
        return self.client.batches

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict[str, Any]:
        answer = self.client.request("eth_getProof", _proof_params(address, slots, block_hash))
        if not isinstance(answer, dict):
            raise malformed(f"{self.label} eth_getProof: the answer is not a JSON object")
        return answer

    def get_code(self, address: bytes, block_hash: bytes) -> bytes:
        """``eth_getCode`` of ``address`` at the block ``block_hash`` (EIP-1898): raw bytes,
        to be trusted only once they hash to the account's proven code hash."""
        answer = self.client.request("eth_getCode", ["0x" + address.hex(),
                                                     {"blockHash": "0x" + block_hash.hex()}])
        return parse_data(answer, f"{self.label} eth_getCode", malformed)

    def get_codes(self, addresses: list[bytes], block_hash: bytes) -> list[bytes]:
        """``eth_getCode`` of each address at one block, in JSON-RPC batches: raw bytes, each
        to be trusted only once it hashes to its account's proven code hash; a node's error
        for one of them is raised."""
        at = {"blockHash": "0x" + block_hash.hex()}
        answers = self.client.batch([("eth_getCode", ["0x" + address.hex(), at])
                                     for address in addresses])
        out = []
        for address, answer in zip(addresses, answers, strict=True):
            if isinstance(answer, Unverifiable):
                raise answer
            out.append(parse_data(answer, f"{self.label} eth_getCode 0x{address.hex()} in a "
                                          "batch", malformed))
        return out

    def get_proofs(self, wanted: list[tuple[bytes, list[int]]],
                   block_hash: bytes) -> list[dict[str, Any] | Unverifiable]:
        """``eth_getProof`` of each ``(address, slots)`` at one block, in JSON-RPC batches: per
        request its answer, or the Unverifiable the node's error for it maps to. Each answer
        must name the address and the keys asked, in order (EIP-1186): one that does not
        fails the whole batch as ``rpc-malformed`` (raised), so that one call's answer never
        stands for another's, whatever ids the batch's replies carry."""
        answers = self.client.batch([("eth_getProof", _proof_params(address, slots, block_hash))
                                     for address, slots in wanted])
        for (address, slots), answer in zip(wanted, answers, strict=True):
            if not isinstance(answer, Unverifiable):
                self._check_proof(answer, address, slots)
        return answers  # type: ignore[return-value]  # dicts, checked above

    def _check_proof(self, answer: object, address: bytes, slots: list[int]) -> None:
        shown = f"{self.label} eth_getProof 0x{address.hex()} in a batch"
        if not isinstance(answer, dict):
            raise malformed(f"{shown}: the answer is not a JSON object")
        try:
            named = parse_data(answer.get("address"), "its address", malformed, 20)
            entries = answer.get("storageProof")
            if not isinstance(entries, list) or len(entries) != len(slots):
                raise malformed("not one storage proof per key asked")
            keys = [parse_quantity(e.get("key") if isinstance(e, dict) else None, "a key",
                                   malformed, bits=256) for e in entries]
        except Unverifiable as exc:
            raise malformed(f"{shown}: {exc.detail}") from None
        if named != address or keys != slots:
            raise malformed(f"{shown}: the answer is for another account or other keys")

    def block_and_accounts(self, number: int, addresses: list[bytes]) -> list[object]:
        """Block ``number`` and the account proofs (no slot) of ``addresses`` at that number,
        in one JSON-RPC batch: ``[block or None, proof, ...]``, each entry possibly the
        Unverifiable the node's error for it maps to; checked as :meth:`blocks_by_number` and
        :meth:`get_proofs` check theirs."""
        tag = hex(number)
        answers = self.client.batch(
            [("eth_getBlockByNumber", [tag, False])]
            + [("eth_getProof", ["0x" + a.hex(), [], tag]) for a in addresses])
        block = answers[0]
        if block is not None and not isinstance(block, Unverifiable) and (
                not isinstance(block, dict) or _number(block) != number):
            raise malformed(f"{self.label} eth_getBlockByNumber {number} in a batch: the "
                            "answer is not that block")
        for address, answer in zip(addresses, answers[1:], strict=True):
            if not isinstance(answer, Unverifiable):
                self._check_proof(answer, address, [])
        return answers

    def blocks_by_number(self, numbers: list[int]
                         ) -> list[dict[str, Any] | None | Unverifiable]:
        """Headers by number in JSON-RPC batches: per number the block (without its
        transactions), ``None``, or the Unverifiable the node's error for it maps to. A block
        that is not an object, or is numbered otherwise, fails the batch (``rpc-malformed``)."""
        answers = self.client.batch([("eth_getBlockByNumber", [hex(n), False]) for n in numbers])
        for number, answer in zip(numbers, answers, strict=True):
            if answer is None or isinstance(answer, Unverifiable):
                continue
            if not isinstance(answer, dict) or _number(answer) != number:
                raise malformed(f"{self.label} eth_getBlockByNumber {number} in a batch: the "
                                "answer is not that block")
        return answers  # type: ignore[return-value]  # checked above

    def block_receipts(self, block_hash: bytes) -> list[Any] | None:
        answer = self.client.request("eth_getBlockReceipts", ["0x" + block_hash.hex()])
        if answer is not None and not isinstance(answer, list):
            raise malformed(f"{self.label} eth_getBlockReceipts: the answer is not a list")
        return answer

    def blocks_receipts(self, hashes: list[bytes]) -> list[list[Any] | None | Unverifiable]:
        """``eth_getBlockReceipts`` of several blocks in JSON-RPC batches: per block its
        receipts, ``None``, or the Unverifiable the node's error for it maps to. A receipt
        that names another block fails the batch (``rpc-malformed``)."""
        answers = self.client.batch([("eth_getBlockReceipts", ["0x" + h.hex()]) for h in hashes])
        for block_hash, answer in zip(hashes, answers, strict=True):
            if answer is None or isinstance(answer, Unverifiable):
                continue
            named = "0x" + block_hash.hex()
            if not isinstance(answer, list) or any(
                    isinstance(r, dict) and str(r.get("blockHash", named)).lower() != named
                    for r in answer):
                raise malformed(f"{self.label} eth_getBlockReceipts {named} in a batch: the "
                                "answer is not that block's receipts")
        return answers  # type: ignore[return-value]  # checked above

    def transaction_receipt(self, tx_hash: str) -> dict[str, Any] | None:
        answer = self.client.request("eth_getTransactionReceipt", [tx_hash])
        if answer is None:  # a node that pruned it (recompute.core.receipts says so)
            return None
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


def _proof_params(address: bytes, slots: list[int], block_hash: bytes) -> list[Any]:
    return ["0x" + address.hex(), [f"0x{slot:064x}" for slot in slots],
            {"blockHash": "0x" + block_hash.hex()}]


def _number(block: dict[str, Any]) -> int | None:
    try:
        return parse_quantity(block.get("number"), "block.number", malformed, bits=64)
    except Unverifiable:
        return None
