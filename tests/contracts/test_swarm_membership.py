"""ERC-8447 §6: two-sided admission in both orders and its refusals (§6.2), departure,
suspension, removal, reinstatement and substitution (§6.3), challenge and expel with the §6.4
classification (including the one-eighth gas remainder rule), and the §6.5 roster condition.
"""

from __future__ import annotations

import pytest

from tests.contracts.swarm_helpers import (
    A_ADDRESS,
    AUTH,
    C_AUTHORITY,
    C_INELIGIBLE,
    CHARTER_1,
    CHARTER_2,
    CLOSED,
    COORDINATOR,
    INHERIT,
    INITIATOR_ROLE,
    JUDGE,
    M_ACTIVE,
    M_CANDIDATE,
    M_EXITED,
    M_NONE,
    M_SUSPENDED,
    OPEN,
    WORKER,
    X_INELIGIBLE,
    X_LEFT,
    X_REMOVED,
    X_REPLACED,
    ZERO32,
    acct,
    authorities,
    changed_logs,
    kid,
    member_record,
    phase,
    populated,
    role,
    seat,
    standard_spec,
    status,
    swarm_fixtures,
    swarm_record,
)
from tests.contracts.swarm_helpers import registry_functions as reg

STARVED_GAS = 1_000_000  # the catching module's inner read needs a few million


chain, isolated = swarm_fixtures()


def formed(chain, **overrides) -> bytes:
    return chain.form(standard_spec(chain, **overrides), acct(chain, JUDGE), acct(chain, 0))


def counts(chain, sid):
    return tuple(reg(chain).memberCount(sid).call())


# --------------------------------------------------------------------------- §6.2 both orders


def test_apply_then_admit(chain):
    sid = formed(chain)
    a3 = acct(chain, 3)
    r = chain.tx(reg(chain).applyToJoin(sid, WORKER, CHARTER_1), a3)
    assert [e["event"] for e in chain.events(r, "MemberApplied")] == ["MemberApplied"]
    (acc,) = chain.events(r, "CharterAccepted")
    assert (acc["args"]["charterHash"], acc["args"]["charterVersion"],
            acc["args"]["commitmentVersion"], acc["args"]["signed"]) == (CHARTER_1, 1, 1, False)
    assert status(chain, sid, a3) == (M_CANDIDATE, 0)
    assert counts(chain, sid) == (0, 0, 1)
    r = chain.tx(reg(chain).admit(sid, a3, WORKER), acct(chain, AUTH))
    (ev,) = chain.events(r, "MemberActivated")
    assert (ev["args"]["roleId"], ev["args"]["phase"]) == (WORKER, 0)
    assert status(chain, sid, a3) == (M_ACTIVE, 0)
    assert counts(chain, sid) == (1, 0, 0)
    assert tuple(reg(chain).roleCount(sid, WORKER).call()) == (1, 0)
    assert tuple(reg(chain).acceptedCharterOf(sid, a3).call()) == (CHARTER_1, 1, 1)


def test_admit_then_accept(chain):
    sid = formed(chain)
    a3 = acct(chain, 3)
    chain.fails(reg(chain).acceptCharter(sid, CHARTER_1), a3, "SAI_NoSeat")
    r = chain.tx(reg(chain).admit(sid, a3, COORDINATOR), acct(chain, AUTH))
    assert len(chain.events(r, "MemberAdmitted")) == 1
    assert status(chain, sid, a3) == (M_CANDIDATE, 0)
    chain.fails(reg(chain).acceptCharter(sid, CHARTER_2), a3, "SAI_StaleCharter")
    chain.tx(reg(chain).acceptCharter(sid, CHARTER_1), a3)
    assert status(chain, sid, a3) == (M_ACTIVE, 0)
    m = member_record(chain, sid, a3)
    assert (m["admittedPhase"], m["carriedPhase"], m["roleId"]) == (0, 0, COORDINATOR)


