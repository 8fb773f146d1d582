"""SSZ containers of the light-client sync protocol, and beacon-API JSON → containers.

Merkleisation is remerkleable's (protolambda/remerkleable, the SSZ library the consensus
specs' own executable pyspec is built on): a well-kept, spec-compatible ``hash_tree_root``
for every container here, so the roots we compare with a trusted root or a Merkle branch are
computed the way the specs define them, not by a hand-rolled packer. Only hashing is
delegated; everything read from outside is checked here first.

Decoding (beacon node REST API JSON: ``{"version": fork, "data": …}``, uint64 as decimal
strings, bytes as 0x-hex, ``sync_committee_bits`` as the hex of the SSZ Bitvector with bit i
= byte i//8, bit i%8) is strict and bounded: each string's length is checked before it is
parsed, each list's length before it is walked, each number's range, and each object's key
set; the first problem raises ``Unverifiable('rpc-malformed', …)`` naming the field.

(No ``from __future__ import annotations`` here: remerkleable reads the annotations of a
container class as types when the class is created.)
"""

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

# remerkleable ships no type information (no py.typed): its classes are Any to mypy
from remerkleable.basic import uint64, uint256  # type: ignore[import-untyped]
from remerkleable.byte_arrays import (  # type: ignore[import-untyped]
    ByteList,
    Bytes4,
    Bytes32,
    Bytes48,
    ByteVector,
)
from remerkleable.complex import Container, Vector  # type: ignore[import-untyped]

from recompute.lightclient.failures import malformed, one_line
from recompute.lightclient.networks import LC_FORKS, Network

# ---------------------------------------------------------------------------------------
# Containers (phase0 beacon-chain.md, capella/deneb beacon-chain.md, altair sync-protocol.md)


class BeaconBlockHeader(Container):  # type: ignore[misc]  # remerkleable is untyped
    slot: uint64
    proposer_index: uint64
    parent_root: Bytes32
    state_root: Bytes32
    body_root: Bytes32


class ExecutionPayloadHeaderCapella(Container):  # type: ignore[misc]  # remerkleable is untyped
    """capella/beacon-chain.md §ExecutionPayloadHeader."""

    parent_hash: Bytes32
    fee_recipient: ByteVector[20]
    state_root: Bytes32
    receipts_root: Bytes32
    logs_bloom: ByteVector[256]
    prev_randao: Bytes32
    block_number: uint64
    gas_limit: uint64
    gas_used: uint64
    timestamp: uint64
    extra_data: ByteList[32]
    base_fee_per_gas: uint256
    block_hash: Bytes32
    transactions_root: Bytes32
    withdrawals_root: Bytes32


class ExecutionPayloadHeader(Container):  # type: ignore[misc]  # remerkleable is untyped
    """deneb/beacon-chain.md §ExecutionPayloadHeader (electra and fulu keep it)."""

    parent_hash: Bytes32
    fee_recipient: ByteVector[20]
    state_root: Bytes32
    receipts_root: Bytes32
    logs_bloom: ByteVector[256]
    prev_randao: Bytes32
    block_number: uint64
    gas_limit: uint64
    gas_used: uint64
    timestamp: uint64
    extra_data: ByteList[32]
    base_fee_per_gas: uint256
    block_hash: Bytes32
    transactions_root: Bytes32
    withdrawals_root: Bytes32
    blob_gas_used: uint64
    excess_blob_gas: uint64


CAPELLA_EXECUTION_FIELDS = tuple(ExecutionPayloadHeaderCapella.fields())
EXECUTION_FIELDS = tuple(ExecutionPayloadHeader.fields())


class Checkpoint(Container):  # type: ignore[misc]  # remerkleable is untyped
    epoch: uint64
    root: Bytes32


class ForkData(Container):  # type: ignore[misc]  # remerkleable is untyped
    current_version: Bytes4
    genesis_validators_root: Bytes32


class SigningData(Container):  # type: ignore[misc]  # remerkleable is untyped
    object_root: Bytes32
    domain: Bytes32


@lru_cache(maxsize=8)
def sync_committee_type(size: int) -> type:
    """altair/beacon-chain.md §SyncCommittee for a preset's SYNC_COMMITTEE_SIZE."""

    class SyncCommitteeSSZ(Container):  # type: ignore[misc]  # remerkleable is untyped
        pubkeys: Vector[Bytes48, size]
        aggregate_pubkey: Bytes48

    return SyncCommitteeSSZ


def hash_tree_root(view: Any) -> bytes:  # a remerkleable view (untyped)
    return bytes(view.hash_tree_root())


ZERO32 = bytes(32)


