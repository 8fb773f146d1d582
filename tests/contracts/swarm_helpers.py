"""Shared helpers for the ERC-8447 swarm registry contract tests.

Everything here is chain plumbing (timestamped transactions, expected custom errors, snapshots,
library linking) or a constant written out from the ERC-8447 specification text (enum orders of
§3.1, §5.1, §6.1 and §8, identifier preimages of §3.2, §3.4 and §7.1), so the tests compare the
deployed registry against values that do not come from the registry.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass, field

import pytest
from eth_abi import decode, encode
from eth_hash.auto import keccak
from eth_utils.abi import get_abi_output_types
from web3 import Web3
from web3.logs import DISCARD

from recompute.devnet.anvil import Anvil
from recompute.devnet.contracts import connect, deploy

GAS = 8_000_000
ZERO32 = b"\x00" * 32
ZERO_ADDR = "0x" + "00" * 20
T0 = 1_800_000_000  # every module forms its swarms from here on (after anvil's genesis)


def kid(text: str) -> bytes:
    """keccak256 of an ASCII identifier, e.g. ``kid("sai.role.worker")``."""
    return keccak(text.encode())


def selector(signature: str) -> bytes:
    return keccak(signature.encode())[:4]


# --------------------------------------------------------------------------- specification enums

# §3.1
OPEN, GATED, CLOSED = 0, 1, 2
RECRUIT, INHERIT, SELECT = 0, 1, 2
A_NONE, A_ADDRESS, A_ROLE, A_ANY_MEMBER, A_INITIATOR = 0, 1, 2, 3, 4
DECISION_POINTS = [
    "ACTIVATE", "ABORT", "SUSPEND", "RESUME", "ADVANCE", "CONCLUDE", "DISSOLVE", "SUCCEED",
    "ADMIT", "REMOVE", "REINSTATE", "AMEND", "ATTACH", "DETACH", "SET_ACCOUNT", "REPRESENT",
]
DP = {name: i for i, name in enumerate(DECISION_POINTS)}
ROSTER_MET, AUTHORITY_ACT, BOTH = 0, 1, 2
# §5.1
S_NONE, FORMING, ACTIVE, SUSPENDED, CONCLUDING, DISSOLVED = range(6)
O_NONE, ACHIEVED, PARTIAL, FAILED, ABANDONED, SUPERSEDED = range(6)
(R_NONE, R_AUTHORITY, R_ACCEPTANCE, R_RECRUITMENT_EXPIRED, R_TIMEOUT, R_INACTIVITY,
 R_ROSTER_LOST, R_SUCCESSION) = range(8)
# §6.1
M_NONE, M_CANDIDATE, M_ACTIVE, M_SUSPENDED, M_EXITED = range(5)
C_NONE, C_AUTHORITY, C_INELIGIBLE = range(3)
X_NONE, X_LEFT, X_REMOVED, X_INELIGIBLE, X_NOT_CARRIED, X_REPLACED, X_SWARM_DISSOLVED = range(7)
# §8
TERMINAL, MILESTONED, EXPLORATORY, STANDING = range(4)
MS_PENDING, MS_ACCEPTED, MS_REJECTED = range(3)

# §7.1 dimensions and base terms: keccak256("sai.dimension.<d>"), keccak256("sai.<d>.<term>")
DIMENSIONS = {d: kid(f"sai.dimension.{d}") for d in ("payoff", "topology", "coordination")}
BASE_TERMS = {
    "payoff": ["shared", "exclusive", "mixed"],
    "topology": ["redundant", "partitioned", "sequential", "hierarchical", "iterative", "free"],
    "coordination": ["leader", "collective", "market", "automated", "none"],
}
SHARED = kid("sai.payoff.shared")
EXCLUSIVE = kid("sai.payoff.exclusive")
PARTITIONED = kid("sai.topology.partitioned")
REDUNDANT = kid("sai.topology.redundant")
LEADER = kid("sai.coordination.leader")
# §3.2 reserved roles, §3.4 origins
WORKER = kid("sai.role.worker")
COORDINATOR = kid("sai.role.coordinator")
BIDDER = kid("sai.role.bidder")
INITIATOR_ROLE = kid("sai.role.initiator")
ORIGIN_INITIATOR = kid("sai.origin.initiator")

# §3.1 SwarmSpec as an ABI tuple type (for eth_abi.encode / keccak256(abi.encode(spec)))
ROLE_T = "(bytes32,uint32,uint32,address,bool)"
PHASE_T = "(bytes32,bytes32,bytes32,bytes32,uint8,uint8,uint64,bytes32)"
AUTH_T = "(uint8,address,bytes32)"
SPEC_T = (
    f"({ROLE_T}[],{PHASE_T}[],{AUTH_T}[],uint8,uint8,uint32,uint32,"
    "uint64,uint64,uint64,uint64,uint64,uint64,bytes32)"
)

CHARTER_1 = kid("charter v1")
CHARTER_2 = kid("charter v2")
CHARTER_3 = kid("charter v3")
COMMITMENT_1 = kid("commitment v1")
OBJECTIVE_1 = kid("objective v1")


# --------------------------------------------------------------------------- spec builders


def role(role_id: bytes, min_: int = 0, max_: int = 0, eligibility: str = ZERO_ADDR,
         self_join: bool = False) -> tuple:
    return (role_id, min_, max_, eligibility, self_join)


def phase(name: str = "work", payoff: bytes = SHARED, topology: bytes = PARTITIONED,
          coordination: bytes = LEADER, boundary: int = GATED, admission: int = RECRUIT,
          input_window: int = 0, descriptor: bytes = ZERO32) -> tuple:
    return (name.encode().ljust(32, b"\x00"), payoff, topology, coordination, boundary,
            admission, input_window, descriptor)


def authorities(holder: str, **kinds) -> list[tuple]:
    """16 authorities: ADDRESS ``holder`` everywhere unless ``NAME=(kind, target, roleId)``."""
    out = []
    for name in DECISION_POINTS:
        out.append(kinds.get(name, (A_ADDRESS, holder, ZERO32)))
    return out


@dataclass
class Spec:
    roles: list
    phases: list
    authorities: list
    activation: int = ROSTER_MET
    contributions: int = 0
    min_members: int = 3
    max_members: int = 5
    recruitment_window: int = 1_000
    max_duration: int = 100_000
    inactivity_timeout: int = 5_000
    ineligible_grace: int = 300
    settlement_window: int = 700
    amendment_exit_window: int = 400
    descriptor: bytes = field(default_factory=lambda: kid("spec descriptor"))

    def tuple(self) -> tuple:
        return (self.roles, self.phases, self.authorities, self.activation, self.contributions,
                self.min_members, self.max_members, self.recruitment_window, self.max_duration,
                self.inactivity_timeout, self.ineligible_grace, self.settlement_window,
                self.amendment_exit_window, self.descriptor)

    def spec_hash(self) -> bytes:
        """§3.1 keccak256(abi.encode(spec)), computed with eth_abi."""
        return keccak(encode([SPEC_T], [self.tuple()]))


def objective(judge: str, kind: int = TERMINAL, milestones: int = 0,
              objective_hash: bytes = OBJECTIVE_1) -> tuple:
    return (objective_hash, kind, judge, (0, ZERO_ADDR, 0), milestones)


# --------------------------------------------------------------------------- chain plumbing


class Reverted(AssertionError):
    pass


def _raw_rpc(url: str, method: str, params: list) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    request = urllib.request.Request(url, data=body.encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@dataclass
class SwarmChain:
    """An anvil node, web3, the linked registry (honest or lying) and two modules.

    Every transaction is mined in a block whose timestamp the test chooses (``at``) or, by
    default, one second after the previous one, so windows are tested at exact seconds.
    """

    node: Anvil
    w3: Web3
    registry: object
    allowlist: object
    catching: object
    now: int = T0

    @property
    def accounts(self) -> list[str]:
        return self.w3.eth.accounts

    # ---- time and isolation
    def snapshot(self) -> tuple[str, int]:
        return self.node.rpc("evm_snapshot"), self.now

    def revert(self, snap: tuple[str, int]) -> None:
        assert self.node.rpc("evm_revert", snap[0])
        self.now = snap[1]

    def _next(self, at: int | None) -> int:
        ts = self.now + 1 if at is None else at
        assert ts > self.now, f"timestamp {ts} not after {self.now}"
        return ts

    # ---- transactions
    def tx(self, fn, sender: str, at: int | None = None, gas: int = GAS):
        """Mine ``fn`` from ``sender`` at timestamp ``at``; returns the receipt (must succeed)."""
        ts = self._next(at)
        self.node.rpc("evm_setNextBlockTimestamp", ts)
        tx = fn.transact({"from": sender, "gas": gas})
        receipt = self.w3.eth.wait_for_transaction_receipt(tx)
        self.now = ts
        if receipt["status"] != 1:
            raise Reverted(f"{fn.fn_name} reverted: {self.revert_data(fn, sender).hex()}")
        return receipt

    def eth_call(self, fn, sender: str, at: int | None = None, gas: int = GAS) -> dict:
        """Raw eth_call of ``fn`` against the latest state with block.timestamp == ``at``."""
        ts = self._next(at)
        call = {"from": sender, "to": fn.address, "data": fn._encode_transaction_data(),
                "gas": hex(gas)}
        return _raw_rpc(self.node.url, "eth_call", [call, "latest", {}, {"time": hex(ts)}])

    def revert_data(self, fn, sender: str, at: int | None = None) -> bytes:
        reply = self.eth_call(fn, sender, at)
        if "error" not in reply:
            return b""
        return bytes.fromhex((reply["error"].get("data") or "0x")[2:])

    def fails(self, fn, sender: str, error: str, at: int | None = None, gas: int = GAS) -> None:
        """Assert that ``fn`` from ``sender`` at ``at`` reverts with custom error ``error()``."""
        reply = self.eth_call(fn, sender, at, gas)
        assert "error" in reply, f"{fn.fn_name} did not revert (expected {error})"
        data = bytes.fromhex((reply["error"].get("data") or "0x")[2:])
        assert data == selector(f"{error}()"), f"{fn.fn_name}: got {data.hex()}, want {error}"

    def view(self, fn, at: int | None = None, sender: str | None = None):
        """A view evaluated with block.timestamp == ``at`` (default: one second from now)."""
        reply = self.eth_call(fn, sender or self.accounts[0], at)
        assert "error" not in reply, reply
        out = decode(get_abi_output_types(fn.abi), bytes.fromhex(reply["result"][2:]))
        return out[0] if len(out) == 1 else out

    def events(self, receipt, name: str) -> list:
        return list(self.registry.events[name]().process_receipt(receipt, errors=DISCARD))

    # ---- registry conveniences
    def form(self, spec: Spec, judge: str, sender: str, obj: tuple | None = None,
             charter: bytes = CHARTER_1, commitment: bytes = COMMITMENT_1,
             at: int | None = None) -> bytes:
        fn = self.registry.functions.form(spec.tuple(), charter, commitment, "ipfs://pack", ZERO32,
                                          (ORIGIN_INITIATOR, ZERO32), obj or objective(judge))
        receipt = self.tx(fn, sender, at)
        (event,) = self.events(receipt, "SwarmFormed")
        return event["args"]["swarmId"]


def link_and_deploy(node: Anvil, registry_name: str = "SwarmRegistry",
                    catching_work: int = 20_000) -> SwarmChain:
    """Deploy SpecLib and MembershipLib, link them into ``registry_name``, deploy the modules."""
    w3 = connect(node.url)
    libraries = {}
    for lib in ("SpecLib", "MembershipLib"):
        fq = f"contracts/src/swarm/{lib}.sol:{lib}"
        placeholder = "__$" + keccak(fq.encode()).hex()[:34] + "$__"
        libraries[placeholder] = deploy(w3, lib).address
    registry = deploy(w3, registry_name, libraries=libraries)
    allowlist = deploy(w3, "AllowlistEligibility")
    catching = deploy(w3, "CatchingEligibility", catching_work)
    node.rpc("evm_setNextBlockTimestamp", T0)
    node.rpc("evm_mine")
    return SwarmChain(node=node, w3=w3, registry=registry, allowlist=allowlist,
                      catching=catching, now=T0)


def swarm_fixtures():
    """The ``chain`` and ``isolated`` fixtures that every swarm test module starts with.

    ``chain`` (module scope): the honest SwarmRegistry linked and deployed on the
    ``module_anvil`` fixture's node (``link_and_deploy``). ``isolated`` (autouse, per test):
    an evm snapshot before each test, reverted after it, so every test starts from that chain.

    Assign both at module level, ``chain, isolated = swarm_fixtures()``: pytest finds fixtures by
    the module's names.
    """

    @pytest.fixture(scope="module", name="chain")
    def chain(module_anvil):
        return link_and_deploy(module_anvil)

    @pytest.fixture(autouse=True, name="isolated")
    def isolated(chain):
        snap = chain.snapshot()
        yield
        chain.revert(snap)

    return chain, isolated


def registry_functions(chain: SwarmChain):
    """The registry's contract functions (``chain.registry.functions``)."""
    return chain.registry.functions