def test_stale_hash_refused_on_join_and_apply(chain):
    sid = formed(chain, phases=[phase(boundary=OPEN)])
    chain.fails(reg(chain).applyToJoin(sid, WORKER, CHARTER_2), acct(chain, 3), "SAI_StaleCharter")
    chain.fails(reg(chain).join(sid, WORKER, CHARTER_2), acct(chain, 3), "SAI_StaleCharter")


def test_join_open_self_join(chain):
    sid = formed(chain, phases=[phase(boundary=OPEN)])
    chain.tx(reg(chain).join(sid, WORKER, CHARTER_1), acct(chain, 3))
    assert status(chain, sid, acct(chain, 3)) == (M_ACTIVE, 0)
    # not selfJoin: join refused, applyToJoin + admit works
    chain.fails(reg(chain).join(sid, COORDINATOR, CHARTER_1), acct(chain, 4), "SAI_Gated")
    seat(chain, sid, acct(chain, 4), COORDINATOR)
    assert status(chain, sid, acct(chain, 4)) == (M_ACTIVE, 0)


def test_join_refused_in_gated_phase(chain):
    sid = formed(chain)
    chain.fails(reg(chain).join(sid, WORKER, CHARTER_1), acct(chain, 3), "SAI_Gated")


def test_closed_boundary_refuses_admission(chain):
    sid = formed(chain, phases=[phase(boundary=CLOSED)])
    chain.fails(reg(chain).applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 3),
                "SAI_BoundaryClosed")
    chain.fails(reg(chain).admit(sid, acct(chain, 3), WORKER), acct(chain, AUTH),
                "SAI_BoundaryClosed")


def test_input_window(chain):
    spec = standard_spec(chain, phases=[phase(boundary=OPEN, input_window=100)], min_members=1,
                         roles=[role(WORKER, 1, 0, self_join=True)])
    sid = chain.form(spec, acct(chain, JUDGE), acct(chain, 0))
    # FORMING: the recruitment window alone bounds recruiting
    assert chain.view(reg(chain).inputOpen(sid), at=chain.now + 500) is True
    chain.tx(reg(chain).join(sid, WORKER, CHARTER_1), acct(chain, 3), at=chain.now + 500)
    chain.tx(reg(chain).activate(sid), acct(chain, 9))
    start = swarm_record(chain, sid)["phaseStartedAt"]
    assert chain.view(reg(chain).inputOpen(sid), at=start + 100) is True
    assert chain.view(reg(chain).inputOpen(sid), at=start + 101) is False
    chain.fails(reg(chain).join(sid, WORKER, CHARTER_1), acct(chain, 4), "SAI_InputClosed",
                at=start + 101)
    chain.tx(reg(chain).join(sid, WORKER, CHARTER_1), acct(chain, 4), at=start + 100)


def test_unknown_and_initiator_roles_refused(chain):
    spec = standard_spec(chain)
    spec.roles.append(role(INITIATOR_ROLE))
    sid = chain.form(spec, acct(chain, JUDGE), acct(chain, 0))
    chain.fails(reg(chain).applyToJoin(sid, kid("sai.role.observer"), CHARTER_1), acct(chain, 3),
                "SAI_UnknownRole")
    chain.fails(reg(chain).applyToJoin(sid, INITIATOR_ROLE, CHARTER_1), acct(chain, 3),
                "SAI_InitiatorRoleSeated")
    chain.fails(reg(chain).admit(sid, acct(chain, 0), INITIATOR_ROLE), acct(chain, AUTH),
                "SAI_InitiatorRoleSeated")


