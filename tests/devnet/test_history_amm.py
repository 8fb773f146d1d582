"""The devnet's AMM history, checked through the registries' own views at each named moment.

Expected values are written out by hand from the script (``recompute/devnet/history_amm.py``:
its cast and timestamps) and from the AMM specification (§Test Cases: the worked example's roots,
commitments and record fields; §Status derivation for deadlines), never read back from the
history module. Every view is an ``eth_call`` at the moment's block.
"""

from __future__ import annotations

import pytest
from eth_abi import encode
from eth_hash.auto import keccak
from web3.exceptions import ContractCustomError
from web3.logs import DISCARD

from recompute.devnet.contracts import connect, load_artifact

ZERO = "0x" + "00" * 20
Z32 = b"\x00" * 32

# AMM §Interface enums
UNSCHEDULED, FRESH, DUE, OVERDUE = 2, 3, 4, 5
PRESENT, SILENT = 2, 3
COMPLETED, PARTIAL, ABORTED, FAILED = 0, 1, 2, 3


def h32(text: str) -> bytes:
    return bytes.fromhex(text.removeprefix("0x"))


# AMM §Test Cases (worked example)
PRE = [h32(x) for x in (
    "0x053bdcecda479dd30b5bfd7a02661df67b79e978fea6888245df8aa167d6d282",
    "0x3a8a0162793df87f7094634e37d9e5d3d8470bd43cc7fee5669f609d922ee9c3",
    "0x3d3356ae1bc86136718f1ecd7f42d8a0570db2d21116c886cab291a789010585",
    "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e")]
POST = [h32(x) for x in (
    "0xb5a33b6d3732e664a08a19ed068432a6ab1085bf7013b3ffce1ff88ec7dd8519",
    "0xd24fedfca7a64b7596414751a6d4a1ed7a89bf906bce4b453453a7b086d26641",
    "0x8f03de4a144d8d453c84d2d4546fb0f01af23bd6f7ba31d18dac0c6dd1a942f0",
    "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e")]
PRE_ROOT = h32("0x090e63d66e6cdb08331fece350bd0320551287d53d6644d5af158b04d94d149f")
POST_ROOT = h32("0x9918ebff7f3bc97ca08580033da3aa99b27871d8d57b2b8c9845221fa3dec3de")
POLICY_HASH = h32("0x5dfdd440a0eced1f62839fa0281f21cadacfa0f527642ea586b5f5c1ce5e41d9")
RECORD_HASH = h32("0xdcbc7047b5bf0d600b98d7829fc37757bdac9406ec992128cc90e910e9645088")
EX_INTERVALS = [86400, 604800, 2592000, 7776000]
TAG_STATE_ROOT = h32("0xe2251470d039826c2565c6e003924bb890e07cd981b370528c245e47f1c3e7c6")

# the script's timepoints
EX_ENROLLED, CT_ENROLLED, PU_ENROLLED, LY_ENROLLED = (1762650000, 1762650012, 1762650024,
                                                      1762650036)
CT_INTERVALS = [86400, 172800, 259200, 345600]

MOMENTS = {
    "amm.enrolled": 1762650036, "amm.operators-set": 1762650072,
    "amm.after-cycle-1": 1762654800, "amm.partial": 1762655400, "amm.aborted": 1762656000,
    "amm.failed": 1762656600, "amm.operator-pulsed": 1762657200,
    "amm.false-restore": 1762658000, "amm.false-restore-rejected": 1762658012,
    "amm.demanded": 1762660000, "amm.demand-not-met": 1762665000,
    "amm.demand-cleared": 1762670000, "amm.operator-revoked": 1762671000,
    "amm.silent-fresh": 1762700000, "amm.rollback": 1762710000, "amm.due": 1762733000,
    "amm.overdue": 1762736424, "amm.present-overdue": 1762737000,
    "amm.interval-elapsed": 1762995612, "amm.policy-lengthened": 1762996000,
    "amm.floor-set": 1762996600, "amm.floor-holds": 1762997200,
    # extend(): after every history; E = the swarm history's last block (1763100398) + 100
    # enrols ``demanded``, E + 12 = W ``window``
    "amm.demand-outstanding": 1763100498 + 1000, "amm.signal-window-ends": 1763100510 + 3600,
    "amm.signal-silent-by-one": 1763100510 + 3601, "amm.demand-overdue": 1763100498 + 40000,
    "amm.demand-not-raised": 1763100498 + 86400, "amm.lying-rollback": 1763186910,
    "amm.restore-no-advance": 1763186922, "amm.restore-equal-base": 1763186934,
    "amm.restore-above-base": 1763186946,
}


