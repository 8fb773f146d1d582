"""AMM pure derivations without a chain: the specification's §Test Cases numbers and behavioural
cases.

Expected values are the specification's own (domain tags, JCS rows, worked-example commitments and
roots) or hand computations from §Status derivation, never outputs of the code under test.
"""

from __future__ import annotations

import pytest

from recompute.core.keccak import keccak256
from recompute.recipes.amm import (
    TAG_LAYER_COMMITMENT,
    TAG_STATE_ROOT,
    compute_root,
    effective_requirements,
    jcs,
    layer_status,
    restore_claim,
    signal_status,
)


def h(text: str) -> bytes:
    return bytes.fromhex(text[2:])


def test_domain_tags():  # AMM §Test Cases, Domain tags
    assert TAG_LAYER_COMMITMENT == h(
        "0xc76b0a7a69207b3cf002d75e6493bc9fe99e8d75b5096ead1276bc4339b69d85")
    assert TAG_STATE_ROOT == h(
        "0xe2251470d039826c2565c6e003924bb890e07cd981b370528c245e47f1c3e7c6")


@pytest.mark.parametrize("document,canonical,digest", [
    ({"b": 1, "a": [True, None, "x"], "c": {"z": 1.5, "y": "é"}},
     '{"a":[true,null,"x"],"b":1,"c":{"y":"é","z":1.5}}',
     "0xa5bf818c53f5a4b41e090fb63de6621bd9efe8da3a89e87bc41e7fcd004f9031"),
    ({"€": 1, "A": 2, "a": 3, "": 4}, '{"":4,"A":2,"a":3,"€":1}',
     "0x22816a6b64184a15ee2d60a54c0f519ec38dbf7310593294a545467c66c5ea77"),
    ({"n": 1e21, "m": 0.000001, "k": -0.0, "s": 'line\nbreak\ttab"quote\\'},
     '{"k":0,"m":0.000001,"n":1e+21,"s":"line\\nbreak\\ttab\\"quote\\\\"}',
     "0x8953829f4ccb00b31d6f6ea5b40793765a654514a2049b6e1fb99ab38be2f069"),
])
def test_jcs_rows(document, canonical, digest):  # AMM §Test Cases, Canonicalization
    assert jcs(document) == canonical.encode()
    assert keccak256(jcs(document)) == h(digest)


PRE = ["0x053bdcecda479dd30b5bfd7a02661df67b79e978fea6888245df8aa167d6d282",
       "0x3a8a0162793df87f7094634e37d9e5d3d8470bd43cc7fee5669f609d922ee9c3",
       "0x3d3356ae1bc86136718f1ecd7f42d8a0570db2d21116c886cab291a789010585",
       "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e"]
POST = ["0xb5a33b6d3732e664a08a19ed068432a6ab1085bf7013b3ffce1ff88ec7dd8519",
        "0xd24fedfca7a64b7596414751a6d4a1ed7a89bf906bce4b453453a7b086d26641",
        "0x8f03de4a144d8d453c84d2d4546fb0f01af23bd6f7ba31d18dac0c6dd1a942f0",
        PRE[3]]
PRE_ROOT = "0x090e63d66e6cdb08331fece350bd0320551287d53d6644d5af158b04d94d149f"
POST_ROOT = "0x9918ebff7f3bc97ca08580033da3aa99b27871d8d57b2b8c9845221fa3dec3de"


def test_worked_example_roots():  # AMM §Test Cases, Layer commitments of the worked example
    assert compute_root([h(c) for c in PRE]) == h(PRE_ROOT)
    assert compute_root([h(c) for c in POST]) == h(POST_ROOT)


