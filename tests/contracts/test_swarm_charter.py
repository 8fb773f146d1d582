"""ERC-8447 §8 milestones and MILESTONED conclusion, §9.1 amendment (minor / material, the
one-way flag, the exit window), §11 authorities (resolution, transfer) and the lying registry
whose views disagree with its honest storage.
"""

from __future__ import annotations

import json

import pytest

from recompute.devnet.contracts import load_artifact
from tests.contracts.swarm_helpers import (
    A_ANY_MEMBER,
    A_INITIATOR,
    A_NONE,
    A_ROLE,
    ACHIEVED,
    ACTIVE,
    AUTH,
    CHARTER_1,
    CHARTER_2,
    CHARTER_3,
    COMMITMENT_1,
    CONCLUDING,
    COORDINATOR,
    DP,
    JUDGE,
    M_ACTIVE,
    M_EXITED,
    M_SUSPENDED,
    MILESTONED,
    MS_ACCEPTED,
    MS_PENDING,
    MS_REJECTED,
    OBJECTIVE_1,
    PARTIAL,
    SUSPENDED,
    WORKER,
    X_LEFT,
    X_REMOVED,
    ZERO32,
    ZERO_ADDR,
    acct,
    authorities,
    kid,
    link_and_deploy,
    member_record,
    objective,
    populated,
    seat,
    standard_spec,
    status,
    swarm_fixtures,
    swarm_record,
)
from tests.contracts.swarm_helpers import registry_functions as reg

OBJECTIVE_2 = kid("objective v2")
COMMITMENT_2 = kid("commitment v2")


chain, isolated = swarm_fixtures()


# --------------------------------------------------------------------------- §8


def milestoned(chain, activate=True) -> bytes:
    a = chain.accounts
    sid = chain.form(standard_spec(chain), a[JUDGE], a[0], obj=objective(a[JUDGE], MILESTONED, 2))
    for i, r in ((3, WORKER), (4, WORKER), (5, COORDINATOR)):
        seat(chain, sid, a[i], r)
    if activate:
        chain.tx(reg(chain).activate(sid), a[9])
    return sid


def test_record_milestone_rules(chain):
    sid = milestoned(chain, activate=False)
    r, judge = reg(chain), acct(chain, JUDGE)
    res = kid("lemma 1")
    chain.fails(r.recordMilestone(sid, 0, MS_ACCEPTED, res), judge, "SAI_WrongState")  # FORMING
    chain.tx(r.activate(sid), acct(chain, 9))
    chain.fails(r.recordMilestone(sid, 0, MS_ACCEPTED, res), acct(chain, AUTH), "SAI_NotAuthorized")
    chain.fails(r.recordMilestone(sid, 2, MS_ACCEPTED, res), judge, "SAI_MilestoneIndex")
    chain.fails(r.recordMilestone(sid, 0, MS_PENDING, res), judge, "SAI_MilestoneStatus")
    chain.tx(r.recordMilestone(sid, 0, MS_REJECTED, res), judge)
    assert r.objectiveOf(sid).call()[5] == 0  # milestonesAccepted
    chain.tx(r.recordMilestone(sid, 0, MS_ACCEPTED, res), judge)  # a rejection may be redone
    assert tuple(r.milestoneOf(sid, 0).call()) == (MS_ACCEPTED, res, chain.now)
    assert r.objectiveOf(sid).call()[5] == 1
    assert swarm_record(chain, sid)["lastActivity"] == chain.now  # a milestone is activity
    chain.fails(r.recordMilestone(sid, 0, MS_REJECTED, res), judge, "SAI_MilestoneFinal")
    chain.tx(r.suspend(sid), acct(chain, AUTH))
    chain.fails(r.recordMilestone(sid, 1, MS_ACCEPTED, res), judge, "SAI_WrongState")