def state_root(commitments) -> bytes:
    """AMM §Commitment format, computed here."""
    return keccak(encode(["bytes32"] * 5, [TAG_STATE_ROOT, *commitments]))


def plain(value):
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class Amm:
    """The devnet's two registries and cast, with views evaluated at named moments."""

    def __init__(self, devnet):
        node, self.manifest = devnet
        self.w3 = connect(node.url)
        abi = {n: load_artifact(n)["abi"] for n in ("AgentMeditationRegistry",
                                                     "LyingMeditationRegistry")}
        self.honest = self.w3.eth.contract(
            address=self.manifest["contracts"]["AgentMeditationRegistry"],
            abi=abi["AgentMeditationRegistry"])
        self.liar = self.w3.eth.contract(
            address=self.manifest["contracts"]["LyingMeditationRegistry"],
            abi=abi["LyingMeditationRegistry"])
        acc = self.manifest["accounts"]
        self.example, self.controlled, self.controller = acc[1], acc[2], acc[3]
        self.reporter, self.pulse_op, self.policy_op, self.pulser = acc[4], acc[5], acc[6], acc[7]

    def moment(self, label: str) -> dict:
        return self.manifest["moments"][label]

    def at(self, label: str, fn):
        """The view call ``fn`` evaluated at moment ``label``'s block."""
        return plain(fn.call(block_identifier=self.moment(label)["number"]))

    def head(self, label, subject, registry=None):
        reg = registry or self.honest
        return self.at(label, reg.functions.headOf(subject))

    def checkpoint(self, label, subject, layer, registry=None):
        reg = registry or self.honest
        return self.at(label, reg.functions.checkpointOf(subject, layer))

    def status(self, label, subject, layer, registry=None):
        reg = registry or self.honest
        return self.at(label, reg.functions.layerStatus(subject, layer))

    def signal(self, label, subject, registry=None):
        reg = registry or self.honest
        return self.at(label, reg.functions.signalStatus(subject))

    def receipt(self, label: str) -> dict:
        """The receipt of the (only) transaction of the moment's block."""
        block = self.w3.eth.get_block(self.moment(label)["number"])
        assert len(block["transactions"]) == 1
        return self.w3.eth.get_transaction_receipt(block["transactions"][0])

    def events(self, label: str, name: str, registry=None) -> list:
        reg = registry or self.honest
        return [e["args"] for e in getattr(reg.events, name)().process_receipt(
            self.receipt(label), errors=DISCARD)]


@pytest.fixture(scope="module")
def amm(devnet):
    return Amm(devnet)


def test_moments_named_at_the_scripted_times(amm):
    moments = {k: v for k, v in amm.manifest["moments"].items() if k.startswith("amm.")}
    assert {k: v["timestamp"] for k, v in moments.items()} == MOMENTS
    numbers = [moments[k]["number"] for k in MOMENTS]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    for label, m in moments.items():
        block = amm.w3.eth.get_block(m["number"])
        assert block["hash"].to_0x_hex() == m["hash"], label
        assert block["timestamp"] == m["timestamp"], label


def test_manifest_names_the_cast(amm):
    section = amm.manifest["amm"]
    subjects = section["subjects"]
    assert {k: (v["registry"], v["address"]) for k, v in subjects.items()} == {
        "example": ("AgentMeditationRegistry", amm.example),
        "controlled": ("AgentMeditationRegistry", amm.controlled),
        "pulser": ("AgentMeditationRegistry", amm.pulser),
        "lying-example": ("LyingMeditationRegistry", amm.example),
        "demanded": ("AgentMeditationRegistry", amm.manifest["accounts"][8]),  # extend()
        "window": ("AgentMeditationRegistry", amm.manifest["accounts"][9]),
    }
    assert subjects["controlled"]["controller"] == amm.controller
    assert subjects["controlled"]["controller_rights"] == 7
    assert {k: (v["address"], v["permissions"])
            for k, v in subjects["controlled"]["operators"].items()} == {
        "reporter": (amm.reporter, 1), "pulse-operator": (amm.pulse_op, 2),
        "policy-operator": (amm.policy_op, 4)}
    assert subjects["example"]["controller"] == subjects["pulser"]["controller"] == ZERO
    example = section["worked_example"]
    assert example["pre_root"] == "0x" + PRE_ROOT.hex()
    assert example["post_root"] == "0x" + POST_ROOT.hex()
    assert example["post_commitments"] == ["0x" + c.hex() for c in POST]


