"""ABI encoding of static head words (Solidity ABI spec §Formal Specification of the Encoding).

``abi.encode`` of static types only (``bytes32``, ``uintN``, ``address``, ``bool``) is the
concatenation of one 32-byte word per value; recipes hash such encodings (AMM §Layer
commitments). This is that, without eth_abi's import cost on the proof path (README
§Performance). Dynamic types are refused: their recipes import eth_abi where they need it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_UINT = re.compile(r"uint(\d+)")


def encode_static(types: Sequence[str], values: Sequence[object]) -> bytes:
    """``abi.encode(values)`` for static types; ValueError on anything else or out of range."""
    if len(types) != len(values):
        raise ValueError("abi: as many values as types")
    out = bytearray()
    for kind, value in zip(types, values, strict=True):
        out += _word(kind, value)
    return bytes(out)


def _word(kind: str, value: object) -> bytes:
    if kind == "bytes32":
        if not isinstance(value, bytes | bytearray) or len(value) != 32:
            raise ValueError(f"abi: bytes32 needs 32 bytes, got {value!r:.40}")
        return bytes(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"abi: bool needs a bool, got {value!r:.40}")
        return int(value).to_bytes(32, "big")
    if kind == "address":
        if not isinstance(value, bytes | bytearray) or len(value) != 20:
            raise ValueError(f"abi: address needs 20 bytes, got {value!r:.40}")
        return bytes(12) + bytes(value)
    match = _UINT.fullmatch(kind)
    if match:
        bits = int(match.group(1))
        if bits % 8 or not 8 <= bits <= 256:
            raise ValueError(f"abi: {kind} is not a uint type")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << bits:
            raise ValueError(f"abi: {value!r:.40} is not a {kind}")
        return value.to_bytes(32, "big")
    raise ValueError(f"abi: {kind} is not a static type this encoder knows")