def test_milestoned_conclusion(chain):
    sid = milestoned(chain)
    r, judge, holder = reg(chain), acct(chain, JUDGE), acct(chain, AUTH)
    chain.fails(r.conclude(sid, PARTIAL, ZERO32), holder, "SAI_MilestonesIncomplete")
    chain.fails(r.conclude(sid, ACHIEVED, ZERO32), judge, "SAI_MilestonesIncomplete")
    chain.tx(r.recordMilestone(sid, 0, MS_ACCEPTED, kid("m0")), judge)
    chain.fails(r.conclude(sid, ACHIEVED, ZERO32), judge, "SAI_MilestonesIncomplete")
    snap = chain.snapshot()
    chain.tx(r.conclude(sid, PARTIAL, ZERO32), holder)
    assert swarm_record(chain, sid)["outcome"] == PARTIAL
    chain.revert(snap)
    chain.tx(r.recordMilestone(sid, 1, MS_ACCEPTED, kid("m1")), judge)
    chain.tx(r.conclude(sid, ACHIEVED, kid("all")), judge)
    rec = swarm_record(chain, sid)
    assert (rec["state"], rec["outcome"], rec["resultHash"]) == (CONCLUDING, ACHIEVED, kid("all"))


# --------------------------------------------------------------------------- §9.1


def test_minor_amendment(chain):
    sid = populated(chain)
    r, holder = reg(chain), acct(chain, AUTH)
    chain.fails(r.amend(sid, CHARTER_2, "u", ZERO32, ZERO32, False), acct(chain, 3),
                "SAI_NotAuthorized")
    chain.fails(r.amend(sid, CHARTER_1, "u", ZERO32, ZERO32, False), holder, "SAI_SameCharter")
    chain.fails(r.amend(sid, ZERO32, "u", ZERO32, ZERO32, False), holder, "SAI_ZeroCharter")
    # unchanged objective and commitment hashes mean "not changed" too
    receipt = chain.tx(r.amend(sid, CHARTER_2, "ipfs://v2", OBJECTIVE_1, COMMITMENT_1, False),
                       holder)
    (ev,) = chain.events(receipt, "CharterAmended")
    assert (ev["args"]["charterVersion"], ev["args"]["commitmentVersion"], ev["args"]["material"],
            ev["args"]["exitUntil"]) == (2, 1, False, 0)
    rec = swarm_record(chain, sid)
    assert (rec["charterHash"], rec["charterVersion"], rec["commitmentVersion"],
            rec["exitWindowUntil"], rec["charterURI"]) == (CHARTER_2, 2, 1, 0, "ipfs://v2")
    assert (rec["lastAmendedAt"], rec["lastActivity"]) == (chain.now, chain.now)
    # a candidate whose member side was recorded under commitment v1 completes without re-accepting
    chain.tx(r.leave(sid), acct(chain, 4))
    chain.tx(r.applyToJoin(sid, WORKER, CHARTER_2), acct(chain, 6))
    chain.tx(r.amend(sid, CHARTER_3, "v3", ZERO32, ZERO32, False), holder)
    chain.tx(r.admit(sid, acct(chain, 6), WORKER), holder)
    assert status(chain, sid, acct(chain, 6)) == (M_ACTIVE, 0)
    # acceptance is not changed by amendment; a leave is not "on amendment" after a minor one
    assert tuple(r.acceptedCharterOf(sid, acct(chain, 3)).call()) == (CHARTER_1, 1, 1)
    (ev,) = chain.events(chain.tx(r.leave(sid), acct(chain, 3)), "MemberExited")
    assert ev["args"]["onAmendment"] is False


