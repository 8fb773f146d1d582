"""ERC-8447 (SAI) pure derivations without a chain, against hand computations.

Enum numbers are the specification's orders (§5.1 LifecycleState, §6.1 MemberStatus / ExitReason);
expected statuses, counts, revision arithmetic and digests are worked out by hand from the
specification's rules (§5.2/§7.2 lazy exits, §6.5 roster condition, §5.4 revision log, §4.1 hashes),
never taken from the code under test.
"""

from __future__ import annotations

import hashlib

import pytest

from recompute.core.errors import UsageError
from recompute.recipes.sai import (
    charter_check,
    live_status,
    load_pack,
    member_view,
    pack_digests,
    revision_check,
    roster_from_records,
)

# §5.1
FORMING, ACTIVE_S, SUSPENDED_S, CONCLUDING, DISSOLVED = 1, 2, 3, 4, 5
# §6.1
M_NONE, M_CANDIDATE, M_ACTIVE, M_SUSPENDED, M_EXITED = range(5)
X_NONE, X_LEFT, X_REMOVED, X_INELIGIBLE, X_NOT_CARRIED, X_REPLACED, X_DISSOLVED = range(7)
WORKER = bytes.fromhex("0e3a19745aa9b7079f93a3673c0bba2e976f355a1a9469cbe536fcb9df620fc1")
COORD = bytes.fromhex("4fc13b418c06e66bee8d79228bef6e44cc720286e48578225bdc8c8c0b62c27d")
W, C = "0x" + WORKER.hex(), "0x" + COORD.hex()


def seat(status, carried=0, reason=X_NONE, cause=0, role=WORKER):
    return {"status": status, "exitReason": reason, "suspensionCause": cause,
            "carriedPhase": carried, "roleId": role}


def rec(state=ACTIVE_S, roster_phase=0):
    return {"state": state, "rosterPhase": roster_phase}


# ---- §5.2 / §7.2 lazy exits -----------------------------------------------------------------

@pytest.mark.parametrize("member, record, expected", [
    (seat(M_ACTIVE), rec(), (M_ACTIVE, X_NONE)),
    (seat(M_NONE), rec(), (M_NONE, X_NONE)),
    # an explicit exit is what it says, also after the swarm dissolved
    (seat(M_EXITED, reason=X_LEFT), rec(DISSOLVED), (M_EXITED, X_LEFT)),
    (seat(M_EXITED, reason=X_REPLACED, carried=0), rec(roster_phase=1), (M_EXITED, X_REPLACED)),
    # §7.2 SELECT/RECRUIT: a live seat not carried into the live generation
    (seat(M_ACTIVE, carried=0), rec(roster_phase=1), (M_EXITED, X_NOT_CARRIED)),
    (seat(M_SUSPENDED, carried=0, cause=1), rec(roster_phase=1), (M_EXITED, X_NOT_CARRIED)),
    (seat(M_CANDIDATE, carried=0), rec(roster_phase=1), (M_EXITED, X_NOT_CARRIED)),
    # carried by SELECT into phase 1: live
    (seat(M_ACTIVE, carried=1), rec(roster_phase=1), (M_ACTIVE, X_NONE)),
    # INHERIT leaves rosterPhase at 0: a phase-0 seat stays live in phase 1
    (seat(M_SUSPENDED, carried=0, cause=1), rec(roster_phase=0), (M_SUSPENDED, X_NONE)),
    # §5.2 abort / dissolve: every live seat exits with the swarm
    (seat(M_ACTIVE), rec(DISSOLVED), (M_EXITED, X_DISSOLVED)),
    (seat(M_CANDIDATE), rec(DISSOLVED), (M_EXITED, X_DISSOLVED)),
    # NOT_CARRIED happened first: it stays NOT_CARRIED after dissolution
    (seat(M_ACTIVE, carried=0), rec(DISSOLVED, roster_phase=1), (M_EXITED, X_NOT_CARRIED)),
    # CONCLUDING is not the end: seats stay live
    (seat(M_ACTIVE), rec(CONCLUDING), (M_ACTIVE, X_NONE)),
])
def test_live_status(member, record, expected):
    assert live_status(member, record) == expected


def test_member_view_names_and_lazy_flag():
    v = member_view(seat(M_SUSPENDED, cause=2), rec(SUSPENDED_S))
    assert (v["status"], v["exit_reason"], v["suspension_cause"]) == \
        ("SUSPENDED", "NONE", "INELIGIBLE")
    assert v["role"] == W and v["role_name"] == "worker" and v["lazy_exit"] is False
    v = member_view(seat(M_ACTIVE, role=COORD), rec(DISSOLVED))
    assert (v["status"], v["exit_reason"], v["stored_status"]) == \
        ("EXITED", "SWARM_DISSOLVED", "ACTIVE")
    assert v["lazy_exit"] is True and v["role_name"] == "coordinator"
    assert v["swarm_state"] == "DISSOLVED"
    # a role id outside the §3.2 reserved names has no name
    v = member_view(seat(M_ACTIVE, role=b"\x01" * 32), rec())
    assert v["role_name"] is None and v["role"] == "0x" + "01" * 32
    # no seat: NONE with a zero role
    v = member_view(seat(M_NONE, role=bytes(32)), rec())
    assert (v["status"], v["role"]) == ("NONE", "0x" + "00" * 32)


