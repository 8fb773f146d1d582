"""The lying L2 node's rewrite (recompute/devnet/l2_lie.py): it raises the one registry's
storage values by one, in eth_getProof and eth_getStorageAt, and leaves everything else as the
honest node answered."""

from __future__ import annotations

import copy

from recompute.devnet.l2_lie import lie

REGISTRY = "0x5fbdb2315678afecb367f032d93f642f64180aa3"
OTHER = "0x4200000000000000000000000000000000000016"


def _proof(*values: str) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "result": {
        "storageHash": "0x" + "ab" * 32, "accountProof": ["0x01"],
        "storageProof": [{"key": hex(i), "value": v, "proof": ["0x02"]}
                         for i, v in enumerate(values)]}}


def test_the_registrys_proof_values_are_raised_by_one_proofs_untouched():
    honest = _proof("0x0", "0x2a", hex((1 << 256) - 1))
    call = {"method": "eth_getProof", "params": [REGISTRY.upper().replace("0X", "0x"), [], "0x1"]}
    told = lie(call, copy.deepcopy(honest), REGISTRY)
    assert [e["value"] for e in told["result"]["storageProof"]] == ["0x1", "0x2b", "0x0"]
    assert [e["proof"] for e in told["result"]["storageProof"]] == [["0x02"]] * 3
    assert told["result"]["storageHash"] == honest["result"]["storageHash"]


def test_storage_at_is_raised_as_a_32_byte_word():
    call = {"method": "eth_getStorageAt", "params": [REGISTRY, "0x0", "latest"]}
    told = lie(call, {"jsonrpc": "2.0", "id": 1, "result": "0x" + "00" * 31 + "ff"}, REGISTRY)
    assert told["result"] == "0x" + "00" * 30 + "0100"


def test_everything_else_is_the_honest_answer():
    honest = _proof("0x5")
    for call in ({"method": "eth_getProof", "params": [OTHER, [], "0x1"]},
                 {"method": "eth_getBlockByNumber", "params": ["0x1", False]},
                 {"method": "eth_getCode", "params": [REGISTRY, "0x1"]},
                 {"method": "eth_getProof"}, {}):
        assert lie(call, copy.deepcopy(honest), REGISTRY) == honest, call
