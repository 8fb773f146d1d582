"""keccak256, the one hash of the execution layer.

Backend chosen by measurement (benchmarks/bench_primitives.py): ``sha3.keccak_256`` from
safe-pysha3 (the C reference implementation) called directly, about 4x faster per call than
eth-hash's pycryptodome backend, whose cost is mostly call overhead. Both compute the same
function (Keccak-256 with the original 0x01 padding, not NIST SHA3-256); eth-hash remains
the fallback when safe-pysha3 is not installed.

:data:`keccak256_state` is the backend's own constructor, ``keccak256_state(data).digest()``
being ``keccak256(data)``: the proof walk's inner loops call it so, without the Python frame
of :func:`keccak256` (about 60 ns a call, a tenth of hashing a proof node).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class HashState(Protocol):
    def digest(self) -> bytes: ...


try:
    from sha3 import keccak_256 as _keccak_256

    def keccak256(data: bytes) -> bytes:
        digest: bytes = _keccak_256(data).digest()  # safe-pysha3 ships no type information
        return digest

    keccak256_state: Callable[[bytes], HashState] = _keccak_256
    BACKEND = "safe-pysha3"
except ImportError:  # pragma: no cover - exercised only without safe-pysha3
    from eth_hash.auto import keccak as keccak256  # type: ignore[assignment]

    class _Digested:
        __slots__ = ("_digest",)

        def __init__(self, data: bytes) -> None:
            self._digest = keccak256(data)

        def digest(self) -> bytes:
            return self._digest

    keccak256_state = _Digested
    BACKEND = "eth-hash"


EMPTY_TRIE_ROOT = keccak256(b"\x80")  # keccak256(rlp(b""))
EMPTY_CODE_HASH = keccak256(b"")
