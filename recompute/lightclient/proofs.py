"""The sync protocol's pure checks: Merkle branches, light-client header validity, signing
roots. Each function is the consensus-specs function of the same name, for a given network.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from recompute.lightclient.networks import Network
from recompute.lightclient.ssz import (
    ExecutionPayloadHeader,
    ExecutionPayloadHeaderCapella,
    ForkData,
    LightClientHeader,
    SigningData,
    hash_tree_root,
)

# altair sync-protocol §Constants (frozen at these values from electra on: "Frozen constants")
FINALIZED_ROOT_GINDEX = 105
CURRENT_SYNC_COMMITTEE_GINDEX = 54
NEXT_SYNC_COMMITTEE_GINDEX = 55
# electra sync-protocol §New constants (BeaconState grew past 32 fields: one level deeper)
FINALIZED_ROOT_GINDEX_ELECTRA = 169
CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA = 86
NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA = 87
# capella sync-protocol §Constants: execution_payload in BeaconBlockBody
EXECUTION_PAYLOAD_GINDEX = 25
# altair beacon-chain.md §Domain types
DOMAIN_SYNC_COMMITTEE = bytes.fromhex("07000000")


def floorlog2(value: int) -> int:
    return value.bit_length() - 1


def get_subtree_index(gindex: int) -> int:
    """altair sync-protocol §get_subtree_index."""
    return int(gindex % 2 ** floorlog2(gindex))  # int: mypy types int ** int as Any


def is_valid_merkle_branch(leaf: bytes, branch: Sequence[bytes], depth: int, index: int,
                           root: bytes) -> bool:
    """phase0 beacon-chain.md §is_valid_merkle_branch."""
    if len(branch) < depth:
        return False
    value = bytes(leaf)
    for level in range(depth):
        node = bytes(branch[level])
        if index >> level & 1:
            value = hashlib.sha256(node + value).digest()
        else:
            value = hashlib.sha256(value + node).digest()
    return value == bytes(root)


def is_valid_normalized_merkle_branch(leaf: bytes, branch: Sequence[bytes], gindex: int,
                                      root: bytes) -> bool:
    """altair sync-protocol §is_valid_normalized_merkle_branch: extra leading nodes (data
    normalised to a deeper fork's branch length) must be zero."""
    depth = floorlog2(gindex)
    extra = len(branch) - depth
    if extra < 0 or any(any(node) for node in branch[:extra]):
        return False
    return is_valid_merkle_branch(leaf, branch[extra:], depth, get_subtree_index(gindex), root)


def finalized_root_gindex_at_slot(network: Network, slot: int) -> int:
    """electra sync-protocol §Modified finalized_root_gindex_at_slot."""
    electra = network.is_active("electra", slot)
    return FINALIZED_ROOT_GINDEX_ELECTRA if electra else FINALIZED_ROOT_GINDEX


def current_sync_committee_gindex_at_slot(network: Network, slot: int) -> int:
    """electra sync-protocol §Modified current_sync_committee_gindex_at_slot."""
    electra = network.is_active("electra", slot)
    return CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA if electra else CURRENT_SYNC_COMMITTEE_GINDEX


def next_sync_committee_gindex_at_slot(network: Network, slot: int) -> int:
    """electra sync-protocol §Modified next_sync_committee_gindex_at_slot."""
    electra = network.is_active("electra", slot)
    return NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA if electra else NEXT_SYNC_COMMITTEE_GINDEX


def get_lc_execution_root(network: Network, header: LightClientHeader) -> bytes:
    """deneb sync-protocol §Modified get_lc_execution_root: the execution header's root in
    the shape of the header's own fork (capella's has no blob fields); zero before capella."""
    if network.is_active("deneb", header.slot):
        return hash_tree_root(header.execution)
    if network.is_active("capella", header.slot):
        execution = header.execution
        return hash_tree_root(ExecutionPayloadHeaderCapella(
            **{name: getattr(execution, name) for name in ExecutionPayloadHeaderCapella.fields()}
        ))
    return bytes(32)


def is_valid_light_client_header(network: Network, header: LightClientHeader) -> bool:
    """deneb sync-protocol §Modified is_valid_light_client_header (capella's plus the blob
    fields' absence before deneb): the execution header is proven against body_root at
    EXECUTION_PAYLOAD_GINDEX."""
    slot = header.slot
    if not network.is_active("deneb", slot) and (
        int(header.execution.blob_gas_used) or int(header.execution.excess_blob_gas)
    ):
        return False
    if not network.is_active("capella", slot):
        return (hash_tree_root(header.execution) == hash_tree_root(ExecutionPayloadHeader())
                and not any(any(node) for node in header.execution_branch))
    return is_valid_merkle_branch(
        leaf=get_lc_execution_root(network, header),
        branch=header.execution_branch,
        depth=floorlog2(EXECUTION_PAYLOAD_GINDEX),
        index=get_subtree_index(EXECUTION_PAYLOAD_GINDEX),
        root=bytes(header.beacon.body_root),
    )


def compute_fork_data_root(version: bytes, genesis_validators_root: bytes) -> bytes:
    """phase0 beacon-chain.md §compute_fork_data_root."""
    return hash_tree_root(ForkData(current_version=version,
                                   genesis_validators_root=genesis_validators_root))


def compute_domain(domain_type: bytes, fork_version: bytes,
                   genesis_validators_root: bytes) -> bytes:
    """phase0 beacon-chain.md §compute_domain."""
    return domain_type + compute_fork_data_root(fork_version, genesis_validators_root)[:28]


def compute_signing_root(object_root: bytes, domain: bytes) -> bytes:
    """phase0 beacon-chain.md §compute_signing_root (of an object given by its root)."""
    return hash_tree_root(SigningData(object_root=object_root, domain=domain))


def sync_committee_signing_root(network: Network, attested_root: bytes,
                                signature_slot: int) -> bytes:
    """What the sync committee signs for a header (altair sync-protocol
    §validate_light_client_update): the domain's fork version is the one at the epoch of
    ``max(signature_slot, 1) - 1``, the slot the committee members attested in."""
    fork_version_slot = max(signature_slot, 1) - 1
    fork = network.fork_at_slot(fork_version_slot)
    domain = compute_domain(DOMAIN_SYNC_COMMITTEE, fork.version,
                            network.genesis_validators_root)
    return compute_signing_root(attested_root, domain)
