"""ERC-8447 §5: every transition of the §5.2 table (an allowed caller and condition, and a
refused one), the fallbacks at their exact second, outcome and reason apart from the state, and
the §5.4 revision log (one Changed per state-changing call, after the call's own events).

Time convention checked here (README): "after T" means block.timestamp > T.
"""

from __future__ import annotations

from eth_hash.auto import keccak

from tests.contracts.swarm_helpers import (
    ABANDONED,
    ACHIEVED,
    ACTIVE,
    AUTH,
    AUTHORITY_ACT,
    BOTH,
    CHARTER_1,
    CHARTER_2,
    CONCLUDING,
    COORDINATOR,
    DISSOLVED,
    DP,
    FAILED,
    JUDGE,
    M_ACTIVE,
    M_EXITED,
    O_NONE,
    PARTIAL,
    R_ACCEPTANCE,
    R_AUTHORITY,
    R_INACTIVITY,
    R_RECRUITMENT_EXPIRED,
    R_ROSTER_LOST,
    R_TIMEOUT,
    SUPERSEDED,
    SUSPENDED,
    WORKER,
    X_LEFT,
    X_SWARM_DISSOLVED,
    ZERO32,
    acct,
    changed_logs,
    populated,
    seat,
    standard_spec,
    status,
    swarm_fixtures,
    swarm_record,
)
from tests.contracts.swarm_helpers import registry_functions as fns

chain, isolated = swarm_fixtures()


# --------------------------------------------------------------------------- FORMING -> ACTIVE


def test_activate_roster_met_by_anyone(chain):
    sid = populated(chain, activate=False)
    reg = fns(chain)
    chain.tx(reg.leave(sid), acct(chain, 4))  # 1 worker < min 2
    chain.fails(reg.activate(sid), acct(chain, 9), "SAI_RosterNotMet")
    seat(chain, sid, acct(chain, 6))
    receipt = chain.tx(reg.activate(sid), acct(chain, 9))
    rec = swarm_record(chain, sid)
    assert rec["state"] == ACTIVE
    assert rec["activatedAt"] == rec["phaseStartedAt"] == chain.now
    assert rec["hardDeadline"] == chain.now + 100_000  # activatedAt + maxDuration
    assert reg.hardDeadlineOf(sid).call() == chain.now + 100_000
    (ev,) = chain.events(receipt, "SwarmActivated")
    assert (ev["args"]["at"], ev["args"]["hardDeadline"]) == (chain.now, chain.now + 100_000)
    chain.fails(reg.activate(sid), acct(chain, 9), "SAI_WrongState")


def test_activate_authority_needs_no_roster(chain):
    spec = standard_spec(chain, activation=AUTHORITY_ACT, max_duration=0)
    sid = chain.form(spec, acct(chain, JUDGE), acct(chain, 0))
    reg = fns(chain)
    chain.fails(reg.activate(sid), acct(chain, 9), "SAI_NotAuthorized")
    chain.tx(reg.activate(sid), acct(chain, AUTH))
    assert swarm_record(chain, sid)["state"] == ACTIVE
    assert reg.hardDeadlineOf(sid).call() == 0  # maxDuration 0: no hard deadline


def test_activate_both_needs_authority_and_roster(chain):
    spec = standard_spec(chain, activation=BOTH)
    sid = chain.form(spec, acct(chain, JUDGE), acct(chain, 0))
    reg = fns(chain)
    chain.fails(reg.activate(sid), acct(chain, AUTH), "SAI_RosterNotMet")
    for i, r in ((3, WORKER), (4, WORKER), (5, COORDINATOR)):
        seat(chain, sid, acct(chain, i), r)
    chain.fails(reg.activate(sid), acct(chain, 9), "SAI_NotAuthorized")
    chain.tx(reg.activate(sid), acct(chain, AUTH))
    assert swarm_record(chain, sid)["state"] == ACTIVE


# --------------------------------------------------------------------------- FORMING -> DISSOLVED


