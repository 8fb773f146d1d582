"""ERC-8447 §7.2 advancing under INHERIT, SELECT and RECRUIT, and the lazy roster-wide exits of
§5.2 (SWARM_DISSOLVED) and §7.2 (NOT_CARRIED) as memberStatus, memberCount, roleCount, rosterMet
and isAuthorized report them.
"""

from __future__ import annotations

from tests.contracts.swarm_helpers import (
    A_ROLE,
    ACHIEVED,
    AUTH,
    CHARTER_1,
    CLOSED,
    COORDINATOR,
    DP,
    INHERIT,
    JUDGE,
    M_ACTIVE,
    M_CANDIDATE,
    M_EXITED,
    M_SUSPENDED,
    OPEN,
    R_ROSTER_LOST,
    RECRUIT,
    SELECT,
    SUSPENDED,
    WORKER,
    X_LEFT,
    X_NOT_CARRIED,
    X_SWARM_DISSOLVED,
    ZERO32,
    ZERO_ADDR,
    acct,
    authorities,
    changed_logs,
    member_record,
    phase,
    populated,
    seat,
    standard_spec,
    status,
    swarm_fixtures,
    swarm_record,
)
from tests.contracts.swarm_helpers import registry_functions as reg

chain, isolated = swarm_fixtures()


def two_phase(chain, admission: int, boundary: int = CLOSED, **overrides) -> bytes:
    """Standard roster (workers 3, 4, 7; coordinator 5) in phase 0, worker 7 SUSPENDED and a
    worker CANDIDATE 6 pending, then ready to advance into a phase with ``admission``."""
    spec = standard_spec(chain, phases=[phase(), phase("next", boundary=boundary,
                                                       admission=admission)], **overrides)
    sid = populated(chain, spec)
    chain.tx(reg(chain).applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 6))  # while a seat is free
    seat(chain, sid, acct(chain, 7))
    chain.tx(reg(chain).suspendMember(sid, acct(chain, 7)), acct(chain, AUTH))
    assert tuple(reg(chain).memberCount(sid).call()) == (3, 1, 1)
    return sid


def counts(chain, sid):
    r = reg(chain)
    return (tuple(r.memberCount(sid).call()), tuple(r.roleCount(sid, WORKER).call()),
            tuple(r.roleCount(sid, COORDINATOR).call()), r.rosterMet(sid).call())


# --------------------------------------------------------------------------- refusals


def test_advance_refusals(chain):
    sid = two_phase(chain, INHERIT)
    r, holder = reg(chain), acct(chain, AUTH)
    chain.fails(r.advance(sid, [], []), acct(chain, 3), "SAI_NotAuthorized")
    chain.fails(r.advance(sid, [acct(chain, 3)], []), holder, "SAI_CarriedShape")
    chain.fails(r.advance(sid, [], [WORKER]), holder, "SAI_CarriedShape")
    chain.tx(r.suspend(sid), holder)
    chain.fails(r.advance(sid, [], []), holder, "SAI_WrongState")  # SUSPENDED
    chain.tx(r.resume(sid), holder)
    chain.tx(r.advance(sid, [], []), holder)
    chain.fails(r.advance(sid, [], []), holder, "SAI_LastPhase")


def test_advance_refused_while_forming(chain):
    spec = standard_spec(chain, phases=[phase(), phase(admission=INHERIT)])
    sid = populated(chain, spec, activate=False)
    chain.fails(reg(chain).advance(sid, [], []), acct(chain, AUTH), "SAI_WrongState")


# --------------------------------------------------------------------------- INHERIT


def test_inherit_keeps_every_seat(chain):
    sid = two_phase(chain, INHERIT)
    before = counts(chain, sid)
    receipt = chain.tx(reg(chain).advance(sid, [], []), acct(chain, AUTH))
    (ev,) = chain.events(receipt, "PhaseAdvanced")
    assert (ev["args"]["phase"], ev["args"]["carried"]) == (1, 4)  # 3 active + 1 suspended
    assert chain.events(receipt, "MemberCarried") == []
    rec = swarm_record(chain, sid)
    assert (rec["phase"], rec["rosterPhase"], rec["phaseStartedAt"]) == (1, 0, chain.now)
    assert counts(chain, sid) == before == ((3, 1, 1), (2, 1), (1, 0), True)
    assert status(chain, sid, acct(chain, 3)) == (M_ACTIVE, 0)
    assert status(chain, sid, acct(chain, 7)) == (M_SUSPENDED, 0)
    assert status(chain, sid, acct(chain, 6)) == (M_CANDIDATE, 0)


