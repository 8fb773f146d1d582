"""The swarm history went as scripted: at every named ``swarm.*`` moment the registry's views
(evaluated at that block) give what the script and ERC-8447 say they should.

Every expected value below is written from the script in ``recompute/devnet/history_swarm.py``
and the specification's rules, counted by hand: one revision per state-changing call (§5.4; reverted
calls and the lying registry's cache setters change nothing), §6.5 rosterMet over ACTIVE seats
only, the lazy NOT_CARRIED (§7.2) and SWARM_DISSOLVED (§5.2) exits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from eth_hash.auto import keccak
from web3 import Web3

from recompute.devnet.contracts import load_artifact

# ERC-8447 §5.1 / §6.1 enum orders
NONE_STATE, FORMING, ACTIVE, SUSPENDED, CONCLUDING, DISSOLVED = range(6)
M_NONE, M_CANDIDATE, M_ACTIVE, M_SUSPENDED, M_EXITED = range(5)
X_NONE, X_LEFT, X_REMOVED, X_INELIGIBLE, X_NOT_CARRIED, X_REPLACED, X_DISSOLVED = range(7)
C_NONE, C_AUTHORITY, C_INELIGIBLE = range(3)
O_ACHIEVED = 1
R_AUTHORITY, R_ACCEPTANCE, R_ROSTER_LOST = 1, 2, 6

CANDIDATE = (M_CANDIDATE, X_NONE)
LIVE = (M_ACTIVE, X_NONE)
SUSP = (M_SUSPENDED, X_NONE)
NOBODY = (M_NONE, X_NONE)


@dataclass
class Expect:
    swarm: str
    state: int
    phase: int
    revision: int
    counts: tuple  # memberCount: (active, suspended, candidates)
    roles: dict  # role name -> roleCount (active, suspended)
    roster_met: bool
    statuses: dict = field(default_factory=dict)  # account index -> memberStatus


EXPECTED = {
    # minimal: form (1); a3 applies (2); a4 admitted (3)
    "swarm.formed": Expect("minimal", FORMING, 0, 1, (0, 0, 0),
                           {"worker": (0, 0), "coordinator": (0, 0)}, False,
                           {3: NOBODY, 4: NOBODY}),
    "swarm.candidates": Expect("minimal", FORMING, 0, 3, (0, 0, 2),
                               {"worker": (0, 0), "coordinator": (0, 0)}, False,
                               {3: CANDIDATE, 4: CANDIDATE, 5: NOBODY}),
    # admit a3 (4), a4 accepts (5), a5 seated (7), activate (8)
    "swarm.activated": Expect("minimal", ACTIVE, 0, 8, (3, 0, 0),
                              {"worker": (2, 0), "coordinator": (1, 0)}, True,
                              {3: LIVE, 4: LIVE, 5: LIVE, 6: NOBODY}),
    # a6 seated (10), amend (11), a3 accepts v2 (12), a6 leaves (13)
    "swarm.amended": Expect("minimal", ACTIVE, 0, 13, (3, 0, 0),
                            {"worker": (2, 0), "coordinator": (1, 0)}, True,
                            {3: LIVE, 4: LIVE, 5: LIVE, 6: (M_EXITED, X_LEFT)}),
    "swarm.concluded": Expect("minimal", CONCLUDING, 0, 14, (3, 0, 0),
                              {"worker": (2, 0), "coordinator": (1, 0)}, True,
                              {3: LIVE, 4: LIVE, 5: LIVE, 6: (M_EXITED, X_LEFT)}),
    # the dissolve inside the settlement window reverted; the one after it is revision 15
    "swarm.dissolved": Expect("minimal", DISSOLVED, 0, 15, (0, 0, 0),
                              {"worker": (0, 0), "coordinator": (0, 0)}, False,
                              {3: (M_EXITED, X_DISSOLVED), 4: (M_EXITED, X_DISSOLVED),
                               5: (M_EXITED, X_DISSOLVED), 6: (M_EXITED, X_LEFT)}),
    # challenged: form (1), three seats (7), activate (8), challenge a4 (9), enforceRoster (10)
    "swarm.suspended": Expect("challenged", SUSPENDED, 0, 10, (2, 1, 0),
                              {"worker": (1, 1), "coordinator": (1, 0)}, False,
                              {3: LIVE, 4: SUSP, 5: LIVE}),
    "swarm.reinstated": Expect("challenged", SUSPENDED, 0, 11, (3, 0, 0),
                               {"worker": (2, 0), "coordinator": (1, 0)}, True,
                               {3: LIVE, 4: LIVE, 5: LIVE}),
    "swarm.resumed": Expect("challenged", ACTIVE, 0, 12, (3, 0, 0),
                            {"worker": (2, 0), "coordinator": (1, 0)}, True,
                            {3: LIVE, 4: LIVE, 5: LIVE, 6: NOBODY}),
    # a6 seated (14), challenged (15), expel inside the grace reverted, expel (16)
    "swarm.expelled": Expect("challenged", ACTIVE, 0, 16, (3, 0, 0),
                             {"worker": (2, 0), "coordinator": (1, 0)}, True,
                             {3: LIVE, 4: LIVE, 5: LIVE, 6: (M_EXITED, X_INELIGIBLE)}),
    # tender: form (1), coordinator (3), four joins (7), a8 applies (8), activate (9),
    # a6 suspended (10), SELECT advance (11): generation 1 holds a3, a4, a5 only
    "swarm.select-advanced": Expect("tender", ACTIVE, 1, 11, (3, 0, 0),
                                    {"coordinator": (1, 0), "worker": (2, 0), "bidder": (0, 0)},
                                    True,
                                    {3: LIVE, 4: LIVE, 5: LIVE, 6: (M_EXITED, X_NOT_CARRIED),
                                     7: (M_EXITED, X_NOT_CARRIED), 8: (M_EXITED, X_NOT_CARRIED)}),
    # challenge a5 (12), substitute a5 -> a7 (13), a7 accepts (14)
    "swarm.substituted": Expect("tender", ACTIVE, 1, 14, (3, 0, 0),
                                {"coordinator": (1, 0), "worker": (2, 0), "bidder": (0, 0)},
                                True,
                                {3: LIVE, 4: LIVE, 5: (M_EXITED, X_REPLACED), 7: LIVE,
                                 6: (M_EXITED, X_NOT_CARRIED), 8: (M_EXITED, X_NOT_CARRIED)}),
    # pipeline: form (1), three seats (7), activate (8), a5 suspended (9), a6 applies (10),
    # INHERIT advance (11): nothing exits, generation 0 stays live
    "swarm.inherit-advanced": Expect("pipeline", ACTIVE, 1, 11, (2, 1, 1),
                                     {"worker": (2, 1), "verifier": (0, 0)}, True,
                                     {3: LIVE, 4: LIVE, 5: SUSP, 6: CANDIDATE}),
    "swarm.inherit-completed": Expect("pipeline", ACTIVE, 1, 12, (3, 1, 0),
                                      {"worker": (2, 1), "verifier": (1, 0)}, True,
                                      {3: LIVE, 4: LIVE, 5: SUSP, 6: LIVE}),
    # lying: form (1), three seats (7), activate (8); a4 leaves (9), the caches lie
    "swarm.lying-activated": Expect("lying", ACTIVE, 0, 8, (3, 0, 0),
                                    {"worker": (2, 0), "coordinator": (1, 0)}, True,
                                    {3: LIVE, 4: LIVE, 5: LIVE}),
    "swarm.roster-lies": Expect("lying", ACTIVE, 0, 9, (2, 0, 0),
                                {"worker": (1, 0), "coordinator": (1, 0)},
                                True,  # the cached answer; storage has 1 worker < min 2
                                {3: LIVE, 4: LIVE, 5: LIVE}),  # a4: the cached ACTIVE
}

DISSOLVED_SEAT = (M_EXITED, X_DISSOLVED)
NOT_CARRIED = (M_EXITED, X_NOT_CARRIED)
LEFT = (M_EXITED, X_LEFT)
EXPECTED.update({  # extend(), after every history
    # tender: conclude (15), dissolve by the DISSOLVE authority (16); the lazy exits keep the
    # NOT_CARRIED and REPLACED seats, every remaining one is SWARM_DISSOLVED
    "swarm.tender-dissolved": Expect("tender", DISSOLVED, 1, 16, (0, 0, 0),
                                     {"coordinator": (0, 0), "worker": (0, 0), "bidder": (0, 0)},
                                     False,
                                     {3: DISSOLVED_SEAT, 4: DISSOLVED_SEAT, 7: DISSOLVED_SEAT,
                                      5: (M_EXITED, X_REPLACED), 6: NOT_CARRIED,
                                      8: NOT_CARRIED}),
    # recruit: form (1), two seats (5), activate (6), RECRUIT advance (7): nobody carried
    "swarm.recruit-advanced": Expect("recruit", ACTIVE, 1, 7, (0, 0, 0), {"worker": (0, 0)},
                                     False, {3: NOT_CARRIED, 4: NOT_CARRIED}),
    # conclude (8), dissolve (9): the NOT_CARRIED seats stay NOT_CARRIED
    "swarm.recruit-dissolved": Expect("recruit", DISSOLVED, 1, 9, (0, 0, 0), {"worker": (0, 0)},
                                      False, {3: NOT_CARRIED, 4: NOT_CARRIED}),
    # quorum (FORMING): form (1), three workers (7): total 3 >= 3, coordinator 0 < 1
    "swarm.roles-short": Expect("quorum", FORMING, 0, 7, (3, 0, 0),
                                {"worker": (3, 0), "coordinator": (0, 0)}, False,
                                {3: LIVE, 4: LIVE, 5: LIVE, 6: NOBODY}),
    # the coordinator (9)
    "swarm.quorum-met": Expect("quorum", FORMING, 0, 9, (4, 0, 0),
                               {"worker": (3, 0), "coordinator": (1, 0)}, True,
                               {3: LIVE, 4: LIVE, 5: LIVE, 6: LIVE}),
    # a3 and a4 leave (11): every role at its min, total 2 < 3
    "swarm.total-short": Expect("quorum", FORMING, 0, 11, (2, 0, 0),
                                {"worker": (1, 0), "coordinator": (1, 0)}, False,
                                {3: LEFT, 4: LEFT, 5: LIVE, 6: LIVE}),
    # abort by the ABORT authority (12): DISSOLVED, every remaining seat SWARM_DISSOLVED
    "swarm.aborted": Expect("quorum", DISSOLVED, 0, 12, (0, 0, 0),
                            {"worker": (0, 0), "coordinator": (0, 0)}, False,
                            {3: LEFT, 4: LEFT, 5: DISSOLVED_SEAT, 6: DISSOLVED_SEAT}),
})

FINAL_REVISIONS = {"minimal": 15, "challenged": 16, "tender": 16, "pipeline": 12, "lying": 9,
                   "recruit": 9, "quorum": 12}
# the n-th formation on its registry (the lying registry forms only "lying")
FORMATION_INDEX = {"minimal": 1, "challenged": 2, "tender": 3, "pipeline": 4, "lying": 1,
                   "recruit": 5, "quorum": 6}


def _role_id(name: str) -> bytes:
    return keccak(f"sai.role.{name}".encode())  # §3.2 reserved role identifiers


@pytest.fixture(scope="module")
def chain(devnet):
    node, manifest = devnet
    w3 = Web3(Web3.HTTPProvider(node.url))
    contracts = {
        name: w3.eth.contract(address=manifest["contracts"][name],
                              abi=load_artifact(name)["abi"])
        for name in ("SwarmRegistry", "LyingSwarmRegistry")
    }
    return w3, manifest, contracts


def _swarm(chain, name):
    _, manifest, contracts = chain
    s = manifest["swarm"]["swarms"][name]
    return contracts[s["registry"]], bytes.fromhex(s["id"][2:]), s


def _record(registry, swarm_id, block) -> dict:
    fn = registry.functions.getSwarm(swarm_id)
    names = [c["name"] for c in fn.abi["outputs"][0]["components"]]
    return dict(zip(names, fn.call(block_identifier=block), strict=True))


def _member(registry, swarm_id, account, block) -> dict:
    fn = registry.functions.getMember(swarm_id, account)
    names = [c["name"] for c in fn.abi["outputs"][0]["components"]]
    return dict(zip(names, fn.call(block_identifier=block), strict=True))


def _refusal(w3, block_number: int) -> bytes:
    """Replay the (reverted) transaction of ``block_number`` on the state before it, at its own
    timestamp; returns the revert data."""
    block = w3.eth.get_block(block_number, full_transactions=True)
    (tx,) = block["transactions"]
    assert w3.eth.get_transaction_receipt(tx["hash"])["status"] == 0
    call = {"from": tx["from"], "to": tx["to"], "data": tx["input"].to_0x_hex(),
            "gas": hex(tx["gas"])}
    reply = w3.provider.make_request(
        "eth_call", [call, hex(block_number - 1), {}, {"time": hex(block["timestamp"])}])
    return bytes.fromhex(reply["error"]["data"][2:])


def _selector(error: str) -> bytes:
    return keccak(error.encode())[:4]


def test_every_swarm_moment_has_an_expectation(chain):
    _, manifest, _ = chain
    named = {label for label in manifest["moments"] if label.startswith("swarm.")}
    assert named == set(EXPECTED)
    assert set(manifest["swarm"]["moments"]) == named


@pytest.mark.parametrize("label", sorted(EXPECTED))
def test_views_at_moment(chain, label):
    w3, manifest, _ = chain
    want = EXPECTED[label]
    assert manifest["swarm"]["moments"][label]["swarm"] == want.swarm
    registry, sid, s = _swarm(chain, want.swarm)
    block = manifest["moments"][label]["number"]
    f = registry.functions
    record = _record(registry, sid, block)
    assert (record["state"], record["phase"]) == (want.state, want.phase)
    assert manifest["swarm"]["moments"][label]["phase"] == want.phase
    assert f.revisionOf(sid).call(block_identifier=block) == want.revision
    assert record["revision"] == want.revision
    assert tuple(f.memberCount(sid).call(block_identifier=block)) == want.counts
    for role, counts in want.roles.items():
        assert tuple(f.roleCount(sid, _role_id(role)).call(block_identifier=block)) == counts, role
    assert f.rosterMet(sid).call(block_identifier=block) is want.roster_met
    accounts = manifest["accounts"]
    for index, status in want.statuses.items():
        got = tuple(f.memberStatus(sid, accounts[index]).call(block_identifier=block))
        assert got == status, (index, got)


def test_revision_equals_changed_events(chain):
    """§5.4: at the end, each swarm's revision is the number of its Changed events."""
    w3, manifest, _ = chain
    assert set(manifest["swarm"]["swarms"]) == set(FINAL_REVISIONS)
    for name, revisions in FINAL_REVISIONS.items():
        registry, sid, s = _swarm(chain, name)
        logs = registry.events.Changed.get_logs(from_block=s["formed_block"],
                                                argument_filters={"swarmId": sid})
        assert [log["args"]["revision"] for log in logs] == list(range(1, revisions + 1))
        assert registry.functions.revisionOf(sid).call() == revisions