def test_abort_by_authority_any_time(chain):
    sid = populated(chain, activate=False)
    reg = fns(chain)
    chain.fails(reg.abort(sid), acct(chain, 9), "SAI_WindowOpen")
    receipt = chain.tx(reg.abort(sid), acct(chain, AUTH))
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["outcome"], rec["reason"]) == (DISSOLVED, ABANDONED, R_AUTHORITY)
    # SwarmConcluded, then SwarmDissolved, then Changed — the last log of the transaction.
    topics = [log["topics"][0] for log in receipt["logs"]]
    sig = {
        "SwarmConcluded": "SwarmConcluded(bytes32,uint8,uint8,bytes32,address)",
        "SwarmDissolved": "SwarmDissolved(bytes32,uint64,address)",
        "Changed": "Changed(bytes32,uint64,bytes4,address)",
    }
    assert topics == [keccak(s.encode()) for s in sig.values()]
    # every seat exits lazily with SWARM_DISSOLVED
    assert status(chain, sid, acct(chain, 3)) == (M_EXITED, X_SWARM_DISSOLVED)


def test_abort_by_anyone_after_recruitment_window(chain):
    sid = chain.form(standard_spec(chain), acct(chain, JUDGE), acct(chain, 0))
    formed = swarm_record(chain, sid)["formedAt"]
    reg = fns(chain)
    chain.fails(reg.abort(sid), acct(chain, 9), "SAI_WindowOpen", at=formed + 1_000)
    chain.tx(reg.abort(sid), acct(chain, 9), at=formed + 1_001)
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["outcome"], rec["reason"]) == (
        DISSOLVED, ABANDONED, R_RECRUITMENT_EXPIRED)
    assert rec["dissolvedAt"] == rec["concludedAt"] == formed + 1_001


def test_abort_only_while_forming(chain):
    sid = populated(chain)
    chain.fails(fns(chain).abort(sid), acct(chain, AUTH), "SAI_WrongState")


# --------------------------------------------------------------------------- ACTIVE -> SUSPENDED


def test_suspend_by_authority(chain):
    sid = populated(chain)
    reg = fns(chain)
    chain.fails(reg.suspend(sid), acct(chain, 3), "SAI_NotAuthorized")
    chain.tx(reg.suspend(sid), acct(chain, AUTH))
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["suspensionReason"], rec["suspendedAt"]) == (
        SUSPENDED, R_AUTHORITY, chain.now)
    assert rec["outcome"] == O_NONE  # outcome is not a state
    chain.fails(reg.suspend(sid), acct(chain, AUTH), "SAI_WrongState")


def test_enforce_roster_by_anyone_when_roster_lost(chain):
    sid = populated(chain)
    reg = fns(chain)
    chain.fails(reg.enforceRoster(sid), acct(chain, 9), "SAI_RosterMet")
    chain.tx(reg.leave(sid), acct(chain, 5))  # the only coordinator (min 1)
    assert reg.rosterMet(sid).call() is False
    chain.tx(reg.enforceRoster(sid), acct(chain, 9))
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["suspensionReason"]) == (SUSPENDED, R_ROSTER_LOST)


def test_enforce_inactivity_two_stages(chain):
    sid = populated(chain)
    reg = fns(chain)
    last = swarm_record(chain, sid)["lastActivity"]  # the last admission (§5.3)
    chain.fails(reg.enforceInactivity(sid), acct(chain, 9), "SAI_NotInactive", at=last + 5_000)
    chain.tx(reg.enforceInactivity(sid), acct(chain, 9), at=last + 5_001)
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["suspensionReason"]) == (SUSPENDED, R_INACTIVITY)
    suspended_at = rec["suspendedAt"]
    chain.fails(reg.enforceInactivity(sid), acct(chain, 9), "SAI_NotInactive",
                at=suspended_at + 5_000)
    chain.tx(reg.enforceInactivity(sid), acct(chain, 9), at=suspended_at + 5_001)
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["outcome"], rec["reason"]) == (CONCLUDING, ABANDONED, R_INACTIVITY)


def test_enforce_inactivity_disabled_by_zero_timeout(chain):
    sid = populated(chain, standard_spec(chain, inactivity_timeout=0))
    chain.fails(fns(chain).enforceInactivity(sid), acct(chain, 9), "SAI_NotInactive",
                at=chain.now + 90_000)


# --------------------------------------------------------------------------- SUSPENDED -> ACTIVE