# ---------------------------------------------------------------------------------------
# Light-client objects: immutable, their SSZ parts kept as remerkleable views for hashing.


@dataclass(frozen=True, eq=False)
class LightClientHeader:
    """capella sync-protocol §LightClientHeader (deneb's execution header shape; capella
    data is held with blob_gas_used = excess_blob_gas = 0)."""

    beacon: BeaconBlockHeader
    execution: ExecutionPayloadHeader
    execution_branch: tuple[bytes, ...]

    @property
    def slot(self) -> int:
        return int(self.beacon.slot)

    @cached_property
    def beacon_root(self) -> bytes:
        return hash_tree_root(self.beacon)

    def is_empty(self) -> bool:
        """Equal to ``LightClientHeader()`` (the spec's default, used for 'absent')."""
        return (
            self.beacon_root == hash_tree_root(BeaconBlockHeader())
            and hash_tree_root(self.execution) == hash_tree_root(ExecutionPayloadHeader())
            and not any(any(node) for node in self.execution_branch)
        )


@dataclass(frozen=True, eq=False)
class SyncCommittee:
    pubkeys: tuple[bytes, ...]
    aggregate_pubkey: bytes

    @classmethod
    def zero(cls, size: int) -> "SyncCommittee":
        return cls(pubkeys=(bytes(48),) * size, aggregate_pubkey=bytes(48))

    @cached_property
    def root(self) -> bytes:
        kind = sync_committee_type(len(self.pubkeys))
        return hash_tree_root(
            kind(pubkeys=[Bytes48(key) for key in self.pubkeys],
                 aggregate_pubkey=Bytes48(self.aggregate_pubkey))
        )

    def is_zero(self) -> bool:
        """All-zero: the spec's ``SyncCommittee()``, meaning 'not known yet'."""
        return not any(self.aggregate_pubkey) and not any(any(key) for key in self.pubkeys)


@dataclass(frozen=True, eq=False)
class SyncAggregate:
    bits: tuple[bool, ...]
    signature: bytes  # 96 bytes, compressed G2

    @property
    def participants(self) -> int:
        return sum(self.bits)


@dataclass(frozen=True, eq=False)
class LightClientBootstrap:
    version: str
    header: LightClientHeader
    current_sync_committee: SyncCommittee
    current_sync_committee_branch: tuple[bytes, ...]


@dataclass(frozen=True, eq=False)
class LightClientUpdate:
    """altair sync-protocol §LightClientUpdate. Finality and optimistic updates are held in
    this form, with the absent fields at their defaults, as the spec's
    process_light_client_finality_update / _optimistic_update build them."""

    version: str
    attested_header: LightClientHeader
    next_sync_committee: SyncCommittee
    next_sync_committee_branch: tuple[bytes, ...]
    finalized_header: LightClientHeader
    finality_branch: tuple[bytes, ...]
    sync_aggregate: SyncAggregate
    signature_slot: int
    kind: str = field(default="update")  # "update", "finality" or "optimistic"


# ---------------------------------------------------------------------------------------
# Branch depths of each fork's light-client data (floorlog2 of the generalized indices:
# altair 54/55/105, electra 86/87/169; capella EXECUTION_PAYLOAD_GINDEX 25).

EXECUTION_BRANCH_DEPTH = 4


def branch_depths(version: str) -> tuple[int, int, int]:
    """(current committee, next committee, finality) branch lengths of a fork's data."""
    return (6, 6, 7) if version in ("electra", "fulu") else (5, 5, 6)


# ---------------------------------------------------------------------------------------
# Beacon-API JSON decoding


_HEX = re.compile(r"0x[0-9a-fA-F]*\Z")
_DECIMAL = re.compile(r"[0-9]+\Z")


def decode_bootstrap(document: object, network: Network) -> LightClientBootstrap:
    """GET /eth/v1/beacon/light_client/bootstrap/{root} → LightClientBootstrap."""
    version, data = _envelope(document, "bootstrap")
    current_depth, _, _ = branch_depths(version)
    where = "bootstrap.data"
    data = _keys(data, where, ("header", "current_sync_committee", "current_sync_committee_branch"))
    return LightClientBootstrap(
        version=version,
        header=_header(data["header"], f"{where}.header", version),
        current_sync_committee=_committee(data["current_sync_committee"],
                                          f"{where}.current_sync_committee", network),
        current_sync_committee_branch=_branch(data["current_sync_committee_branch"],
                                              f"{where}.current_sync_committee_branch",
                                              current_depth),
    )