def test_role_maximum_counts_active_and_suspended_not_candidates(chain):
    sid = formed(chain)
    r = reg(chain)
    chain.tx(r.applyToJoin(sid, COORDINATOR, CHARTER_1), acct(chain, 3))
    chain.tx(r.applyToJoin(sid, COORDINATOR, CHARTER_1), acct(chain, 4))  # candidates: no seat
    chain.tx(r.admit(sid, acct(chain, 3), COORDINATOR), acct(chain, AUTH))
    chain.fails(r.admit(sid, acct(chain, 4), COORDINATOR), acct(chain, AUTH), "SAI_RoleFull")
    chain.tx(r.suspendMember(sid, acct(chain, 3)), acct(chain, AUTH))  # suspended keeps the seat
    chain.fails(r.admit(sid, acct(chain, 4), COORDINATOR), acct(chain, AUTH), "SAI_RoleFull")
    chain.tx(r.remove(sid, acct(chain, 3)), acct(chain, AUTH))
    chain.tx(r.admit(sid, acct(chain, 4), COORDINATOR), acct(chain, AUTH))
    assert tuple(r.roleCount(sid, COORDINATOR).call()) == (1, 0)


def test_swarm_maximum(chain):
    sid = formed(chain, max_members=3)
    for i, rid in ((3, WORKER), (4, WORKER), (5, COORDINATOR)):
        seat(chain, sid, acct(chain, i), rid)
    chain.fails(reg(chain).applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 6), "SAI_SwarmFull")


def test_one_seat_per_account(chain):
    sid = formed(chain)
    r = reg(chain)
    seat(chain, sid, acct(chain, 3))
    chain.fails(r.applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 3), "SAI_SeatTaken")
    chain.fails(r.admit(sid, acct(chain, 3), COORDINATOR), acct(chain, AUTH), "SAI_SeatTaken")
    chain.tx(r.applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 4))
    chain.fails(r.admit(sid, acct(chain, 4), COORDINATOR), acct(chain, AUTH), "SAI_RoleMismatch")
    chain.tx(r.admit(sid, acct(chain, 6), WORKER), acct(chain, AUTH))
    chain.fails(r.admit(sid, acct(chain, 6), WORKER), acct(chain, AUTH), "SAI_SeatTaken")
    chain.fails(r.admit(sid, acct(chain, 7), WORKER), acct(chain, 3), "SAI_NotAuthorized")


def test_eligibility_evaluated_when_admission_completes(chain):
    roles = [role(WORKER, 2, 3, chain.allowlist.address), role(COORDINATOR, 1, 1)]
    sid = formed(chain, roles=roles)
    r, owner = reg(chain), acct(chain, 0)
    a3, a4 = acct(chain, 3), acct(chain, 4)
    chain.tx(r.applyToJoin(sid, WORKER, CHARTER_1), a3)
    chain.fails(r.admit(sid, a3, WORKER), acct(chain, AUTH), "SAI_Ineligible")
    chain.tx(chain.allowlist.functions.setAllowed(a3, True), owner)
    chain.tx(r.admit(sid, a3, WORKER), acct(chain, AUTH))
    assert status(chain, sid, a3) == (M_ACTIVE, 0)
    # authority side first while eligible; eligibility lapses; completion is refused
    chain.tx(chain.allowlist.functions.setAllowed(a4, True), owner)
    chain.tx(r.admit(sid, a4, WORKER), acct(chain, AUTH))
    chain.tx(chain.allowlist.functions.setAllowed(a4, False), owner)
    chain.fails(r.acceptCharter(sid, CHARTER_1), a4, "SAI_Ineligible")


def test_material_amendment_holds_pending_completion(chain):
    sid = formed(chain)
    r, a3 = reg(chain), acct(chain, 3)
    chain.tx(r.applyToJoin(sid, WORKER, CHARTER_1), a3)
    chain.tx(r.amend(sid, CHARTER_2, "v2", ZERO32, kid("commitment v2"), False), acct(chain, AUTH))
    chain.tx(r.admit(sid, a3, WORKER), acct(chain, AUTH))
    assert status(chain, sid, a3) == (M_CANDIDATE, 0)  # accepted commitment v1 only
    chain.fails(r.acceptCharter(sid, CHARTER_1), a3, "SAI_StaleCharter")
    chain.tx(r.acceptCharter(sid, CHARTER_2), a3)
    assert status(chain, sid, a3) == (M_ACTIVE, 0)
    assert tuple(r.acceptedCharterOf(sid, a3).call()) == (CHARTER_2, 2, 2)