def test_worked_example_layer_commitments():
    from eth_abi import encode

    rows = [  # layer, schemaHash, contentHash, salt, commitment (pre state)
        (0, "0x6a00023d50bfe315bf6650953a4bb81910aef335c63ee465d2f52937b860790b",
         "0xa25eae406d69cd3802dbb588487f486e5b5e006b7ef521303ea24406979a4731", "00" * 32, PRE[0]),
        (1, "0x2862ecb7722af301f96bf7b7127d96568563c9c6cd281308f315e97b433d2055",
         "0xf3640f14c472bf43b5e89ea5a0a7d1e3681f47c81a7cf1a0d3f41cc685ed1701",
         "9b1e4c7a2d5f8b0c3e6a9d1f4b7e0a3c6f9b2e5d8a1c4f7b0e3a6d9c2f5b8e1a", PRE[1]),
    ]
    for layer, schema_hash, content_hash, salt, commitment in rows:
        computed = keccak256(encode(["bytes32", "uint8", "bytes32", "bytes32", "bytes32"],
                                    [TAG_LAYER_COMMITMENT, layer, h(schema_hash),
                                     h(content_hash), bytes.fromhex(salt)]))
        assert computed == h(commitment)
    assert keccak256(b"amm.layer.runtime/1") == h(rows[0][1])  # schemaHash = keccak256(schema)


# ---- §Status derivation over the behavioural cases -----------------------------------------

DAY = 86400
ENROLLED_AT = 1_000_000
POLICY = {"supportedLayers": 0x0F, "requiredLayers": 0x0F, "dueWindow": 3600,
          "pulseInterval": 21600, "maxInterval": [DAY, 7 * DAY, 30 * DAY, 90 * DAY]}
NO_FLOOR = {"requiredLayers": 0, "pulseInterval": 0, "maxInterval": [0, 0, 0, 0]}
HEAD = {"enrolled": True, "enrolledAt": ENROLLED_AT, "lastSignalAt": ENROLLED_AT}
NEVER = {"lastCompletedAt": 0}
NO_DEMAND = {"demandedAt": 0, "dueBy": 0}


def status(now, checkpoint=NEVER, demand=NO_DEMAND, policy=POLICY, floor=NO_FLOOR, layer=0,
           head=HEAD):
    return layer_status(head, effective_requirements(policy, floor), checkpoint, demand, layer,
                        now)


def test_a_subject_that_only_pulses_becomes_overdue_at_its_deadline():
    pulsed = dict(HEAD, lastSignalAt=ENROLLED_AT + DAY - 10)  # pulses move only the signal
    assert status(ENROLLED_AT + DAY - 3601, head=pulsed) == ("FRESH", ENROLLED_AT + DAY, True)
    assert status(ENROLLED_AT + DAY - 3600, head=pulsed) == ("DUE", ENROLLED_AT + DAY, True)
    assert status(ENROLLED_AT + DAY, head=pulsed) == ("OVERDUE", ENROLLED_AT + DAY, True)


def test_a_lengthened_interval_recomputes_from_the_same_anchor():
    longer = dict(POLICY, maxInterval=[3 * DAY, 7 * DAY, 30 * DAY, 90 * DAY])
    now = ENROLLED_AT + 2 * DAY
    assert status(now) == ("OVERDUE", ENROLLED_AT + DAY, True)
    assert status(now, policy=longer) == ("FRESH", ENROLLED_AT + 3 * DAY, True)  # same anchor
    done = {"lastCompletedAt": ENROLLED_AT + DAY + 5}  # only a completion moves the anchor
    assert status(now, checkpoint=done, policy=longer) == ("FRESH", ENROLLED_AT + 4 * DAY + 5,
                                                           False)


def test_a_late_submitted_cycle_is_judged_from_its_reported_completion():
    ended = ENROLLED_AT + 2 * DAY  # reported end, submitted 20 hours later
    now = ended + 20 * 3600
    # deadline = ended + 1 day; now + dueWindow = ended + 21 h < deadline: FRESH, not OVERDUE
    assert status(now, checkpoint={"lastCompletedAt": ended}) == ("FRESH", ended + DAY, False)


def test_a_demand_lowers_the_deadline_and_only_an_outstanding_one_counts():
    demand = {"demandedAt": ENROLLED_AT + 100, "dueBy": ENROLLED_AT + 5000}
    assert status(ENROLLED_AT + 2000, demand=demand) == ("DUE", ENROLLED_AT + 5000, True)
    assert status(ENROLLED_AT + 5000, demand=demand) == ("OVERDUE", ENROLLED_AT + 5000, True)
    late = {"demandedAt": ENROLLED_AT + 100, "dueBy": ENROLLED_AT + 3 * DAY}  # never raises
    assert status(ENROLLED_AT + 2000, demand=late)[1] == ENROLLED_AT + DAY
    # a completion at or after demandedAt clears it: the registry stores demandedAt = 0
    assert status(ENROLLED_AT + 6000, checkpoint={"lastCompletedAt": ENROLLED_AT + 5500},
                  demand=NO_DEMAND) == ("FRESH", ENROLLED_AT + 5500 + DAY, False)