@pytest.mark.parametrize("change", ["objective", "commitment", "declared"])
def test_material_amendment_and_exit_window(chain, change):
    sid = populated(chain)
    r, holder = reg(chain), acct(chain, AUTH)
    obj = OBJECTIVE_2 if change == "objective" else ZERO32
    com = COMMITMENT_2 if change == "commitment" else ZERO32
    receipt = chain.tx(r.amend(sid, CHARTER_2, "v2", obj, com, change == "declared"), holder)
    amended = chain.now
    (ev,) = chain.events(receipt, "CharterAmended")
    assert (ev["args"]["charterVersion"], ev["args"]["commitmentVersion"], ev["args"]["material"],
            ev["args"]["exitUntil"]) == (2, 2, True, amended + 400)
    rec = swarm_record(chain, sid)
    assert (rec["commitmentVersion"], rec["exitWindowUntil"]) == (2, amended + 400)
    o = r.objectiveOf(sid).call()
    if change == "objective":
        assert (o[0], o[6]) == (OBJECTIVE_2, 2)  # objectiveHash, version = new charter version
    else:
        assert (o[0], o[6]) == (OBJECTIVE_1, 1)
    assert rec["commitmentHash"] == (COMMITMENT_2 if change == "commitment" else COMMITMENT_1)
    # members are neither suspended nor exited for not accepting
    assert status(chain, sid, acct(chain, 3)) == (M_ACTIVE, 0)
    # inside the window: a leave by a member that has not accepted is flagged
    (ev,) = chain.events(chain.tx(r.leave(sid), acct(chain, 3), at=amended + 400), "MemberExited")
    assert ev["args"]["onAmendment"] is True
    # a member that accepted the new version is not flagged
    chain.tx(r.acceptCharter(sid, CHARTER_2), acct(chain, 4), at=amended + 401)
    assert tuple(r.acceptedCharterOf(sid, acct(chain, 4)).call()) == (CHARTER_2, 2, 2)
    (ev,) = chain.events(chain.tx(r.leave(sid), acct(chain, 4)), "MemberExited")
    assert ev["args"]["onAmendment"] is False


def test_material_flag_is_one_way(chain):
    sid = populated(chain)
    receipt = chain.tx(reg(chain).amend(sid, CHARTER_2, "v2", OBJECTIVE_2, ZERO32, False),
                       acct(chain, AUTH))
    (ev,) = chain.events(receipt, "CharterAmended")
    assert ev["args"]["material"] is True  # declared minor, but the objective changed


def test_leave_after_exit_window_not_flagged(chain):
    sid = populated(chain)
    chain.tx(reg(chain).amend(sid, CHARTER_2, "v2", ZERO32, COMMITMENT_2, False), acct(chain, AUTH))
    until = swarm_record(chain, sid)["exitWindowUntil"]
    (ev,) = chain.events(chain.tx(reg(chain).leave(sid), acct(chain, 3), at=until + 1),
                         "MemberExited")
    assert (ev["args"]["reason"], ev["args"]["onAmendment"]) == (X_LEFT, False)


def test_set_charter_uri(chain):
    sid = populated(chain)
    r, holder = reg(chain), acct(chain, AUTH)
    chain.fails(r.setCharterURI(sid, "x"), acct(chain, 3), "SAI_NotAuthorized")
    chain.tx(r.conclude(sid, ACHIEVED, ZERO32), acct(chain, JUDGE))
    receipt = chain.tx(r.setCharterURI(sid, "ar://moved"), holder)  # any state but DISSOLVED
    (ev,) = chain.events(receipt, "CharterURIUpdated")
    assert ev["args"]["charterURI"] == "ar://moved"
    rec = swarm_record(chain, sid)
    assert (rec["charterURI"], rec["charterVersion"]) == ("ar://moved", 1)


# --------------------------------------------------------------------------- §11


def test_is_authorized_by_kind(chain):
    holder = acct(chain, AUTH)
    auths = authorities(holder, SUSPEND=(A_ROLE, ZERO_ADDR, COORDINATOR),
                        REMOVE=(A_ANY_MEMBER, ZERO_ADDR, ZERO32),
                        RESUME=(A_INITIATOR, ZERO_ADDR, ZERO32),
                        DETACH=(A_NONE, ZERO_ADDR, ZERO32))
    sid = populated(chain, standard_spec(chain, authorities=auths))
    r, a = reg(chain), chain.accounts
    ok = lambda point, i: r.isAuthorized(sid, DP[point], a[i]).call()  # noqa: E731
    assert ok("ACTIVATE", AUTH) and not ok("ACTIVATE", 0)
    assert ok("SUSPEND", 5) and not ok("SUSPEND", 3) and not ok("SUSPEND", AUTH)
    assert ok("REMOVE", 3) and ok("REMOVE", 5) and not ok("REMOVE", 8)
    assert ok("RESUME", 0) and not ok("RESUME", AUTH)
    assert not any(ok("DETACH", i) for i in range(10))
    # a ROLE authority acts through the ledger: the coordinator suspends the swarm
    chain.tx(r.suspend(sid), a[5])
    assert swarm_record(chain, sid)["state"] == SUSPENDED
    chain.tx(r.resume(sid), a[0])  # the initiator resumes
    # ANY_MEMBER removes; a suspended member holds no authority
    chain.tx(r.suspendMember(sid, a[4]), a[3])
    assert status(chain, sid, a[4]) == (M_SUSPENDED, 0)
    assert not ok("REMOVE", 4)
    chain.fails(r.remove(sid, a[3]), a[4], "SAI_NotAuthorized")
    chain.tx(r.remove(sid, a[4]), a[3])
    assert status(chain, sid, a[4]) == (M_EXITED, X_REMOVED)