@pytest.mark.parametrize("name", ["example", "controlled", "pulser", "lying-example"])
def test_manifest_roots_are_the_registries_roots(amm, name):
    subject = amm.manifest["amm"]["subjects"][name]
    reg = amm.honest if subject["registry"] == "AgentMeditationRegistry" else amm.liar
    last = "amm.restore-above-base"  # the AMM history's last moment (extend())
    versions = subject["state_versions"]
    assert len(versions) == amm.head(last, subject["address"], reg)[5]  # stateVersion
    for version, entry in versions.items():
        commitments = [h32(c) for c in entry["commitments"]]
        assert entry["root"] == "0x" + state_root(commitments).hex()
        assert amm.at(last, reg.functions.rootAt(subject["address"], int(version))) == h32(
            entry["root"])


def test_enrolled(amm):
    t = "amm.enrolled"
    # (enrolled, controller, rights, policyVersion, floorVersion, stateVersion, recordCount,
    #  root, enrolledAt, lastSignalAt, nextPlannedAt)
    assert amm.head(t, amm.example) == [True, ZERO, 0, 1, 0, 1, 0, PRE_ROOT, EX_ENROLLED,
                                        EX_ENROLLED, 0]
    head = amm.head(t, amm.controlled)
    assert head[:7] == [True, amm.controller, 7, 1, 0, 1, 0]
    assert head[8:] == [CT_ENROLLED, CT_ENROLLED, 0]
    assert amm.head(t, amm.pulser)[:3] == [True, ZERO, 0]
    assert amm.head(t, amm.example, amm.liar) == [True, ZERO, 0, 1, 0, 1, 0, PRE_ROOT,
                                                  LY_ENROLLED, LY_ENROLLED, 0]
    for layer in range(4):
        # the baseline is not a completion (AMM §Roles and authorization)
        assert amm.checkpoint(t, amm.example, layer) == [PRE[layer], 0, 0, 0, 1]
        assert amm.status(t, amm.example, layer) == [FRESH, EX_ENROLLED + EX_INTERVALS[layer],
                                                     True]
    assert amm.at(t, amm.honest.functions.policyOf(amm.example, 1)) == [
        POLICY_HASH, "", 0x0F, 0x0F, 0x0F, 0, 3600, 21600, EX_INTERVALS]


def test_operators_with_each_permission(amm):
    perms = amm.honest.functions.operatorPermissions
    ops = (amm.reporter, amm.pulse_op, amm.policy_op)
    assert [amm.at("amm.enrolled", perms(amm.controlled, o)) for o in ops] == [0, 0, 0]
    assert [amm.at("amm.operators-set", perms(amm.controlled, o)) for o in ops] == [1, 2, 4]
    assert amm.at("amm.operators-set", perms(amm.controlled, amm.controller)) == 0
    # the controller (RIGHT_REVOKE_OPERATORS) revoked the pulse operator
    assert [amm.at("amm.operator-revoked", perms(amm.controlled, o)) for o in ops] == [1, 0, 4]
    (event,) = amm.events("amm.operator-revoked", "OperatorSet")
    assert (event["operator"], event["permissions"], event["by"]) == (
        amm.pulse_op, 0, amm.controller)