# --------------------------------------------------------------------------- SELECT


def test_select_carries_listed_and_exits_the_rest_lazily(chain):
    sid = two_phase(chain, SELECT)
    a = chain.accounts
    receipt = chain.tx(reg(chain).advance(sid, [a[3], a[5]], []), a[AUTH])
    carried = chain.events(receipt, "MemberCarried")
    assert [(e["args"]["account"], e["args"]["roleId"], e["args"]["phase"]) for e in carried] == [
        (a[3], WORKER, 1), (a[5], COORDINATOR, 1)]
    (ev,) = chain.events(receipt, "PhaseAdvanced")
    assert ev["args"]["carried"] == 2
    assert chain.events(receipt, "MemberExited") == []  # exits are lazy
    assert status(chain, sid, a[3]) == (M_ACTIVE, 0)
    assert member_record(chain, sid, a[3])["carriedPhase"] == 1
    for i in (4, 7, 6):  # active, suspended, candidate
        assert status(chain, sid, a[i]) == (M_EXITED, X_NOT_CARRIED), i
        assert member_record(chain, sid, a[i])["status"] == M_EXITED
        assert reg(chain).seatEpochOf(sid, a[i]).call() == 0  # lazy exits are not explicit
    assert counts(chain, sid) == ((2, 0, 0), (1, 0), (1, 0), False)
    assert swarm_record(chain, sid)["rosterPhase"] == 1
    # §5.4: form + 4 seats x 2 + suspendMember + applyToJoin + activate + advance = 13
    assert swarm_record(chain, sid)["revision"] == len(changed_logs(chain, sid)) == 13


def test_select_with_role_change(chain):
    sid = two_phase(chain, SELECT)
    a = chain.accounts
    chain.tx(reg(chain).advance(sid, [a[3], a[4]], [COORDINATOR, WORKER]), a[AUTH])
    assert member_record(chain, sid, a[3])["roleId"] == COORDINATOR
    assert status(chain, sid, a[5]) == (M_EXITED, X_NOT_CARRIED)
    assert counts(chain, sid) == ((2, 0, 0), (1, 0), (1, 0), False)


def test_select_refusals(chain):
    sid = two_phase(chain, SELECT)
    r, a = reg(chain), chain.accounts
    chain.fails(r.advance(sid, [a[3], a[7]], []), a[AUTH], "SAI_NotCarriedMember")  # suspended
    chain.fails(r.advance(sid, [a[3], a[6]], []), a[AUTH], "SAI_NotCarriedMember")  # candidate
    chain.fails(r.advance(sid, [a[3], a[3]], []), a[AUTH], "SAI_CarriedShape")
    chain.fails(r.advance(sid, [a[3], a[4]], [WORKER]), a[AUTH], "SAI_CarriedShape")
    chain.fails(r.advance(sid, [a[3], a[4]], [COORDINATOR, COORDINATOR]), a[AUTH],
                "SAI_RoleFull")


def test_select_evaluates_new_role_eligibility(chain):
    roles = [standard_spec(chain).roles[0], (COORDINATOR, 1, 1, chain.allowlist.address, False)]
    owner = acct(chain, 0)
    chain.tx(chain.allowlist.functions.setAllowed(acct(chain, 5), True), owner)
    sid = two_phase(chain, SELECT, roles=roles)
    r, a = reg(chain), chain.accounts
    chain.fails(r.advance(sid, [a[3]], [COORDINATOR]), a[AUTH], "SAI_Ineligible")
    chain.tx(chain.allowlist.functions.setAllowed(a[5], False), owner)
    chain.fails(r.advance(sid, [a[5]], []), a[AUTH], "SAI_Ineligible")  # same role, re-checked


