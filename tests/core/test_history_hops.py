"""Old blocks proven from a pinned state through the history storage contract (EIP-2935).

The pure checker's expected values are hand computations from the EIP's rule (the state after
block S holds blocks S-8191 .. S-1 at slot n % 8191) and the EIP's published code; the anvil
tests' expected hashes are anvil's own eth_getBlockByNumber answers, never the verifier's.
"""

from __future__ import annotations

import json

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.header import Header
from recompute.core.history_window import (
    HISTORY_CODE_HASH,
    HISTORY_SERVE_WINDOW,
    HISTORY_STORAGE_ADDRESS,
    HISTORY_STORAGE_CODE,
    HistoryUnreachable,
    confirmed_header,
    history_slot,
    hop_blocks,
    proven_hash,
    serves,
)
from recompute.core.hops import reach
from recompute.core.keccak import EMPTY_CODE_HASH, keccak256
from recompute.devnet.anvil import rpc_call
from recompute.sources.live import LiveSource
from tests.cli import run_cli
from tests.rpcproxy import RpcProxy, rewrite_proofs

HISTORY = "0x" + HISTORY_STORAGE_ADDRESS.hex()

# ---- the pure checker ------------------------------------------------------------------------


def test_the_code_hash_is_the_eips_code_hashed():
    assert keccak256(HISTORY_STORAGE_CODE) == HISTORY_CODE_HASH
    assert len(HISTORY_STORAGE_CODE) == 83 and HISTORY_SERVE_WINDOW == 8191


def test_the_window_and_the_slots_by_hand():
    assert history_slot(100) == 100 and history_slot(8191) == 0 and history_slot(8292) == 101
    assert serves(8300, 109) and serves(8300, 8299)
    assert not serves(8300, 108) and not serves(8300, 8300)  # below the window; the block itself
    assert hop_blocks(100, 100) == []
    assert hop_blocks(8191, 0) == [0]
    assert hop_blocks(8192, 0) == [1, 0]
    assert hop_blocks(20_000, 1_000) == [11_809, 3_618, 1_000]


def test_the_checker_returns_the_slot_as_the_hash():
    value = int.from_bytes(bytes(range(32)), "big")
    assert proven_hash(200, 100, HISTORY_CODE_HASH, value) == bytes(range(32))


def test_another_contracts_code_is_refused_by_name():
    with pytest.raises(Unverifiable) as caught:
        proven_hash(200, 100, keccak256(b"\x00"), 1)
    assert caught.value.reason == "history-contract-mismatch"
    assert "not the history storage contract's" in caught.value.detail


@pytest.mark.parametrize("code_hash, value", [(None, 1), (EMPTY_CODE_HASH, 1),
                                              (HISTORY_CODE_HASH, 0)])
def test_no_contract_or_an_empty_slot_is_unreachable_not_a_lie(code_hash, value):
    with pytest.raises(HistoryUnreachable) as caught:
        proven_hash(200, 100, code_hash, value)
    assert caught.value.reason == "history-unreachable"


def test_a_block_outside_the_window_is_a_callers_bug():
    with pytest.raises(ValueError):
        proven_hash(200, 200, HISTORY_CODE_HASH, 1)
    with pytest.raises(ValueError):
        hop_blocks(5, 6)


def test_the_header_must_hash_to_the_slot_and_carry_the_number(devnet_header):
    header = devnet_header
    assert confirmed_header(header.number, header.hash, header, "node") is header
    with pytest.raises(Unverifiable) as wrong_number:  # a newer block's hash in a wrapped ring
        confirmed_header(header.number + HISTORY_SERVE_WINDOW, header.hash, header, "node")
    assert wrong_number.value.reason == "header-mismatch"
    assert f"holds the hash of block {header.number}" in wrong_number.value.detail
    with pytest.raises(Unverifiable) as wrong_hash:
        confirmed_header(header.number, b"\x11" * 32, header, "node")
    assert wrong_hash.value.reason == "header-mismatch"