def test_resume_by_authority(chain):
    sid = populated(chain)
    reg = fns(chain)
    chain.tx(reg.suspend(sid), acct(chain, AUTH))
    chain.fails(reg.resume(sid), acct(chain, 9), "SAI_NotAuthorized")  # not ROSTER_LOST
    chain.tx(reg.resume(sid), acct(chain, AUTH))
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["suspensionReason"]) == (ACTIVE, 0)
    chain.fails(reg.resume(sid), acct(chain, AUTH), "SAI_WrongState")


def test_resume_by_anyone_after_roster_lost_once_roster_holds(chain):
    sid = populated(chain)
    reg = fns(chain)
    chain.tx(reg.suspendMember(sid, acct(chain, 5)), acct(chain, AUTH))  # coordinator suspended
    chain.tx(reg.enforceRoster(sid), acct(chain, 9))
    chain.fails(reg.resume(sid), acct(chain, 9), "SAI_RosterNotMet")
    chain.tx(reg.reinstate(sid, acct(chain, 5)), acct(chain, AUTH))  # judgment stays available
    chain.tx(reg.resume(sid), acct(chain, 9))
    assert swarm_record(chain, sid)["state"] == ACTIVE


# --------------------------------------------------------------------------- -> CONCLUDING


def test_conclude_by_authority_or_acceptance_authority(chain):
    sid = populated(chain)
    reg = fns(chain)
    result = keccak(b"result")
    chain.fails(reg.conclude(sid, ACHIEVED, result), acct(chain, 3), "SAI_NotAuthorized")
    for bad in (O_NONE, SUPERSEDED):
        chain.fails(reg.conclude(sid, bad, result), acct(chain, AUTH), "SAI_BadOutcome")
    snap = chain.snapshot()
    chain.tx(reg.conclude(sid, PARTIAL, result), acct(chain, AUTH))
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["outcome"], rec["reason"], rec["resultHash"]) == (
        CONCLUDING, PARTIAL, R_AUTHORITY, result)
    chain.fails(reg.conclude(sid, ACHIEVED, result), acct(chain, AUTH), "SAI_WrongState")
    chain.revert(snap)
    chain.tx(reg.conclude(sid, ACHIEVED, result), acct(chain, JUDGE))
    rec = swarm_record(chain, sid)
    assert (rec["outcome"], rec["reason"]) == (ACHIEVED, R_ACCEPTANCE)


def test_conclude_from_suspended_not_from_forming(chain):
    sid = populated(chain, activate=False)
    reg = fns(chain)
    chain.fails(reg.conclude(sid, FAILED, ZERO32), acct(chain, AUTH), "SAI_WrongState")
    chain.tx(reg.activate(sid), acct(chain, 9))
    chain.tx(reg.suspend(sid), acct(chain, AUTH))
    chain.tx(reg.conclude(sid, FAILED, ZERO32), acct(chain, AUTH))
    assert swarm_record(chain, sid)["outcome"] == FAILED


def test_enforce_deadline_after_hard_deadline(chain):
    sid = populated(chain)
    reg = fns(chain)
    deadline = reg.hardDeadlineOf(sid).call()
    chain.tx(reg.suspend(sid), acct(chain, AUTH))  # also from SUSPENDED
    chain.fails(reg.enforceDeadline(sid), acct(chain, 9), "SAI_BeforeDeadline", at=deadline)
    chain.tx(reg.enforceDeadline(sid), acct(chain, 9), at=deadline + 1)
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["outcome"], rec["reason"]) == (CONCLUDING, ABANDONED, R_TIMEOUT)
    chain.fails(reg.enforceDeadline(sid), acct(chain, 9), "SAI_WrongState")


def test_enforce_deadline_needs_a_deadline(chain):
    sid = populated(chain, standard_spec(chain, max_duration=0))
    chain.fails(fns(chain).enforceDeadline(sid), acct(chain, 9), "SAI_BeforeDeadline",
                at=chain.now + 10**9)


# ----------------------------------------------------------------------- CONCLUDING -> DISSOLVED