def acct(chain: SwarmChain, i: int) -> str:
    """Anvil dev account ``i``."""
    return chain.accounts[i]


def changed_logs(chain: SwarmChain, swarm_id: bytes) -> list:
    """Every Changed(swarmId, ...) log of the chain so far, in order."""
    event = chain.registry.events.Changed
    return list(event.get_logs(from_block=0, argument_filters={"swarmId": swarm_id}))


def named(fn, value) -> dict:
    """A struct returned by view ``fn`` as a dict keyed by the ABI component names."""
    components = fn.abi["outputs"][0]["components"]
    return {c["name"]: v for c, v in zip(components, value, strict=True)}


def swarm_record(chain: SwarmChain, swarm_id: bytes) -> dict:
    fn = chain.registry.functions.getSwarm(swarm_id)
    return named(fn, fn.call())


def member_record(chain: SwarmChain, swarm_id: bytes, account: str) -> dict:
    fn = chain.registry.functions.getMember(swarm_id, account)
    return named(fn, fn.call())


# --------------------------------------------------------------------------- common scenario

# Accounts by index: 0 initiator, 1 holder of every ADDRESS authority, 2 acceptance authority
# ("judge"), 3.. members and strangers.
INITIATOR, AUTH, JUDGE = 0, 1, 2


