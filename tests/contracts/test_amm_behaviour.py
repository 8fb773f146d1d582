"""AMM §Behavioral cases, one test each, against a deployed AgentMeditationRegistry.

Expected deadlines are hand computed from §Status derivation: deadline = anchor + maxInterval
(anchor = last reported completion, or the enrolment time), lowered to dueBy by a demand.
The policy is the worked example's: intervals 86400 / 604800 / 2592000 / 7776000, due window
3600, pulse interval 21600.
"""

from __future__ import annotations

import pytest
from amm_helpers import (
    DUE,
    ENROLLED_AT,
    FRESH,
    INTERVALS,
    OVERDUE,
    PARTIAL,
    POST_COMMITMENTS,
    POST_ROOT,
    PRE_COMMITMENTS,
    PRE_ROOT,
    PRESENT,
    RIGHT_DEMAND,
    RIGHT_FLOOR,
    SILENT,
    ZERO32,
    commitment,
    cycle,
    enroll,
    error_data,
    events,
    floor,
    plain,
    policy,
    registry_fixtures,
    state_root,
)

T = ENROLLED_AT


deployed, chain, reg = registry_fixtures()


@pytest.fixture
def subject(chain):
    return chain.accounts[1]


@pytest.fixture
def controller(chain):
    return chain.accounts[2]


def status(chain, reg, subject, layer, ts):
    return tuple(chain.view_at(reg.functions.layerStatus(subject, layer), ts))


def test_pulse_changes_only_signal_count_and_hint(chain, reg, subject):
    enroll(chain, reg, subject, T)
    before = [plain(reg.functions.checkpointOf(subject, i).call()) for i in range(4)]
    receipt = chain.transact(reg.functions.pulse(subject, T + 5000), subject, T + 1000)
    (ev,) = events(reg, "Pulsed", receipt)
    assert (ev["seq"], ev["recordedAt"], ev["nextPlannedAt"], ev["submitter"]) == (
        1, T + 1000, T + 5000, subject)
    assert events(reg, "CycleRecorded", receipt) == []
    head = plain(reg.functions.headOf(subject).call())
    assert head[5:] == [1, 1, PRE_ROOT, T, T + 1000, T + 5000]  # version, count, root, ...
    assert [plain(reg.functions.checkpointOf(subject, i).call()) for i in range(4)] == before
    assert reg.functions.rootAt(subject, 2).call() == ZERO32
    # a subject that only pulses becomes OVERDUE at its deadline (layer 0: T + 86400)
    for k in range(1, 5):
        chain.transact(reg.functions.pulse(subject, 0), subject, T + k * 20000)
    assert status(chain, reg, subject, 0, T + 86399) == (DUE, T + 86400, True)
    assert status(chain, reg, subject, 0, T + 86400) == (OVERDUE, T + 86400, True)
    assert plain(reg.functions.headOf(subject).call())[6] == 5  # five pulses counted


def test_partial_cycle_moves_only_completed_deadlines(chain, reg, subject):
    enroll(chain, reg, subject, T)
    r = cycle(1, PRE_ROOT, PRE_COMMITMENTS, layer_mask=0x0F, completed=0x03, outcome=PARTIAL,
              started=T + 100, ended=T + 200)
    chain.transact(reg.functions.report(subject, r), subject, T + 300)
    assert status(chain, reg, subject, 0, T + 400) == (FRESH, T + 200 + INTERVALS[0], False)
    assert reg.functions.layerStatus(subject, 1).call() == [FRESH, T + 200 + INTERVALS[1], False]
    assert reg.functions.layerStatus(subject, 2).call() == [FRESH, T + INTERVALS[2], True]
    assert reg.functions.layerStatus(subject, 3).call() == [FRESH, T + INTERVALS[3], True]
    # nothing changed, so the state version did not advance
    assert plain(reg.functions.headOf(subject).call())[5] == 1