def test_manifest_names_what_was_formed(chain):
    """Spec hash (§3.1), formation block, roles with reserved ids (§3.2), phases."""
    w3, manifest, _ = chain
    for name in FINAL_REVISIONS:
        registry, sid, s = _swarm(chain, name)
        # n-th formation: keccak256(abi.encode(chainid, registry, n)) (contracts README)
        n = FORMATION_INDEX[name]
        preimage = (manifest["chain_id"].to_bytes(32, "big")
                    + bytes(12) + bytes.fromhex(registry.address[2:]) + n.to_bytes(32, "big"))
        assert sid == keccak(preimage)
        formed = registry.events.SwarmFormed.get_logs(
            from_block=s["formed_block"], to_block=s["formed_block"])
        assert [log["args"]["swarmId"] for log in formed] == [sid]
        assert "0x" + formed[0]["args"]["specHash"].hex() == s["spec_hash"]
        for role in s["roles"]:
            assert role["id"] == "0x" + _role_id(role["name"]).hex()
        for member in s["members"]:
            assert member["address"] == manifest["accounts"][member["account_index"]]
            assert member["role_id"] == "0x" + _role_id(member["role"]).hex()
    phases = manifest["swarm"]["swarms"]["tender"]["phases"]
    assert [(p["name"], p["boundary"], p["admission"]) for p in phases] == [
        ("bidding", "OPEN", "RECRUIT"), ("execution", "CLOSED", "SELECT")]


