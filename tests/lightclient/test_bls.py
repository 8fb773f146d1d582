"""BLS: KeyValidate (subgroup, infinity), FastAggregateVerify against py_ecc's on a real
mainnet sync aggregate, and the devnet's signing."""

from __future__ import annotations

import pytest
from py_arkworks_bls12381 import G1Point
from py_ecc.bls import G2ProofOfPossession
from py_ecc.fields import optimized_bls12_381_FQ as FQ

from recompute.lightclient import MAINNET, bls, decode_updates
from recompute.lightclient.proofs import sync_committee_signing_root
from tests.lightclient.data import load

P = FQ.field_modulus


def on_curve_outside_subgroup() -> bytes:
    """A compressed G1 point on y^2 = x^3 + 4 that is not in the prime-order subgroup (the
    cofactor is large, so the first x that is on the curve almost surely qualifies)."""
    for x in range(1, 1000):
        rhs = (pow(x, 3, P) + 4) % P
        y = pow(rhs, (P + 1) // 4, P)
        if y * y % P != rhs:
            continue
        data = bytearray(x.to_bytes(48, "big"))
        data[0] |= 0x80 | (0x20 if y > (P - 1) // 2 else 0)
        point = G1Point.from_compressed_bytes_unchecked(bytes(data))  # on the curve
        if not point.is_in_subgroup():
            return bytes(data)
    raise AssertionError("no such point found")


def test_key_outside_the_subgroup_is_refused():
    with pytest.raises(bls.InvalidKey):
        bls.decode_pubkey(on_curve_outside_subgroup())


@pytest.mark.parametrize("key", [
    bytes([0xC0]) + bytes(47),  # the point at infinity
    bytes(48),  # no compression flag
    b"\xff" * 48,  # not a field element
    bytes(47),  # short
])
def test_invalid_keys_are_refused(key):
    with pytest.raises(bls.InvalidKey):
        bls.decode_pubkey(key)


def test_verify_and_sign_agree_with_py_ecc_on_devnet_keys():
    secrets = [7, 11, 13]
    message = b"\x42" * 32
    pubkeys = [bls.secret_to_pubkey(secret) for secret in secrets]
    assert pubkeys == [G2ProofOfPossession.SkToPk(secret) for secret in secrets]
    signature = bls.sign(secrets, message)
    assert signature == G2ProofOfPossession.Aggregate(
        [G2ProofOfPossession.Sign(secret, message) for secret in secrets])
    assert bls.fast_aggregate_verify(pubkeys, message, signature)
    assert not bls.fast_aggregate_verify(pubkeys[:2], message, signature)
    assert not bls.fast_aggregate_verify(pubkeys, b"\x43" * 32, signature)
    assert not bls.fast_aggregate_verify([], message, signature)
    assert not bls.fast_aggregate_verify(pubkeys, message, bytes([0xC0]) + bytes(95))
    assert not bls.fast_aggregate_verify(pubkeys, message, b"\x01" * 96)
    assert not bls.fast_aggregate_verify(pubkeys, message, signature[:95])


def test_mainnet_sync_aggregate_against_py_ecc():
    """One real sync aggregate (helios, period 863, signed by the committee the period-862
    update announced) checked by both libraries. py_ecc is pure Python: seconds."""
    updates = decode_updates(load("helios-mainnet-capella", "updates.json"), MAINNET, 6)
    committee, update = updates[0].next_sync_committee, updates[1]
    signers = [key for bit, key in zip(update.sync_aggregate.bits, committee.pubkeys,
                                       strict=True) if bit]
    assert len(signers) == 512
    message = sync_committee_signing_root(MAINNET, update.attested_header.beacon_root,
                                          update.signature_slot)
    signature = update.sync_aggregate.signature
    assert bls.fast_aggregate_verify(signers, message, signature)
    assert G2ProofOfPossession.FastAggregateVerify(signers, message, signature)
    assert not bls.fast_aggregate_verify(signers[1:], message, signature)
