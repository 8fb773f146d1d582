"""A dispute game's clone: the runtime code the ``DisputeGameFactory`` deploys for each game
(Solady ``LibClone.clone(implementation, data)``, clones with immutable arguments), and the
arguments it carries.

The runtime code is a fixed 98-byte proxy that delegates every call to the implementation and
appends the arguments to the calldata, then the arguments, then their length plus two as a
2-byte big-endian number (the proxy's own ``PUSH2`` carries the same number). The factory's
arguments are ``creator (20) ‖ rootClaim (32) ‖ l1Head (32) ‖ extraData``
(contracts-bedrock ``DisputeGameFactory.create``: "CWIA Calldata Layout"); a fault dispute
game's ``extraData`` is its L2 block number as one 32-byte word (``FaultDisputeGame
.l2BlockNumber``: ``_getArgUint256(0x54)``). Code of any other shape is refused: a clone is
parsed only after its bytes hashed to the account's proven code hash.
"""

from __future__ import annotations

from dataclasses import dataclass

# The proxy around the two numbers it carries (the arguments' length + 2, the implementation).
_HEAD = bytes.fromhex("36602c57343d527f9e4ac34f21c619cefc926c8bd93b54bf5a39c7ab2127a895af1cc06"
                      "91d7e3dff593da1005b363d3d373d3d3d3d61")
_MID = bytes.fromhex("806062363936013d73")
_TAIL = bytes.fromhex("5af43d3d93803e606057fd5bf3")
PROXY_SIZE = len(_HEAD) + 2 + len(_MID) + 20 + len(_TAIL)  # 98
MAX_CODE = 24576  # EIP-170: no deployed code is longer
ARGS_FIXED = 20 + 32 + 32  # creator, root claim, L1 head


class CloneError(ValueError):
    """Code that is not a game clone of the factory's shape."""


@dataclass(frozen=True)
class GameClone:
    implementation: bytes
    creator: bytes
    root_claim: bytes
    l1_head: bytes
    extra_data: bytes

    @property
    def l2_block_number(self) -> int:
        """A fault dispute game's L2 block number: the first word of its extra data."""
        if len(self.extra_data) < 32:
            raise CloneError(f"the clone's extra data is {len(self.extra_data)} bytes: no L2 "
                             "block number")
        return int.from_bytes(self.extra_data[:32], "big")

    def to_json(self) -> dict[str, object]:
        return {"implementation": "0x" + self.implementation.hex(),
                "creator": "0x" + self.creator.hex(),
                "root_claim": "0x" + self.root_claim.hex(),
                "l1_head": "0x" + self.l1_head.hex(),
                "extra_data": "0x" + self.extra_data.hex()}


def parse_clone(code: bytes) -> GameClone:
    """The implementation and arguments of a clone's runtime ``code``; CloneError when the
    code is not exactly the proxy with its arguments appended."""
    if not PROXY_SIZE + 2 <= len(code) <= MAX_CODE:
        raise CloneError(f"{len(code)} bytes of code is not a game clone's size")
    carried = code[-2:]
    length = int.from_bytes(carried, "big")
    if PROXY_SIZE + length != len(code) or length < 2:
        raise CloneError("the code's last two bytes do not give its arguments' length")
    at = len(_HEAD)
    if code[:at] != _HEAD or code[at:at + 2] != carried \
            or code[at + 2:at + 2 + len(_MID)] != _MID \
            or code[PROXY_SIZE - len(_TAIL):PROXY_SIZE] != _TAIL:
        raise CloneError("the code is not the factory's clone proxy")
    implementation = code[at + 2 + len(_MID):at + 2 + len(_MID) + 20]
    args = code[PROXY_SIZE:-2]
    if len(args) < ARGS_FIXED:
        raise CloneError(f"the clone carries {len(args)} bytes of arguments, fewer than "
                         f"{ARGS_FIXED}")
    return GameClone(implementation, args[:20], args[20:52], args[52:84], args[84:])