def decode_update(document: object, network: Network, what: str = "update") -> LightClientUpdate:
    """One element of GET /eth/v1/beacon/light_client/updates → LightClientUpdate."""
    version, data = _envelope(document, what)
    _, next_depth, finality_depth = branch_depths(version)
    where = f"{what}.data"
    data = _keys(data, where, ("attested_header", "next_sync_committee",
                               "next_sync_committee_branch", "finalized_header",
                               "finality_branch", "sync_aggregate", "signature_slot"))
    return LightClientUpdate(
        version=version,
        attested_header=_header(data["attested_header"], f"{where}.attested_header", version),
        next_sync_committee=_committee(data["next_sync_committee"],
                                       f"{where}.next_sync_committee", network),
        next_sync_committee_branch=_branch(data["next_sync_committee_branch"],
                                           f"{where}.next_sync_committee_branch", next_depth),
        finalized_header=_header(data["finalized_header"], f"{where}.finalized_header", version),
        finality_branch=_branch(data["finality_branch"], f"{where}.finality_branch",
                                finality_depth),
        sync_aggregate=_aggregate(data["sync_aggregate"], f"{where}.sync_aggregate", network),
        signature_slot=_uint(data["signature_slot"], f"{where}.signature_slot"),
    )


def decode_updates(document: object, network: Network, max_count: int) -> list[LightClientUpdate]:
    """GET /eth/v1/beacon/light_client/updates → a list of at most ``max_count`` updates."""
    if not isinstance(document, list):
        raise malformed("updates: expected a JSON array")
    if len(document) > max_count:
        raise malformed(f"updates: {len(document)} updates, asked for at most {max_count}")
    return [decode_update(item, network, f"updates[{index}]")
            for index, item in enumerate(document)]


def decode_finality_update(document: object, network: Network) -> LightClientUpdate:
    """GET …/light_client/finality_update → the spec's LightClientUpdate form of it."""
    version, data = _envelope(document, "finality_update")
    _, next_depth, finality_depth = branch_depths(version)
    where = "finality_update.data"
    data = _keys(data, where, ("attested_header", "finalized_header", "finality_branch",
                               "sync_aggregate", "signature_slot"))
    return LightClientUpdate(
        version=version,
        attested_header=_header(data["attested_header"], f"{where}.attested_header", version),
        next_sync_committee=SyncCommittee.zero(network.sync_committee_size),
        next_sync_committee_branch=(ZERO32,) * next_depth,
        finalized_header=_header(data["finalized_header"], f"{where}.finalized_header", version),
        finality_branch=_branch(data["finality_branch"], f"{where}.finality_branch",
                                finality_depth),
        sync_aggregate=_aggregate(data["sync_aggregate"], f"{where}.sync_aggregate", network),
        signature_slot=_uint(data["signature_slot"], f"{where}.signature_slot"),
        kind="finality",
    )


def decode_optimistic_update(document: object, network: Network) -> LightClientUpdate:
    """GET …/light_client/optimistic_update → the spec's LightClientUpdate form of it."""
    version, data = _envelope(document, "optimistic_update")
    _, next_depth, finality_depth = branch_depths(version)
    where = "optimistic_update.data"
    data = _keys(data, where, ("attested_header", "sync_aggregate", "signature_slot"))
    return LightClientUpdate(
        version=version,
        attested_header=_header(data["attested_header"], f"{where}.attested_header", version),
        next_sync_committee=SyncCommittee.zero(network.sync_committee_size),
        next_sync_committee_branch=(ZERO32,) * next_depth,
        finalized_header=empty_header(),
        finality_branch=(ZERO32,) * finality_depth,
        sync_aggregate=_aggregate(data["sync_aggregate"], f"{where}.sync_aggregate", network),
        signature_slot=_uint(data["signature_slot"], f"{where}.signature_slot"),
        kind="optimistic",
    )


def empty_header() -> LightClientHeader:
    return LightClientHeader(BeaconBlockHeader(), ExecutionPayloadHeader(),
                             (ZERO32,) * EXECUTION_BRANCH_DEPTH)


