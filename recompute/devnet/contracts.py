"""Load the bundled compiled artifacts (``recompute/data/artifacts``) and deploy them with web3.

Driving a chain (deploying, sending transactions) is the devnet's business only; nothing
here is trusted by the verifier, which proves everything it reads.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from web3 import Web3
from web3.contract import Contract

from recompute.data import ARTIFACTS as ARTIFACTS_DIR


@cache
def load_artifact(name: str, directory: str | None = None) -> dict[str, Any]:
    """The artifact ``<directory>/<name>.json`` (the bundled artifacts by default)."""
    path = Path(directory) if directory else ARTIFACTS_DIR
    with open(path / f"{name}.json") as fh:
        artifact: dict[str, Any] = json.load(fh)
    return artifact


def connect(url: str) -> Web3:
    w3 = Web3(Web3.HTTPProvider(url, request_kwargs={"timeout": 30}))
    w3.eth.default_account = w3.eth.accounts[0]
    return w3


def deploy(w3: Web3, name: str, *args: Any, sender: str | None = None,
           directory: str | None = None,
           libraries: dict[str, str] | None = None) -> Contract:
    """Deploy artifact ``name`` with constructor ``args``; returns the bound contract."""
    artifact = load_artifact(name, directory)
    bytecode = artifact["bytecode"]
    for placeholder, address in (libraries or {}).items():
        bytecode = bytecode.replace(placeholder, address.removeprefix("0x").lower())
    factory = w3.eth.contract(abi=artifact["abi"], bytecode=bytecode)
    tx = factory.constructor(*args).transact({"from": sender or w3.eth.default_account})
    receipt = w3.eth.wait_for_transaction_receipt(tx)
    if receipt["status"] != 1:
        raise RuntimeError(f"deploying {name} reverted")
    deployed = receipt["contractAddress"]
    if deployed is None:
        raise RuntimeError(f"deploying {name}: the receipt names no contract")
    return w3.eth.contract(address=deployed, abi=artifact["abi"])