# --------------------------------------------------------------------------- §6.3


def test_leave_candidate_member_suspended(chain):
    sid = populated(chain)
    r = reg(chain)
    chain.tx(r.applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 6))
    chain.tx(r.suspendMember(sid, acct(chain, 4)), acct(chain, AUTH))
    for i in (6, 3, 4):  # candidate, active, suspended
        receipt = chain.tx(r.leave(sid), acct(chain, i))
        (ev,) = chain.events(receipt, "MemberExited")
        assert (ev["args"]["reason"], ev["args"]["onAmendment"]) == (X_LEFT, False)
        assert status(chain, sid, acct(chain, i)) == (M_EXITED, X_LEFT)
        assert r.seatEpochOf(sid, acct(chain, i)).call() == 1
    chain.fails(r.leave(sid), acct(chain, 3), "SAI_NoSeat")
    chain.fails(r.leave(sid), acct(chain, 8), "SAI_NoSeat")
    assert counts(chain, sid) == (1, 0, 0)
    # re-admission opens a new seat; the epoch counts closed seats only
    chain.tx(r.applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 3))
    assert status(chain, sid, acct(chain, 3)) == (M_CANDIDATE, 0)
    assert r.seatEpochOf(sid, acct(chain, 3)).call() == 1


def test_suspend_member_and_reinstate_on_judgment(chain):
    sid = populated(chain)
    r, a3 = reg(chain), acct(chain, 3)
    chain.fails(r.suspendMember(sid, a3), acct(chain, 4), "SAI_NotAuthorized")
    receipt = chain.tx(r.suspendMember(sid, a3), acct(chain, AUTH))
    (ev,) = chain.events(receipt, "MemberSuspended")
    assert ev["args"]["cause"] == C_AUTHORITY
    assert status(chain, sid, a3) == (M_SUSPENDED, 0)
    assert counts(chain, sid) == (2, 1, 0)
    assert r.rosterMet(sid).call() is False  # only ACTIVE members count (§6.5)
    chain.fails(r.reinstate(sid, acct(chain, 4)), acct(chain, AUTH), "SAI_NotSuspended")
    chain.fails(r.reinstate(sid, a3), acct(chain, 4), "SAI_NotAuthorized")
    chain.tx(r.reinstate(sid, a3), acct(chain, AUTH))
    assert status(chain, sid, a3) == (M_ACTIVE, 0)
    assert r.rosterMet(sid).call() is True
    chain.tx(r.applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 6))
    chain.fails(r.suspendMember(sid, acct(chain, 6)), acct(chain, AUTH), "SAI_NotMember")


def test_remove_candidate_by_admit_member_by_remove(chain):
    admitter, remover = acct(chain, AUTH), acct(chain, 8)
    auths = authorities(admitter, REMOVE=(A_ADDRESS, remover, ZERO32))
    sid = populated(chain, standard_spec(chain, authorities=auths))
    r = reg(chain)
    chain.tx(r.applyToJoin(sid, WORKER, CHARTER_1), acct(chain, 6))
    chain.fails(r.remove(sid, acct(chain, 6)), remover, "SAI_NotAuthorized")
    chain.tx(r.remove(sid, acct(chain, 6)), admitter)
    assert status(chain, sid, acct(chain, 6)) == (M_EXITED, X_REMOVED)
    chain.fails(r.remove(sid, acct(chain, 3)), admitter, "SAI_NotAuthorized")
    chain.tx(r.remove(sid, acct(chain, 3)), remover)
    assert status(chain, sid, acct(chain, 3)) == (M_EXITED, X_REMOVED)
    assert r.seatEpochOf(sid, acct(chain, 3)).call() == 1
    chain.fails(r.remove(sid, acct(chain, 3)), remover, "SAI_NoSeat")