def test_never_completed_layer_is_judged_from_enrolment(chain, reg, subject):
    enroll(chain, reg, subject, T)
    assert status(chain, reg, subject, 3, T + 10) == (FRESH, T + INTERVALS[3], True)
    # lengthening the interval recomputes from the same anchor (the enrolment), not from now
    longer = list(INTERVALS)
    longer[3] = 2 * INTERVALS[3]
    chain.transact(reg.functions.setPolicy(subject, policy(intervals=longer)), subject, T + 1000)
    assert status(chain, reg, subject, 3, T + 1010) == (FRESH, T + 2 * INTERVALS[3], True)
    # only a completion moves the anchor
    r = cycle(1, PRE_ROOT, PRE_COMMITMENTS, layer_mask=0x08, completed=0x08, policy_version=2,
              started=T + 2000, ended=T + 2100)
    chain.transact(reg.functions.report(subject, r), subject, T + 2200)
    assert reg.functions.layerStatus(subject, 3).call() == [FRESH, T + 2100 + 2 * INTERVALS[3],
                                                            False]


def test_late_submission_keeps_reported_completion_time(chain, reg, subject):
    enroll(chain, reg, subject, T)
    now = T + 100_000
    ended = now - 20 * 3600  # the cycle ended 20 hours before it is submitted
    r = cycle(1, PRE_ROOT, PRE_COMMITMENTS, layer_mask=0x01, completed=0x01,
              started=ended - 900, ended=ended)
    chain.transact(reg.functions.report(subject, r), subject, now)
    cp = plain(reg.functions.checkpointOf(subject, 0).call())
    assert cp[1:3] == [ended, now]  # lastCompletedAt, lastCompletedRecordedAt
    # deadline follows the reported time: ended + 86400 = now + 14400, not now + 86400
    assert reg.functions.layerStatus(subject, 0).call() == [FRESH, now + 14400, False]


def test_outdated_base_cannot_overwrite_newer_state(chain, reg, subject):
    enroll(chain, reg, subject, T)
    newer = [commitment("newer"), *PRE_COMMITMENTS[1:]]
    r = cycle(1, PRE_ROOT, newer, layer_mask=0x01, completed=0x01, started=T + 100,
              ended=T + 200)
    chain.transact(reg.functions.report(subject, r), subject, T + 300)
    stale = cycle(1, PRE_ROOT, [commitment("stale"), *PRE_COMMITMENTS[1:]], layer_mask=0x01,
                  completed=0x01, started=T + 400, ended=T + 500)
    assert chain.revert_data(reg.functions.report(subject, stale), subject, T + 600) == \
        error_data("LinkageBroken()")
    # right version, wrong root
    stale2 = cycle(2, PRE_ROOT, [commitment("stale"), *PRE_COMMITMENTS[1:]], layer_mask=0x01,
                   completed=0x01, started=T + 400, ended=T + 500)
    assert chain.revert_data(reg.functions.report(subject, stale2), subject) == \
        error_data("LinkageBroken()")
    assert reg.functions.rootAt(subject, 2).call() == state_root(newer)
    assert plain(reg.functions.headOf(subject).call())[5] == 2


def test_change_outside_scope_is_rejected(chain, reg, subject):
    enroll(chain, reg, subject, T)
    post = [commitment("l0"), PRE_COMMITMENTS[1], commitment("l2"), PRE_COMMITMENTS[3]]
    r = cycle(1, PRE_ROOT, post, layer_mask=0x01, completed=0x01, started=T + 100, ended=T + 200)
    assert chain.revert_data(reg.functions.report(subject, r), subject, T + 300) == \
        error_data("UnscopedLayerChanged(uint8)", 2)


def test_policy_version_not_in_effect_is_rejected_both_ways(chain, reg, subject):
    enroll(chain, reg, subject, T)
    tp = T + 5000
    chain.transact(reg.functions.setPolicy(subject, policy()), subject, tp)
    assert reg.functions.policyEffectiveFrom(subject, 2).call() == tp

    def rec(version, started):
        return cycle(1, PRE_ROOT, PRE_COMMITMENTS, layer_mask=0x01, completed=0x01,
                     policy_version=version, started=started, ended=started + 20)

    bad = error_data("GoverningPolicyViolated()")
    # claims the old version for a cycle that started after the new one took effect
    assert chain.revert_data(reg.functions.report(subject, rec(1, tp)), subject, tp + 100) == bad
    # claims the new version for a cycle that started before it took effect
    assert chain.revert_data(reg.functions.report(subject, rec(2, tp - 1)), subject) == bad
    # the version actually in effect is accepted in each case
    chain.transact(reg.functions.report(subject, rec(1, tp - 100)), subject, tp + 200)
    chain.transact(reg.functions.report(subject, rec(2, tp + 10)), subject, tp + 300)
    assert reg.functions.checkpointOf(subject, 0).call()[3] == 2  # completedUnderPolicy