def test_minimal_both_orders_and_activation(chain):
    """§6.2: a3's member side came first, a4's authority side; §5.2 hardDeadline."""
    w3, manifest, _ = chain
    registry, sid, _ = _swarm(chain, "minimal")
    a = manifest["accounts"]
    block = manifest["moments"]["swarm.candidates"]["number"]
    m3, m4 = (_member(registry, sid, a[i], block) for i in (3, 4))
    assert (m3["admitted"], m3["acceptedCharterVersion"]) == (False, 1)
    assert (m4["admitted"], m4["acceptedCharterVersion"]) == (True, 0)
    activated = manifest["moments"]["swarm.activated"]
    record = _record(registry, sid, activated["number"])
    assert record["activatedAt"] == activated["timestamp"]
    assert record["hardDeadline"] == activated["timestamp"] + 30 * 86_400  # maxDuration


def test_material_amendment_and_leave_on_amendment(chain):
    """§9.1: the objective changed, so commitmentVersion 2 and an exit window of 900 s;
    a6 (v1 only) left inside it with onAmendment; a4 still has v1, a3 accepted v2."""
    w3, manifest, _ = chain
    registry, sid, s = _swarm(chain, "minimal")
    a = manifest["accounts"]
    block = manifest["moments"]["swarm.amended"]["number"]
    record = _record(registry, sid, block)
    assert (record["charterVersion"], record["commitmentVersion"]) == (2, 2)
    assert "0x" + record["charterHash"].hex() == s["charters"][1]["hash"]
    amended = registry.events.CharterAmended.get_logs(from_block=s["formed_block"],
                                                      to_block=block)
    (event,) = [e for e in amended if e["args"]["swarmId"] == sid]
    assert event["args"]["material"] is True
    assert record["exitWindowUntil"] == w3.eth.get_block(event["blockNumber"])["timestamp"] + 900
    assert "0x" + registry.functions.objectiveOf(sid).call(
        block_identifier=block)[0].hex() == s["objective_hashes"][1]
    accepted = registry.functions.acceptedCharterOf
    assert accepted(sid, a[3]).call(block_identifier=block)[1:] == [2, 2]
    assert accepted(sid, a[4]).call(block_identifier=block)[1:] == [1, 1]
    exits = registry.events.MemberExited.get_logs(from_block=s["formed_block"], to_block=block)
    assert [(e["args"]["account"], e["args"]["reason"], e["args"]["onAmendment"])
            for e in exits if e["args"]["swarmId"] == sid] == [(a[6], X_LEFT, True)]