def test_substitute_in_closed_phase(chain):
    spec = standard_spec(chain, phases=[phase(), phase("closed", boundary=CLOSED,
                                                       admission=INHERIT)])
    sid = populated(chain, spec)
    r, admitter = reg(chain), acct(chain, AUTH)
    a3, a6 = acct(chain, 3), acct(chain, 6)
    chain.tx(r.advance(sid, [], []), admitter)
    chain.fails(r.applyToJoin(sid, WORKER, CHARTER_1), a6, "SAI_BoundaryClosed")
    chain.fails(r.substitute(sid, a3, a6), acct(chain, 4), "SAI_NotAuthorized")
    chain.fails(r.substitute(sid, a3, acct(chain, 4)), admitter, "SAI_SuccessorHasSeat")
    chain.fails(r.substitute(sid, a6, acct(chain, 7)), admitter, "SAI_NotMember")
    receipt = chain.tx(r.substitute(sid, a3, a6), admitter)
    (ev,) = chain.events(receipt, "MemberSubstituted")
    assert (ev["args"]["previous"], ev["args"]["next"], ev["args"]["roleId"]) == (a3, a6, WORKER)
    assert status(chain, sid, a3) == (M_EXITED, X_REPLACED)
    assert r.seatEpochOf(sid, a3).call() == 1
    assert status(chain, sid, a6) == (M_CANDIDATE, 0)
    assert member_record(chain, sid, a6)["substituted"] is True
    chain.tx(r.acceptCharter(sid, CHARTER_1), a6)  # exempt from the CLOSED boundary
    assert status(chain, sid, a6) == (M_ACTIVE, 0)
    assert member_record(chain, sid, a6)["admittedPhase"] == 1
    assert tuple(r.roleCount(sid, WORKER).call()) == (2, 0)


def test_substitute_checks_successor_eligibility(chain):
    roles = [role(WORKER, 2, 3, chain.allowlist.address), role(COORDINATOR, 1, 1)]
    sid = formed(chain, roles=roles)
    allow = chain.allowlist.functions.setAllowed
    chain.tx(allow(acct(chain, 3), True), acct(chain, 0))
    seat(chain, sid, acct(chain, 3))
    chain.fails(reg(chain).substitute(sid, acct(chain, 3), acct(chain, 6)), acct(chain, AUTH),
                "SAI_Ineligible")


# --------------------------------------------------------------------------- §6.4 challenge


def module_swarm(chain, module: str) -> bytes:
    """The standard swarm whose workers' role binds ``module``; workers 3 and 4 are allowed."""
    for i in (3, 4):
        chain.tx(chain.allowlist.functions.setAllowed(acct(chain, i), True), acct(chain, 0))
        chain.tx(chain.catching.functions.setAllowed(acct(chain, i), True), acct(chain, 0))
    roles = [role(WORKER, 2, 3, module), role(COORDINATOR, 1, 1)]
    return populated(chain, standard_spec(chain, roles=roles))


def challenge_result(chain, sid, account, gas=8_000_000):
    reply = chain.eth_call(reg(chain).challenge(sid, account), acct(chain, 9), gas=gas)
    assert "error" not in reply, reply
    word = bytes.fromhex(reply["result"][2:])
    return bool(int.from_bytes(word[:32], "big")), bool(int.from_bytes(word[32:], "big"))


def test_challenge_evaluated_true_changes_nothing(chain):
    sid = module_swarm(chain, chain.allowlist.address)
    a3 = acct(chain, 3)
    assert challenge_result(chain, sid, a3) == (True, True)
    receipt = chain.tx(reg(chain).challenge(sid, a3), acct(chain, 9))
    (ev,) = chain.events(receipt, "Challenged")
    assert ev["args"]["eligible"] is True
    assert status(chain, sid, a3) == (M_ACTIVE, 0)


