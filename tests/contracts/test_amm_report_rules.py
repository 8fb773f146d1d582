"""AMM §Cycle records: every rejection rule of `report`, one test per rule (parametrized over the
ways to break it), each asserting the rule's own custom error. Each bad record is the accepted
base record with one field changed, so the rule under test is the only one it breaks.

Fixture history (hand-built): enrolment at T with layers 0..2 supported and required, triggers
SCHEDULED and EVENT; a record at T+300 changes layer 0 and completes it at T+200 (state
version 2); policy version 2 takes effect at T+1000.
"""

from __future__ import annotations

import pytest
from amm_helpers import (
    ABORTED,
    COMMANDED,
    COMPLETED,
    ENROLLED_AT,
    EVENT,
    FAILED,
    PARTIAL,
    PERM_PULSE,
    PERM_REPORT,
    PRE_COMMITMENTS,
    PRE_ROOT,
    REGISTRY,
    SCHEDULED,
    commitment,
    cycle,
    enroll,
    error_data,
    events,
    plain,
    policy,
    registry_fixtures,
    state_root,
)

T = ENROLLED_AT
SUBMIT = T + 3000
A0 = commitment("layer0 after record A")
B0 = commitment("layer0 after record B")
V2 = [A0, *PRE_COMMITMENTS[1:]]
V2_ROOT = state_root(V2)
RULES_POLICY = policy(supported=0x07, required=0x07, triggers=0x03,
                      intervals=(86400, 604800, 2592000, 0))


def base(**overrides) -> tuple:
    """The accepted record: layers 0 and 1 in scope and completed, layer 0 changes."""
    fields = dict(base_version=2, pre_root=V2_ROOT, post=[B0, *PRE_COMMITMENTS[1:]],
                  layer_mask=0x03, completed=0x03, ops=0x12, outcome=COMPLETED,
                  trigger=SCHEDULED, policy_version=2, started=T + 2000, ended=T + 2500)
    fields.update(overrides)
    return cycle(**fields)


def build_history(chain) -> None:
    """The module's fixture history (see the module docstring), built once on the new chain."""
    reg = chain.contracts[REGISTRY]
    subject, controller = chain.accounts[1], chain.accounts[2]
    enroll(chain, reg, subject, T, RULES_POLICY, controller=controller, rights=7)
    chain.transact(reg.functions.setOperator(chain.accounts[3], PERM_REPORT), subject, T + 10)
    chain.transact(reg.functions.setOperator(chain.accounts[5], PERM_PULSE), subject, T + 20)
    a = cycle(1, PRE_ROOT, V2, layer_mask=0x01, completed=0x01, trigger=SCHEDULED,
              started=T + 100, ended=T + 200)
    chain.transact(reg.functions.report(subject, a), subject, T + 300)
    chain.transact(reg.functions.setPolicy(subject, RULES_POLICY), subject, T + 1000)


deployed, chain, reg = registry_fixtures(setup=build_history)


@pytest.fixture
def subject(chain):
    return chain.accounts[1]


def rejected(chain, reg, subject, record, sender=None) -> bytes:
    return chain.revert_data(reg.functions.report(subject, record), sender or subject, SUBMIT)


def test_fixture_history(reg, subject):
    head = plain(reg.functions.headOf(subject).call())
    assert (head[3], head[5], head[7]) == (2, 2, V2_ROOT)  # policyVersion, stateVersion, root
    assert reg.functions.policyEffectiveFrom(subject, 2).call() == T + 1000
    assert reg.functions.checkpointOf(subject, 0).call()[1] == T + 200


def test_base_record_is_accepted(chain, reg, subject):
    receipt = chain.transact(reg.functions.report(subject, base()), subject, SUBMIT)
    (ev,) = events(reg, "CycleRecorded", receipt)
    assert (ev["seq"], ev["baseVersion"], ev["newVersion"], ev["changedLayers"]) == (2, 2, 3, 1)


@pytest.mark.parametrize("record", [
    base(layer_mask=0, completed=0, ops=0),                       # empty scope
    base(layer_mask=0x13, completed=0x13, ops=0),                 # beyond 0x0F
    base(completed=0x05, outcome=ABORTED),                        # completed not within scope
    base(ops=0x0112),                                             # op nibble of layer 2
    base(ops=0x1012),                                             # op nibble of layer 3
], ids=["empty", "beyond-0x0F", "completed-outside", "ops-layer2", "ops-layer3"])
def test_rule_scope(chain, reg, subject, record):
    assert rejected(chain, reg, subject, record) == error_data("ScopeViolated()")


@pytest.mark.parametrize("record", [
    base(completed=0x01, outcome=COMPLETED),
    base(completed=0x00, outcome=PARTIAL),
    base(completed=0x03, outcome=PARTIAL),
    base(completed=0x03, outcome=ABORTED),
    base(completed=0x01, outcome=FAILED),
    base(outcome=4),
], ids=["completed-not-all", "partial-none", "partial-all", "aborted-all", "failed-some",
        "unknown-outcome"])
def test_rule_outcome_consistency(chain, reg, subject, record):
    assert rejected(chain, reg, subject, record) == error_data("OutcomeInconsistent()")