def test_enforce_roster_deferred_after_select(chain):
    sid = two_phase(chain, SELECT)
    a = chain.accounts
    chain.tx(reg(chain).advance(sid, [a[3], a[5]], []), a[AUTH])
    started = swarm_record(chain, sid)["phaseStartedAt"]
    chain.fails(reg(chain).enforceRoster(sid), a[9], "SAI_RosterCheckDeferred",
                at=started + 1_000 - 1)
    chain.tx(reg(chain).enforceRoster(sid), a[9], at=started + 1_000)
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["suspensionReason"]) == (SUSPENDED, R_ROSTER_LOST)


# --------------------------------------------------------------------------- RECRUIT


def test_recruit_exits_everyone_and_roster_reforms(chain):
    holder = acct(chain, AUTH)
    auths = authorities(holder, SUSPEND=(A_ROLE, ZERO_ADDR, COORDINATOR))
    sid = two_phase(chain, RECRUIT, boundary=OPEN, authorities=auths)
    r, a = reg(chain), chain.accounts
    assert r.isAuthorized(sid, DP["SUSPEND"], a[5]).call() is True
    receipt = chain.tx(r.advance(sid, [], []), holder)
    (ev,) = chain.events(receipt, "PhaseAdvanced")
    assert ev["args"]["carried"] == 0
    for i in (3, 4, 5, 7, 6):
        assert status(chain, sid, a[i]) == (M_EXITED, X_NOT_CARRIED), i
    assert counts(chain, sid) == ((0, 0, 0), (0, 0), (0, 0), False)
    assert r.isAuthorized(sid, DP["SUSPEND"], a[5]).call() is False  # the role holder is gone
    # the roster re-forms under the new phase's OPEN boundary; old members may come back
    chain.tx(r.join(sid, WORKER, CHARTER_1), a[8])
    chain.tx(r.join(sid, WORKER, CHARTER_1), a[3])
    m = member_record(chain, sid, a[3])
    assert (m["status"], m["admittedPhase"], m["carriedPhase"]) == (M_ACTIVE, 1, 1)
    assert counts(chain, sid) == ((2, 0, 0), (2, 0), (0, 0), False)
    started = swarm_record(chain, sid)["phaseStartedAt"]
    chain.fails(r.enforceRoster(sid), a[9], "SAI_RosterCheckDeferred", at=started + 999)
    seat(chain, sid, a[5], COORDINATOR)
    assert r.rosterMet(sid).call() is True
    assert r.isAuthorized(sid, DP["SUSPEND"], a[5]).call() is True


# --------------------------------------------------------------------------- SWARM_DISSOLVED


def test_dissolve_exits_remaining_seats_lazily(chain):
    sid = two_phase(chain, SELECT)
    r, a = reg(chain), chain.accounts
    chain.tx(r.advance(sid, [a[3], a[5]], []), a[AUTH])
    chain.tx(r.leave(sid), a[5])
    chain.tx(r.conclude(sid, ACHIEVED, ZERO32), a[JUDGE])
    assert status(chain, sid, a[3]) == (M_ACTIVE, 0)  # CONCLUDING keeps the ledger
    receipt = chain.tx(r.dissolve(sid), a[AUTH])
    assert chain.events(receipt, "MemberExited") == []
    assert status(chain, sid, a[3]) == (M_EXITED, X_SWARM_DISSOLVED)
    assert status(chain, sid, a[4]) == (M_EXITED, X_NOT_CARRIED)  # exited first
    assert status(chain, sid, a[5]) == (M_EXITED, X_LEFT)
    assert counts(chain, sid) == ((0, 0, 0), (0, 0), (0, 0), False)
    assert member_record(chain, sid, a[3])["status"] == M_EXITED


def test_abort_exits_candidates_and_members_lazily(chain):
    sid = populated(chain, activate=False)
    r, a = reg(chain), chain.accounts
    chain.tx(r.applyToJoin(sid, WORKER, CHARTER_1), a[6])
    chain.tx(r.abort(sid), a[AUTH])
    for i in (3, 4, 5, 6):
        assert status(chain, sid, a[i]) == (M_EXITED, X_SWARM_DISSOLVED), i
    assert counts(chain, sid) == ((0, 0, 0), (0, 0), (0, 0), False)
