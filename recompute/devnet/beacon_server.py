"""The devnet's beacon chain, served on loopback as the light-client API (the server itself:
:mod:`recompute.devnet.beacon_http`).

:class:`DevnetBeaconServer` turns a list of execution blocks into a small beacon chain the
light client can sync to: one beacon block per execution block, each block's state finalizing
the block before it, and a sync committee of 32 keys per period that signs every update.
The keys are derived from a fixed seed (``sha256(seed | period | index)``): they are the
devnet's keys, public to anyone who reads this file, so a devnet pin proves only that the
data is the devnet's, nothing about any real chain. The beacon states and bodies are not
real: each is a Merkle tree with the real generalized indices (finalized checkpoint, current
and next sync committee; execution payload in the body) and deterministic filler elsewhere,
which is all the sync protocol looks at.

It answers as a beacon node does, as :class:`~recompute.devnet.beacon_http.BeaconHTTP` says;
``tamper(route, document)`` may rewrite any answer.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recompute.devnet.beacon_http import BeaconHTTP, Tamper, genesis_json, hex_text
from recompute.lightclient import bls
from recompute.lightclient.networks import DEVNET, Network
from recompute.lightclient.proofs import sync_committee_signing_root
from recompute.lightclient.ssz import (
    BeaconBlockHeader,
    Checkpoint,
    ExecutionPayloadHeader,
    SyncCommittee,
    hash_tree_root,
)

DEVNET_KEY_SEED = b"recompute devnet sync committee"


# ---------------------------------------------------------------------------------------
# The devnet chain


def devnet_secret(seed: bytes, period: int, index: int) -> int:
    """The devnet's key ``index`` of ``period``'s sync committee: public, for the devnet."""
    digest = hashlib.sha256(seed + period.to_bytes(8, "little") + index.to_bytes(4, "little"))
    return int.from_bytes(digest.digest(), "big") % (bls.CURVE_ORDER - 1) + 1


@dataclass(frozen=True)
class _Committee:
    secrets: tuple[int, ...]
    committee: SyncCommittee


@dataclass(frozen=True)
class _Block:
    header: BeaconBlockHeader
    root: bytes
    execution: ExecutionPayloadHeader
    execution_branch: tuple[bytes, ...]
    state_leaves: tuple[bytes, ...]  # the state tree's leaves
    finalized_index: int | None  # the block its state finalizes (None: genesis checkpoint)


# BeaconState field positions (altair-onwards): finalized_checkpoint 20, current 22, next 23
_FINALIZED, _CURRENT, _NEXT = 20, 22, 23
_BODY_LEAVES, _EXECUTION = 16, 9  # BeaconBlockBody: execution_payload is field 9 (gindex 25)


class DevnetBeaconServer(BeaconHTTP):
    """A beacon chain over ``blocks`` (execution blocks as JSON-RPC dicts: ``hash``,
    ``parentHash``, ``stateRoot``, ``receiptsRoot``, ``number``, ``timestamp``; optional
    ``miner``, ``logsBloom``, ``mixHash``, ``gasLimit``, ``gasUsed``, ``extraData``,
    ``baseFeePerGas``, ``blobGasUsed``, ``excessBlobGas``). Block k is at beacon slot
    ``1 + k * slots_per_block``; its state finalizes block k-1. The finality update attests
    the last block and finalizes the one before; the optimistic update attests the last.

    ``signers``: how many committee members sign (default all 32).

    ``live_from`` (the living devnet, recompute/devnet/producer.py): from that block on, a block's
    slot follows its timestamp by the network's clock (``genesis_time``, ``seconds_per_slot``:
    at least the previous slot + 1), its state finalizes the last block at or before the
    start of the epoch two before its own (a real chain's normal finality lag, 16 to 24 slots
    with 8 slots an epoch), and a block's update is published once the clock is a slot past
    its signature slot (slot + 1). The blocks before ``live_from`` keep the static chain's
    slots, so the trusted root stays the same."""

    FINALITY_LAG_EPOCHS = 2

    def __init__(self, blocks: Sequence[Mapping[str, object]], *, network: Network = DEVNET,
                 slots_per_block: int = 1, seed: bytes = DEVNET_KEY_SEED,
                 signers: int | None = None, tamper: Tamper | None = None,
                 live_from: int | None = None, clock: Callable[[], float] = time.time):
        super().__init__()
        self.live_from = live_from
        self.clock = clock
        if len(blocks) < 2:
            raise ValueError("the devnet beacon chain needs at least two execution blocks")
        if not 1 <= slots_per_block <= network.slots_per_period:
            raise ValueError("slots_per_block must be in [1, slots per period]")
        self.network = network
        self.tamper = tamper
        self._seed = seed
        self._signers = network.sync_committee_size if signers is None else signers
        self._committees: dict[int, _Committee] = {}
        self._version = network.fork_at_slot(1).name
        self._slots_per_block = slots_per_block
        self.blocks: list[_Block] = []
        for index, block in enumerate(blocks):
            self._add_block(index, 1 + index * slots_per_block, block)
        self.trusted_block_root = self.blocks[0].root
        last = self.blocks[-1]
        self.current_slot = int(last.header.slot) + 1  # the last signature's slot

    def add_blocks(self, blocks: Sequence[Mapping[str, object]]) -> None:
        """Extend the chain by the next execution blocks (the devnet's new blocks): each is
        signed, the one before it finalized (live blocks: see the class docstring)."""
        for block in blocks:
            slot = int(self.blocks[-1].header.slot) + self._slots_per_block
            if self._is_live(len(self.blocks)):
                slot = max(slot, self.network.slot_at_time(_quantity(block, "timestamp")))
            self._add_block(len(self.blocks), slot, block)
        self.current_slot = int(self.blocks[-1].header.slot) + 1

    def truncate(self, count: int) -> None:
        """Forget every block from ``count`` on (the execution chain was reorganised there;
        the live devnet's reorgs are shallower than its finality lag, so no finalized block
        is ever forgotten)."""
        if count < 2:
            raise ValueError("the devnet beacon chain keeps at least two blocks")
        del self.blocks[count:]
        self.current_slot = int(self.blocks[-1].header.slot) + 1

    def _is_live(self, index: int) -> bool:
        return self.live_from is not None and index >= self.live_from

    def _finalized_for(self, index: int, slot: int) -> int | None:
        """The block that block ``index`` (at ``slot``) finalizes: the one before it on the
        static chain; on the live chain the last block at or before the first slot of the
        epoch FINALITY_LAG_EPOCHS before its own, never behind its parent's."""
        if index == 0:
            return None
        if not self._is_live(index):
            return index - 1
        parent = self.blocks[index - 1].finalized_index or 0
        boundary = (self.network.epoch_at_slot(slot) - self.FINALITY_LAG_EPOCHS) \
            * self.network.slots_per_epoch
        for candidate in range(index - 1, parent, -1):
            if int(self.blocks[candidate].header.slot) <= boundary:
                return candidate
        return parent

    def signable(self) -> int:
        """The highest block whose update is published: every block on the static chain; on
        the live chain, a block once the slot after its signature slot has begun (a client
        that read its clock just before asking still finds the signature slot reached)."""
        last = len(self.blocks) - 1
        if self.live_from is None:
            return last
        now = self.network.slot_at_time(self.clock())
        while last > 1 and self._is_live(last) and int(self.blocks[last].header.slot) + 2 > now:
            last -= 1
        return last

    # -- chain building --------------------------------------------------------------------

    def committee(self, period: int) -> _Committee:
        if period not in self._committees:
            secrets = tuple(devnet_secret(self._seed, period, index)
                            for index in range(self.network.sync_committee_size))
            pubkeys = tuple(bls.secret_to_pubkey(secret) for secret in secrets)
            aggregate = bls.secret_to_pubkey(sum(secrets) % bls.CURVE_ORDER)
            self._committees[period] = _Committee(secrets, SyncCommittee(pubkeys, aggregate))
        return self._committees[period]

    def _add_block(self, index: int, slot: int, block: Mapping[str, object]) -> None:
        execution = execution_header_from_rpc(block)
        body_leaves = [_filler(b"body", slot, i) for i in range(_BODY_LEAVES)]
        body_leaves[_EXECUTION] = hash_tree_root(execution)
        body_root, execution_branch = _root_and_branch(body_leaves, _EXECUTION)
        period = self.network.period_at_slot(slot)
        # electra's BeaconState has 37 fields (a 64-leaf tree: gindex 86 = 64 + 22); before
        # it, 32 leaves (gindex 54 = 32 + 22)
        leaves = 64 if self.network.is_active("electra", slot) else 32
        state_leaves = [_filler(b"state", slot, i) for i in range(leaves)]
        previous = self.blocks[-1] if self.blocks else None
        finalized_index = self._finalized_for(index, slot)
        finalized = self.blocks[finalized_index] if finalized_index is not None else None
        checkpoint = Checkpoint(
            epoch=self.network.epoch_at_slot(int(finalized.header.slot)) if finalized else 0,
            root=finalized.root if finalized else bytes(32),
        )
        state_leaves[_FINALIZED] = hash_tree_root(checkpoint)
        state_leaves[_CURRENT] = self.committee(period).committee.root
        state_leaves[_NEXT] = self.committee(period + 1).committee.root
        header = BeaconBlockHeader(
            slot=slot,
            proposer_index=index % self.network.sync_committee_size,
            parent_root=previous.root if previous else _filler(b"genesis", 0, 0),
            state_root=_root_and_branch(state_leaves, 0)[0],
            body_root=body_root,
        )
        self.blocks.append(_Block(header, hash_tree_root(header), execution,
                                  tuple(execution_branch), tuple(state_leaves),
                                  finalized_index))

    # -- answers -----------------------------------------------------------------------

    def genesis(self) -> object:
        return genesis_json(self.network)

    def bootstrap(self, root_hex: str) -> object | None:
        for block in self.blocks:
            if "0x" + block.root.hex() == root_hex:
                period = self.network.period_at_slot(int(block.header.slot))
                _, branch = _root_and_branch(list(block.state_leaves), _CURRENT)
                return self._envelope({
                    "header": self._header_json(block),
                    "current_sync_committee": _committee_json(
                        self.committee(period).committee),
                    "current_sync_committee_branch": [hex_text(node) for node in branch],
                })
        return None

    def updates(self, start: int, count: int) -> Sequence[object]:
        answers = []
        for period in range(start, start + count):
            best = self._best_in_period(period)
            if best is not None:
                answers.append(self._update_json(best, full=True))
        return answers

    def finality_update(self) -> object:
        return self._update_json(self.signable(), full=False)

    def optimistic_update(self) -> object:
        document = self._update_json(self.signable(), full=False)
        data = document["data"]
        return self._envelope({key: data[key] for key in
                               ("attested_header", "sync_aggregate", "signature_slot")})

    def _best_in_period(self, period: int) -> int | None:
        """The latest block attested and signed in ``period`` whose finalized block is in it
        too (so the update carries sync-committee finality); None if there is none."""
        chosen = None
        for index, block in enumerate(self.blocks[:self.signable() + 1]):
            slot = int(block.header.slot)
            if block.finalized_index is None:
                continue
            finalized_slot = int(self.blocks[block.finalized_index].header.slot)
            if (self.network.period_at_slot(finalized_slot) == period
                    and self.network.period_at_slot(slot + 1) == period):
                chosen = index
        return chosen

    def _update_json(self, index: int, full: bool) -> dict[str, Any]:
        block = self.blocks[index]
        finalized = block.finalized_index
        if finalized is None:  # (_chosen picks blocks with a finalized checkpoint only)
            raise ValueError(f"block {index} has no finalized checkpoint")
        slot = int(block.header.slot)
        signature_slot = slot + 1
        leaves = list(block.state_leaves)
        _, finality = _root_and_branch(leaves, _FINALIZED)
        epoch_chunk = int(self.network.epoch_at_slot(
            int(self.blocks[finalized].header.slot))).to_bytes(32, "little")
        data = {
            "attested_header": self._header_json(block),
            "finalized_header": self._header_json(self.blocks[finalized]),
            "finality_branch": [hex_text(node) for node in [epoch_chunk, *finality]],
            "sync_aggregate": self._sign(block.root, signature_slot),
            "signature_slot": str(signature_slot),
        }
        if full:
            period = self.network.period_at_slot(slot)
            _, next_branch = _root_and_branch(leaves, _NEXT)
            data = {
                "attested_header": data["attested_header"],
                "next_sync_committee": _committee_json(self.committee(period + 1).committee),
                "next_sync_committee_branch": [hex_text(node) for node in next_branch],
                **{key: data[key] for key in ("finalized_header", "finality_branch",
                                              "sync_aggregate", "signature_slot")},
            }
        return self._envelope(data)

    def _sign(self, attested_root: bytes, signature_slot: int) -> dict[str, Any]:
        size = self.network.sync_committee_size
        committee = self.committee(self.network.period_at_slot(signature_slot))
        signing_root = sync_committee_signing_root(self.network, attested_root, signature_slot)
        bits = [index < self._signers for index in range(size)]
        packed = bytearray(size // 8)
        for index, bit in enumerate(bits):
            if bit:
                packed[index // 8] |= 1 << (index % 8)
        secrets = [secret for secret, bit in zip(committee.secrets, bits, strict=True) if bit]
        signature = bls.sign(secrets, signing_root) if secrets else b"\xc0" + bytes(95)
        return {"sync_committee_bits": hex_text(bytes(packed)),
                "sync_committee_signature": hex_text(signature)}

    def _header_json(self, block: _Block) -> dict[str, Any]:
        header = block.header
        execution = block.execution
        return {
            "beacon": {
                "slot": str(int(header.slot)),
                "proposer_index": str(int(header.proposer_index)),
                "parent_root": hex_text(header.parent_root),
                "state_root": hex_text(header.state_root),
                "body_root": hex_text(header.body_root),
            },
            "execution": {
                name: (str(int(getattr(execution, name))) if isinstance(
                    getattr(execution, name), int) else hex_text(getattr(execution, name)))
                for name in ExecutionPayloadHeader.fields()
            },
            "execution_branch": [hex_text(node) for node in block.execution_branch],
        }

    def _envelope(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"version": self._version, "data": data}


# ---------------------------------------------------------------------------------------
# Helpers


def execution_header_from_rpc(block: Mapping[str, object]) -> ExecutionPayloadHeader:
    """A deneb ExecutionPayloadHeader from an execution block as JSON-RPC returns it.
    transactions_root / withdrawals_root are SSZ-only here: filled deterministically from
    the block hash (the light client never relates them to the block's tries)."""
    block_hash = _data(block, "hash", 32)

    def optional(key: str, size: int | None = None, default: bytes = b"") -> bytes:
        if key not in block:
            return bytes(size) if size else default
        return _data(block, key, size)

    return ExecutionPayloadHeader(
        parent_hash=_data(block, "parentHash", 32),
        fee_recipient=optional("miner", 20),
        state_root=_data(block, "stateRoot", 32),
        receipts_root=_data(block, "receiptsRoot", 32),
        logs_bloom=optional("logsBloom", 256),
        prev_randao=optional("mixHash", 32),
        block_number=_quantity(block, "number"),
        gas_limit=_quantity(block, "gasLimit", 30_000_000),
        gas_used=_quantity(block, "gasUsed", 0),
        timestamp=_quantity(block, "timestamp"),
        extra_data=optional("extraData"),
        base_fee_per_gas=_quantity(block, "baseFeePerGas", 0),
        block_hash=block_hash,
        transactions_root=hashlib.sha256(b"recompute devnet transactions_root" + block_hash)
        .digest(),
        withdrawals_root=hashlib.sha256(b"recompute devnet withdrawals_root" + block_hash)
        .digest(),
        blob_gas_used=_quantity(block, "blobGasUsed", 0),
        excess_blob_gas=_quantity(block, "excessBlobGas", 0),
    )


def _data(block: Mapping[str, object], key: str, size: int | None) -> bytes:
    value = block.get(key)
    data = bytes.fromhex(value[2:]) if isinstance(value, str) and value.startswith("0x") \
        else bytes(value) if isinstance(value, bytes | bytearray) else None
    if data is None or (size is not None and len(data) != size):
        raise ValueError(f"execution block {key}: expected {size or 'some'} bytes")
    return data


def _quantity(block: Mapping[str, object], key: str, default: int | None = None) -> int:
    value = block.get(key, default)
    if isinstance(value, str):
        value = int(value, 16)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"execution block {key}: expected a quantity")
    return value


def _filler(kind: bytes, slot: int, index: int) -> bytes:
    return hashlib.sha256(b"recompute devnet " + kind + slot.to_bytes(8, "little")
                          + index.to_bytes(4, "little")).digest()


def _root_and_branch(leaves: list[bytes], index: int) -> tuple[bytes, list[bytes]]:
    """Root of a power-of-two leaf list, and the branch of leaf ``index`` (bottom up)."""
    layer, branch = list(leaves), []
    while len(layer) > 1:
        branch.append(layer[index ^ 1])
        layer = [hashlib.sha256(layer[i] + layer[i + 1]).digest()
                 for i in range(0, len(layer), 2)]
        index //= 2
    return layer[0], branch


def _committee_json(committee: SyncCommittee) -> dict[str, Any]:
    return {"pubkeys": [hex_text(key) for key in committee.pubkeys],
            "aggregate_pubkey": hex_text(committee.aggregate_pubkey)}