def _envelope(document: object, where: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(document, dict):
        raise malformed(f"{where}: expected a JSON object")
    for key in ("version", "data"):
        if key not in document:
            raise malformed(f"{where}: missing {key!r}")
    version = document["version"]
    if not isinstance(version, str) or len(version) > 16:
        raise malformed(f"{where}.version: expected a fork name")
    if version not in LC_FORKS:
        raise malformed(f"{where}.version {one_line(version, 16)!r} is not supported "
                        f"(light-client data of {', '.join(LC_FORKS)})")
    if not isinstance(document["data"], dict):
        raise malformed(f"{where}.data: expected a JSON object")
    return version, document["data"]


def _keys(value: object, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise malformed(f"{where}: expected a JSON object")
    missing = [key for key in keys if key not in value]
    if missing:
        raise malformed(f"{where}: missing {missing[0]!r}")
    if len(value) != len(keys):
        extra = sorted(str(key) for key in value if key not in keys)
        raise malformed(f"{where}: unexpected key {one_line(extra[0], 40)!r}")
    return value


def _header(value: object, where: str, version: str) -> LightClientHeader:
    value = _keys(value, where, ("beacon", "execution", "execution_branch"))
    beacon = _keys(value["beacon"], f"{where}.beacon",
                   ("slot", "proposer_index", "parent_root", "state_root", "body_root"))
    return LightClientHeader(
        beacon=BeaconBlockHeader(
            slot=_uint(beacon["slot"], f"{where}.beacon.slot"),
            proposer_index=_uint(beacon["proposer_index"], f"{where}.beacon.proposer_index"),
            parent_root=Bytes32(_bytes(beacon["parent_root"], f"{where}.beacon.parent_root", 32)),
            state_root=Bytes32(_bytes(beacon["state_root"], f"{where}.beacon.state_root", 32)),
            body_root=Bytes32(_bytes(beacon["body_root"], f"{where}.beacon.body_root", 32)),
        ),
        execution=_execution(value["execution"], f"{where}.execution", version),
        execution_branch=_branch(value["execution_branch"], f"{where}.execution_branch",
                                 EXECUTION_BRANCH_DEPTH),
    )


def _execution(value: object, where: str, version: str) -> ExecutionPayloadHeader:
    names = CAPELLA_EXECUTION_FIELDS if version == "capella" else EXECUTION_FIELDS
    value = _keys(value, where, names)
    kinds = dict(ExecutionPayloadHeader.fields())
    fields = {}
    for name in names:
        kind, text, at = kinds[name], value[name], f"{where}.{name}"
        if kind is uint64:
            fields[name] = uint64(_uint(text, at))
        elif kind is uint256:
            fields[name] = uint256(_uint(text, at, bits=256))
        elif name == "extra_data":
            fields[name] = kind(_bytes(text, at, 32, exact=False))
        else:
            fields[name] = kind(_bytes(text, at, kind.type_byte_length()))
    return ExecutionPayloadHeader(**fields)


def _committee(value: object, where: str, network: Network) -> SyncCommittee:
    value = _keys(value, where, ("pubkeys", "aggregate_pubkey"))
    pubkeys = value["pubkeys"]
    size = network.sync_committee_size
    if not isinstance(pubkeys, list) or len(pubkeys) != size:
        raise malformed(f"{where}.pubkeys: expected a list of {size} keys")
    return SyncCommittee(
        pubkeys=tuple(_bytes(key, f"{where}.pubkeys[{index}]", 48)
                      for index, key in enumerate(pubkeys)),
        aggregate_pubkey=_bytes(value["aggregate_pubkey"], f"{where}.aggregate_pubkey", 48),
    )


def _aggregate(value: object, where: str, network: Network) -> SyncAggregate:
    value = _keys(value, where, ("sync_committee_bits", "sync_committee_signature"))
    size = network.sync_committee_size
    packed = _bytes(value["sync_committee_bits"], f"{where}.sync_committee_bits", size // 8)
    return SyncAggregate(
        bits=tuple(bool(packed[index // 8] >> (index % 8) & 1) for index in range(size)),
        signature=_bytes(value["sync_committee_signature"],
                         f"{where}.sync_committee_signature", 96),
    )


def _branch(value: object, where: str, depth: int) -> tuple[bytes, ...]:
    if not isinstance(value, list) or len(value) != depth:
        raise malformed(f"{where}: expected a list of {depth} 32-byte nodes")
    return tuple(_bytes(node, f"{where}[{index}]", 32) for index, node in enumerate(value))


def _uint(value: object, where: str, bits: int = 64) -> int:
    digits = 20 if bits == 64 else 78
    if not isinstance(value, str) or not 1 <= len(value) <= digits or not _DECIMAL.match(value):
        raise malformed(f"{where}: expected a decimal string of at most {digits} digits")
    number = int(value)
    if number >= 1 << bits:
        raise malformed(f"{where}: {value} does not fit in {bits} bits")
    return number


def _bytes(value: object, where: str, size: int, exact: bool = True) -> bytes:
    longest = 2 + 2 * size
    if (not isinstance(value, str) or len(value) > longest or len(value) % 2
            or (exact and len(value) != longest) or not _HEX.match(value)):
        want = f"{size}" if exact else f"at most {size}"
        raise malformed(f"{where}: expected 0x and {want} bytes of hex")
    return bytes.fromhex(value[2:])