def test_challenge_false_suspends_true_reinstates(chain):
    sid = module_swarm(chain, chain.allowlist.address)
    a3, owner, anyone = acct(chain, 3), acct(chain, 0), acct(chain, 9)
    chain.tx(chain.allowlist.functions.setAllowed(a3, False), owner)
    assert challenge_result(chain, sid, a3) == (True, False)
    receipt = chain.tx(reg(chain).challenge(sid, a3), anyone)
    (ev,) = chain.events(receipt, "MemberSuspended")
    assert (ev["args"]["cause"], ev["args"]["by"]) == (C_INELIGIBLE, anyone)
    assert status(chain, sid, a3) == (M_SUSPENDED, 0)
    assert member_record(chain, sid, a3)["suspensionCause"] == C_INELIGIBLE
    assert reg(chain).rosterMet(sid).call() is False
    # the REINSTATE authority re-evaluates: still false -> refused
    chain.fails(reg(chain).reinstate(sid, a3), acct(chain, AUTH), "SAI_Ineligible")
    chain.tx(chain.allowlist.functions.setAllowed(a3, True), owner)
    assert challenge_result(chain, sid, a3) == (True, True)
    receipt = chain.tx(reg(chain).challenge(sid, a3), a3)  # the member itself, on evidence
    assert len(chain.events(receipt, "MemberReinstated")) == 1
    assert status(chain, sid, a3) == (M_ACTIVE, 0)
    assert reg(chain).rosterMet(sid).call() is True


@pytest.mark.parametrize("mode", [1, 2], ids=["reverting", "non-boolean"])
def test_challenge_unevaluable_module(chain, mode):
    sid = module_swarm(chain, chain.allowlist.address)
    a3 = acct(chain, 3)
    chain.tx(chain.allowlist.functions.setMode(mode), acct(chain, 0))
    before = swarm_record(chain, sid)["revision"]
    assert challenge_result(chain, sid, a3) == (False, False)
    receipt = chain.tx(reg(chain).challenge(sid, a3), acct(chain, 9))  # does not revert
    assert receipt["logs"] == []  # no Challenged, no Changed
    assert swarm_record(chain, sid)["revision"] == before
    assert status(chain, sid, a3) == (M_ACTIVE, 0)


def test_challenge_gas_starved_catching_module_is_unevaluable(chain):
    sid = module_swarm(chain, chain.catching.address)
    a3 = acct(chain, 3)
    module = chain.catching.functions.isEligible(sid, WORKER, a3)
    # the module itself answers false when starved and true with ample gas ...
    assert module.call({"gas": STARVED_GAS}) is False
    assert module.call({"gas": 8_000_000}) is True
    # ... and the registry reads the starved false as no answer (§6.4 one-eighth rule)
    assert challenge_result(chain, sid, a3, gas=STARVED_GAS) == (False, False)
    before = swarm_record(chain, sid)["revision"]
    receipt = chain.tx(reg(chain).challenge(sid, a3), acct(chain, 9), gas=STARVED_GAS)
    assert receipt["logs"] == []
    assert status(chain, sid, a3) == (M_ACTIVE, 0)
    assert swarm_record(chain, sid)["revision"] == before
    # with ample gas the honest answer stands
    assert challenge_result(chain, sid, a3) == (True, True)


def test_challenge_catching_module_honest_false_with_ample_gas(chain):
    sid = module_swarm(chain, chain.catching.address)
    a3 = acct(chain, 3)
    chain.tx(chain.catching.functions.setAllowed(a3, False), acct(chain, 0))
    assert challenge_result(chain, sid, a3) == (True, False)
    chain.tx(reg(chain).challenge(sid, a3), acct(chain, 9))
    assert status(chain, sid, a3) == (M_SUSPENDED, 0)


def test_challenge_refusals(chain):
    sid = module_swarm(chain, chain.allowlist.address)
    r, anyone = reg(chain), acct(chain, 9)
    chain.fails(r.challenge(sid, acct(chain, 5)), anyone, "SAI_NoModule")  # coordinator: none
    chain.tx(r.suspendMember(sid, acct(chain, 3)), acct(chain, AUTH))  # SUSPENDED(AUTHORITY)
    chain.fails(r.challenge(sid, acct(chain, 3)), anyone, "SAI_NotMember")
    chain.fails(r.challenge(sid, acct(chain, 8)), anyone, "SAI_NotMember")


