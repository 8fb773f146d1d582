"""BLS12-381 signatures as the beacon chain uses them (phase0 beacon-chain.md §BLS signatures:
the IETF BLS draft's proof-of-possession scheme, minimal-pubkey-size: keys in G1, signatures
in G2), on py-arkworks-bls12381 (Rust arkworks bindings).

``fast_aggregate_verify`` is the draft's FastAggregateVerify: every public key goes through
KeyValidate (canonical compressed encoding, on the curve, in the prime-order subgroup, not the
point at infinity), the signature must decode to a point of the G2 subgroup, and the check is
one pairing equation e(sum of keys, H(message)) == e(G1 generator, signature).

Signing (``secret_to_pubkey``, ``sign``) exists for recompute's devnet beacon chain only.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from py_arkworks_bls12381 import GT, G1Point, G2Point, Scalar

# The ciphersuite of the proof-of-possession scheme (IETF BLS draft §4.2.3), the beacon
# chain's (phase0 beacon-chain.md §BLS signatures).
DST = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_"
CURVE_ORDER = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
_G1 = G1Point()
_G1_IDENTITY = G1Point.identity()
_G2_IDENTITY = G2Point.identity()


class InvalidKey(ValueError):
    """A public key that fails KeyValidate."""


@lru_cache(maxsize=4096)
def decode_pubkey(pubkey: bytes) -> G1Point:
    """KeyValidate (IETF BLS draft §2.5): a 48-byte compressed G1 point of the prime-order
    subgroup, not the identity. Cached: a sync committee's keys serve for a whole period."""
    if len(pubkey) != 48:
        raise InvalidKey(f"public key of {len(pubkey)} bytes, expected 48")
    try:
        point = G1Point.from_compressed_bytes(bytes(pubkey))  # on-curve and subgroup checks
    except Exception as error:  # the binding raises ValueError (and may raise others)
        raise InvalidKey(f"public key 0x{pubkey.hex()[:16]}… does not decode: {error}") from None
    if point == _G1_IDENTITY:
        raise InvalidKey("public key is the point at infinity")
    return point


def _decode_signature(signature: bytes) -> G2Point | None:
    if len(signature) != 96:
        return None
    try:
        point = G2Point.from_compressed_bytes(bytes(signature))  # on-curve and subgroup checks
    except Exception:
        return None
    return None if point == _G2_IDENTITY else point


def fast_aggregate_verify(pubkeys: Sequence[bytes], message: bytes, signature: bytes) -> bool:
    """IETF BLS draft §3.3.4 FastAggregateVerify. Raises :class:`InvalidKey` when a key fails
    KeyValidate; returns False for an empty key list or a signature that does not verify."""
    if not pubkeys:
        return False
    points = [decode_pubkey(bytes(key)) for key in pubkeys]
    point = _decode_signature(signature)
    if point is None:
        return False
    aggregate = points[0]
    for other in points[1:]:
        aggregate = aggregate + other
    hashed = G2Point.hash_to_curve(bytes(message), DST)
    return bool(GT.pairing_check([aggregate, -_G1], [hashed, point]))


def secret_to_pubkey(secret: int) -> bytes:
    """SkToPk: the compressed G1 point secret·G (devnet keys only)."""
    return bytes((_G1 * Scalar(_check_secret(secret))).to_compressed_bytes())


def sign(secrets: Sequence[int], message: bytes) -> bytes:
    """The aggregate of each secret's signature of ``message``: (sum of secrets)·H(message),
    equal to Aggregate(Sign(sk, message) for sk in secrets) (devnet keys only)."""
    total = sum(_check_secret(secret) for secret in secrets) % CURVE_ORDER
    hashed = G2Point.hash_to_curve(bytes(message), DST)
    return bytes((hashed * Scalar(total)).to_compressed_bytes())


def _check_secret(secret: int) -> int:
    if not 0 < secret < CURVE_ORDER:
        raise ValueError("a BLS secret key must be in [1, r-1]")
    return secret
