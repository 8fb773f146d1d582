"""Receipts proven against receiptsRoot: real geth data, anvil blocks of mixed types, tampering."""

from __future__ import annotations

import copy
import time

import pytest
import rlp

from recompute.core.anchor import anchor_block
from recompute.core.clock import Clock
from recompute.core.errors import Unverifiable
from recompute.core.receipts import encode_receipt, prove_receipts, receipts_root, verify_receipts
from recompute.devnet.anvil import Anvil, rpc_call
from recompute.sources.fixture_node import FixtureNode, read_chain, read_exchanges
from recompute.sources.live import LiveSource
from tests.core.fixturedata import FIXTURES, LATEST

# the recorded chain (execution-apis fixtures) is judged as of its head block's time
# (block 54, timestamp 540): recorded data names its clock (docs/lightclient.md §Clock)
RECORDED = Clock(at=540)


def _recorded(folder: str, name: str):
    return read_exchanges(FIXTURES / folder / name)[0][1]["result"]


CHAIN = {h.number: h for h in read_chain(FIXTURES / "chain.rlp")}


@pytest.mark.parametrize("name,number", [
    ("get-block-receipts-n.io", 1),             # pre-Byzantium: post-state roots
    ("get-block-receipts-latest.io", LATEST),   # EIP-658 status, 11 logs
])
def test_geths_block_receipts_rebuild_to_the_headers_root(name, number):
    receipts = _recorded("eth_getBlockReceipts", name)
    assert receipts_root([encode_receipt(r) for r in receipts]) == CHAIN[number].receipts_root


def test_our_encoding_is_geths_raw_encoding():
    raw = [bytes.fromhex(r[2:]) for r in _recorded("debug_getRawReceipts", "get-block-n.io")]
    assert receipts_root(raw) == CHAIN[3].receipts_root  # the raw bytes are block 3's
    legacy = _recorded("eth_getTransactionReceipt", "get-legacy-receipt.io")  # block 3, index 0
    assert encode_receipt(legacy) == raw[0]


@pytest.mark.parametrize("name,tx_type", [
    ("get-access-list.io", 1), ("get-dynamic-fee.io", 2), ("get-blob-tx.io", 3),
    ("get-setcode-tx.io", 4),
])
def test_typed_receipts_are_eip2718_envelopes(name, tx_type):
    receipt = _recorded("eth_getTransactionReceipt", name)
    encoded = encode_receipt(receipt)
    assert encoded[0] == tx_type
    status, cumulative, bloom, logs = rlp.decode(encoded[1:])
    assert status == b"\x01" and int.from_bytes(cumulative, "big") == int(
        receipt["cumulativeGasUsed"], 16)
    assert [log[2] for log in logs] == [bytes.fromhex(x["data"][2:]) for x in receipt["logs"]]


def test_logs_of_the_latest_geth_block_through_http():
    with FixtureNode(FIXTURES) as node:
        block = anchor_block([LiveSource(node.url)], block="latest", clock=RECORDED)
        proven = prove_receipts(block)
    recorded = _recorded("eth_getBlockReceipts", "get-block-receipts-latest.io")
    expected = [(i, log["address"], log["data"]) for i, r in enumerate(recorded)
                for log in r["logs"]]
    assert len(proven.logs) == 11 == len(expected)
    assert [(p.tx_index, "0x" + p.address.hex(), "0x" + p.data.hex())
            for p in proven.logs] == expected
    assert [p.log_index for p in proven.logs] == list(range(11))
    assert proven.statuses == [1, 1, 1, 1]


@pytest.fixture(scope="module")
def geth_latest():
    with FixtureNode(FIXTURES) as node:
        block = anchor_block([LiveSource(node.url)], block="latest", clock=RECORDED)
    return block, _recorded("eth_getBlockReceipts", "get-block-receipts-latest.io")


def _flip(text: str) -> str:
    return text[:-1] + ("1" if text[-1] != "1" else "2")