def test_identical_record_twice_is_rejected_the_second_time(chain, reg, subject):
    enroll(chain, reg, subject, T)
    r = cycle(1, PRE_ROOT, PRE_COMMITMENTS, started=T + 100, ended=T + 200)
    chain.transact(reg.functions.report(subject, r), subject, T + 300)
    assert chain.revert_data(reg.functions.report(subject, r), subject, T + 400) == \
        error_data("TimeOrderingViolated()")
    # a completion earlier than the registered one is rejected as well
    earlier = cycle(1, PRE_ROOT, PRE_COMMITMENTS, started=T + 50, ended=T + 150)
    assert chain.revert_data(reg.functions.report(subject, earlier), subject) == \
        error_data("TimeOrderingViolated()")
    assert plain(reg.functions.headOf(subject).call())[6] == 1


def test_floor_bounds_the_policy_and_the_subject(chain, reg, subject, controller):
    enroll(chain, reg, subject, T, controller=controller, rights=RIGHT_FLOOR | RIGHT_DEMAND)
    f = floor(0x06, pulse_interval=10_000, intervals=(0, 500_000, 1_000_000, 0))
    receipt = chain.transact(reg.functions.setFloor(subject, f), controller, T + 100)
    (ev,) = events(reg, "FloorUpdated", receipt)
    assert (ev["subject"], ev["version"], ev["effectiveFrom"], ev["by"]) == (
        subject, 1, T + 100, controller)
    assert plain(reg.functions.floorOf(subject).call()) == [0x06, 10_000, [0, 500_000,
                                                                           1_000_000, 0]]
    assert plain(reg.functions.headOf(subject).call())[4] == 1  # floorVersion
    # the floor tightens layers 1 and 2 and the pulse interval
    assert plain(reg.functions.requirementsOf(subject).call()) == [
        0x0F, 0x0F, 3600, 10_000, [86400, 500_000, 1_000_000, 7776000]]
    # the subject relaxes its policy: requires only layer 0, longer, no pulse
    relaxed = policy(required=0x01, pulse_interval=0, intervals=(172800, 0, 0, 0))
    chain.transact(reg.functions.setPolicy(subject, relaxed), subject, T + 200)
    # the floor's layers and intervals survive; only what the floor does not cover relaxes
    assert plain(reg.functions.requirementsOf(subject).call()) == [
        0x0F, 0x07, 3600, 10_000, [172800, 500_000, 1_000_000, 0]]
    assert status(chain, reg, subject, 2, T + 300) == (FRESH, T + 1_000_000, True)
    # the subject cannot change the controller or its rights, nor set the floor
    assert chain.revert_data(reg.functions.setController(subject, subject, 0), subject) == \
        error_data("ControllerAlreadySet()")
    other = chain.accounts[4]
    assert chain.revert_data(reg.functions.setController(subject, other, 7), subject) == \
        error_data("ControllerAlreadySet()")
    assert chain.revert_data(reg.functions.setFloor(subject, floor(0)), subject) == \
        error_data("Unauthorized(address)", subject)


