"""A consensus light client (Altair sync protocol, capella to fulu data), trust-critical: pin
an execution block by the beacon chain's sync committee, starting from one trusted beacon block
root.

Pure: no I/O. The beacon node is reached by :mod:`recompute.sources.beacon`; this package
decodes its answers, verifies them and yields :class:`ExecutionHeader`::

    store = bootstrap(trusted_root, decode_bootstrap(answer, network), network)
    for update in decode_updates(answer, network, count):
        store = store.apply_update(update, current_slot=slot)
    store = store.apply_update(decode_finality_update(answer, network), current_slot=slot)
    pinned = store.finalized_execution()   # .block_hash, .state_root, .block_number, ...

See docs/lightclient.md for what it verifies and what it trusts.
"""

from recompute.lightclient.networks import (
    DEVNET,
    HOLESKY,
    MAINNET,
    NETWORKS,
    SEPOLIA,
    Fork,
    Network,
    load_network,
    minimal_network,
    network_by_name,
    network_from_json,
)
from recompute.lightclient.ssz import (
    LightClientBootstrap,
    LightClientHeader,
    LightClientUpdate,
    decode_bootstrap,
    decode_finality_update,
    decode_optimistic_update,
    decode_update,
    decode_updates,
)
from recompute.lightclient.sync import (
    ExecutionHeader,
    LightClientStore,
    StaleUpdate,
    bootstrap,
    verify_committee_chain,
)

__all__ = [
    "DEVNET",
    "HOLESKY",
    "MAINNET",
    "NETWORKS",
    "SEPOLIA",
    "ExecutionHeader",
    "Fork",
    "LightClientBootstrap",
    "LightClientHeader",
    "LightClientStore",
    "LightClientUpdate",
    "Network",
    "StaleUpdate",
    "bootstrap",
    "decode_bootstrap",
    "decode_finality_update",
    "decode_optimistic_update",
    "decode_update",
    "decode_updates",
    "load_network",
    "minimal_network",
    "network_by_name",
    "network_from_json",
    "verify_committee_chain",
]