def test_conclusion_and_dissolution(chain):
    """§8 / §11.2: the judge concluded ACHIEVED with reason ACCEPTANCE; dissolved later by a
    stranger after the settlement window (1800 s)."""
    w3, manifest, _ = chain
    registry, sid, _ = _swarm(chain, "minimal")
    concluded = manifest["moments"]["swarm.concluded"]
    dissolved = manifest["moments"]["swarm.dissolved"]
    record = _record(registry, sid, dissolved["number"])
    assert (record["outcome"], record["reason"]) == (O_ACHIEVED, R_ACCEPTANCE)
    assert record["concludedAt"] == concluded["timestamp"]
    assert record["dissolvedAt"] == dissolved["timestamp"] == concluded["timestamp"] + 1801
    # the refused dissolve at concludedAt + 1800 is on chain, one block before (§18 error)
    refused = dissolved["number"] - 1
    assert w3.eth.get_block(refused)["timestamp"] == concluded["timestamp"] + 1800
    assert _refusal(w3, refused) == _selector("SAI_WindowOpen()")


def test_challenge_suspension_causes(chain):
    """§6.4 / §5.2: the swarm suspended ROSTER_LOST with a4 SUSPENDED(INELIGIBLE); the resume
    cleared the reason; a6 was expelled one second after its 600 s grace."""
    w3, manifest, _ = chain
    registry, sid, _ = _swarm(chain, "challenged")
    a = manifest["accounts"]
    suspended = manifest["moments"]["swarm.suspended"]["number"]
    assert _record(registry, sid, suspended)["suspensionReason"] == R_ROSTER_LOST
    assert _member(registry, sid, a[4], suspended)["suspensionCause"] == C_INELIGIBLE
    resumed = manifest["moments"]["swarm.resumed"]["number"]
    assert _record(registry, sid, resumed)["suspensionReason"] == 0
    expelled = manifest["moments"]["swarm.expelled"]
    challenged = registry.events.MemberSuspended.get_logs(
        from_block=resumed, to_block=expelled["number"], argument_filters={"swarmId": sid})
    (event,) = challenged
    assert event["args"]["account"] == a[6]
    t = w3.eth.get_block(event["blockNumber"])["timestamp"]
    assert expelled["timestamp"] == t + 600 + 1
    # the expel at exactly suspendedAt + grace was refused on chain, one block before
    assert w3.eth.get_block(expelled["number"] - 1)["timestamp"] == t + 600
    assert _refusal(w3, expelled["number"] - 1) == _selector("SAI_GraceRunning()")