def test_unknown_enum_word_is_shown():
    v = member_view(seat(7), rec())
    assert v["status"] == "UNKNOWN(7)" and v["stored_status"] == "UNKNOWN(7)"


# ---- §6.5 roster condition ------------------------------------------------------------------

ROLES = [{"roleId": WORKER, "min": 2}, {"roleId": COORD, "min": 1}]


def counters(active, suspended, w=(0, 0), c=(0, 0)):
    return {"roster": {"active": active, "suspended": suspended, "candidates": 0},
            "roles": {W: {"active": w[0], "suspended": w[1]},
                      C: {"active": c[0], "suspended": c[1]}}}


def test_roster_met_counts_active_per_role():
    members = {"a": seat(M_ACTIVE), "b": seat(M_ACTIVE), "c": seat(M_ACTIVE, role=COORD),
               "d": seat(M_SUSPENDED, cause=1)}
    got = roster_from_records(rec(), 3, ROLES, members, counters(3, 1, (2, 1), (1, 0)))
    # 2 active workers >= 2, 1 coordinator >= 1, 3 active >= minMembers 3
    assert got["roster_met"] is True
    assert got["active_by_role"] == {W: 2, C: 1}
    assert (got["active"], got["suspended"]) == (3, 1)
    assert got["counters_agree"] is True and got["findings"] == []


def test_only_active_members_count():
    # §6.5 "suspended members hold seats but not standing": one of two workers suspended
    members = {"a": seat(M_ACTIVE), "b": seat(M_SUSPENDED, cause=2),
               "c": seat(M_ACTIVE, role=COORD), "e": seat(M_EXITED, reason=X_LEFT)}
    got = roster_from_records(rec(SUSPENDED_S), 2, ROLES, members,
                              counters(2, 1, (1, 1), (1, 0)))
    # minMembers 2 is met (2 active) but the worker role's min 2 is not (1 active)
    assert got["roster_met"] is False
    assert got["roles_met"] == {W: False, C: True}
    assert got["counters_agree"] is True


def test_min_members_alone_can_fail():
    members = {"a": seat(M_ACTIVE), "b": seat(M_ACTIVE), "c": seat(M_ACTIVE, role=COORD)}
    got = roster_from_records(rec(), 4, ROLES, members, counters(3, 0, (2, 0), (1, 0)))
    assert got["roster_met"] is False and all(got["roles_met"].values())


def test_counter_that_disagrees_with_records_is_a_finding():
    members = {"a": seat(M_ACTIVE), "c": seat(M_ACTIVE, role=COORD)}
    # storage claims 3 active and 2 active workers; the records show 2 and 1
    got = roster_from_records(rec(), 2, ROLES, members, counters(3, 0, (2, 0), (1, 0)))
    assert got["counters_agree"] is False
    assert got["roster_met"] is False  # decided by the records: 1 worker < 2
    assert {f["counter"]: (f["stored"], f["records"]) for f in got["findings"]} == {
        "rosterCounts[0].active": (3, 2), f"roleCounts[0][{W}].active": (2, 1)}
    assert all(f["finding"] == "counter-disagrees" for f in got["findings"])


def test_not_carried_seats_leave_the_live_generation():
    # SELECT into phase 1 carried a (worker) and c (coordinator); b stayed in phase 0
    members = {"a": seat(M_ACTIVE, carried=1), "b": seat(M_ACTIVE, carried=0),
               "c": seat(M_ACTIVE, carried=1, role=COORD)}
    got = roster_from_records(rec(roster_phase=1), 2, ROLES, members,
                              counters(2, 0, (1, 0), (1, 0)))
    assert got["active_by_role"] == {W: 1, C: 1}
    assert got["roster_met"] is False and got["counters_agree"] is True
    # a stale phase-0 generation counter would be read at the wrong key: named by generation
    bad = roster_from_records(rec(roster_phase=1), 2, ROLES, members,
                              counters(3, 0, (2, 0), (1, 0)))
    assert {f["counter"] for f in bad["findings"]} == {
        "rosterCounts[1].active", f"roleCounts[1][{W}].active"}


def test_dissolved_counters_are_reported_zero():
    # §12: the counters count seats as the lazy rules report them; the slots keep 3 / 2 / 1
    members = {"a": seat(M_ACTIVE), "b": seat(M_ACTIVE), "c": seat(M_ACTIVE, role=COORD)}
    got = roster_from_records(rec(DISSOLVED), 3, ROLES, members, counters(3, 0, (2, 0), (1, 0)))
    assert got["active"] == 0 and got["roster_met"] is False
    assert got["counters_agree"] is True


# ---- §5.4 revision log ----------------------------------------------------------------------

def test_revision_consecutive_events():
    got = revision_check(9, [2, 3, 4, 5, 6, 7, 8, 9])
    assert (got["revision_at_from"], got["changed_events"]) == (1, 8)
    assert got["increased"] is True and got["consistent"] is True