def test_worked_example_after_cycle_1(amm):
    """AMM §Test Cases, Expected effects."""
    t = "amm.after-cycle-1"
    assert amm.head(t, amm.example) == [True, ZERO, 0, 1, 0, 2, 1, POST_ROOT, EX_ENROLLED,
                                        1762654800, 1762740000]
    for layer in range(4):
        changed = 1 if layer == 3 else 2
        assert amm.checkpoint(t, amm.example, layer) == [POST[layer], 1762654500, 1762654800,
                                                         1, changed]
        assert amm.status(t, amm.example, layer) == [FRESH, 1762654500 + EX_INTERVALS[layer],
                                                     False]
    rootat = amm.honest.functions.rootAt
    assert amm.at(t, rootat(amm.example, 1)) == PRE_ROOT
    assert amm.at(t, rootat(amm.example, 2)) == POST_ROOT
    (event,) = amm.events(t, "CycleRecorded")
    assert (event["seq"], event["baseVersion"], event["newVersion"]) == (1, 1, 2)
    assert (event["changedLayers"], event["recordedAt"], event["submitter"]) == (
        0x07, 1762654800, amm.example)
    assert plain(list(event["report"].values())) == [
        1, PRE_ROOT, POST, 0x0F, 0x0F, 0x0456, COMPLETED, 1, 1, 1762653600, 1762654500,
        1762740000, 0, RECORD_HASH, ""]


def test_partial_cycle_moves_only_completed_layers(amm):
    t = "amm.partial"
    head = amm.head(t, amm.controlled)
    assert (head[5], head[6], head[9], head[10]) == (2, 1, 1762655400, 1762740000)
    for layer in (0, 1):
        assert amm.checkpoint(t, amm.controlled, layer)[1:] == [1762655000, 1762655400, 1, 2]
    for layer in (2, 3):
        assert amm.checkpoint(t, amm.controlled, layer)[1:] == [0, 0, 0, 1]
    assert [amm.status(t, amm.controlled, i)[1] for i in range(4)] == [
        1762655000 + 86400, 1762655000 + 172800, CT_ENROLLED + 259200, CT_ENROLLED + 345600]
    (event,) = amm.events(t, "CycleRecorded")
    assert (event["report"]["outcome"], event["changedLayers"], event["submitter"]) == (
        PARTIAL, 0x03, amm.reporter)


def test_aborted_and_failed_cycles(amm):
    aborted, failed = "amm.aborted", "amm.failed"
    # ABORTED: layer 2 completed, nothing changed: the state version stays 2
    assert amm.head(aborted, amm.controlled)[5:7] == [2, 2]
    assert amm.checkpoint(aborted, amm.controlled, 2)[1:] == [1762655900, 1762656000, 1, 1]
    (event,) = amm.events(aborted, "CycleRecorded")
    assert (event["report"]["outcome"], event["changedLayers"], event["newVersion"]) == (
        ABORTED, 0, 2)
    # FAILED: no completion, no change, submitted by the subject itself
    assert amm.head(failed, amm.controlled)[5:7] == [2, 3]
    for layer in range(4):
        assert amm.checkpoint(failed, amm.controlled, layer) == amm.checkpoint(
            aborted, amm.controlled, layer)
    (event,) = amm.events(failed, "CycleRecorded")
    assert (event["report"]["outcome"], event["report"]["completedLayers"],
            event["submitter"]) == (FAILED, 0, amm.controlled)


def test_operator_pulse_changes_signal_only(amm):
    t = "amm.operator-pulsed"
    head, before = amm.head(t, amm.controlled), amm.head("amm.failed", amm.controlled)
    assert head[6] == 4 and head[9:] == [1762657200, 1762700000]
    assert head[:6] + head[7:9] == before[:6] + before[7:9]
    for layer in range(4):
        assert amm.checkpoint(t, amm.controlled, layer) == amm.checkpoint(
            "amm.failed", amm.controlled, layer)
        assert amm.status(t, amm.controlled, layer)[1] == amm.status(
            "amm.failed", amm.controlled, layer)[1]
    (event,) = amm.events(t, "Pulsed")
    assert event["submitter"] == amm.pulse_op


def false_restore_record() -> tuple:
    """The false restore as the script words it: layer 0 back to the pre state, layers 1..3
    the post state, claiming restoresVersion 1."""
    return (2, POST_ROOT, [PRE[0], *POST[1:]], 0x01, 0x01, 0x0002, COMPLETED, 1, 1,
            1762657000, 1762657800, 0, 1,
            keccak(b'{"cycle":"false restore of version 1","schema":"amm.cycle-record/1",'
                   b'"subject":"example"}'), "")


