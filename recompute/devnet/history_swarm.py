"""The devnet's scripted ERC-8447 history: swarms formed, run, judged, advanced and ended.

The reference registry (``contracts/src/swarm/``: SwarmRegistry linked to the external
libraries SpecLib and MembershipLib) is deployed together with a lying variant and two
eligibility modules, and five swarms are driven through the states a verifier recipe must be
able to read (ERC-8447 §5 lifecycle, §6 membership, §7.2 advancing, §9.1 amendment):

``minimal``     §2 Minimal profile (one GATED phase, ADDRESS and INITIATOR authorities, no
                modules): candidates admitted in both orders (§6.2), activated on ROSTER_MET,
                a material amendment with a worker leaving ``onAmendment`` (§9.1, §6.3),
                concluded by the acceptance authority and dissolved by anyone after the
                settlement window, every seat then lazily SWARM_DISSOLVED (§5.2).
``challenged``  §6.4: workers gated by an allowlist module, the coordinator by a catching
                module; a worker challenged false is SUSPENDED(INELIGIBLE), the roster is lost
                and ``enforceRoster`` suspends the swarm; a true challenge reinstates the worker
                and anyone resumes (§5.2 ROSTER_LOST); a third worker is expelled after the
                ineligible grace (one expel inside the grace reverts on chain).
``tender``      the specification's tender flow (§1 illustrative flows): an OPEN bidding phase, a
                SELECT advance into a CLOSED execution phase carrying the coordinator and two
                bidders as workers (the other bidders, a suspended bidder and a pending candidate
                are lazily NOT_CARRIED, §7.2), a worker's eligibility lapses and it is challenged,
                and a NOT_CARRIED bidder is substituted into the CLOSED phase (§6.3).
``pipeline``    an INHERIT advance (§7.2) keeping an active, a suspended member and a pending
                candidate, who is then admitted in the second phase.
``lying``       on LyingSwarmRegistry: a worker leaves, the roster is lost in storage while the
                owner-set caches keep ``rosterMet`` true and the worker ACTIVE.

Every moment is named ``swarm.<state>``; the ``swarm`` manifest section names each swarm,
its id, spec hash, formation block, roles, phases and members, and which swarm (and phase)
each moment is about. All times are relative to ``driver.now`` at the start.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from eth_abi.abi import encode
from eth_hash.auto import keccak
from web3.contract import Contract
from web3.logs import DISCARD
from web3.types import EventData, TxReceipt

from recompute.devnet.driver import Driver, HistoryError, Sendable

SECTION = "swarm"

# ---------------------------------------------------------------- specification enums (ERC-8447)
# §3.1
OPEN, GATED, CLOSED = 0, 1, 2
RECRUIT, INHERIT, SELECT = 0, 1, 2
BOUNDARY_NAMES = ["OPEN", "GATED", "CLOSED"]
ADMISSION_NAMES = ["RECRUIT", "INHERIT", "SELECT"]
A_ADDRESS, A_INITIATOR = 1, 4
DECISION_POINTS = [
    "ACTIVATE", "ABORT", "SUSPEND", "RESUME", "ADVANCE", "CONCLUDE", "DISSOLVE", "SUCCEED",
    "ADMIT", "REMOVE", "REINSTATE", "AMEND", "ATTACH", "DETACH", "SET_ACCOUNT", "REPRESENT",
]
ROSTER_MET = 0
DISABLED = 0
# §5.1 outcome and reason, §8 objective kind
ACHIEVED = 1
ACCEPTANCE = 2
TERMINAL = 0

ZERO32 = b"\x00" * 32
ZERO_ADDR = "0x" + "00" * 20

# Enough for any call of the script. Challenges and expulsions are sent with an explicit,
# ample limit: §6.4 classifies a `false` that arrives with less than 1/8 of the gas as
# unevaluable, and "a challenger who means the question supplies ample gas".
CHALLENGE_GAS = 2_000_000
# A call whose success depends on its own block's timestamp (a window that opens at `at`) is
# sent with an explicit limit too: anvil estimates gas against the previous timestamp.
TIMED_GAS = 1_000_000


def kid(text: str) -> bytes:
    """keccak256 of an ASCII identifier (§3.2 role ids, §7.1 terms, §3.4 origin kinds)."""
    return keccak(text.encode())


# §3.2 reserved role identifiers keccak256("sai.role.<name>")
ROLE_NAMES = ("worker", "coordinator", "bidder", "verifier")
ROLE_IDS = {name: kid(f"sai.role.{name}") for name in ROLE_NAMES}
ORIGIN_INITIATOR = kid("sai.origin.initiator")  # §3.4


def term(dimension: str, name: str) -> bytes:
    """§7.1 base term keccak256("sai.<dimension>.<term>")."""
    return kid(f"sai.{dimension}.{name}")


# §3.1 SwarmSpec as an ABI tuple type, for specHash = keccak256(abi.encode(spec))
_ROLE_T = "(bytes32,uint32,uint32,address,bool)"
_PHASE_T = "(bytes32,bytes32,bytes32,bytes32,uint8,uint8,uint64,bytes32)"
_AUTH_T = "(uint8,address,bytes32)"
SPEC_T = (f"({_ROLE_T}[],{_PHASE_T}[],{_AUTH_T}[],uint8,uint8,uint32,uint32,"
          "uint64,uint64,uint64,uint64,uint64,uint64,bytes32)")

# Charter, commitment and objective hashes (§4.1): commitments to off-chain documents.
CHARTER = {v: kid(f"devnet swarm charter v{v}") for v in (1, 2)}
COMMITMENT = kid("devnet swarm commitment v1")
OBJECTIVE = {v: kid(f"devnet swarm objective v{v}") for v in (1, 2)}
RESULT = kid("devnet swarm result")

# Durations (seconds) shared by every spec of the script.
RECRUITMENT_WINDOW = 3_600
MAX_DURATION = 30 * 86_400
INACTIVITY_TIMEOUT = 7 * 86_400
INELIGIBLE_GRACE = 600
SETTLEMENT_WINDOW = 1_800
AMENDMENT_EXIT_WINDOW = 900


Role = tuple[bytes, int, int, str, bool]  # §3.1 RoleSpec
Phase = tuple[bytes, bytes, bytes, bytes, int, int, int, bytes]  # §3.1 PhaseSpec


def _role(name: str, min_: int, max_: int, eligibility: str = ZERO_ADDR,
          self_join: bool = False) -> Role:
    return (ROLE_IDS[name], min_, max_, eligibility, self_join)


def _phase(name: str, payoff: str, topology: str, coordination: str, boundary: int,
           admission: int) -> Phase:
    return (name.encode().ljust(32, b"\x00"), term("payoff", payoff),
            term("topology", topology), term("coordination", coordination), boundary,
            admission, 0, kid(f"devnet phase {name}"))


class SwarmHistory:
    def __init__(self, driver: Driver):
        self.d = driver
        self.a = driver.accounts
        self.initiator, self.steward, self.judge = self.a[0], self.a[1], self.a[2]
        self.section = driver.section(SECTION)
        self.swarms: dict[str, dict[str, Any]] = {}
        self.moments: dict[str, dict[str, Any]] = {}

    # ---------------------------------------------------------------- plumbing

    def deploy(self) -> None:
        d = self.d
        d.deploy("SpecLib")
        d.deploy("MembershipLib")
        libs = {"SpecLib": "SpecLib", "MembershipLib": "MembershipLib"}
        self.honest = d.deploy("SwarmRegistry", libraries=libs)
        self.liar = d.deploy("LyingSwarmRegistry", libraries=libs)
        self.allowlist = d.deploy("AllowlistEligibility")
        self.catching = d.deploy("CatchingEligibility", 200)
        self.section.update({
            "registry": "SwarmRegistry",
            "lying_registry": "LyingSwarmRegistry",
            "accounts": {"initiator": self.initiator, "steward": self.steward,
                         "judge": self.judge},
            "roles": {name: "0x" + rid.hex() for name, rid in ROLE_IDS.items()},
        })

    def tx(self, call: Sendable, sender: str, at: int | None = None,
           gas: int | None = None) -> TxReceipt:
        return self.d.tx(call, sender=sender, at=at, gas=gas)

    def expect(self, receipt: TxReceipt, registry: Contract, event: str,
               **args: object) -> EventData:
        """The history guards itself: ``event`` with ``args`` must be in ``receipt``."""
        logs: Iterable[EventData] = registry.events[event]().process_receipt(receipt,
                                                                            errors=DISCARD)
        for log in logs:
            if all(log["args"][k] == v for k, v in args.items()):
                return log
        raise HistoryError(f"expected {event}{args} in block {receipt['blockNumber']}")

    def moment(self, label: str, swarm: str, phase: int = 0) -> None:
        """Name the latest block ``swarm.<label>``: a state of ``swarm`` in phase ``phase``."""
        self.d.moment(f"swarm.{label}")
        self.moments[f"swarm.{label}"] = {"swarm": swarm, "phase": phase}

    # ---------------------------------------------------------------- formation

    def spec(self, name: str, roles: list[Role], phases: list[Phase], *, min_members: int,
             max_members: int, amend_by_initiator: bool = False
             ) -> tuple[tuple[object, ...], bytes]:
        """The §3.1 SwarmSpec of a devnet swarm and its specHash."""
        auths = [(A_ADDRESS, self.steward, ZERO32)] * 16
        if amend_by_initiator:  # §11 INITIATOR kind: the initiator holds AMEND
            auths[DECISION_POINTS.index("AMEND")] = (A_INITIATOR, ZERO_ADDR, ZERO32)
        spec = (roles, phases, auths, ROSTER_MET, DISABLED, min_members, max_members,
                RECRUITMENT_WINDOW, MAX_DURATION, INACTIVITY_TIMEOUT, INELIGIBLE_GRACE,
                SETTLEMENT_WINDOW, AMENDMENT_EXIT_WINDOW, kid(f"devnet swarm {name}"))
        return spec, keccak(encode([SPEC_T], [spec]))  # §3.1

    def form(self, name: str, registry: Contract, roles: list[Role], phases: list[Phase], *,
             min_members: int,
             max_members: int, amend_by_initiator: bool = False,
             hashes: tuple[bytes, bytes, bytes] | None = None) -> bytes:
        """Form a swarm; ``hashes`` = (charterHash, commitmentHash, objectiveHash), the
        devnet's labels by default."""
        spec, spec_hash = self.spec(name, roles, phases, min_members=min_members,
                                    max_members=max_members,
                                    amend_by_initiator=amend_by_initiator)
        charter, commitment, objective_hash = hashes or (CHARTER[1], COMMITMENT, OBJECTIVE[1])
        objective = (objective_hash, TERMINAL, self.judge, (0, ZERO_ADDR, 0), 0)
        receipt = self.tx(registry.functions.form(
            spec, charter, commitment, f"ipfs://devnet-swarm-{name}/v1", ZERO32,
            (ORIGIN_INITIATOR, ZERO32), objective), self.initiator)
        formed = self.expect(receipt, registry, "SwarmFormed", specHash=spec_hash)
        swarm_id: bytes = formed["args"]["swarmId"]
        names = {rid: n for n, rid in ROLE_IDS.items()}
        modules: dict[str, str] = {self.allowlist.address: "AllowlistEligibility",
                   self.catching.address: "CatchingEligibility"}
        self.swarms[name] = {
            "id": "0x" + swarm_id.hex(),
            "registry": "LyingSwarmRegistry" if registry is self.liar else "SwarmRegistry",
            "spec_hash": "0x" + spec_hash.hex(),
            "formed_block": receipt["blockNumber"],
            "formed_at": self.d.now,
            "min_members": min_members,
            "max_members": max_members,
            "roles": [{"name": names[r[0]], "id": "0x" + r[0].hex(), "min": r[1], "max": r[2],
                       "eligibility": modules.get(r[3]), "self_join": r[4]} for r in roles],
            "phases": [{"index": i, "name": p[0].rstrip(b"\x00").decode(),
                        "boundary": BOUNDARY_NAMES[p[4]], "admission": ADMISSION_NAMES[p[5]]}
                       for i, p in enumerate(phases)],
            "charters": [{"version": 1, "hash": "0x" + charter.hex()}],
            "objective_hashes": ["0x" + objective_hash.hex()],
            "members": {},
        }
        return swarm_id

    def member(self, swarm: str, account: str, role: str, phase: int = 0) -> None:
        """Record ``account``'s seat (its role in ``phase``) in the manifest."""
        entry = self.swarms[swarm]["members"].setdefault(
            account, {"address": account, "account_index": self.a.index(account),
                      "phase_roles": {}})
        entry["role"] = role
        entry["role_id"] = "0x" + ROLE_IDS[role].hex()
        entry["phase_roles"][str(phase)] = role

    def seat(self, swarm: str, registry: Contract, swarm_id: bytes, account: str,
             role: str) -> None:
        """§6.2 member side first (applyToJoin), then the authority side (admit)."""
        f = registry.functions
        self.tx(f.applyToJoin(swarm_id, ROLE_IDS[role], CHARTER[1]), account)
        receipt = self.tx(f.admit(swarm_id, account, ROLE_IDS[role]), self.steward)
        self.expect(receipt, registry, "MemberActivated", account=account)
        self.member(swarm, account, role)

    # ---------------------------------------------------------------- the five swarms

    def minimal(self) -> None:
        """§2 Minimal profile; §6.2 both orders; §9.1 material amendment; §5.2 end."""
        reg, a = self.honest, self.a
        f = reg.functions
        sid = self.form("minimal", reg, [_role("worker", 2, 3), _role("coordinator", 1, 1)],
                        [_phase("work", "shared", "partitioned", "leader", GATED, RECRUIT)],
                        min_members=3, max_members=4, amend_by_initiator=True)
        self.moment("formed", "minimal")
        # §6.2 in either order: a3 applies first, a4 is admitted first
        self.tx(f.applyToJoin(sid, ROLE_IDS["worker"], CHARTER[1]), a[3])
        self.tx(f.admit(sid, a[4], ROLE_IDS["worker"]), self.steward)
        self.member("minimal", a[3], "worker")
        self.member("minimal", a[4], "worker")
        self.moment("candidates", "minimal")
        self.tx(f.admit(sid, a[3], ROLE_IDS["worker"]), self.steward)
        receipt = self.tx(f.acceptCharter(sid, CHARTER[1]), a[4])
        self.expect(receipt, reg, "MemberActivated", account=a[4])
        self.seat("minimal", reg, sid, a[5], "coordinator")
        receipt = self.tx(f.activate(sid), a[9])  # ROSTER_MET: anyone
        self.expect(receipt, reg, "SwarmActivated")
        self.moment("activated", "minimal")
        self.seat("minimal", reg, sid, a[6], "worker")
        # §9.1 material by construction: the objective hash changes (AMEND held by INITIATOR)
        receipt = self.tx(f.amend(sid, CHARTER[2], "ipfs://devnet-swarm-minimal/v2",
                                  OBJECTIVE[2], ZERO32, False), self.initiator)
        self.expect(receipt, reg, "CharterAmended", material=True, commitmentVersion=2)
        self.swarms["minimal"]["charters"].append({"version": 2, "hash": "0x" + CHARTER[2].hex()})
        self.swarms["minimal"]["objective_hashes"].append("0x" + OBJECTIVE[2].hex())
        self.tx(f.acceptCharter(sid, CHARTER[2]), a[3])
        receipt = self.tx(f.leave(sid), a[6])  # inside the exit window, v2 not accepted
        self.expect(receipt, reg, "MemberExited", account=a[6], onAmendment=True)
        self.moment("amended", "minimal")
        receipt = self.tx(f.conclude(sid, ACHIEVED, RESULT), self.judge)
        self.expect(receipt, reg, "SwarmConcluded", outcome=ACHIEVED, reason=ACCEPTANCE)
        concluded_at = self.d.now
        self.moment("concluded", "minimal")
        # §5.2 anyone after concludedAt + settlementWindow ("after" = strictly later)
        self.d.tx_reverting(f.dissolve(sid), sender=a[9],
                            at=concluded_at + SETTLEMENT_WINDOW)
        self.tx(f.dissolve(sid), a[9], at=concluded_at + SETTLEMENT_WINDOW + 1, gas=TIMED_GAS)
        self.moment("dissolved", "minimal")

    def challenged(self) -> None:
        """§6.4 challenge false → §5.2 enforceRoster → challenge true → resume; expel."""
        reg, a, allow = self.honest, self.a, self.allowlist.functions
        f = reg.functions
        for account in (a[3], a[4], a[6]):
            self.tx(allow.setAllowed(account, True), self.initiator)
        self.tx(self.catching.functions.setAllowed(a[5], True), self.initiator)
        sid = self.form(
            "challenged", reg,
            [_role("worker", 2, 3, self.allowlist.address),
             _role("coordinator", 1, 1, self.catching.address)],
            [_phase("work", "shared", "partitioned", "leader", GATED, RECRUIT)],
            min_members=3, max_members=4)
        self.seat("challenged", reg, sid, a[3], "worker")
        self.seat("challenged", reg, sid, a[4], "worker")
        self.seat("challenged", reg, sid, a[5], "coordinator")
        self.tx(f.activate(sid), a[9])
        self.tx(allow.setAllowed(a[4], False), self.initiator)
        receipt = self.tx(f.challenge(sid, a[4]), a[9], gas=CHALLENGE_GAS)
        self.expect(receipt, reg, "MemberSuspended", account=a[4], cause=2)  # INELIGIBLE
        receipt = self.tx(f.enforceRoster(sid), a[9])
        self.expect(receipt, reg, "SwarmSuspended", reason=6)  # ROSTER_LOST
        self.moment("suspended", "challenged")
        self.tx(allow.setAllowed(a[4], True), self.initiator)
        receipt = self.tx(f.challenge(sid, a[4]), a[7], gas=CHALLENGE_GAS)
        self.expect(receipt, reg, "MemberReinstated", account=a[4])
        self.moment("reinstated", "challenged")
        self.tx(f.resume(sid), a[9])  # anyone: ROSTER_LOST and rosterMet again
        self.moment("resumed", "challenged")
        self.seat("challenged", reg, sid, a[6], "worker")
        self.tx(allow.setAllowed(a[6], False), self.initiator)
        self.tx(f.challenge(sid, a[6]), a[9], gas=CHALLENGE_GAS)
        suspended_at = self.d.now
        # "longer than ineligibleGrace": at exactly suspendedAt + grace the grace still runs
        self.d.tx_reverting(f.expel(sid, a[6]), sender=a[9],
                            at=suspended_at + INELIGIBLE_GRACE, gas=CHALLENGE_GAS)
        receipt = self.tx(f.expel(sid, a[6]), a[9], at=suspended_at + INELIGIBLE_GRACE + 1,
                          gas=CHALLENGE_GAS)
        self.expect(receipt, reg, "MemberExited", account=a[6], reason=3)  # INELIGIBLE
        self.moment("expelled", "challenged")

    def tender(self) -> None:
        """§7.2 SELECT into a CLOSED phase; §6.3 substitution in the CLOSED phase."""
        reg, a, allow = self.honest, self.a, self.allowlist.functions
        f = reg.functions
        for account in (a[5], a[7]):  # a[4] is still allowed (challenged swarm)
            self.tx(allow.setAllowed(account, True), self.initiator)
        sid = self.form(
            "tender", reg,
            [_role("bidder", 0, 0, self_join=True),
             _role("worker", 0, 2, self.allowlist.address),
             _role("coordinator", 1, 1)],
            [_phase("bidding", "exclusive", "redundant", "market", OPEN, RECRUIT),
             _phase("execution", "shared", "partitioned", "leader", CLOSED, SELECT)],
            min_members=3, max_members=6)
        self.seat("tender", reg, sid, a[3], "coordinator")
        for account in (a[4], a[5], a[7], a[6]):  # §6.2 join: both sides in an OPEN phase
            receipt = self.tx(f.join(sid, ROLE_IDS["bidder"], CHARTER[1]), account)
            self.expect(receipt, reg, "MemberActivated", account=account)
            self.member("tender", account, "bidder")
        self.tx(f.applyToJoin(sid, ROLE_IDS["bidder"], CHARTER[1]), a[8])  # stays CANDIDATE
        self.member("tender", a[8], "bidder")
        self.tx(f.activate(sid), a[9])
        self.tx(f.suspendMember(sid, a[6]), self.steward)
        receipt = self.tx(f.advance(sid, [a[3], a[4], a[5]],
                                    [ROLE_IDS["coordinator"], ROLE_IDS["worker"],
                                     ROLE_IDS["worker"]]), self.steward)
        self.expect(receipt, reg, "PhaseAdvanced", phase=1, carried=3)
        self.member("tender", a[3], "coordinator", 1)
        self.member("tender", a[4], "worker", 1)
        self.member("tender", a[5], "worker", 1)
        self.moment("select-advanced", "tender", 1)
        # the specification's flow (§1): a worker's eligibility lapses, anyone challenges it, the
        # ADMIT authority substitutes the third bidder (lazily NOT_CARRIED, so without a live seat)
        # into the CLOSED phase (§6.3: completion is exempt from the boundary)
        self.tx(allow.setAllowed(a[5], False), self.initiator)
        receipt = self.tx(f.challenge(sid, a[5]), a[9], gas=CHALLENGE_GAS)
        self.expect(receipt, reg, "MemberSuspended", account=a[5], cause=2)
        receipt = self.tx(f.substitute(sid, a[5], a[7]), self.steward)
        self.expect(receipt, reg, "MemberSubstituted", previous=a[5], next=a[7])
        receipt = self.tx(f.acceptCharter(sid, CHARTER[1]), a[7])
        self.expect(receipt, reg, "MemberActivated", account=a[7], phase=1)
        self.member("tender", a[7], "worker", 1)
        self.moment("substituted", "tender", 1)

    def pipeline(self) -> None:
        """§7.2 INHERIT keeps active, suspended and pending seats."""
        reg, a = self.honest, self.a
        f = reg.functions
        sid = self.form(
            "pipeline", reg, [_role("worker", 2, 3), _role("verifier", 0, 1)],
            [_phase("draft", "shared", "sequential", "leader", GATED, RECRUIT),
             _phase("review", "shared", "sequential", "automated", GATED, INHERIT)],
            min_members=2, max_members=4)
        for account in (a[3], a[4], a[5]):
            self.seat("pipeline", reg, sid, account, "worker")
        self.tx(f.activate(sid), a[9])
        self.tx(f.suspendMember(sid, a[5]), self.steward)
        self.tx(f.applyToJoin(sid, ROLE_IDS["verifier"], CHARTER[1]), a[6])
        self.member("pipeline", a[6], "verifier")
        receipt = self.tx(f.advance(sid, [], []), self.steward)
        self.expect(receipt, reg, "PhaseAdvanced", phase=1, carried=3)
        self.moment("inherit-advanced", "pipeline", 1)
        receipt = self.tx(f.admit(sid, a[6], ROLE_IDS["verifier"]), self.steward)
        self.expect(receipt, reg, "MemberActivated", account=a[6], phase=1)
        self.member("pipeline", a[6], "verifier", 1)
        self.moment("inherit-completed", "pipeline", 1)

    def lying(self) -> None:
        """A registry whose rosterMet / memberStatus views answer from desynchronised caches."""
        reg, a = self.liar, self.a
        f = reg.functions
        sid = self.form("lying", reg, [_role("worker", 2, 3), _role("coordinator", 1, 1)],
                        [_phase("work", "shared", "partitioned", "leader", GATED, RECRUIT)],
                        min_members=3, max_members=4)
        for account, role in ((a[3], "worker"), (a[4], "worker"), (a[5], "coordinator")):
            self.seat("lying", reg, sid, account, role)
        self.tx(f.activate(sid), a[9])
        self.moment("lying-activated", "lying")
        self.tx(f.leave(sid), a[4])  # storage: workers 1 < min 2, roster lost
        self.tx(f.setRosterMetCache(sid, True), self.initiator)
        self.tx(f.setMemberStatusCache(sid, a[4], 2, 0), self.initiator)  # ACTIVE, NONE
        self.moment("roster-lies", "lying")

    # ---------------------------------------------------------------- rule inventory

    def extend(self) -> None:
        reg, a = self.honest, self.a
        f = reg.functions
        # tender: dissolution after SELECT
        sid = bytes.fromhex(self.swarms["tender"]["id"][2:])
        receipt = self.tx(f.conclude(sid, ACHIEVED, RESULT), self.judge)
        self.expect(receipt, reg, "SwarmConcluded", outcome=ACHIEVED)
        self.tx(f.dissolve(sid), self.steward)  # the DISSOLVE authority: no window
        self.moment("tender-dissolved", "tender", 1)
        # recruit: dissolution after RECRUIT
        sid = self.form("recruit", reg, [_role("worker", 2, 3)],
                        [_phase("work", "shared", "partitioned", "leader", GATED, RECRUIT),
                         _phase("rework", "shared", "partitioned", "leader", GATED, RECRUIT)],
                        min_members=2, max_members=4)
        for account in (a[3], a[4]):
            self.seat("recruit", reg, sid, account, "worker")
        self.tx(f.activate(sid), a[9])
        receipt = self.tx(f.advance(sid, [], []), self.steward)
        self.expect(receipt, reg, "PhaseAdvanced", phase=1, carried=0)
        self.moment("recruit-advanced", "recruit", 1)
        self.tx(f.conclude(sid, ACHIEVED, RESULT), self.judge)
        self.tx(f.dissolve(sid), self.steward)
        self.moment("recruit-dissolved", "recruit", 1)
        # quorum: §6.5 per-role minimums and the total, then abort before activation
        sid = self.form("quorum", reg, [_role("worker", 1, 3), _role("coordinator", 1, 1)],
                        [_phase("work", "shared", "partitioned", "leader", GATED, RECRUIT)],
                        min_members=3, max_members=4)
        for account in (a[3], a[4], a[5]):
            self.seat("quorum", reg, sid, account, "worker")
        self.moment("roles-short", "quorum")
        self.seat("quorum", reg, sid, a[6], "coordinator")
        self.moment("quorum-met", "quorum")
        for account in (a[3], a[4]):
            receipt = self.tx(f.leave(sid), account)
            self.expect(receipt, reg, "MemberExited", account=account)
        self.moment("total-short", "quorum")
        receipt = self.tx(f.abort(sid), self.steward)
        self.expect(receipt, reg, "SwarmConcluded")
        self.moment("aborted", "quorum")

    # ---------------------------------------------------------------- manifest

    def finish(self) -> None:
        swarms = {}
        for name, s in self.swarms.items():
            entry = dict(s)
            entry["members"] = list(s["members"].values())
            swarms[name] = entry
        self.section["swarms"] = swarms
        self.section["moments"] = self.moments