@pytest.mark.parametrize("mutate,reason", [
    (lambda r: r[1]["logs"][0].update(data=_flip(r[1]["logs"][0]["data"])), "receipts-mismatch"),
    (lambda r: r[1]["logs"][0]["topics"].append("0x" + "00" * 32), "receipts-mismatch"),
    (lambda r: r[1]["logs"][0].update(address="0x" + "22" * 20), "receipts-mismatch"),
    (lambda r: r[1]["logs"].pop(), "receipts-mismatch"),
    (lambda r: r.pop(), "receipts-mismatch"),
    (lambda r: r.reverse(), "receipts-mismatch"),
    (lambda r: r[0].update(status="0x0"), "receipts-mismatch"),
    (lambda r: r[0].update(cumulativeGasUsed="0x1"), "receipts-mismatch"),
    (lambda r: r[0].update(type="0x2"), "receipts-mismatch"),
    (lambda r: r[0].update(type="0x7e"), "rpc-malformed"),
    (lambda r: r[1]["logs"][1].update(logIndex="0x7"), "rpc-inconsistent"),
    (lambda r: r[2].update(transactionIndex="0x0"), "rpc-inconsistent"),
    (lambda r: r[0].update(blockHash="0x" + "11" * 32), "rpc-inconsistent"),
    (lambda r: r[0].update(logsBloom="0x00"), "rpc-malformed"),
])
def test_tampered_receipts_never_prove(geth_latest, mutate, reason):
    block, receipts = geth_latest
    tampered = copy.deepcopy(receipts)
    mutate(tampered)
    with pytest.raises(Unverifiable) as caught:
        verify_receipts(block, tampered)
    assert caught.value.reason == reason


# init (12 bytes): CODECOPY the 16-byte runtime and RETURN it. runtime: CALLDATACOPY word 1 to
# memory, CALLDATALOAD word 0, LOG1(memory[0:32], topic = word 0), STOP.
EMITTER = "0x" + "6010600c60003960106000f3" + "6020602060003760003560206000a100"


def _wait_receipt(url: str, tx: str) -> dict:
    """anvil mines right after eth_sendTransaction returns; the receipt can lag a moment."""
    for _ in range(200):
        receipt = rpc_call(url, "eth_getTransactionReceipt", [tx])
        if receipt is not None:
            return receipt
        time.sleep(0.01)
    raise AssertionError(f"no receipt for {tx}")


def test_a_mixed_type_anvil_block_and_the_per_transaction_fallback():
    with Anvil() as node:
        sender = rpc_call(node.url, "eth_accounts")[0]
        tx = rpc_call(node.url, "eth_sendTransaction", [{"from": sender, "data": EMITTER}])
        emitter = _wait_receipt(node.url, tx)["contractAddress"]
        node.rpc("evm_setAutomine", False)
        calls = [
            {"maxFeePerGas": hex(10 * 10**9), "maxPriorityFeePerGas": hex(2 * 10**9)},  # type 2
            {"gasPrice": hex(2 * 10**9)},                                             # type 0
            {"gasPrice": hex(2 * 10**9), "accessList": [], "type": "0x1"},              # type 1
        ]
        for i, fees in enumerate(calls):
            data = "0x" + (i + 1).to_bytes(32, "big").hex() + (7 * i).to_bytes(32, "big").hex()
            rpc_call(node.url, "eth_sendTransaction", [
                {"from": sender, "to": emitter, "data": data, "gas": "0x186a0", **fees}])
        node.rpc("evm_mine")
        block = anchor_block([LiveSource(node.url)], block="latest")
        proven = prove_receipts(block)
        raw = rpc_call(node.url, "eth_getBlockReceipts", [hex(block.number)])
        assert [int(r["type"], 16) for r in raw] == [2, 0, 1]
        assert [(log.topics[0][-1], int.from_bytes(log.data, "big")) for log in proven.logs] == [
            (1, 0), (2, 7), (3, 14)]
        assert all(log.address.hex() == emitter[2:].lower() for log in proven.logs)

        class NoBlockReceipts(LiveSource):
            def block_receipts(self, block_hash):
                raise Unverifiable("rpc-error", "the method eth_getBlockReceipts does not exist")

        fallback = anchor_block([NoBlockReceipts(node.url)], block="latest")
        assert prove_receipts(fallback).logs == proven.logs