def test_select_and_substitution(chain):
    """§7.2 SELECT renamed two bidders to workers; §6.3 a7's seat was opened by substitution
    in the CLOSED phase and completed there (admittedPhase = carriedPhase = 1)."""
    w3, manifest, _ = chain
    registry, sid, _ = _swarm(chain, "tender")
    a = manifest["accounts"]
    block = manifest["moments"]["swarm.substituted"]["number"]
    record = _record(registry, sid, block)
    assert (record["phase"], record["rosterPhase"]) == (1, 1)
    assert _member(registry, sid, a[4], block)["roleId"] == _role_id("worker")
    assert _member(registry, sid, a[3], block)["roleId"] == _role_id("coordinator")
    m7 = _member(registry, sid, a[7], block)
    assert (m7["substituted"], m7["admittedPhase"], m7["carriedPhase"]) == (True, 1, 1)
    assert m7["roleId"] == _role_id("worker")
    assert registry.functions.phaseSpecOf(sid, 1).call()[4] == 2  # CLOSED


def test_inherit_keeps_generation(chain):
    """§7.2 INHERIT: rosterPhase stays 0, a5 keeps SUSPENDED(AUTHORITY), a6's pending seat
    completes in phase 1."""
    w3, manifest, _ = chain
    registry, sid, _ = _swarm(chain, "pipeline")
    a = manifest["accounts"]
    block = manifest["moments"]["swarm.inherit-completed"]["number"]
    assert _record(registry, sid, block)["rosterPhase"] == 0
    assert _member(registry, sid, a[5], block)["suspensionCause"] == C_AUTHORITY
    m6 = _member(registry, sid, a[6], block)
    assert (m6["admittedPhase"], m6["carriedPhase"]) == (1, 1)


def test_lying_registry_views_disagree_with_its_honest_getters(chain):
    """At swarm.roster-lies a4 left (getMember, not overridden, says EXITED(LEFT)) while the
    lying memberStatus says ACTIVE; the cached rosterMet flag is set."""
    w3, manifest, _ = chain
    registry, sid, _ = _swarm(chain, "lying")
    a = manifest["accounts"]
    lies = manifest["moments"]["swarm.roster-lies"]["number"]
    m4 = _member(registry, sid, a[4], lies)
    assert (m4["status"], m4["exitReason"]) == (M_EXITED, X_LEFT)
    assert registry.functions.rosterMetCached(sid).call(block_identifier=lies) is True
    before = manifest["moments"]["swarm.lying-activated"]["number"]
    assert registry.functions.rosterMetCached(sid).call(block_identifier=before) is False