@pytest.fixture
def devnet_header(anvil) -> Header:
    anvil.rpc("evm_mine")
    return Header.from_rpc(anvil.rpc("eth_getBlockByNumber", "0x1", False))


# ---- against anvil (hardfork prague: the contract is in its genesis) -------------------------


@pytest.fixture(scope="module")
def chain(module_anvil):
    rpc_call(module_anvil.url, "anvil_mine", [hex(300)])
    return module_anvil


def _hash_of(node, number: int) -> str:
    return rpc_call(node.url, "eth_getBlockByNumber", [hex(number), False])["hash"]


def test_anvil_serves_the_eips_contract(chain):
    code = rpc_call(chain.url, "eth_getCode", [HISTORY, "latest"])
    assert bytes.fromhex(code[2:]) == HISTORY_STORAGE_CODE


def test_one_hop_proves_an_old_block_without_walking_headers(chain):
    with RpcProxy(chain.url) as proxy:
        top = anchor_block([LiveSource(proxy.url)], block_hash=bytes.fromhex(
            _hash_of(chain, 300)[2:]))
        proxy.reset()
        old = reach(top, 5, "hops")
        asked = dict(proxy.methods)
    assert "0x" + old.hash.hex() == _hash_of(chain, 5)
    assert old.number == 5 and old.anchor.method == "block-hash"
    path = old.anchor.detail["history_path"]
    assert path["via"] == "history-contract"
    assert path["hops"] == [{"from_block": 300, "block": 5, "slot": 5,
                             "hash": _hash_of(chain, 5)}]
    assert asked == {"eth_getProof": 1, "eth_getBlockByHash": 1}  # no header walk


def test_the_walk_is_said_when_asked(chain):
    top = anchor_block([LiveSource(chain.url)], block=300)
    old = reach(top, 290, "walk")
    assert "0x" + old.hash.hex() == _hash_of(chain, 290)
    assert old.anchor.detail["history_path"] == {
        "via": "header-walk", "headers_walked": 10, "why": "the header walk was asked for"}


def test_above_the_pin_and_an_unknown_mode_are_usage_errors(chain):
    top = anchor_block([LiveSource(chain.url)], block=10)
    with pytest.raises(UsageError, match="above the pinned block 10"):
        reach(top, 11)
    with pytest.raises(UsageError, match="auto, hops, walk"):
        reach(top, 5, "jump")


def _lie_about_the_slot(answer: dict) -> None:
    if answer["address"].lower() == HISTORY:
        answer["storageProof"][0]["value"] = "0x" + "ab" * 32


def _swap_the_slots_proof(proofs: dict) -> callable:
    """A node that answers the history slot of block 5 with the proof (and value) of block
    6's slot: a real proof, of another key."""
    def lie(answer: dict) -> None:
        if answer["address"].lower() == HISTORY and "6" in proofs:
            entry = answer["storageProof"][0]
            entry["proof"], entry["value"] = proofs["6"]["proof"], proofs["6"]["value"]
    return lie


@pytest.mark.parametrize("mode", ["auto", "hops"])
def test_a_node_lying_about_one_history_slot_is_unverifiable(chain, mode):
    with RpcProxy(chain.url, rewrite_proofs(_lie_about_the_slot)) as proxy:
        top = anchor_block([LiveSource(proxy.url)], block=300)
        with pytest.raises(Unverifiable) as caught:
            reach(top, 5, mode)
    assert caught.value.reason == "rpc-inconsistent"  # never walked around, in auto either


def test_another_keys_proof_for_the_slot_is_unverifiable(chain):
    top_hash = _hash_of(chain, 300)
    six = rpc_call(chain.url, "eth_getProof", [HISTORY, ["0x" + "00" * 31 + "06"], top_hash])
    lie = _swap_the_slots_proof({"6": six["storageProof"][0]})
    with RpcProxy(chain.url, rewrite_proofs(lie)) as proxy:
        top = anchor_block([LiveSource(proxy.url)], block=300)
        with pytest.raises(Unverifiable) as caught:
            reach(top, 5, "auto")
    assert caught.value.reason in ("invalid-proof", "rpc-inconsistent")