def test_false_restore_registered_by_the_liar(amm):
    t = "amm.false-restore"
    false_root = state_root([PRE[0], *POST[1:]])
    assert false_root not in (PRE_ROOT, POST_ROOT)
    head = amm.head(t, amm.example, amm.liar)
    assert (head[5], head[7]) == (3, false_root)
    assert amm.at(t, amm.liar.functions.rootAt(amm.example, 1)) == PRE_ROOT
    (event,) = amm.events(t, "CycleRecorded", amm.liar)
    assert plain(list(event["report"].values())) == plain(list(false_restore_record()))


def test_false_restore_rejected_by_the_honest_registry(amm):
    t = "amm.false-restore-rejected"
    receipt = amm.receipt(t)
    assert receipt["status"] == 0
    assert receipt["to"] == amm.honest.address
    assert receipt["transactionHash"].to_0x_hex() == \
        amm.manifest["amm"]["subjects"]["example"]["rejected_false_restore_tx"]
    assert amm.head(t, amm.example) == amm.head("amm.after-cycle-1", amm.example)
    # the same record, replayed against the state it met: rule "Restore claim"
    with pytest.raises(ContractCustomError) as err:
        amm.honest.functions.report(amm.example, false_restore_record()).call(
            {"from": amm.example}, block_identifier=amm.moment("amm.false-restore")["number"])
    assert "0x" + keccak(b"RestoreClaimInvalid()")[:4].hex() in str(err.value)


def test_demand_lowers_deadline_until_cleared(amm):
    demand = amm.honest.functions.demandOf
    d, nm, cl = "amm.demanded", "amm.demand-not-met", "amm.demand-cleared"
    for layer in (0, 1):
        assert amm.at(d, demand(amm.controlled, layer)) == [1762660000, 1762700000]
        assert amm.status(d, amm.controlled, layer) == [FRESH, 1762700000, False]
    assert amm.at(d, demand(amm.controlled, 2)) == [0, 0]
    # a completion that ended before demandedAt does not satisfy the demand (AMM §Demand)
    assert amm.checkpoint(nm, amm.controlled, 1)[1:3] == [1762658000, 1762665000]
    assert amm.at(nm, demand(amm.controlled, 1)) == [1762660000, 1762700000]
    assert amm.status(nm, amm.controlled, 1)[1] == 1762700000
    # one that ended at or after it clears it
    for layer in (0, 1):
        assert amm.at(cl, demand(amm.controlled, layer)) == [0, 0]
    assert amm.status(cl, amm.controlled, 0) == [FRESH, 1762669000 + 86400, False]
    assert amm.status(cl, amm.controlled, 1) == [FRESH, 1762669000 + 172800, False]
    head = amm.head(cl, amm.controlled)
    assert (head[5], head[7]) == (3, h32(
        amm.manifest["amm"]["subjects"]["controlled"]["state_versions"]["3"]["root"]))
    assert amm.checkpoint(cl, amm.controlled, 0)[4] == 3
    assert amm.checkpoint(cl, amm.controlled, 1)[4] == 2


def test_silent_and_fresh(amm):
    t = "amm.silent-fresh"
    # last signal 1762654800 (the example cycle) + pulse interval 21600 < 1762700000
    assert amm.signal(t, amm.example) == [SILENT, 1762654800, 1762676400]
    for layer in range(4):
        assert amm.status(t, amm.example, layer) == [FRESH, 1762654500 + EX_INTERVALS[layer],
                                                     False]


def test_rollback_restores_version_1(amm):
    t = "amm.rollback"
    head = amm.head(t, amm.example)
    assert (head[5], head[7], head[9]) == (3, PRE_ROOT, 1762710000)
    rootat = amm.honest.functions.rootAt
    assert [amm.at(t, rootat(amm.example, v)) for v in (1, 2, 3)] == [PRE_ROOT, POST_ROOT,
                                                                       PRE_ROOT]
    for layer in range(3):
        assert amm.checkpoint(t, amm.example, layer) == [PRE[layer], 1762709000, 1762710000,
                                                         1, 3]
    assert amm.checkpoint(t, amm.example, 3) == [PRE[3], 1762654500, 1762654800, 1, 1]
    (event,) = amm.events(t, "CycleRecorded")
    assert (event["report"]["restoresVersion"], event["changedLayers"],
            event["newVersion"]) == (1, 0x07, 3)


