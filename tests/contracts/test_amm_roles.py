"""AMM §Roles and authorization and §Policy and floor validity: enrolment, operators,
controller rights (fixed at appointment, only shrinking), policy/floor/demand validation."""

from __future__ import annotations

import pytest
from amm_helpers import (
    ENROLLED_AT,
    PERM_POLICY,
    PERM_PULSE,
    PERM_REPORT,
    PRE_COMMITMENTS,
    PRE_ROOT,
    RIGHT_DEMAND,
    RIGHT_FLOOR,
    RIGHT_REVOKE_OPERATORS,
    ZERO_ADDRESS,
    cycle,
    enroll,
    error_data,
    events,
    floor,
    plain,
    policy,
    registry_fixtures,
)

T = ENROLLED_AT


deployed, chain, reg = registry_fixtures()


@pytest.fixture
def accts(chain):
    """subject, controller, operator, stranger."""
    return chain.accounts[1], chain.accounts[2], chain.accounts[3], chain.accounts[4]


def head(reg, subject):
    return plain(reg.functions.headOf(subject).call())


def test_enrolment_events_and_no_second_enrolment(chain, reg, accts):
    subject, controller, _, _ = accts
    receipt = enroll(chain, reg, subject, T, controller=controller, rights=RIGHT_DEMAND)
    (ev,) = events(reg, "Enrolled", receipt)
    assert (ev["subject"], ev["controller"], ev["controllerRights"], ev["root"],
            ev["enrolledAt"]) == (subject, controller, RIGHT_DEMAND, PRE_ROOT, T)
    (pu,) = events(reg, "PolicyUpdated", receipt)
    assert (pu["version"], pu["effectiveFrom"]) == (1, T)
    assert head(reg, subject)[:3] == [True, controller, RIGHT_DEMAND]
    again = reg.functions.enroll(list(PRE_COMMITMENTS), policy(), ZERO_ADDRESS, 0)
    assert chain.revert_data(again, subject) == error_data("AlreadyEnrolled(address)", subject)


@pytest.mark.parametrize("bad", [
    policy(supported=0),
    policy(supported=0x10, required=0),
    policy(supported=0x03, required=0x07),
    policy(triggers=0),
    policy(triggers=0x10),
    policy(disclosure=3),
    policy(intervals=(86400, 0, 1, 1)),
], ids=["no-layers", "layer-4", "required-not-supported", "no-trigger", "trigger-4",
        "disclosure-3", "required-without-interval"])
def test_invalid_policy_rejected(chain, reg, accts, bad):
    subject = accts[0]
    fn = reg.functions.enroll(list(PRE_COMMITMENTS), bad, ZERO_ADDRESS, 0)
    assert chain.revert_data(fn, subject) == error_data("InvalidPolicy()")


@pytest.mark.parametrize("who,rights", [("self", 1), ("none", 1), ("c", 8)])
def test_invalid_controller_at_enrolment(chain, reg, accts, who, rights):
    subject, controller, _, _ = accts
    target = {"self": subject, "none": ZERO_ADDRESS, "c": controller}[who]
    fn = reg.functions.enroll(list(PRE_COMMITMENTS), policy(), target, rights)
    assert chain.revert_data(fn, subject) == error_data("InvalidController()")


def test_operator_permissions(chain, reg, accts):
    subject, _, operator, stranger = accts
    enroll(chain, reg, subject, T)
    receipt = chain.transact(reg.functions.setOperator(operator, PERM_PULSE | PERM_POLICY),
                             subject, T + 10)
    (ev,) = events(reg, "OperatorSet", receipt)
    assert (ev["operator"], ev["permissions"], ev["by"]) == (operator, 6, subject)
    assert reg.functions.operatorPermissions(subject, operator).call() == 6
    chain.transact(reg.functions.pulse(subject, 0), operator, T + 20)
    chain.transact(reg.functions.setPolicy(subject, policy(pulse_interval=0)), operator, T + 30)
    assert head(reg, subject)[3] == 2
    # a pulse/policy operator cannot report; a stranger can do nothing
    r = cycle(1, PRE_ROOT, PRE_COMMITMENTS, started=T + 40, ended=T + 50, policy_version=2)
    assert chain.revert_data(reg.functions.report(subject, r), operator, T + 60) == \
        error_data("Unauthorized(address)", operator)
    for fn in (reg.functions.pulse(subject, 0), reg.functions.setPolicy(subject, policy())):
        assert chain.revert_data(fn, stranger) == error_data("Unauthorized(address)", stranger)
    # PERM_REPORT alone also allows pulses (AMM §Pulse)
    chain.transact(reg.functions.setOperator(stranger, PERM_REPORT), subject, T + 70)
    chain.transact(reg.functions.pulse(subject, 0), stranger, T + 80)
    assert head(reg, subject)[6] == 2


def test_operator_revocation_by_subject_and_entitled_controller(chain, reg, accts):
    subject, controller, operator, stranger = accts
    enroll(chain, reg, subject, T, controller=controller, rights=RIGHT_DEMAND)
    chain.transact(reg.functions.setOperator(operator, PERM_REPORT), subject, T + 10)
    # a controller without RIGHT_REVOKE_OPERATORS cannot revoke, nor can a stranger
    for who in (controller, stranger):
        assert chain.revert_data(reg.functions.revokeOperator(subject, operator), who) == \
            error_data("Unauthorized(address)", who)
    chain.transact(reg.functions.revokeOperator(subject, operator), subject, T + 20)
    assert reg.functions.operatorPermissions(subject, operator).call() == 0