def test_dissolve_by_authority_or_anyone_after_settlement(chain):
    sid = populated(chain)
    reg = fns(chain)
    chain.fails(reg.dissolve(sid), acct(chain, AUTH), "SAI_WrongState")  # still ACTIVE
    chain.tx(reg.conclude(sid, ACHIEVED, ZERO32), acct(chain, JUDGE))
    concluded = swarm_record(chain, sid)["concludedAt"]
    snap = chain.snapshot()
    chain.tx(reg.dissolve(sid), acct(chain, AUTH))
    assert swarm_record(chain, sid)["state"] == DISSOLVED
    chain.revert(snap)
    chain.fails(reg.dissolve(sid), acct(chain, 9), "SAI_WindowOpen", at=concluded + 700)
    chain.tx(reg.dissolve(sid), acct(chain, 9), at=concluded + 701)
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["outcome"], rec["dissolvedAt"]) == (
        DISSOLVED, ACHIEVED, concluded + 701)
    assert status(chain, sid, acct(chain, 4)) == (M_EXITED, X_SWARM_DISSOLVED)


def test_dissolved_is_terminal_and_authorizes_nobody(chain):
    sid = populated(chain)
    reg = fns(chain)
    chain.tx(reg.conclude(sid, ACHIEVED, ZERO32), acct(chain, JUDGE))
    chain.tx(reg.dissolve(sid), acct(chain, AUTH))
    for point in DP.values():
        assert reg.isAuthorized(sid, point, acct(chain, AUTH)).call() is False
    a = acct(chain, AUTH)
    chain.fails(reg.conclude(sid, FAILED, ZERO32), a, "SAI_WrongState")
    chain.fails(reg.dissolve(sid), a, "SAI_WrongState")
    chain.fails(reg.amend(sid, CHARTER_2, "u", ZERO32, ZERO32, False), a, "SAI_NotAuthorized")
    chain.fails(reg.admit(sid, acct(chain, 6), WORKER), a, "SAI_NotAuthorized")
    chain.fails(reg.leave(sid), acct(chain, 3), "SAI_WrongState")
    chain.fails(reg.transferAuthority(sid, DP["ABORT"], acct(chain, 6)), a, "SAI_WrongState")
    assert swarm_record(chain, sid)["outcome"] == ACHIEVED


def test_concluding_allows_only_leave(chain):
    sid = populated(chain)
    reg = fns(chain)
    chain.tx(reg.conclude(sid, PARTIAL, ZERO32), acct(chain, AUTH))
    a = acct(chain, AUTH)
    chain.fails(reg.admit(sid, acct(chain, 6), WORKER), a, "SAI_WrongState")
    chain.fails(reg.applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 6), "SAI_WrongState")
    chain.fails(reg.acceptCharter(sid, CHARTER_1), acct(chain, 3), "SAI_WrongState")
    chain.fails(reg.suspendMember(sid, acct(chain, 3)), a, "SAI_WrongState")
    chain.fails(reg.remove(sid, acct(chain, 3)), a, "SAI_WrongState")
    chain.fails(reg.substitute(sid, acct(chain, 3), acct(chain, 6)), a, "SAI_WrongState")
    chain.fails(reg.challenge(sid, acct(chain, 3)), acct(chain, 9), "SAI_WrongState")
    chain.fails(reg.amend(sid, CHARTER_2, "u", ZERO32, ZERO32, False), a, "SAI_WrongState")
    chain.fails(reg.suspend(sid), a, "SAI_WrongState")
    chain.tx(reg.leave(sid), acct(chain, 3))
    assert status(chain, sid, acct(chain, 3)) == (M_EXITED, X_LEFT)


def test_suspended_refuses_admission_but_keeps_judgment(chain):
    sid = populated(chain)
    reg = fns(chain)
    chain.tx(reg.suspend(sid), acct(chain, AUTH))
    chain.fails(reg.applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 6), "SAI_WrongState")
    chain.fails(reg.admit(sid, acct(chain, 6), WORKER), acct(chain, AUTH), "SAI_WrongState")
    chain.tx(reg.suspendMember(sid, acct(chain, 3)), acct(chain, AUTH))
    chain.tx(reg.reinstate(sid, acct(chain, 3)), acct(chain, AUTH))
    chain.tx(reg.amend(sid, CHARTER_2, "u2", ZERO32, ZERO32, False), acct(chain, AUTH))
    chain.tx(reg.leave(sid), acct(chain, 4))
    assert status(chain, sid, acct(chain, 3)) == (M_ACTIVE, 0)


