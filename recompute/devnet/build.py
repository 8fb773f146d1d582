"""Build the devnet: deploy every reference contract and drive the scripted histories.

The histories run in a fixed order on one chain, each in its own module with a
``run(driver)`` function; the result is the manifest (``rpc``, ``chain_id``, contracts by
name, each history's section, named moments). Same code → same block hashes.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from recompute.devnet.anvil import Anvil
from recompute.devnet.contracts import connect
from recompute.devnet.driver import Driver
from recompute.devnet.moments import describe

# Before the AMM specification's worked example (its cycle runs at 1762651000..), so the example's
# exact timestamps can be used: 2025-11-08T11:06:40Z.
DEVNET_GENESIS_TIMESTAMP = 1762600000

# (manifest section, module) in the order they run; each module has run(driver). A module may
# also have extend(driver): the extensions run after every history, in the same order, so that
# moments added for the rule inventory (vectors/rules.json) come after every earlier block and
# leave the existing moments' block hashes as they were. A partial build (``only``) runs none.
HISTORIES = [
    ("amm", "recompute.devnet.history_amm"),
    ("meters", "recompute.devnet.history_meters"),
    ("swarm", "recompute.devnet.history_swarm"),
    ("variants", "recompute.devnet.history_variants"),  # extend only: the chain's last blocks
]

MANIFEST_FORMAT = "recompute-devnet/1"


def available_histories() -> list[tuple[str, ModuleType]]:
    """The history modules present in this tree (a module not written yet is skipped)."""
    out = []
    for section, module_name in HISTORIES:
        try:
            out.append((section, importlib.import_module(module_name)))
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
    return out


def build(node: Anvil, only: list[str] | None = None) -> dict[str, Any]:
    """Run the histories on a fresh ``node``; returns the manifest."""
    if node.timestamp is None:  # Anvil.start() reads the genesis timestamp
        raise RuntimeError("build needs a started anvil")
    w3 = connect(node.url)
    driver = Driver(w3, start_timestamp=node.timestamp)
    for section, module in available_histories():
        if only is not None and section not in only:
            continue
        driver.section(section)
        module.run(driver)
    if only is None:  # the whole devnet only: a partial build stays as its histories left it
        for _, module in available_histories():
            if hasattr(module, "extend"):
                module.extend(driver)
    manifest = {
        "format": MANIFEST_FORMAT,
        "rpc": node.url,
        "chain_id": w3.eth.chain_id,
        "genesis_timestamp": node.timestamp,
        "accounts": driver.accounts,
        "contracts": driver.contracts,
        **{name: driver.sections[name] for name in driver.sections},
        "moments": driver.moments,
    }
    describe(manifest)  # what each moment is about: recipe, parameters, expected verdict
    return manifest
