"""Real go-ethereum proofs, served over HTTP by the replay node, verified end to end.

The expected values are geth's own answers to eth_getBalance, eth_getStorageAt and
eth_getCode for the same account and block: independent of the verifier.
"""

from __future__ import annotations

import json

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.clock import Clock
from recompute.core.keccak import keccak256
from recompute.core.prover import prove_account
from recompute.sources.fixture_node import FixtureNode
from recompute.sources.live import LiveSource
from tests.core.fixturedata import CONTRACT, FIXTURES, LATEST, exchanges

# the recorded chain (execution-apis fixtures) is judged as of its head block's time
# (block 54, timestamp 540): recorded data names its clock (docs/lightclient.md §Clock)
RECORDED = Clock(at=540)


@pytest.fixture(scope="module")
def node():
    with FixtureNode(FIXTURES) as replay:
        yield replay


def _answers(folder: str, address: str) -> list:
    """geth's answers about ``address`` at the latest block (omitted or "latest")."""
    out = []
    for _, request, response in exchanges(folder):
        params = request["params"]
        block = params[-1] if len(params) > (2 if folder == "eth_getStorageAt" else 1) else "latest"
        if params[0].lower() == address and block == "latest" and "result" in response:
            out.append((params, response["result"]))
    return out


PROOF_REQUESTS = [(name, req) for name, req, resp in exchanges("eth_getProof") if "result" in resp]


@pytest.mark.parametrize("name,request_", PROOF_REQUESTS, ids=[n for n, _ in PROOF_REQUESTS])
def test_recorded_proof_verifies_at_the_block_it_names(node, name, request_):
    params = request_["params"]
    source = LiveSource(node.url)
    ref = params[2] if len(params) > 2 else "latest"
    if ref.startswith("0x") and len(ref) == 66:
        block = anchor_block([source], block_hash=bytes.fromhex(ref[2:]))
        assert block.anchor.method == "block-hash"
    else:
        block = anchor_block([source], block=ref, clock=RECORDED)
    assert block.number == LATEST
    slots = [int(k, 16) for k in params[1]]
    account = prove_account(block, bytes.fromhex(params[0][2:]), slots)
    assert account.exists
    assert sorted(account.storage) == sorted(slots)


def test_proven_account_equals_geths_other_answers(node):
    source = LiveSource(node.url)
    block = anchor_block([source], block="latest", clock=RECORDED)
    account = prove_account(block, bytes.fromhex(CONTRACT[2:]), [0])
    balances = _answers("eth_getBalance", CONTRACT)
    storage = _answers("eth_getStorageAt", CONTRACT)
    codes = _answers("eth_getCode", CONTRACT)
    assert balances and storage and codes  # the fixtures do hold these answers
    for _, balance in balances:
        assert account.balance == int(balance, 16) == 0x76
    for params, value in storage:
        assert account.storage[int(params[1], 16)] == int(value, 16) == 0x38
    for _, code in codes:
        assert account.code_hash == keccak256(bytes.fromhex(code[2:]))
    # geth's eth_getTransactionCount fixtures ask about other accounts; this contract is
    # allocated in genesis.json with no "nonce" key, so its nonce is 0 (an independent source).
    genesis = json.loads((FIXTURES / "genesis.json").read_text())["alloc"]
    assert "nonce" not in genesis[CONTRACT[2:]]
    assert account.nonce == 0


def test_checkpoint_walk_over_the_recorded_chain(node):
    source = LiveSource(node.url)
    head = anchor_block([source], block="latest", clock=RECORDED)
    block = anchor_block([source], checkpoint=head.hash, block=1)
    assert block.number == 1
    assert block.anchor.detail["headers_walked"] == LATEST - 1
    assert block.hash.hex() == "{}".format(
        next(r["result"]["hash"] for n, _, r in exchanges("eth_getBlockByHash")
             if n == "get-block-by-hash.io")[2:]
    )