# --------------------------------------------------------------------------- §5.4 revision log


def test_revision_increments_once_per_state_changing_call(chain):
    reg = fns(chain)
    a = chain.accounts
    calls = []
    sid = chain.form(standard_spec(chain), a[JUDGE], a[0])
    calls.append("form")
    steps = [
        (reg.applyToJoin(sid, WORKER, CHARTER_1), a[3], "applyToJoin(bytes32,bytes32,bytes32)"),
        (reg.admit(sid, a[3], WORKER), a[AUTH], "admit(bytes32,address,bytes32)"),
        (reg.applyToJoin(sid, WORKER, CHARTER_1), a[4], "applyToJoin(bytes32,bytes32,bytes32)"),
        (reg.admit(sid, a[4], WORKER), a[AUTH], "admit(bytes32,address,bytes32)"),
        (reg.admit(sid, a[5], COORDINATOR), a[AUTH], "admit(bytes32,address,bytes32)"),
        (reg.acceptCharter(sid, CHARTER_1), a[5], "acceptCharter(bytes32,bytes32)"),
        (reg.activate(sid), a[9], "activate(bytes32)"),
        (reg.amend(sid, CHARTER_2, "u", ZERO32, ZERO32, False), a[AUTH],
         "amend(bytes32,bytes32,string,bytes32,bytes32,bool)"),
        (reg.setCharterURI(sid, "u2"), a[AUTH], "setCharterURI(bytes32,string)"),
        (reg.suspendMember(sid, a[3]), a[AUTH], "suspendMember(bytes32,address)"),
        (reg.reinstate(sid, a[3]), a[AUTH], "reinstate(bytes32,address)"),
        (reg.suspend(sid), a[AUTH], "suspend(bytes32)"),
        (reg.resume(sid), a[AUTH], "resume(bytes32)"),
        (reg.transferAuthority(sid, DP["SUSPEND"], a[8]), a[AUTH],
         "transferAuthority(bytes32,uint8,address)"),
        (reg.leave(sid), a[4], "leave(bytes32)"),
        (reg.conclude(sid, ABANDONED, ZERO32), a[AUTH], "conclude(bytes32,uint8,bytes32)"),
        (reg.dissolve(sid), a[AUTH], "dissolve(bytes32)"),
    ]
    previous = swarm_record(chain, sid)["revision"]
    assert previous == 1
    for fn, sender, signature in steps:
        receipt = chain.tx(fn, sender)
        revision = swarm_record(chain, sid)["revision"]
        assert revision == previous + 1, signature
        last = chain.registry.events.Changed().process_log(receipt["logs"][-1])
        assert last["args"]["revision"] == revision
        assert last["args"]["selector"] == keccak(signature.encode())[:4]
        assert last["args"]["by"] == sender
        assert sum(1 for log in receipt["logs"]
                   if log["topics"][0] == keccak(b"Changed(bytes32,uint64,bytes4,address)")) == 1
        previous = revision
        calls.append(signature)
    logs = changed_logs(chain, sid)
    assert [log["args"]["revision"] for log in logs] == list(range(1, len(calls) + 1))
    assert reg.revisionOf(sid).call() == len(logs) == len(calls)


def test_refused_call_leaves_revision(chain):
    sid = populated(chain)
    reg = fns(chain)
    before = swarm_record(chain, sid)["revision"]
    assert before == 8  # form, 3 x (applyToJoin + admit), activate
    chain.fails(reg.suspend(sid), acct(chain, 3), "SAI_NotAuthorized")
    chain.fails(reg.enforceRoster(sid), acct(chain, 3), "SAI_RosterMet")
    assert swarm_record(chain, sid)["revision"] == before
    assert len(changed_logs(chain, sid)) == before
    assert [status(chain, sid, acct(chain, i))[0] for i in (3, 4, 5)] == [M_ACTIVE] * 3
    assert swarm_record(chain, sid)["state"] == ACTIVE
