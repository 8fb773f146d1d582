"""The L1 slots the OP-stack anchor reads and what their words say (pure; docs/l2.md).

Slots are those of the identified implementation's storage layout
(:mod:`recompute.l2.versions`); mapping and array slots follow Solidity's rules (the
Solidity docs, "Layout of State Variables in Storage": a mapping's value for key ``k`` at
``keccak256(h(k) ‖ p)``, a dynamic array's elements from ``keccak256(p)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from recompute.core.keccak import keccak256

# EIP-1967: bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1)
IMPLEMENTATION_SLOT = int.from_bytes(keccak256(b"eip1967.proxy.implementation"), "big") - 1


class GameStatus(IntEnum):
    """contracts-bedrock ``GameStatus`` (src/dispute/lib/Types.sol)."""

    IN_PROGRESS = 0
    CHALLENGER_WINS = 1
    DEFENDER_WINS = 2


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def mapping_slot(key: bytes, slot: int) -> int:
    """The slot of ``mapping[key]`` for a mapping at ``slot``, ``key`` its 32-byte form."""
    return int.from_bytes(keccak256(key.rjust(32, b"\0") + word(slot)), "big")


def array_element_slot(slot: int, index: int) -> int:
    """The slot of element ``index`` of a one-slot-per-element dynamic array at ``slot``."""
    return (int.from_bytes(keccak256(word(slot)), "big") + index) % (1 << 256)


def game_uuid(game_type: int, root_claim: bytes, extra_data: bytes) -> bytes:
    """``DisputeGameFactory.getGameUUID``: ``keccak256(abi.encode(gameType, rootClaim,
    extraData))`` (extraData ABI-encoded as dynamic bytes)."""
    padded = extra_data + bytes(-len(extra_data) % 32)
    return keccak256(word(game_type) + root_claim + word(0x60) + word(len(extra_data)) + padded)


@dataclass(frozen=True)
class GameId:
    """``LibGameId.pack``: ``gameType << 224 | timestamp << 160 | proxy``."""

    game_type: int
    created: int
    address: bytes

    @classmethod
    def unpack(cls, value: int) -> GameId:
        return cls(value >> 224, (value >> 160) & ((1 << 64) - 1),
                   (value & ((1 << 160) - 1)).to_bytes(20, "big"))


def address_of(word_value: int) -> bytes:
    """An address held in the low 20 bytes of a word (anything above them refused)."""
    if word_value >> 160:
        raise ValueError(f"0x{word_value:064x} is not an address word")
    return word_value.to_bytes(20, "big")


@dataclass(frozen=True)
class GameFacts:
    """What L1 state proves of one game: the factory's record and the clone's storage."""

    address: bytes
    index: int | None  # its place in the factory's list, when found there
    game_type: int
    root_claim: bytes
    l1_head: bytes
    l2_block_number: int
    created_at: int
    resolved_at: int
    status: GameStatus
    blacklisted: bool
    implementation: str

    def to_json(self) -> dict[str, object]:
        return {"address": "0x" + self.address.hex(), "index": self.index,
                "game_type": self.game_type, "status": self.status.name,
                "root_claim": "0x" + self.root_claim.hex(),
                "l1_head": "0x" + self.l1_head.hex(),
                "l2_block_number": self.l2_block_number, "created_at": self.created_at,
                "resolved_at": self.resolved_at or None, "blacklisted": self.blacklisted,
                "implementation": self.implementation}