def test_the_floor_tightens_and_adds_requirements():
    policy = dict(POLICY, requiredLayers=0x01)
    floor = {"requiredLayers": 0x03, "pulseInterval": 600, "maxInterval": [DAY // 2, DAY, 0, 0]}
    req = effective_requirements(policy, floor)
    assert req["requiredLayers"] == 0x03
    assert req["maxInterval"] == [DAY // 2, DAY, 0, 0]
    assert req["pulseInterval"] == 600
    assert status(ENROLLED_AT + 10, policy=policy, floor=floor, layer=2) == ("UNSCHEDULED", 0,
                                                                             True)


def test_unsupported_and_not_enrolled():
    policy = dict(POLICY, supportedLayers=0x07, requiredLayers=0x07)
    assert status(ENROLLED_AT, policy=policy, layer=3) == ("UNSUPPORTED", 0, True)
    assert layer_status({"enrolled": False}, {}, {}, {}, 0, 5) == ("NOT_ENROLLED", 0, False)


def test_signal_and_maintenance_are_independent():
    req = effective_requirements(POLICY, NO_FLOOR)
    silent_fresh_now = ENROLLED_AT + 21600 + 1
    fresh_cp = {"lastCompletedAt": ENROLLED_AT + 5000}
    assert signal_status(HEAD, req, silent_fresh_now) == ("SILENT", ENROLLED_AT,
                                                          ENROLLED_AT + 21600)
    assert layer_status(HEAD, req, fresh_cp, NO_DEMAND, 0, silent_fresh_now)[0] == "FRESH"
    later = ENROLLED_AT + 2 * DAY
    present = dict(HEAD, lastSignalAt=later - 60)
    assert signal_status(present, req, later) == ("PRESENT", later - 60, 0)
    assert layer_status(present, req, NEVER, NO_DEMAND, 0, later)[0] == "OVERDUE"
    assert signal_status(HEAD, req, ENROLLED_AT + 21600) == ("PRESENT", ENROLLED_AT, 0)
    untracked = effective_requirements(dict(POLICY, pulseInterval=0), NO_FLOOR)
    assert signal_status(HEAD, untracked, later)[0] == "NOT_TRACKED"


def test_restore_claim_checks():
    record = {"post_commitments": [h(c) for c in PRE], "restores_version": 1,
              "base_version": 2, "new_version": 3}
    good = restore_claim(record, h(PRE_ROOT), h(PRE_ROOT))
    assert good["post_root"] == h(PRE_ROOT)
    assert all(v for k, v in good.items() if k != "post_root")
    false = restore_claim(dict(record, post_commitments=[h(c) for c in POST]), h(PRE_ROOT),
                          h(POST_ROOT))
    assert false["root_at_restored_matches"] is False
    future = restore_claim(dict(record, restores_version=2), h(PRE_ROOT), h(PRE_ROOT))
    assert future["restores_earlier_version"] is False


def test_a_restore_claim_that_changes_nothing_holds_and_says_the_version_stayed():
    """AMM §Cycle records: the registry MUST check restoresVersion < the current version and
    rootAt(restoresVersion) == the post root; nothing else. A record whose post state is
    already the current state (version 3 holds the pre root after a rollback) passes both and
    changes no layer, so the version stays 3 ("a cycle that changes nothing does not advance
    it", AMM §Layer checkpoints): reported as version_advanced False, not as a failed check."""
    record = {"post_commitments": [h(c) for c in PRE], "restores_version": 1,
              "base_version": 3, "new_version": 3}
    out = restore_claim(record, h(PRE_ROOT), h(PRE_ROOT))
    assert out["version_advanced"] is False
    assert out["restores_earlier_version"] and out["root_at_restored_matches"]
    assert out["root_at_new_matches"]
