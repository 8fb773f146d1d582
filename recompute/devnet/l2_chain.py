"""The devnet's L2 (``devnet up --l2``): a second anvil in OP-stack mode holding the reference
registries, and the output roots its proposer posts to L1.

The L2 anvil runs ``--network optimism`` (chain id :data:`L2_CHAIN_ID`) with the same accounts
and the same fixed genesis time as the L1 devnet. Before its first block the
``L2ToL1MessagePasser`` predeploy's code (from ``@eth-optimism/contracts-bedrock``, bundled in
``recompute/data/artifacts/optimism``) is set at its predeploy address, and block 1 holds one
withdrawal through it (so its storage root, part of every output root, is not the empty
trie's); then the AMM history (recompute/devnet/history_amm.py) runs on it exactly as on L1
(its blocks one number later), so the same registries stand at the same addresses in the same
states (the same recipe over the same registry state gives the same verdict on L1 and on L2),
each L1 moment of that history having its L2 twin.

The output root of an L2 block is the OP stack's version-0 output root
(specs/protocol/proposals.md, "L2 Output Commitment Construction")::

    keccak256(bytes32(0) ‖ stateRoot ‖ messagePasserStorageRoot ‖ blockHash)

computed here by the proposer from the L2 node (a chain writer: nothing here is trusted by the
verifier, which proves every part of it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eth_hash.auto import keccak
from web3 import Web3
from web3.types import Wei

from recompute.data import ARTIFACTS
from recompute.devnet.anvil import Anvil
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build
from recompute.devnet.contracts import connect, load_artifact
from recompute.devnet.driver import HistoryError

L2_CHAIN_ID = 901  # the OP stack's own local devnet L2 chain id
L2_HARDFORK = "isthmus"
MESSAGE_PASSER = "0x4200000000000000000000000000000000000016"  # the L2ToL1MessagePasser predeploy
OPTIMISM_ARTIFACTS = str(ARTIFACTS / "optimism")  # extracted by contracts/optimism.mjs
L2_HISTORIES = ["amm"]  # the L1 histories replayed on L2
WITHDRAWAL_AFTER = 6  # seconds after genesis: before the histories' first block (genesis + 12)


def l2_anvil(state_dir: Path | None = None, port: int | None = None,
             detach: bool = False) -> Anvil:
    """The L2 anvil (not started); in ``state_dir`` its files are ``l2-state.json``,
    ``l2-anvil.log`` and the cache folder ``l2-anvil-cache``."""
    files: dict[str, Any] = {}
    if state_dir is not None:
        files = {"state_path": state_dir / "l2-state.json", "log_path": state_dir / "l2-anvil.log",
                 "cache_dir": state_dir / "l2-anvil-cache"}
    return Anvil(port=port, chain_id=L2_CHAIN_ID, timestamp=DEVNET_GENESIS_TIMESTAMP,
                 hardfork=L2_HARDFORK, extra_args=["--network", "optimism"], detach=detach,
                 **files)


def build_l2(node: Anvil) -> dict[str, Any]:
    """Set the message passer's code on a fresh L2 ``node`` and replay the L2 histories; the
    L2 part of the manifest's ``l2`` section (its registries, their sections, its blocks)."""
    passer = load_artifact("L2ToL1MessagePasser", OPTIMISM_ARTIFACTS)
    node.rpc("anvil_setCode", MESSAGE_PASSER, passer["deployedBytecode"])  # block 1's state on
    withdrawal = _withdraw(node, passer["abi"])
    built = build(node, only=L2_HISTORIES)
    blocks = {label: {key: moment[key] for key in ("number", "hash", "timestamp")}
              for label, moment in built["moments"].items()}
    return {"chain_id": built["chain_id"], "genesis_timestamp": built["genesis_timestamp"],
            "message_passer": MESSAGE_PASSER, "contracts": built["contracts"],
            **{name: built[name] for name in L2_HISTORIES}, "blocks": blocks,
            "withdrawal": withdrawal}


def _withdraw(node: Anvil, abi: list[Any]) -> dict[str, Any]:
    """One withdrawal (1 ether to the last account, in block 1, before the histories' first
    block), so that the message passer's storage root in every output root is not the empty
    trie's."""
    if node.timestamp is None:
        raise HistoryError("the L2 withdrawal needs a started anvil")
    w3 = connect(node.url)
    sender = w3.eth.accounts[-1]
    passer = w3.eth.contract(address=Web3.to_checksum_address(MESSAGE_PASSER), abi=abi)
    node.rpc("evm_setNextBlockTimestamp", node.timestamp + WITHDRAWAL_AFTER)
    tx = passer.functions.initiateWithdrawal(sender, 100_000, b"").transact(
        {"from": sender, "value": Wei(10**18)})
    receipt = w3.eth.wait_for_transaction_receipt(tx)
    if receipt["status"] != 1:
        raise HistoryError("the L2 withdrawal failed")
    return {"block": receipt["blockNumber"], "from": sender, "to": sender,
            "value": str(10**18), "tx": receipt["transactionHash"].to_0x_hex()}


def output_root(node: Anvil, number: int) -> dict[str, str]:
    """The version-0 output root of L2 block ``number`` and its preimage's parts."""
    block = node.rpc("eth_getBlockByNumber", hex(number), False)
    proof = node.rpc("eth_getProof", MESSAGE_PASSER, [], hex(number))
    parts = [bytes(32), bytes.fromhex(block["stateRoot"][2:]),
             bytes.fromhex(proof["storageHash"][2:]), bytes.fromhex(block["hash"][2:])]
    return {"output_root": "0x" + keccak(b"".join(parts)).hex(),
            "state_root": block["stateRoot"], "message_passer_storage_root": proof["storageHash"],
            "block_hash": block["hash"]}