def test_expel_after_grace_re_evaluates(chain):
    sid = module_swarm(chain, chain.allowlist.address)
    r, owner, anyone = reg(chain), acct(chain, 0), acct(chain, 9)
    a3, a4 = acct(chain, 3), acct(chain, 4)
    chain.fails(r.expel(sid, a3), anyone, "SAI_NotSuspended")
    for a in (a3, a4):
        chain.tx(chain.allowlist.functions.setAllowed(a, False), owner)
        chain.tx(r.challenge(sid, a), anyone)
    t3 = member_record(chain, sid, a3)["suspendedAt"]
    t4 = member_record(chain, sid, a4)["suspendedAt"]
    grace_end = max(t3, t4) + 300  # ineligibleGrace
    chain.fails(r.expel(sid, a3), anyone, "SAI_GraceRunning", at=t3 + 300)
    # unevaluable: reverts, nothing decided
    chain.tx(chain.allowlist.functions.setMode(1), owner, at=grace_end + 1)
    chain.fails(r.expel(sid, a3), anyone, "SAI_Unevaluable")
    chain.tx(chain.allowlist.functions.setMode(0), owner)
    # evaluated false: EXITED(INELIGIBLE)
    receipt = chain.tx(r.expel(sid, a3), anyone)
    (ev,) = chain.events(receipt, "MemberExited")
    assert ev["args"]["reason"] == X_INELIGIBLE
    assert status(chain, sid, a3) == (M_EXITED, X_INELIGIBLE)
    assert r.seatEpochOf(sid, a3).call() == 1
    # evaluated true: reinstated instead of expelled
    chain.tx(chain.allowlist.functions.setAllowed(a4, True), owner)
    chain.tx(r.expel(sid, a4), anyone)
    assert status(chain, sid, a4) == (M_ACTIVE, 0)
    assert counts(chain, sid) == (2, 0, 0)
    # §5.4: the reverted expel left no trace; every other call produced exactly one Changed
    # form, 3 seats x 2, activate, 2 challenges, 2 expels = 12
    assert swarm_record(chain, sid)["revision"] == len(changed_logs(chain, sid)) == 12


def test_expel_gas_starved_is_unevaluable(chain):
    sid = module_swarm(chain, chain.catching.address)
    a3 = acct(chain, 3)
    chain.tx(chain.catching.functions.setAllowed(a3, False), acct(chain, 0))
    chain.tx(reg(chain).challenge(sid, a3), acct(chain, 9))
    at = member_record(chain, sid, a3)["suspendedAt"] + 301
    chain.fails(reg(chain).expel(sid, a3), acct(chain, 9), "SAI_Unevaluable", at=at,
                gas=STARVED_GAS)
    chain.tx(reg(chain).expel(sid, a3), acct(chain, 9), at=at)  # ample gas: the false stands
    assert status(chain, sid, a3) == (M_EXITED, X_INELIGIBLE)


# --------------------------------------------------------------------------- §6.5


def test_roster_met_counts_only_active(chain):
    sid = formed(chain)
    r = reg(chain)
    assert r.rosterMet(sid).call() is False
    seat(chain, sid, acct(chain, 3))
    seat(chain, sid, acct(chain, 4))
    chain.tx(r.applyToJoin(sid, COORDINATOR, CHARTER_1), acct(chain, 5))
    assert counts(chain, sid) == (2, 0, 1)
    assert r.rosterMet(sid).call() is False  # coordinator min 1 not met by a candidate
    chain.tx(r.admit(sid, acct(chain, 5), COORDINATOR), acct(chain, AUTH))
    assert r.rosterMet(sid).call() is True
    chain.tx(r.suspendMember(sid, acct(chain, 4)), acct(chain, AUTH))
    assert r.rosterMet(sid).call() is False  # worker min 2, minMembers 3
    assert tuple(r.roleCount(sid, WORKER).call()) == (1, 1)
    assert status(chain, sid, acct(chain, 8)) == (M_NONE, 0)
