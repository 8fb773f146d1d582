"""Fixtures of the layout tests: LayoutZoo's committed artifacts, descriptor and a deployment.

The artifacts in ``artifacts/`` are committed (compiled with contracts/build.mjs, see
test_layout_descriptor.py::test_committed_artifacts_are_up_to_date); no compiler runs here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.prover import prove_account
from recompute.devnet.contracts import connect, deploy
from recompute.layout import import_layout
from recompute.sources.live import LiveSource

HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
ZOO_ARTIFACT = ARTIFACTS / "LayoutZoo.json"
STANDARD_OUTPUT = ARTIFACTS / "standard-output.json"
ZOO_SOURCE = "tests/layout/contracts/LayoutZoo.sol"
ZOO_CONTRACT = f"{ZOO_SOURCE}:LayoutZoo"

ALICE = "0x00000000000000000000000000000000000A11cE"
BOB = "0xb0B0000000000000000000000000000000000B0B"


def artifact() -> dict:
    return json.loads(ZOO_ARTIFACT.read_text())


def solc_slot(label: str) -> int:
    """The slot solc itself assigned to a state variable (read straight from the artifact)."""
    for v in artifact()["storageLayout"]["storage"]:
        if v["label"] == label:
            return int(v["slot"])
    raise KeyError(label)


@pytest.fixture(scope="session")
def zoo_layout():
    return import_layout(ZOO_ARTIFACT)


def storage_source(node, address: str, block: int):
    """THE slot source of the on-chain tests: ``slots -> {slot: word}`` at a pinned block.

    Every word is proven: one eth_getProof per round, verified against the stateRoot of the
    block (anchored by its hash, which the node's own header must re-hash to).
    """
    source = LiveSource(node.url)
    block_hash = bytes.fromhex(node.rpc("eth_getBlockByNumber", hex(block), False)["hash"][2:])
    anchored = anchor_block([source], block_hash=block_hash)
    contract = bytes.fromhex(address[2:])

    def prove(slots):
        return dict(prove_account(anchored, contract, sorted(slots)).storage)

    return prove


@dataclass
class Deployed:
    node: object
    w3: object
    contract: object
    block: int
    source: object


@pytest.fixture(scope="module")
def zoo(module_anvil):
    """LayoutZoo deployed and set up; ``block`` is pinned, and state changes after it."""
    w3 = connect(module_anvil.url)
    contract = deploy(w3, "LayoutZoo", directory=str(ARTIFACTS))
    w3.eth.wait_for_transaction_receipt(contract.functions.setup().transact())
    block = w3.eth.block_number
    # After the pin: run setup() again, so the latest state differs (arrays grow).
    w3.eth.wait_for_transaction_receipt(contract.functions.setup().transact())
    return Deployed(module_anvil, w3, contract, block,
                    storage_source(module_anvil, contract.address, block))
