"""The honest AMM registry's own ``layerStatus`` view, called with ``eth_call`` and decoded by
hand: the independent source that tests compare a derived layer status with."""

from __future__ import annotations

from recompute.core.keccak import keccak256
from recompute.devnet.anvil import rpc_call
from recompute.recipes.amm import MAINTENANCE

LAYER_STATUS = keccak256(b"layerStatus(address,uint8)")[:4]


def layer_status_view(url: str, registry: str, subject: str, layer: int, block: int) -> dict:
    """The honest registry's layerStatus(subject, layer) at ``block``: (uint8 status,
    uint48 deadline, bool neverCompleted), decoded by hand from the three return words."""
    data = LAYER_STATUS + bytes(12) + bytes.fromhex(subject[2:]) + layer.to_bytes(32, "big")
    raw = bytes.fromhex(rpc_call(url, "eth_call", [{"to": registry, "data": "0x" + data.hex()},
                                                    hex(block)])[2:])
    words = [int.from_bytes(raw[i:i + 32], "big") for i in range(0, 96, 32)]
    return {"status": MAINTENANCE[words[0]], "deadline": str(words[1]),
            "never_completed": bool(words[2])}