@pytest.mark.parametrize("record", [
    base(policy_version=0),
    base(policy_version=3),                                   # does not exist
    base(policy_version=2, started=T + 999),                  # before v2 took effect
    base(policy_version=1, started=T + 1000),                 # v2 already in effect
    base(layer_mask=0x09, completed=0x09, ops=0),             # layer 3 not supported
    base(trigger=COMMANDED),                                  # trigger not allowed
    base(trigger=9),
], ids=["version-0", "version-unknown", "started-before-effective", "superseded",
        "unsupported-layer", "trigger-not-allowed", "trigger-out-of-range"])
def test_rule_governing_policy(chain, reg, subject, record):
    assert rejected(chain, reg, subject, record) == error_data("GoverningPolicyViolated()")


@pytest.mark.parametrize("record", [
    base(policy_version=1, started=T + 999, trigger=EVENT),  # last second of v1
    base(policy_version=2, started=T + 1000),                # first second of v2
], ids=["v1-boundary", "v2-boundary"])
def test_governing_policy_boundaries_are_accepted(chain, reg, subject, record):
    chain.transact(reg.functions.report(subject, record), subject, SUBMIT)
    assert reg.functions.checkpointOf(subject, 0).call()[3] == record[8]


@pytest.mark.parametrize("record", [
    base(base_version=1),
    base(base_version=3),
    base(pre_root=PRE_ROOT),
], ids=["older-version", "future-version", "wrong-root"])
def test_rule_linkage(chain, reg, subject, record):
    assert rejected(chain, reg, subject, record) == error_data("LinkageBroken()")


@pytest.mark.parametrize("layer", [2, 3])
def test_rule_unscoped_layers_unchanged(chain, reg, subject, layer):
    post = [B0, *PRE_COMMITMENTS[1:]]
    post[layer] = commitment(f"out of scope {layer}")
    assert rejected(chain, reg, subject, base(post=post)) == \
        error_data("UnscopedLayerChanged(uint8)", layer)


@pytest.mark.parametrize("record", [
    base(started=T + 2600, ended=T + 2500),                          # started after ended
    base(ended=SUBMIT + 1),                                          # ends in the future
    base(policy_version=1, started=T + 150, ended=T + 200),          # == layer 0's completion
    base(policy_version=1, started=T + 100, ended=T + 199),          # before it
], ids=["started-after-ended", "after-clock", "equal-to-last", "before-last"])
def test_rule_time_ordering(chain, reg, subject, record):
    assert rejected(chain, reg, subject, record) == error_data("TimeOrderingViolated()")


def test_time_ordering_only_counts_completed_layers(chain, reg, subject):
    # layer 0 is in scope but not completed, so its completion at T+200 does not bind
    record = base(policy_version=1, started=T + 150, ended=T + 200, completed=0x02,
                  outcome=PARTIAL)
    chain.transact(reg.functions.report(subject, record), subject, SUBMIT)
    assert reg.functions.checkpointOf(subject, 1).call()[1] == T + 200


@pytest.mark.parametrize("record", [
    base(restores=3),                                       # not below the current version
    base(post=V2, restores=2),                              # the current version itself
    base(restores=1),                                       # root differs from rootAt(1)
], ids=["future", "current", "root-mismatch"])
def test_rule_restore_claim(chain, reg, subject, record):
    assert rejected(chain, reg, subject, record) == error_data("RestoreClaimInvalid()")


def test_true_restore_claim_is_accepted(chain, reg, subject):
    chain.transact(reg.functions.report(subject, base(post=PRE_COMMITMENTS, restores=1)),
                   subject, SUBMIT)
    assert reg.functions.rootAt(subject, 3).call() == PRE_ROOT


def test_restore_claim_that_changes_nothing_is_accepted(chain, reg, subject):
    """AMM §Cycle records, rule "Restore claim": restoresVersion below the current version and
    rootAt(restoresVersion) the root of postCommitments are all the registry checks. A record
    whose post state is already the current state (after a rollback to version 1) passes
    both; no layer changes, so the version does not advance (AMM §Layer checkpoints)."""
    chain.transact(reg.functions.report(subject, base(post=PRE_COMMITMENTS, restores=1)),
                   subject, SUBMIT)
    assert reg.functions.headOf(subject).call()[5] == 3
    again = base(base_version=3, pre_root=PRE_ROOT, post=PRE_COMMITMENTS, restores=1,
                 started=T + 2600, ended=T + 2700)
    receipt = chain.transact(reg.functions.report(subject, again), subject, SUBMIT + 10)
    (ev,) = events(reg, "CycleRecorded", receipt)
    assert (ev["baseVersion"], ev["newVersion"], ev["changedLayers"]) == (3, 3, 0)
    assert reg.functions.headOf(subject).call()[5] == 3
    assert reg.functions.rootAt(subject, 3).call() == PRE_ROOT == reg.functions.rootAt(
        subject, 1).call()


def test_only_subject_and_report_operators_may_report(chain, reg, subject):
    stranger, controller, pulser = chain.accounts[4], chain.accounts[2], chain.accounts[5]
    for who in (stranger, controller, pulser):
        assert rejected(chain, reg, subject, base(), sender=who) == \
            error_data("Unauthorized(address)", who)
    operator = chain.accounts[3]
    receipt = chain.transact(reg.functions.report(subject, base()), operator, SUBMIT)
    (ev,) = events(reg, "CycleRecorded", receipt)
    assert (ev["subject"], ev["submitter"]) == (subject, operator)


def test_unenrolled_subject_is_rejected(chain, reg):
    nobody = chain.accounts[6]
    assert rejected(chain, reg, nobody, base(), sender=nobody) == \
        error_data("NotEnrolled(address)", nobody)