def test_a_header_of_another_number_for_the_proven_hash_is_refused(chain):
    other = rpc_call(chain.url, "eth_getBlockByNumber", ["0x6", False])

    def another_header(method, params, reply):
        if method == "eth_getBlockByHash" and params[0] == _hash_of(chain, 5):
            reply["result"] = other
        return reply

    with RpcProxy(chain.url, another_header) as proxy:
        top = anchor_block([LiveSource(proxy.url)], block=300)
        with pytest.raises(Unverifiable) as caught:
            reach(top, 5, "auto")
    assert caught.value.reason == "header-mismatch"


def test_a_contract_with_other_code_is_refused_by_name(anvil):
    anvil.rpc("anvil_mine", hex(20))
    anvil.rpc("anvil_setCode", HISTORY, "0x6000")
    anvil.rpc("evm_mine")
    top = anchor_block([LiveSource(anvil.url)], block="latest")
    for mode in ("auto", "hops"):
        with pytest.raises(Unverifiable) as caught:
            reach(top, 5, mode)
        assert caught.value.reason == "history-contract-mismatch"


def test_no_contract_falls_back_to_the_walk_said_in_the_evidence(anvil):
    anvil.rpc("anvil_mine", hex(20))
    anvil.rpc("anvil_setCode", HISTORY, "0x")  # a chain without the contract
    anvil.rpc("evm_mine")
    top = anchor_block([LiveSource(anvil.url)], block="latest")
    old = reach(top, 5, "auto")
    assert "0x" + old.hash.hex() == _hash_of(anvil, 5)
    path = old.anchor.detail["history_path"]
    assert path["via"] == "header-walk" and path["headers_walked"] == top.number - 5
    assert "no history storage contract" in path["why"]
    with pytest.raises(Unverifiable) as caught:
        reach(top, 5, "hops")
    assert caught.value.reason == "history-unreachable"
    assert "hops allows no header walk" in caught.value.detail


def test_an_empty_slot_falls_back_to_the_walk(anvil):
    anvil.rpc("anvil_mine", hex(20))
    anvil.rpc("anvil_setStorageAt", HISTORY, hex(5), "0x" + "00" * 32)  # as before the fork
    anvil.rpc("evm_mine")
    top = anchor_block([LiveSource(anvil.url)], block="latest")
    old = reach(top, 5, "auto")
    assert "0x" + old.hash.hex() == _hash_of(anvil, 5)
    assert "older than the contract's first entry" in old.anchor.detail["history_path"]["why"]


def test_cli_checkpoint_reaches_the_block_by_hops_or_the_walk(chain):
    head = _hash_of(chain, 300)
    args = ["proof", "--rpc", chain.url, "--checkpoint", head, "--block", "5",
            "--address", "0x" + "00" * 20, "--json"]
    hops, walk = run_cli(*args), run_cli(*args, "--history", "walk")
    assert hops.returncode == 0 and walk.returncode == 0, hops.stderr + walk.stderr
    by_hops, by_walk = json.loads(hops.stdout), json.loads(walk.stdout)
    assert by_hops["evidence"]["block"] == by_walk["evidence"]["block"]
    assert by_hops["evidence"]["block"]["hash"] == _hash_of(chain, 5)
    anchor = by_hops["evidence"]["anchor"]
    assert anchor["method"] == "checkpoint" and anchor["checkpoint_number"] == 300
    assert anchor["history_path"]["hops"][0]["from_block"] == 300
    assert by_walk["evidence"]["anchor"]["history_path"]["headers_walked"] == 295
    bad = run_cli(*args, "--history", "jump")
    assert bad.returncode == 64 and "--history" in bad.stderr