def test_transfer_authority(chain):
    holder = acct(chain, AUTH)
    auths = authorities(holder, RESUME=(A_INITIATOR, ZERO_ADDR, ZERO32))
    sid = populated(chain, standard_spec(chain, authorities=auths))
    r, new = reg(chain), acct(chain, 8)
    chain.fails(r.transferAuthority(sid, DP["SUSPEND"], new), acct(chain, 3), "SAI_NotHolder")
    chain.fails(r.transferAuthority(sid, DP["SUSPEND"], ZERO_ADDR), holder, "SAI_ZeroAuthority")
    chain.fails(r.transferAuthority(sid, DP["RESUME"], new), acct(chain, 0), "SAI_NotTransferable")
    receipt = chain.tx(r.transferAuthority(sid, DP["SUSPEND"], new), holder)
    (ev,) = chain.events(receipt, "AuthorityTransferred")
    assert (ev["args"]["decisionPoint"], ev["args"]["previous"], ev["args"]["next"]) == (
        DP["SUSPEND"], holder, new)
    assert tuple(r.authorityOf(sid, DP["SUSPEND"]).call())[1] == new
    assert r.specOf(sid).call()[2][DP["SUSPEND"]][1] == holder  # the spec is unchanged
    chain.fails(r.suspend(sid), holder, "SAI_NotAuthorized")
    chain.tx(r.suspend(sid), new)
    assert r.isAuthorized(sid, DP["ABORT"], holder).call() is True  # other slots unaffected


# --------------------------------------------------------------------------- lying registry


def test_lying_views_disagree_with_honest_storage(anvil):
    lying = link_and_deploy(anvil, "LyingSwarmRegistry")
    sid = populated(lying)
    r, owner, a3 = lying.registry.functions, lying.accounts[0], lying.accounts[3]
    reply = lying.eth_call(r.setRosterMetCache(sid, False), a3)
    assert "error" in reply  # owner only
    lying.tx(r.setRosterMetCache(sid, False), owner)
    lying.tx(r.setMemberStatusCache(sid, a3, M_EXITED, X_LEFT), owner)
    assert r.rosterMet(sid).call() is False
    assert tuple(r.memberStatus(sid, a3).call()) == (M_EXITED, X_LEFT)
    # storage (and every transition) stays honest
    assert member_record(lying, sid, a3)["status"] == M_ACTIVE
    assert tuple(r.memberCount(sid).call()) == (3, 0, 0)
    lying.fails(r.enforceRoster(sid), lying.accounts[9], "SAI_RosterMet")
    assert swarm_record(lying, sid)["state"] == ACTIVE
    lying.tx(r.clearCache(sid, a3), owner)
    assert r.rosterMet(sid).call() is True
    assert tuple(r.memberStatus(sid, a3).call()) == (M_ACTIVE, 0)


def test_lying_registry_storage_layout_extends_the_honest_one():
    honest = load_artifact("SwarmRegistry")["storageLayout"]["storage"]
    lying = load_artifact("LyingSwarmRegistry")["storageLayout"]["storage"]
    strip = [{k: v for k, v in e.items() if k not in ("astId", "contract")} for e in honest]
    assert json.dumps(strip) == json.dumps(
        [{k: v for k, v in e.items() if k not in ("astId", "contract")}
         for e in lying[:len(honest)]])
    assert [e["label"] for e in honest] == ["swarmCount", "terms", "swarmData"]