def test_pulses_only_due_then_overdue_while_present(amm):
    deadline = PU_ENROLLED + 86400  # never completed: judged from enrolment
    assert amm.status("amm.silent-fresh", amm.pulser, 0) == [FRESH, deadline, True]
    assert amm.status("amm.due", amm.pulser, 0) == [DUE, deadline, True]
    assert amm.status("amm.overdue", amm.pulser, 0) == [OVERDUE, deadline, True]
    assert amm.signal("amm.overdue", amm.pulser) == [PRESENT, 1762733000, 0]
    # another pulse moves no deadline
    assert amm.status("amm.present-overdue", amm.pulser, 0) == [OVERDUE, deadline, True]
    assert amm.signal("amm.present-overdue", amm.pulser) == [PRESENT, 1762737000, 0]
    for layer in (1, 2, 3):
        assert amm.status("amm.overdue", amm.pulser, layer) == [UNSCHEDULED, 0, True]
    head = amm.head("amm.present-overdue", amm.pulser)
    assert (head[5], head[6], head[9], head[10]) == (1, 3, 1762737000, 0)
    for layer in range(4):
        assert amm.checkpoint("amm.present-overdue", amm.pulser, layer)[1:] == [0, 0, 0, 1]


def test_policy_lengthens_interval_from_the_same_anchor(amm):
    # layer 3 never completed: judged from enrolment, policy v1 interval 345600
    assert amm.status("amm.interval-elapsed", amm.controlled, 3) == [
        OVERDUE, CT_ENROLLED + 345600, True]
    t = "amm.policy-lengthened"
    assert amm.head(t, amm.controlled)[3] == 2
    assert amm.at(t, amm.honest.functions.policyEffectiveFrom(amm.controlled, 2)) == 1762996000
    assert amm.status(t, amm.controlled, 3) == [FRESH, CT_ENROLLED + 691200, True]
    for layer in range(4):  # setting a policy changes no checkpoint
        assert amm.checkpoint(t, amm.controlled, layer) == amm.checkpoint(
            "amm.interval-elapsed", amm.controlled, layer)
    (event,) = amm.events(t, "PolicyUpdated")
    assert (event["version"], event["by"]) == (2, amm.policy_op)


def test_floor_and_relaxed_policy(amm):
    f = amm.honest.functions
    t = "amm.floor-set"
    assert amm.at(t, f.floorOf(amm.controlled)) == [0x08, 36000, [0, 0, 0, 432000]]
    assert amm.head(t, amm.controlled)[4] == 1
    assert amm.at(t, f.requirementsOf(amm.controlled)) == [
        0x0F, 0x0F, 3600, 36000, [86400, 172800, 259200, 432000]]
    assert amm.status(t, amm.controlled, 3) == [FRESH, CT_ENROLLED + 432000, True]
    # the subject drops layer 3 and the pulse: the floor still requires both
    t = "amm.floor-holds"
    assert amm.head(t, amm.controlled)[3] == 3
    policy = amm.at(t, f.policyOf(amm.controlled, 3))
    assert (policy[3], policy[7], policy[8]) == (0x07, 0, [86400, 172800, 259200, 0])
    assert amm.at(t, f.requirementsOf(amm.controlled)) == [
        0x0F, 0x0F, 3600, 36000, [86400, 172800, 259200, 432000]]
    assert amm.status(t, amm.controlled, 3) == [FRESH, CT_ENROLLED + 432000, True]


def test_liar_views_contradict_the_clock(amm):
    """The lying registry's deadline and lastSignalAt are honest; its status is not."""
    t = "amm.interval-elapsed"
    now = MOMENTS[t]
    status, deadline, never = amm.status(t, amm.example, 0, amm.liar)
    assert (status, deadline, never) == (FRESH, 1762657800 + 86400, False)
    assert now >= deadline  # AMM §Status derivation: OVERDUE
    assert amm.signal(t, amm.example, amm.liar) == [PRESENT, 1762658000, 0]
    assert now > 1762658000 + 21600  # AMM §Status derivation: SILENT
