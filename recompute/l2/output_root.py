"""The OP-stack output root (the optimism specs, protocol/proposals.md §L2 Output Commitment
Construction): ``keccak256(version ‖ stateRoot ‖ withdrawalStorageRoot ‖ latestBlockhash)``,
version 0, each field 32 bytes; the withdrawal storage root is the storage root of the
``L2ToL1MessagePasser`` predeploy at that block."""

from __future__ import annotations

from dataclasses import dataclass

from recompute.core.keccak import keccak256

# The only output root version the specs define (proposals.md: "version_byte ... 0").
VERSION_0 = bytes(32)
# The L2ToL1MessagePasser predeploy (the specs, protocol/predeploys.md).
MESSAGE_PASSER = bytes.fromhex("4200000000000000000000000000000000000016")
PREIMAGE_SIZE = 128


@dataclass(frozen=True)
class OutputRootPreimage:
    """The four words an output root commits to."""

    state_root: bytes
    message_passer_storage_root: bytes
    block_hash: bytes
    version: bytes = VERSION_0

    def __post_init__(self) -> None:
        for name in ("state_root", "message_passer_storage_root", "block_hash", "version"):
            value = getattr(self, name)
            if not isinstance(value, bytes) or len(value) != 32:
                raise ValueError(f"output root preimage: {name} is not 32 bytes")

    def encode(self) -> bytes:
        return self.version + self.state_root + self.message_passer_storage_root \
            + self.block_hash

    @classmethod
    def decode(cls, data: bytes) -> OutputRootPreimage:
        """The 128 bytes of a version-0 preimage; anything else is a ValueError."""
        if len(data) != PREIMAGE_SIZE:
            raise ValueError(f"output root preimage: {len(data)} bytes, not {PREIMAGE_SIZE}")
        if data[:32] != VERSION_0:
            raise ValueError("output root preimage: version 0x" + data[:32].hex()
                             + " is not 0 (the only version the specs define)")
        return cls(data[32:64], data[64:96], data[96:128], data[:32])

    def to_json(self) -> dict[str, str]:
        return {"version": "0x" + self.version.hex(),
                "state_root": "0x" + self.state_root.hex(),
                "message_passer_storage_root": "0x" + self.message_passer_storage_root.hex(),
                "block_hash": "0x" + self.block_hash.hex()}


def output_root(preimage: OutputRootPreimage) -> bytes:
    """The output root of ``preimage``."""
    return keccak256(preimage.encode())