def standard_spec(chain: SwarmChain, **overrides) -> Spec:
    """A single-phase GATED swarm: workers (min 2, max 3, self-join) and one coordinator
    (min 1, max 1); minMembers 3, maxMembers 5; every decision point held by account 1."""
    spec = Spec(
        roles=[role(WORKER, 2, 3, self_join=True), role(COORDINATOR, 1, 1)],
        phases=[phase()],
        authorities=authorities(chain.accounts[AUTH]),
    )
    for name, value in overrides.items():
        setattr(spec, name, value)
    return spec


def seat(chain: SwarmChain, swarm_id: bytes, account: str, role_id: bytes = WORKER,
         charter: bytes = CHARTER_1) -> None:
    """Two-sided admission in a GATED phase: applyToJoin by the account, admit by account 1."""
    reg = chain.registry.functions
    chain.tx(reg.applyToJoin(swarm_id, role_id, charter), account)
    chain.tx(reg.admit(swarm_id, account, role_id), chain.accounts[AUTH])


def populated(chain: SwarmChain, spec: Spec | None = None, activate: bool = True) -> bytes:
    """The standard swarm with workers accounts[3], accounts[4] and coordinator accounts[5]."""
    a = chain.accounts
    swarm_id = chain.form(spec or standard_spec(chain), a[JUDGE], a[INITIATOR])
    seat(chain, swarm_id, a[3])
    seat(chain, swarm_id, a[4])
    seat(chain, swarm_id, a[5], COORDINATOR)
    if activate:
        chain.tx(chain.registry.functions.activate(swarm_id), a[9])
    return swarm_id


def status(chain: SwarmChain, swarm_id: bytes, account: str) -> tuple[int, int]:
    return tuple(chain.registry.functions.memberStatus(swarm_id, account).call())