def test_controller_with_revoke_right_revokes_operator(chain, reg, accts):
    subject, controller, operator, _ = accts
    enroll(chain, reg, subject, T, controller=controller, rights=RIGHT_REVOKE_OPERATORS)
    chain.transact(reg.functions.setOperator(operator, PERM_REPORT), subject, T + 10)
    receipt = chain.transact(reg.functions.revokeOperator(subject, operator), controller, T + 20)
    (ev,) = events(reg, "OperatorSet", receipt)
    assert (ev["permissions"], ev["by"]) == (0, controller)
    assert reg.functions.operatorPermissions(subject, operator).call() == 0


def test_controller_cannot_write_records_or_grant_itself(chain, reg, accts):
    subject, controller, _, _ = accts
    enroll(chain, reg, subject, T, controller=controller, rights=7)
    assert chain.revert_data(reg.functions.pulse(subject, 0), controller) == \
        error_data("Unauthorized(address)", controller)
    assert chain.revert_data(reg.functions.setOperator(controller, PERM_REPORT), subject) == \
        error_data("InvalidOperator()")
    assert chain.revert_data(reg.functions.setOperator(controller, 1), controller) == \
        error_data("NotEnrolled(address)", controller)


def test_controller_rights_only_shrink(chain, reg, accts):
    subject, controller, _, stranger = accts
    enroll(chain, reg, subject, T, controller=controller, rights=RIGHT_FLOOR | RIGHT_DEMAND)
    # cannot grow its rights, neither in place nor on transfer
    for target in (controller, stranger):
        fn = reg.functions.setController(subject, target, 7)
        assert chain.revert_data(fn, controller) == error_data("ControllerRightsNotSubset()")
    # a stranger cannot take the position
    assert chain.revert_data(reg.functions.setController(subject, stranger, 1), stranger) == \
        error_data("Unauthorized(address)", stranger)
    # shrink, then transfer a subset, then the new controller renounces
    chain.transact(reg.functions.setController(subject, controller, RIGHT_DEMAND), controller,
                   T + 10)
    receipt = chain.transact(reg.functions.setController(subject, stranger, RIGHT_DEMAND),
                             controller, T + 20)
    (ev,) = events(reg, "ControllerChanged", receipt)
    assert (ev["previousController"], ev["newController"], ev["rights"]) == (
        controller, stranger, RIGHT_DEMAND)
    assert chain.revert_data(reg.functions.setFloor(subject, floor(0)), stranger) == \
        error_data("Unauthorized(address)", stranger)
    chain.transact(reg.functions.setController(subject, ZERO_ADDRESS, 0), stranger, T + 30)
    assert head(reg, subject)[1:3] == [ZERO_ADDRESS, 0]
    # with no controller the subject may appoint one with any rights, never itself
    assert chain.revert_data(reg.functions.setController(subject, subject, 1), subject) == \
        error_data("InvalidController()")
    chain.transact(reg.functions.setController(subject, controller, 7), subject, T + 40)
    assert head(reg, subject)[1:3] == [controller, 7]


@pytest.mark.parametrize("bad", [floor(0x10), floor(0x01, intervals=(0, 5, 5, 5))],
                         ids=["layer-4", "required-without-interval"])
def test_invalid_floor_rejected(chain, reg, accts, bad):
    subject, controller, _, _ = accts
    enroll(chain, reg, subject, T, controller=controller, rights=RIGHT_FLOOR)
    assert chain.revert_data(reg.functions.setFloor(subject, bad), controller, T + 10) == \
        error_data("InvalidFloor()")


def test_demand_validation(chain, reg, accts):
    subject, controller, _, _ = accts
    enroll(chain, reg, subject, T, controller=controller, rights=RIGHT_FLOOR)
    # RIGHT_DEMAND is required
    assert chain.revert_data(reg.functions.demand(subject, 1, T + 999), controller, T + 10) == \
        error_data("Unauthorized(address)", controller)
    chain.transact(reg.functions.setController(subject, controller, 0), controller, T + 20)
    chain.transact(reg.functions.setController(subject, ZERO_ADDRESS, 0), controller, T + 30)
    chain.transact(reg.functions.setController(subject, controller, RIGHT_DEMAND), subject,
                   T + 40)
    for mask, due in ((0, T + 999), (0x10, T + 999), (1, T + 50)):
        assert chain.revert_data(reg.functions.demand(subject, mask, due), controller, T + 50) \
            == error_data("InvalidDemand()")
    receipt = chain.transact(reg.functions.demand(subject, 0x05, T + 999), controller, T + 60)
    (ev,) = events(reg, "Demanded", receipt)
    assert (ev["layerMask"], ev["dueBy"], ev["by"]) == (0x05, T + 999, controller)
    assert [plain(reg.functions.demandOf(subject, i).call()) for i in range(4)] == [
        [T + 60, T + 999], [0, 0], [T + 60, T + 999], [0, 0]]