def test_revision_without_events_did_not_increase():
    got = revision_check(15, [])
    assert (got["revision_at_from"], got["changed_events"]) == (15, 0)
    assert got["increased"] is False and got["consistent"] is True


def test_revision_gap_is_found():
    # events carry 3 then 5: r_from = 2, the second should carry 4; 2 + 2 events != 5
    got = revision_check(5, [3, 5])
    assert got["consistent"] is False
    assert {f["finding"] for f in got["findings"]} == {"revision-sequence", "revision-count"}
    assert [f for f in got["findings"] if f["finding"] == "revision-sequence"][0]["expected"] == 4


def test_stored_revision_ahead_of_its_events():
    got = revision_check(7, [3, 4])
    assert got["consistent"] is False and got["increased"] is True
    assert got["findings"] == [{"finding": "revision-count", "stored": 7, "expected": 4}]


# ---- §4.1 charter hashes --------------------------------------------------------------------

# RFC 8785 by hand: members sorted by UTF-16 code units ("B" < "a" < "é"), no whitespace,
# 1.50 -> 1.5, 1e2 -> 100, non-ASCII kept as UTF-8, "\u0007" escaped as \u0007.
PACK = {"version": 1, "prev": None, "specHash": "0x" + "ab" * 32,
        "objective": {"goal": "Prove lemma 3", "weight": 1.50, "é": "ü", "B": [1e2, True]},
        "commitment": {"allocation": "equal", "bell": "\u0007"}}
OBJECTIVE_JCS = '{"B":[100,true],"goal":"Prove lemma 3","weight":1.5,"é":"ü"}'
COMMITMENT_JCS = '{"allocation":"equal","bell":"\\u0007"}'
PACK_JCS = ('{"commitment":' + COMMITMENT_JCS + ',"objective":' + OBJECTIVE_JCS
            + ',"prev":null,"specHash":"0x' + "ab" * 32 + '","version":1}')


def sha(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def test_pack_digests_by_hand():
    d = pack_digests(PACK)
    assert d["charter_hash"] == sha(PACK_JCS)
    assert d["objective_hash"] == sha(OBJECTIVE_JCS)
    assert d["commitment_hash"] == sha(COMMITMENT_JCS)


def test_pack_without_commitment_commits_to_zero():
    pack = {k: v for k, v in PACK.items() if k != "commitment"}
    assert pack_digests(pack)["commitment_hash"] == bytes(32)


def proven(**over):
    record = {"charterHash": sha(PACK_JCS), "commitmentHash": sha(COMMITMENT_JCS),
              "specHash": bytes.fromhex("ab" * 32), "charterVersion": 1}
    record.update(over)
    return record


def test_charter_check_matches_and_mismatches():
    got = charter_check(PACK, proven(), sha(OBJECTIVE_JCS))
    assert all(got[k] for k in ("charter_matches", "objective_matches", "commitment_matches",
                                "spec_hash_matches", "version_matches"))
    # after a material amendment the registry holds version 2 and a new objective hash
    got = charter_check(PACK, proven(charterHash=b"\x02" * 32, charterVersion=2), b"\x03" * 32)
    assert (got["charter_matches"], got["objective_matches"], got["commitment_matches"],
            got["version_matches"]) == (False, False, True, False)
    # a pack without commitment against a non-zero proven commitment hash
    pack = {k: v for k, v in PACK.items() if k != "commitment"}
    assert charter_check(pack, proven(), sha(OBJECTIVE_JCS))["commitment_matches"] is False


def test_spec_hash_spellings():
    for spelled in ("0x" + "AB" * 32, "keccak256:" + "ab" * 32):
        pack = {**PACK, "specHash": spelled}
        assert charter_check(pack, proven(), b"")["spec_hash_matches"] is True
    assert charter_check({**PACK, "specHash": "ab"}, proven(), b"")["spec_hash_matches"] is False


def test_load_pack_refuses_duplicates_and_non_objects(tmp_path):
    dup = tmp_path / "dup.json"
    dup.write_text('{"version": 1, "version": 2}')
    with pytest.raises(UsageError, match="appears twice"):
        load_pack(dup)
    arr = tmp_path / "arr.json"
    arr.write_text("[1]")
    with pytest.raises(UsageError, match="root is a JSON object"):
        load_pack(arr)
    big = tmp_path / "big.json"
    big.write_text('{"n": 9007199254740993}')  # beyond the I-JSON integer range
    with pytest.raises(UsageError, match="RFC 8785"):
        pack_digests(load_pack(big))


def test_revision_at_from_proven_from_storage_is_used():
    # storage said 3 at the from block; the events carry 4 and 5; stored now 5: consistent
    got = revision_check(5, [4, 5], revision_at_from=3)
    assert (got["revision_at_from"], got["consistent"], got["increased"]) == (3, True, True)
    # storage said 2 at the from block, but the first event carries 4: an event is missing
    got = revision_check(5, [4, 5], revision_at_from=2)
    assert got["consistent"] is False
    assert {f["finding"] for f in got["findings"]} == {"revision-sequence", "revision-count"}
