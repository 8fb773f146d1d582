"""keccak256, the one hash of the execution layer.

Backend chosen by measurement (benchmarks/bench_primitives.py): ``sha3.keccak_256`` from
safe-pysha3 (the C reference implementation) called directly, about 4x faster per call than
eth-hash's pycryptodome backend, whose cost is mostly call overhead. Both compute the same
function (Keccak-256 with the original 0x01 padding, not NIST SHA3-256); eth-hash remains
the fallback when safe-pysha3 is not installed.
"""

from __future__ import annotations

try:
    from sha3 import keccak_256 as _keccak_256

    def keccak256(data: bytes) -> bytes:
        digest: bytes = _keccak_256(data).digest()  # safe-pysha3 ships no type information
        return digest

    BACKEND = "safe-pysha3"
except ImportError:  # pragma: no cover - exercised only without safe-pysha3
    from eth_hash.auto import keccak as keccak256  # type: ignore[assignment]

    BACKEND = "eth-hash"


EMPTY_TRIE_ROOT = keccak256(b"\x80")  # keccak256(rlp(b""))
EMPTY_CODE_HASH = keccak256(b"")