def run(driver: Driver) -> None:
    """Deploy the swarm registries and drive the scripted history (see module doc)."""
    h = SwarmHistory(driver)
    h.deploy()
    h.minimal()
    h.challenged()
    h.tender()
    h.pipeline()
    h.lying()
    h.finish()
    driver.state[SECTION] = h  # for extend()


def extend(driver: Driver) -> None:
    """Rule-inventory moments (vectors/rules.json), after every history (so every moment above
    keeps its block hash):

    ``tender``   concluded and dissolved after its SELECT advance: a bidder lazily NOT_CARRIED
                 before the dissolution stays NOT_CARRIED, a carried worker is SWARM_DISSOLVED
                 (contracts/src/swarm/README.md, "Lazy precedence").
    ``recruit``  two GATED phases, the second entered through RECRUIT (every seat NOT_CARRIED,
                 §7.2), then concluded and dissolved.
    ``quorum``   still FORMING, minMembers 3, worker min 1, coordinator min 1 (§6.5): three
                 workers and no coordinator (the total meets minMembers, a role is short), then
                 a coordinator (met), then two workers leave (every role met, the total short),
                 then the ABORT authority aborts it before activation (§5.2: SWARM_DISSOLVED).
    """
    h = driver.state[SECTION]
    h.extend()
    h.finish()