def test_demand_lowers_deadline_until_a_late_enough_completion(chain, reg, subject, controller):
    enroll(chain, reg, subject, T, controller=controller, rights=RIGHT_DEMAND)
    td = T + 10_000
    chain.transact(reg.functions.demand(subject, 0x08, td + 5000), controller, td)
    assert plain(reg.functions.demandOf(subject, 3).call()) == [td, td + 5000]
    assert status(chain, reg, subject, 3, td + 10) == (FRESH, td + 5000, True)
    # a completion that ended before the demand does not satisfy it
    early = cycle(1, PRE_ROOT, PRE_COMMITMENTS, layer_mask=0x08, completed=0x08,
                  started=td - 200, ended=td - 100)
    chain.transact(reg.functions.report(subject, early), subject, td + 100)
    assert plain(reg.functions.demandOf(subject, 3).call()) == [td, td + 5000]
    assert status(chain, reg, subject, 3, td + 5000) == (OVERDUE, td + 5000, False)
    # a completion at demandedAt clears it; the deadline follows the completion again
    on_time = cycle(1, PRE_ROOT, PRE_COMMITMENTS, layer_mask=0x08, completed=0x08,
                    started=td - 50, ended=td)
    chain.transact(reg.functions.report(subject, on_time), subject, td + 5100)
    assert plain(reg.functions.demandOf(subject, 3).call()) == [0, 0]
    assert reg.functions.layerStatus(subject, 3).call() == [FRESH, td + INTERVALS[3], False]


def test_withdrawn_demand_no_longer_lowers_the_deadline(chain, reg, subject, controller):
    enroll(chain, reg, subject, T, controller=controller, rights=RIGHT_DEMAND)
    chain.transact(reg.functions.demand(subject, 0x01, T + 600), controller, T + 100)
    # within the due window of the demanded deadline
    assert status(chain, reg, subject, 0, T + 200) == (DUE, T + 600, True)
    receipt = chain.transact(reg.functions.withdrawDemand(subject, 0x01), controller, T + 300)
    (ev,) = events(reg, "DemandWithdrawn", receipt)
    assert (ev["subject"], ev["layerMask"], ev["by"]) == (subject, 0x01, controller)
    assert plain(reg.functions.demandOf(subject, 0).call()) == [0, 0]
    assert status(chain, reg, subject, 0, T + 700) == (FRESH, T + INTERVALS[0], True)


def test_rollback_registers_new_version_with_earlier_root(chain, reg, subject):
    enroll(chain, reg, subject, T)
    forward = cycle(1, PRE_ROOT, POST_COMMITMENTS, started=T + 100, ended=T + 200)
    chain.transact(reg.functions.report(subject, forward), subject, T + 300)
    # a claim that does not match history is rejected (version 2's root is the post root)
    wrong = cycle(2, POST_ROOT, PRE_COMMITMENTS, started=T + 400, ended=T + 500, restores=2)
    assert chain.revert_data(reg.functions.report(subject, wrong), subject, T + 600) == \
        error_data("RestoreClaimInvalid()")
    back = cycle(2, POST_ROOT, PRE_COMMITMENTS, started=T + 400, ended=T + 500, restores=1)
    chain.transact(reg.functions.report(subject, back), subject, T + 700)
    head = plain(reg.functions.headOf(subject).call())
    assert (head[5], head[7]) == (3, PRE_ROOT)
    assert [reg.functions.rootAt(subject, v).call() for v in (1, 2, 3)] == [
        PRE_ROOT, POST_ROOT, PRE_ROOT]
    # history is not rewritten: layers 0..2 changed again at version 3, layer 3 never changed
    assert [reg.functions.checkpointOf(subject, i).call()[4] for i in range(4)] == [3, 3, 3, 1]


def test_signal_and_maintenance_are_independent(chain, reg, subject):
    enroll(chain, reg, subject, T)
    r = cycle(1, PRE_ROOT, PRE_COMMITMENTS, started=T + 50, ended=T + 100)
    chain.transact(reg.functions.report(subject, r), subject, T + 200)
    # silent and fresh: last signal T+200, window 21600, layer 0 due at T+100+86400
    at = T + 200 + 21600 + 1
    assert tuple(chain.view_at(reg.functions.signalStatus(subject), at)) == (
        SILENT, T + 200, T + 200 + 21600)
    assert reg.functions.layerStatus(subject, 0).call()[0] == FRESH
    # present and overdue: a pulse after layer 0's deadline
    chain.transact(reg.functions.pulse(subject, 0), subject, T + 100 + 86400)
    assert reg.functions.signalStatus(subject).call() == [PRESENT, T + 100 + 86400, 0]
    assert reg.functions.layerStatus(subject, 0).call() == [OVERDUE, T + 100 + 86400, False]
