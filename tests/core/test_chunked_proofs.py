"""Large slot sets are proven in chunks (recompute.core.prover.PROOF_CHUNK), the next chunk
fetched while the current one is verified. Values are checked against eth_getStorageAt (the
node's plain answer, independent of the proofs) and against what this test wrote; a lie in
any chunk is still caught."""

from __future__ import annotations

import pytest

from recompute.core import prover
from recompute.core.anchor import anchor_block
from recompute.core.errors import Unverifiable
from recompute.core.prover import ProofStats, prove_account
from recompute.devnet.contracts import connect, deploy
from recompute.sources.live import LiveSource


@pytest.fixture()
def meter(anvil):
    w3 = connect(anvil.url)
    contract = deploy(w3, "HeadroomMeter")
    for i in range(1, 4):
        tx = contract.functions.openEnvelope(i.to_bytes(32, "big"), w3.eth.accounts[3], 10_000,
                                             500 * i).transact({"from": w3.eth.accounts[1]})
        w3.eth.wait_for_transaction_receipt(tx)
    return w3, bytes.fromhex(contract.address[2:])


class LyingInChunk:
    """The real node, except that the answer to the ``n``-th eth_getProof claims a value."""

    def __init__(self, source: LiveSource, n: int):
        self.source, self.n, self.asked = source, n, 0
        self.label = source.label

    def __getattr__(self, name):
        return getattr(self.source, name)

    def get_proof(self, address, slots, block_hash):
        answer = self.source.get_proof(address, slots, block_hash)
        self.asked += 1
        if self.asked == self.n:
            answer["storageProof"][-1]["value"] = "0x2a"
        return answer


def test_chunks_prove_what_the_node_stores(meter, anvil, monkeypatch):
    w3, address = meter
    monkeypatch.setattr(prover, "PROOF_CHUNK", 4)
    block = anchor_block([LiveSource(anvil.url)], block="latest")
    slots = list(range(11))
    stats = ProofStats()
    account = prove_account(block, address, slots, stats=stats)
    assert stats.requests == 3 and stats.slots == 11
    assert account.storage[0] == 3  # envelopeCount: three envelopes opened above
    for slot in slots:
        stored = w3.eth.get_storage_at(w3.to_checksum_address(address), slot, block.number)
        assert account.storage[slot] == int.from_bytes(stored, "big")


@pytest.mark.parametrize("lying_chunk", [1, 2, 3])
def test_a_lie_in_any_chunk_is_unverifiable(meter, anvil, monkeypatch, lying_chunk):
    _, address = meter
    monkeypatch.setattr(prover, "PROOF_CHUNK", 4)
    source = LyingInChunk(LiveSource(anvil.url), lying_chunk)
    block = anchor_block([LiveSource(anvil.url)], block="latest")
    with pytest.raises(Unverifiable) as caught:
        prove_account(block, address, list(range(11)), source=source)
    assert caught.value.reason == "rpc-inconsistent"
