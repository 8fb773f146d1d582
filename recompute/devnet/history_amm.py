"""The devnet's scripted history for the Agent Meditation registry (the AMM specification).

One honest :class:`AgentMeditationRegistry` and one :class:`LyingMeditationRegistry` are
deployed and driven through a fixed script, so that every verifier recipe of the AMM area
has real storage and real proofs to run against. The cast (anvil's dev accounts):

==========  ======================================================================
accounts[1] ``example``: the specification's worked example (AMM §Test Cases), no controller; later
            silent and fresh, then a rollback with ``restoresVersion`` 1.
accounts[2] ``controlled``: enrolled with a controller (accounts[3], all three rights) and
            three operators, one per permission (accounts[4] PERM_REPORT, accounts[5]
            PERM_PULSE, accounts[6] PERM_POLICY); PARTIAL, ABORTED and FAILED cycles, a
            demand that a late completion does not meet and a second completion clears, a
            revoked operator, an interval that elapses, a policy that lengthens it, a floor
            and a relaxed policy the floor holds against.
accounts[7] ``pulser``: enrolled without a controller; only pulses, so it turns DUE and
            then OVERDUE while PRESENT.
accounts[1] ``lying-example`` on the lying registry: the worked example again, then a
            false restore claim the liar registers (the honest registry rejects the same
            record on chain).
==========  ======================================================================

The AMM history runs first on the devnet (genesis 1762600000), so the worked example keeps
the specification's absolute timepoints (reportedStartedAt 1762653600, reportedEndedAt 1762654500).
Every timestamp below is a constant: the same script gives the same block hashes.

Named moments (``amm.*``) mark the blocks at which a state holds; where a state depends only
on the clock (DUE, OVERDUE, SILENT) an empty block is mined at that time and named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from eth_abi.abi import encode
from eth_hash.auto import keccak
from web3.contract import Contract
from web3.types import TxReceipt

from recompute.core.jsontext import jcs
from recompute.devnet.driver import Driver, HistoryError

# AMM §Policy and floor: a ``Policy`` tuple; AMM §Cycle records: a ``CycleReport`` tuple
Policy = tuple[bytes, str, int, int, int, int, int, int, list[int]]
CycleReport = tuple[int, bytes, list[bytes], int, int, int, int, int, int, int, int, int, int,
                    bytes, str]

REGISTRY = "AgentMeditationRegistry"
LYING_REGISTRY = "LyingMeditationRegistry"

ZERO_ADDRESS = "0x" + "00" * 20
ZERO32 = b"\x00" * 32

# AMM §Commitment format
TAG_LAYER_COMMITMENT = keccak(b"AgentMeditationMechanism/LayerCommitment/v1")
TAG_STATE_ROOT = keccak(b"AgentMeditationMechanism/StateRoot/v1")
SCHEMA_IDS = (
    "amm.layer.runtime/1",
    "amm.layer.memory-skills/1",
    "amm.layer.tasks-roles/1",
    "amm.layer.cognition/1",
)

# AMM §Roles and authorization
RIGHT_FLOOR, RIGHT_DEMAND, RIGHT_REVOKE_OPERATORS = 1, 2, 4
PERM_REPORT, PERM_PULSE, PERM_POLICY = 1, 2, 4
# AMM §Cycle records: outcome and trigger codes
COMPLETED, PARTIAL, ABORTED, FAILED = 0, 1, 2, 3
SCHEDULED, EVENT, COMMANDED, SELF = 0, 1, 2, 3


def _h(text: str) -> bytes:
    raw = bytes.fromhex(text.removeprefix("0x"))
    assert len(raw) == 32, text
    return raw


def hx(value: bytes) -> str:
    return "0x" + value.hex()


# ---------------------------------------------------------------- AMM §Test Cases (worked example)

EXAMPLE_PRE_COMMITMENTS = tuple(_h(x) for x in (
    "0x053bdcecda479dd30b5bfd7a02661df67b79e978fea6888245df8aa167d6d282",
    "0x3a8a0162793df87f7094634e37d9e5d3d8470bd43cc7fee5669f609d922ee9c3",
    "0x3d3356ae1bc86136718f1ecd7f42d8a0570db2d21116c886cab291a789010585",
    "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e",
))
EXAMPLE_PRE_ROOT = _h("0x090e63d66e6cdb08331fece350bd0320551287d53d6644d5af158b04d94d149f")
EXAMPLE_POST_COMMITMENTS = tuple(_h(x) for x in (
    "0xb5a33b6d3732e664a08a19ed068432a6ab1085bf7013b3ffce1ff88ec7dd8519",
    "0xd24fedfca7a64b7596414751a6d4a1ed7a89bf906bce4b453453a7b086d26641",
    "0x8f03de4a144d8d453c84d2d4546fb0f01af23bd6f7ba31d18dac0c6dd1a942f0",
    "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e",
))
EXAMPLE_POST_ROOT = _h("0x9918ebff7f3bc97ca08580033da3aa99b27871d8d57b2b8c9845221fa3dec3de")
EXAMPLE_POLICY_HASH = _h("0x5dfdd440a0eced1f62839fa0281f21cadacfa0f527642ea586b5f5c1ce5e41d9")
EXAMPLE_RECORD_HASH = _h("0xdcbc7047b5bf0d600b98d7829fc37757bdac9406ec992128cc90e910e9645088")
EXAMPLE_INTERVALS = (86400, 604800, 2592000, 7776000)
EXAMPLE_DUE_WINDOW = 3600
EXAMPLE_PULSE_INTERVAL = 21600
EXAMPLE_OPS_MASK = 0x0456
EXAMPLE_STARTED_AT = 1762653600
EXAMPLE_ENDED_AT = 1762654500
EXAMPLE_NEXT_PLANNED_AT = 1762740000

# ---------------------------------------------------------------- the script's timepoints
# The specification gives neither the enrolment time nor the block that records the example cycle
# (AMM §Test Cases); they are chosen before the cycle's start (so policy version 1 governs
# it) and after its end.
T_ENROLL_EXAMPLE = 1762650000
T_ENROLL_CONTROLLED = 1762650012
T_ENROLL_PULSER = 1762650024
T_ENROLL_LYING = 1762650036
T_OPERATOR = (1762650048, 1762650060, 1762650072)  # report, pulse, policy operators
T_CYCLE_1 = 1762654800  # the worked example's cycle is recorded
T_LYING_CYCLE_1 = 1762654812
T_PARTIAL = 1762655400
T_ABORTED = 1762656000
T_FAILED = 1762656600
T_OPERATOR_PULSE = 1762657200
T_FALSE_RESTORE = 1762658000
T_FALSE_RESTORE_REJECTED = 1762658012
T_DEMAND = 1762660000
DEMAND_DUE_BY = 1762700000
T_LATE_COMPLETION = 1762665000
T_DEMAND_CLEARED = 1762670000
T_REVOKE = 1762671000
T_PULSE_1 = 1762680000
T_SILENT_FRESH = 1762700000
T_ROLLBACK = 1762710000
T_PULSE_DUE = 1762733000
T_OVERDUE = T_ENROLL_PULSER + 86400  # the pulser's layer 0 deadline (never completed)
T_PRESENT_OVERDUE = 1762737000
T_INTERVAL_ELAPSED = T_ENROLL_CONTROLLED + 345600  # controlled layer 3, policy v1 interval
T_POLICY_LENGTHENED = 1762996000
T_FLOOR = 1762996600
T_POLICY_RELAXED = 1762997200
END = T_POLICY_RELAXED  # the last block this history mines

# ---------------------------------------------------------------- the other subjects' rules
CONTROLLED_INTERVALS_V1 = (86400, 172800, 259200, 345600)
CONTROLLED_INTERVALS_V2 = (86400, 172800, 259200, 691200)  # layer 3 lengthened
CONTROLLED_INTERVALS_V3 = (86400, 172800, 259200, 0)  # layer 3 no longer required
CONTROLLED_PULSE_INTERVAL = 43200
FLOOR_REQUIRED = 0x08
FLOOR_PULSE_INTERVAL = 36000
FLOOR_INTERVALS = (0, 0, 0, 432000)
PULSER_INTERVALS = (86400, 0, 0, 0)
PULSER_PULSE_INTERVAL = 172800


def layer_commitment(layer: int, schema_hash: bytes, content_hash: bytes, salt: bytes) -> bytes:
    """AMM §Commitment format."""
    return keccak(encode(["bytes32", "uint8", "bytes32", "bytes32", "bytes32"],
                         [TAG_LAYER_COMMITMENT, layer, schema_hash, content_hash, salt]))


def state_root(commitments: Sequence[bytes]) -> bytes:
    """AMM §Commitment format: root = keccak256(abi.encode(TAG_STATE_ROOT, c0, c1, c2, c3))."""
    return keccak(encode(["bytes32"] * 5, [TAG_STATE_ROOT, *commitments]))


def document_commitment(document: Mapping[str, str | int]) -> bytes:
    """AMM §Commitment format: the commitment to an off-chain document, keccak256(JCS(d))."""
    return keccak(jcs(document))


def devnet_layer(subject: str, layer: int, revision: int) -> bytes:
    """A layer commitment of a devnet subject: a minimal layer state document (``schema`` and
    ``layer`` as AMM §Commitment format requires) naming the subject and a revision."""
    document: dict[str, str | int] = {"schema": SCHEMA_IDS[layer], "layer": layer,
                                      "subject": subject, "revision": revision}
    return layer_commitment(layer, keccak(SCHEMA_IDS[layer].encode()),
                            document_commitment(document), ZERO32)


def policy(policy_hash: bytes, required: int, intervals: Iterable[int], pulse_interval: int, *,
           supported: int = 0x0F, triggers: int = 0x0F, disclosure: int = 0,
           due_window: int = 3600) -> Policy:
    """A ``Policy`` tuple (AMM §Policy and floor)."""
    return (policy_hash, "", supported, required, triggers, disclosure, due_window,
            pulse_interval, list(intervals))


def cycle(base_version: int, pre_root: bytes, post: Iterable[bytes], *, layer_mask: int,
          completed: int,
          ops: int, outcome: int, trigger: int, started: int, ended: int,
          policy_version: int = 1, next_planned: int = 0, restores: int = 0,
          record_hash: bytes = ZERO32) -> CycleReport:
    """A ``CycleReport`` tuple (AMM §Cycle records)."""
    return (base_version, pre_root, list(post), layer_mask, completed, ops, outcome, trigger,
            policy_version, started, ended, next_planned, restores, record_hash, "")


def _policy_hash(subject: str, version: int, note: str) -> bytes:
    return document_commitment({"schema": "amm.policy/1", "subject": subject,
                                "version": version, "note": note})


def _record_hash(subject: str, what: str) -> bytes:
    return document_commitment({"schema": "amm.cycle-record/1", "subject": subject,
                                "cycle": what})


EXAMPLE_POLICY = policy(EXAMPLE_POLICY_HASH, 0x0F, EXAMPLE_INTERVALS, EXAMPLE_PULSE_INTERVAL,
                        due_window=EXAMPLE_DUE_WINDOW)
CONTROLLED_POLICIES = (
    policy(_policy_hash("controlled", 1, "initial"), 0x0F, CONTROLLED_INTERVALS_V1,
           CONTROLLED_PULSE_INTERVAL, disclosure=1),
    policy(_policy_hash("controlled", 2, "layer 3 interval lengthened"), 0x0F,
           CONTROLLED_INTERVALS_V2, CONTROLLED_PULSE_INTERVAL, disclosure=1),
    policy(_policy_hash("controlled", 3, "relaxed: layer 3 dropped, no pulse"), 0x07,
           CONTROLLED_INTERVALS_V3, 0, disclosure=1),
)
PULSER_POLICY = policy(_policy_hash("pulser", 1, "runtime only"), 0x01, PULSER_INTERVALS,
                       PULSER_PULSE_INTERVAL)
FLOOR = (FLOOR_REQUIRED, FLOOR_PULSE_INTERVAL, list(FLOOR_INTERVALS))

# The controlled subject's layer states: revision 0 at enrolment, layers 0 and 1 to revision 1
# (PARTIAL cycle), layer 0 to revision 2 (the completion that clears the demand).
CONTROLLED_V1 = tuple(devnet_layer("controlled", i, 0) for i in range(4))
CONTROLLED_V2 = (devnet_layer("controlled", 0, 1), devnet_layer("controlled", 1, 1),
                 *CONTROLLED_V1[2:])
CONTROLLED_V3 = (devnet_layer("controlled", 0, 2), *CONTROLLED_V2[1:])
PULSER_V1 = tuple(devnet_layer("pulser", i, 0) for i in range(4))
# The false restore: layer 0 back to its pre state, layers 1..2 still the post state, so the
# root is neither rootAt(1) (the claim) nor any other registered root.
FALSE_RESTORE_POST = (EXAMPLE_PRE_COMMITMENTS[0], *EXAMPLE_POST_COMMITMENTS[1:])


def worked_example_cycle() -> CycleReport:
    """The cycle record of AMM §Test Cases, field for field."""
    return cycle(1, EXAMPLE_PRE_ROOT, EXAMPLE_POST_COMMITMENTS, layer_mask=0x0F, completed=0x0F,
                 ops=EXAMPLE_OPS_MASK, outcome=COMPLETED, trigger=EVENT,
                 started=EXAMPLE_STARTED_AT, ended=EXAMPLE_ENDED_AT,
                 next_planned=EXAMPLE_NEXT_PLANNED_AT, record_hash=EXAMPLE_RECORD_HASH)


def false_restore_cycle() -> CycleReport:
    """Claims to restore version 1 while registering another state (AMM §Cycle records,
    rule "Restore claim"): only the lying registry accepts it."""
    return cycle(2, EXAMPLE_POST_ROOT, FALSE_RESTORE_POST, layer_mask=0x01, completed=0x01,
                 ops=0x0002, outcome=COMPLETED, trigger=EVENT, started=1762657000,
                 ended=1762657800, restores=1,
                 record_hash=_record_hash("example", "false restore of version 1"))


# Reports are sent with a stated gas limit: anvil estimates gas at the latest block's
# timestamp, not the one fixed for the next block, so an estimate would refuse a record whose
# reportedEndedAt lies between the two (rule "Time ordering") although the mined one is
# accepted (Driver.tx, gas=). The driver still checks each receipt's status.
REPORT_GAS = 2_000_000


def run(driver: Driver) -> None:
    """Deploy both registries and play the script (see the module docstring)."""
    acc = driver.accounts
    section = driver.section("amm")
    honest = driver.deploy(REGISTRY, sender=acc[0])
    liar = driver.deploy(LYING_REGISTRY, sender=acc[0])

    example, controlled, controller, pulser = acc[1], acc[2], acc[3], acc[7]
    reporter, pulse_operator, policy_operator = acc[4], acc[5], acc[6]
    h = honest.functions
    lie = liar.functions

    def report(registry: Contract, subject: str, record: CycleReport, *, sender: str,
               at: int) -> TxReceipt:
        return driver.tx(registry.functions.report(subject, record), sender=sender, at=at,
                         gas=REPORT_GAS)

    subjects = {
        "example": _subject(REGISTRY, example, ZERO_ADDRESS, 0, {},
                            "the worked example (AMM §Test Cases); silent and fresh; rollback"),
        "controlled": _subject(
            REGISTRY, controlled, controller, RIGHT_FLOOR | RIGHT_DEMAND | RIGHT_REVOKE_OPERATORS,
            {"reporter": {"address": reporter, "permissions": PERM_REPORT},
             "pulse-operator": {"address": pulse_operator, "permissions": PERM_PULSE,
                                "revoked_at": T_REVOKE},
             "policy-operator": {"address": policy_operator, "permissions": PERM_POLICY}},
            "controller and operators; PARTIAL/ABORTED/FAILED; demand; policy; floor"),
        "pulser": _subject(REGISTRY, pulser, ZERO_ADDRESS, 0, {},
                           "pulses only: DUE, then OVERDUE while PRESENT"),
        "lying-example": _subject(LYING_REGISTRY, example, ZERO_ADDRESS, 0, {},
                                  "the worked example on the lying registry; false restore"),
    }
    section.update({
        "registry": REGISTRY,
        "lying_registry": LYING_REGISTRY,
        "subjects": subjects,
        "worked_example": _worked_example_record(),
        "roles": {"deployer": acc[0], "example": example, "controlled": controlled,
                  "controller": controller, "reporter": reporter,
                  "pulse-operator": pulse_operator, "policy-operator": policy_operator,
                  "pulser": pulser},
    })

    # -- enrolment (AMM §Roles and authorization)
    driver.tx(h.enroll(list(EXAMPLE_PRE_COMMITMENTS), EXAMPLE_POLICY, ZERO_ADDRESS, 0),
              sender=example, at=T_ENROLL_EXAMPLE)
    _version(subjects["example"], 1, EXAMPLE_PRE_COMMITMENTS, EXAMPLE_PRE_ROOT)
    driver.tx(h.enroll(list(CONTROLLED_V1), CONTROLLED_POLICIES[0], controller,
                       RIGHT_FLOOR | RIGHT_DEMAND | RIGHT_REVOKE_OPERATORS),
              sender=controlled, at=T_ENROLL_CONTROLLED)
    _version(subjects["controlled"], 1, CONTROLLED_V1)
    driver.tx(h.enroll(list(PULSER_V1), PULSER_POLICY, ZERO_ADDRESS, 0),
              sender=pulser, at=T_ENROLL_PULSER)
    _version(subjects["pulser"], 1, PULSER_V1)
    driver.tx(lie.enroll(list(EXAMPLE_PRE_COMMITMENTS), EXAMPLE_POLICY, ZERO_ADDRESS, 0),
              sender=example, at=T_ENROLL_LYING)
    _version(subjects["lying-example"], 1, EXAMPLE_PRE_COMMITMENTS, EXAMPLE_PRE_ROOT)
    driver.moment("amm.enrolled")

    for (operator, perms), at in zip(((reporter, PERM_REPORT), (pulse_operator, PERM_PULSE),
                                      (policy_operator, PERM_POLICY)), T_OPERATOR, strict=True):
        driver.tx(h.setOperator(operator, perms), sender=controlled, at=at)
    driver.moment("amm.operators-set")

    # -- the worked example (AMM §Test Cases), on both registries
    report(honest, example, worked_example_cycle(), sender=example, at=T_CYCLE_1)
    _version(subjects["example"], 2, EXAMPLE_POST_COMMITMENTS, EXAMPLE_POST_ROOT)
    driver.moment("amm.after-cycle-1")
    report(liar, example, worked_example_cycle(), sender=example, at=T_LYING_CYCLE_1)
    _version(subjects["lying-example"], 2, EXAMPLE_POST_COMMITMENTS, EXAMPLE_POST_ROOT)

    # -- the controlled subject's PARTIAL, ABORTED and FAILED cycles
    root_c1, root_c2 = state_root(CONTROLLED_V1), state_root(CONTROLLED_V2)
    report(honest, controlled, cycle(
        1, root_c1, CONTROLLED_V2, layer_mask=0x0F, completed=0x03, ops=0x0014,
        outcome=PARTIAL, trigger=SCHEDULED, started=1762654000, ended=1762655000,
        next_planned=1762740000, record_hash=_record_hash("controlled", "partial")),
        sender=reporter, at=T_PARTIAL)
    _version(subjects["controlled"], 2, CONTROLLED_V2)
    driver.moment("amm.partial")
    report(honest, controlled, cycle(
        2, root_c2, CONTROLLED_V2, layer_mask=0x0C, completed=0x04, ops=0x0100,
        outcome=ABORTED, trigger=EVENT, started=1762655500, ended=1762655900,
        record_hash=_record_hash("controlled", "aborted")),
        sender=reporter, at=T_ABORTED)
    driver.moment("amm.aborted")
    report(honest, controlled, cycle(
        2, root_c2, CONTROLLED_V2, layer_mask=0x08, completed=0x00, ops=0x8000,
        outcome=FAILED, trigger=SELF, started=1762656100, ended=1762656500,
        record_hash=_record_hash("controlled", "failed")),
        sender=controlled, at=T_FAILED)
    driver.moment("amm.failed")
    driver.tx(h.pulse(controlled, 1762700000), sender=pulse_operator, at=T_OPERATOR_PULSE)
    driver.moment("amm.operator-pulsed")

    # -- a false restore claim: the liar registers it, the honest registry rejects it on chain
    report(liar, example, false_restore_cycle(), sender=example, at=T_FALSE_RESTORE)
    _version(subjects["lying-example"], 3, FALSE_RESTORE_POST)
    subjects["lying-example"]["false_restore"] = {"state_version": 3, "claims_restores": 1}
    driver.moment("amm.false-restore")
    receipt = driver.tx_reverting(h.report(example, false_restore_cycle()), sender=example,
                                  at=T_FALSE_RESTORE_REJECTED)
    subjects["example"]["rejected_false_restore_tx"] = receipt["transactionHash"].to_0x_hex()
    driver.moment("amm.false-restore-rejected")

    # -- a demand (AMM §Demand): a late completion from before it does not meet it, a
    #    completion at or after demandedAt clears it
    driver.tx(h.demand(controlled, 0x03, DEMAND_DUE_BY), sender=controller, at=T_DEMAND)
    driver.moment("amm.demanded")
    report(honest, controlled, cycle(
        2, root_c2, CONTROLLED_V2, layer_mask=0x02, completed=0x02, ops=0x0010,
        outcome=COMPLETED, trigger=SCHEDULED, started=1762657000, ended=1762658000,
        record_hash=_record_hash("controlled", "late completion")),
        sender=reporter, at=T_LATE_COMPLETION)
    driver.moment("amm.demand-not-met")
    report(honest, controlled, cycle(
        2, root_c2, CONTROLLED_V3, layer_mask=0x03, completed=0x03, ops=0x0014,
        outcome=COMPLETED, trigger=COMMANDED, started=1762666000, ended=1762669000,
        next_planned=1762760000, record_hash=_record_hash("controlled", "demanded")),
        sender=reporter, at=T_DEMAND_CLEARED)
    _version(subjects["controlled"], 3, CONTROLLED_V3)
    driver.moment("amm.demand-cleared")
    driver.tx(h.revokeOperator(controlled, pulse_operator), sender=controller, at=T_REVOKE)
    driver.moment("amm.operator-revoked")

    # -- silent and fresh; the rollback (AMM §Cycle records, restoresVersion)
    driver.tx(h.pulse(pulser, T_PULSE_DUE), sender=pulser, at=T_PULSE_1)
    driver.mine(T_SILENT_FRESH)
    driver.moment("amm.silent-fresh")
    report(honest, example, cycle(
        2, EXAMPLE_POST_ROOT, EXAMPLE_PRE_COMMITMENTS, layer_mask=0x07, completed=0x07,
        ops=0x0222, outcome=COMPLETED, trigger=SELF, started=1762705000, ended=1762709000,
        restores=1, record_hash=_record_hash("example", "rollback to version 1")),
        sender=example, at=T_ROLLBACK)
    _version(subjects["example"], 3, EXAMPLE_PRE_COMMITMENTS, EXAMPLE_PRE_ROOT)
    subjects["example"]["rollback"] = {"state_version": 3, "restores": 1}
    driver.moment("amm.rollback")

    # -- pulses only: DUE, then OVERDUE at the deadline, still OVERDUE after another pulse
    driver.tx(h.pulse(pulser, T_PRESENT_OVERDUE), sender=pulser, at=T_PULSE_DUE)
    driver.moment("amm.due")
    driver.mine(T_OVERDUE)
    driver.moment("amm.overdue")
    driver.tx(h.pulse(pulser, 0), sender=pulser, at=T_PRESENT_OVERDUE)
    driver.moment("amm.present-overdue")

    # -- policy versions and the floor (AMM §Policy and floor)
    driver.mine(T_INTERVAL_ELAPSED)
    driver.moment("amm.interval-elapsed")
    driver.tx(h.setPolicy(controlled, CONTROLLED_POLICIES[1]), sender=policy_operator,
              at=T_POLICY_LENGTHENED)
    driver.moment("amm.policy-lengthened")
    driver.tx(h.setFloor(controlled, FLOOR), sender=controller, at=T_FLOOR)
    driver.moment("amm.floor-set")
    driver.tx(h.setPolicy(controlled, CONTROLLED_POLICIES[2]), sender=controlled,
              at=T_POLICY_RELAXED)
    driver.moment("amm.floor-holds")
    subjects["controlled"]["policy_versions"] = {
        str(v): {"policy_hash": hx(p[0]), "effective_from": at}
        for v, p, at in zip((1, 2, 3), CONTROLLED_POLICIES,
                            (T_ENROLL_CONTROLLED, T_POLICY_LENGTHENED, T_POLICY_RELAXED),
                            strict=True)
    }
    subjects["controlled"]["floor_version"] = 1


def _subject(registry: str, address: str, controller: str, rights: int,
             operators: dict[str, object], story: str) -> dict[str, Any]:
    return {"registry": registry, "address": address, "controller": controller,
            "controller_rights": rights, "operators": operators, "story": story,
            "state_versions": {}}


def _version(subject: dict[str, Any], version: int, commitments: Sequence[bytes],
             root: bytes | None = None) -> None:
    """Record state version ``version`` (its four commitments and root) in the manifest."""
    computed = state_root(commitments)
    if root is not None and computed != root:
        raise HistoryError(f"state root of version {version} is not the specification's")
    subject["state_versions"][str(version)] = {
        "root": hx(computed), "commitments": [hx(c) for c in commitments]}


def _worked_example_record() -> dict[str, object]:
    return {
        "pre_commitments": [hx(c) for c in EXAMPLE_PRE_COMMITMENTS],
        "pre_root": hx(EXAMPLE_PRE_ROOT),
        "post_commitments": [hx(c) for c in EXAMPLE_POST_COMMITMENTS],
        "post_root": hx(EXAMPLE_POST_ROOT),
        "policy_hash": hx(EXAMPLE_POLICY_HASH),
        "record_hash": hx(EXAMPLE_RECORD_HASH),
        "ops_mask": EXAMPLE_OPS_MASK,
        "reported_started_at": EXAMPLE_STARTED_AT,
        "reported_ended_at": EXAMPLE_ENDED_AT,
        "next_planned_at": EXAMPLE_NEXT_PLANNED_AT,
        "enrolled_at": T_ENROLL_EXAMPLE,
        "recorded_at": T_CYCLE_1,
    }


# ---------------------------------------------------------------- the rule inventory's moments
# (vectors/rules.json): run by ``extend`` after every history, at times relative to the chain's
# last block, so the moments above keep their blocks and hashes.

DEMANDED_POLICY = policy(_policy_hash("demanded", 1, "layers 0 and 1; layer 3 unsupported"),
                         0x03, (86400, 86400, 0, 0), 0, supported=0x07)
WINDOW_PULSE_INTERVAL = 3600
WINDOW_POLICY = policy(_policy_hash("window", 1, "runtime, pulse every hour"), 0x01,
                       (864000, 0, 0, 0), WINDOW_PULSE_INTERVAL)
DEMANDED_V1 = tuple(devnet_layer("demanded", i, 0) for i in range(4))
WINDOW_V1 = tuple(devnet_layer("window", i, 0) for i in range(4))
DEMAND_LOWERS = 40000  # seconds after enrolment: below the 86400 interval
DEMAND_LATER = 200000  # seconds after enrolment: above it, so it must not raise the deadline


def extend(driver: Driver) -> None:
    """Moments for rules no earlier moment decides (module docstring of ``vectors/rules.json``):

    - ``demanded`` (accounts[8], controller accounts[3] with RIGHT_DEMAND): layers 0 and 1
      required (interval 86400), layer 2 supported only, layer 3 unsupported, no pulse
      interval (NOT_TRACKED). A demand on layer 0 with dueBy 40000 s after enrolment lowers its
      deadline (OVERDUE exactly at dueBy); a demand on layer 1 with dueBy 200000 s after
      enrolment does not raise its deadline (OVERDUE at enrolment + 86400).
    - ``window`` (accounts[9]): pulse interval 3600; PRESENT at exactly lastSignalAt + 3600,
      SILENT one second later (AMM §Status derivation: "exceeds").
    - ``lying-example``: restore claims the lying registry registers: a valid rollback to
      version 1, then one that restores version 1 without a change (the version does not
      advance), one with restoresVersion equal to the base version, one above it.
    """
    acc = driver.accounts
    section = driver.section("amm")
    subjects = section["subjects"]
    honest, liar = driver.contract(REGISTRY), driver.contract(LYING_REGISTRY)
    h, lie = honest.functions, liar.functions
    demanded, window, controller, example = acc[8], acc[9], acc[3], acc[1]
    start = driver.now + 100
    enrolled, window_enrolled = start, start + 12

    driver.tx(h.enroll(list(DEMANDED_V1), DEMANDED_POLICY, controller, RIGHT_DEMAND),
              sender=demanded, at=enrolled)
    driver.tx(h.enroll(list(WINDOW_V1), WINDOW_POLICY, ZERO_ADDRESS, 0), sender=window,
              at=window_enrolled)
    subjects["demanded"] = _subject(
        REGISTRY, demanded, controller, RIGHT_DEMAND, {},
        "demands: one lowers layer 0's deadline, one later than layer 1's does not raise it; "
        "layer 2 UNSCHEDULED, layer 3 UNSUPPORTED, signal NOT_TRACKED")
    subjects["demanded"]["enrolled_at"] = enrolled
    _version(subjects["demanded"], 1, DEMANDED_V1)
    subjects["window"] = _subject(REGISTRY, window, ZERO_ADDRESS, 0, {},
                                  "pulse interval 3600: PRESENT at its end, SILENT one after")
    subjects["window"]["enrolled_at"] = window_enrolled
    _version(subjects["window"], 1, WINDOW_V1)
    driver.tx(h.demand(demanded, 0x01, enrolled + DEMAND_LOWERS), sender=controller,
              at=enrolled + 100)
    driver.tx(h.demand(demanded, 0x02, enrolled + DEMAND_LATER), sender=controller,
              at=enrolled + 200)
    subjects["demanded"]["demands"] = {
        "0": {"demanded_at": enrolled + 100, "due_by": enrolled + DEMAND_LOWERS},
        "1": {"demanded_at": enrolled + 200, "due_by": enrolled + DEMAND_LATER}}
    driver.mine(enrolled + 1000)
    driver.moment("amm.demand-outstanding")
    driver.mine(window_enrolled + WINDOW_PULSE_INTERVAL)
    driver.moment("amm.signal-window-ends")
    driver.mine(window_enrolled + WINDOW_PULSE_INTERVAL + 1)
    driver.moment("amm.signal-silent-by-one")
    driver.mine(enrolled + DEMAND_LOWERS)
    driver.moment("amm.demand-overdue")
    driver.mine(enrolled + 86400)
    driver.moment("amm.demand-not-raised")

    # -- restore claims on the lying registry (its report skips the "Restore claim" rule)
    def report(record: CycleReport) -> None:
        driver.tx(lie.report(example, record), sender=example, gas=REPORT_GAS)

    lying = subjects["lying-example"]
    t = driver.now  # every record ends before the block that registers it
    false_root = state_root(FALSE_RESTORE_POST)
    report(cycle(3, false_root, EXAMPLE_PRE_COMMITMENTS, layer_mask=0x07, completed=0x07,
                 ops=0x0222, outcome=COMPLETED, trigger=SELF, started=t - 500, ended=t - 100,
                 restores=1, record_hash=_record_hash("example", "lying rollback to 1")))
    _version(lying, 4, EXAMPLE_PRE_COMMITMENTS, EXAMPLE_PRE_ROOT)
    driver.moment("amm.lying-rollback")
    report(cycle(4, EXAMPLE_PRE_ROOT, EXAMPLE_PRE_COMMITMENTS, layer_mask=0x01, completed=0x01,
                 ops=0x0002, outcome=COMPLETED, trigger=SELF, started=t - 60, ended=t - 50,
                 restores=1, record_hash=_record_hash("example", "restore 1, no change")))
    driver.moment("amm.restore-no-advance")
    report(cycle(4, EXAMPLE_PRE_ROOT, EXAMPLE_PRE_COMMITMENTS, layer_mask=0x01, completed=0x01,
                 ops=0x0002, outcome=COMPLETED, trigger=SELF, started=t - 40, ended=t - 30,
                 restores=4, record_hash=_record_hash("example", "restore the base version")))
    driver.moment("amm.restore-equal-base")
    report(cycle(4, EXAMPLE_PRE_ROOT, EXAMPLE_POST_COMMITMENTS, layer_mask=0x07,
                 completed=0x07, ops=0x0222, outcome=COMPLETED, trigger=SELF, started=t - 20,
                 ended=t - 10, restores=5,
                 record_hash=_record_hash("example", "restore the version it creates")))
    _version(lying, 5, EXAMPLE_POST_COMMITMENTS, EXAMPLE_POST_ROOT)
    lying["restore_claims"] = {"lying-rollback": 1, "restore-no-advance": 1,
                               "restore-equal-base": 4, "restore-above-base": 5}
    driver.moment("amm.restore-above-base")
