"""Shared helpers for the contract tests of the AMM registry and the ERC-8312 meters.

Everything here is either chain plumbing (timestamped transactions, expected custom errors,
snapshots) or a value taken from the Agent Meditation Mechanism specification (AMM §Test Cases), so
the tests compare the deployed contracts against numbers that do not come from the contracts.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import pytest
from eth_abi import decode, encode
from eth_hash.auto import keccak
from web3 import Web3
from web3.exceptions import ContractCustomError
from web3.logs import DISCARD

from recompute.devnet.anvil import Anvil
from recompute.devnet.contracts import connect, deploy

GAS = 5_000_000
ZERO32 = b"\x00" * 32


def h32(value: str) -> bytes:
    """A 0x-prefixed 32-byte hex string as bytes."""
    raw = bytes.fromhex(value.removeprefix("0x"))
    assert len(raw) == 32, value
    return raw


def plain(value):
    """web3 answers structs as tuples (and arrays as lists): normalise both to lists."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def selector(signature: str) -> bytes:
    return keccak(signature.encode())[:4]


def error_data(signature: str, *args) -> bytes:
    """ABI revert data of custom error ``signature`` (e.g. ``"UnscopedLayerChanged(uint8)"``)."""
    types = signature[signature.index("(") + 1 : -1]
    type_list = [t for t in types.split(",") if t]
    return selector(signature) + (encode(type_list, list(args)) if type_list else b"")


# --------------------------------------------------------------------------- chain plumbing


@dataclass
class Chain:
    """An anvil node plus web3, with block timestamps chosen by the test."""

    node: Anvil
    w3: Web3
    contracts: dict = field(default_factory=dict)

    @property
    def accounts(self) -> list[str]:
        return self.w3.eth.accounts

    def transact(self, fn, sender: str, ts: int | None = None):
        """Send ``fn`` from ``sender`` in a block with timestamp ``ts``; the receipt (status 1)."""
        if ts is not None:
            self.node.rpc("evm_setNextBlockTimestamp", ts)
        tx = fn.transact({"from": sender, "gas": GAS})
        receipt = self.w3.eth.wait_for_transaction_receipt(tx)
        assert receipt["status"] == 1, f"transaction reverted: {fn.fn_name}"
        return receipt

    def mine(self, ts: int) -> None:
        self.node.rpc("evm_setNextBlockTimestamp", ts)
        self.node.rpc("evm_mine")

    def view_at(self, fn, ts: int):
        """Mine an empty block at ``ts`` and evaluate the view ``fn`` there (clock() == ts)."""
        self.mine(ts)
        return fn.call()

    def revert_data(self, fn, sender: str, ts: int | None = None) -> bytes:
        """Mine a block at ``ts`` (if given); the custom-error data ``fn`` reverts with."""
        if ts is not None:
            self.mine(ts)
        try:
            fn.call({"from": sender})
        except ContractCustomError as err:
            data = err.data if isinstance(err.data, str) else err.args[0]
            return bytes.fromhex(data.removeprefix("0x"))
        raise AssertionError(f"{fn.fn_name} did not revert with a custom error")

    def snapshot(self) -> str:
        return self.node.rpc("evm_snapshot")

    def revert(self, snap: str) -> None:
        assert self.node.rpc("evm_revert", snap) is True


def start_chain(timestamp: int, *names: str) -> Chain:
    """Start anvil with genesis ``timestamp`` and deploy the named artifacts (from accounts[0]).

    The AMM tests need a genesis before the specification's timepoints (November 2025), earlier
    than the default devnet genesis, so they start their own node instead of ``module_anvil``.
    """
    node = Anvil(timestamp=timestamp).start()
    try:
        return chain_on(node, *names)
    except BaseException:
        node.stop()
        raise


def chain_on(node: Anvil, *names: str) -> Chain:
    """A Chain on an already running node (e.g. the ``module_anvil`` fixture), with deployments."""
    w3 = connect(node.url)
    chain = Chain(node=node, w3=w3)
    for name in names:
        chain.contracts[name] = deploy(w3, name)
    return chain


def mapping_slot(key: bytes | int | str, slot: int, key_type: str = "bytes32") -> int:
    """Storage slot of ``mapping[key]`` for a mapping at ``slot``: keccak256(key ‖ slot)."""
    return int.from_bytes(keccak(encode([key_type, "uint256"], [key, slot])), "big")


def storage_word(chain: Chain, address: str, slot: int) -> int:
    return int.from_bytes(chain.w3.eth.get_storage_at(address, slot), "big")


def chain_fixture(chain: Chain):
    """Generator body for a per-test fixture: run the test, then roll the chain back."""
    snap = chain.snapshot()
    try:
        yield chain
    finally:
        chain.revert(snap)


def deployment_fixtures(*names: str, genesis: int | None = None, setup=None):
    """The ``deployed`` and ``chain`` fixtures that the AMM and meter test modules share.

    ``deployed`` (module scope) deploys the artifacts ``names`` (from accounts[0]) on an anvil of
    its own started at genesis timestamp ``genesis`` and stopped after the module (see
    ``start_chain``), or, without ``genesis``, on the ``module_anvil`` fixture's node; then
    ``setup(chain)``, if given, builds the state the module's tests share. ``chain`` (per test)
    is that chain, rolled back after each test (see ``chain_fixture``).

    Assign both at module level, ``deployed, chain = deployment_fixtures(...)``: pytest finds
    fixtures by the module's names.
    """

    def prepared(chain: Chain) -> Chain:
        if setup is not None:
            setup(chain)
        return chain

    if genesis is None:

        @pytest.fixture(scope="module", name="deployed")
        def deployed(module_anvil):
            return prepared(chain_on(module_anvil, *names))

    else:

        @pytest.fixture(scope="module", name="deployed")
        def deployed():
            chain = start_chain(genesis, *names)
            try:
                yield prepared(chain)
            finally:
                chain.node.stop()

    @pytest.fixture(name="chain")
    def chain(deployed):
        yield from chain_fixture(deployed)

    return deployed, chain


def contract_fixture(name: str):
    """A per-test fixture answering the deployed contract ``name`` of the ``chain`` fixture.

    Assign it to the fixture name the tests ask for, e.g. ``reg = contract_fixture(REGISTRY)``.
    """

    @pytest.fixture
    def contract(chain):
        return chain.contracts[name]

    return contract


# ------------------------------------------------------------------- AMM specification values

REGISTRY = "AgentMeditationRegistry"  # the honest registry's artifact

# AMM §Commitment format
TAG_LAYER_COMMITMENT = keccak(b"AgentMeditationMechanism/LayerCommitment/v1")
TAG_STATE_ROOT = keccak(b"AgentMeditationMechanism/StateRoot/v1")

# AMM §Roles and authorization
RIGHT_FLOOR, RIGHT_DEMAND, RIGHT_REVOKE_OPERATORS = 1, 2, 4
PERM_REPORT, PERM_PULSE, PERM_POLICY = 1, 2, 4

# AMM §Interface enums
COMPLETED, PARTIAL, ABORTED, FAILED = 0, 1, 2, 3
SCHEDULED, EVENT, COMMANDED, SELF = 0, 1, 2, 3
NOT_ENROLLED, UNSUPPORTED, UNSCHEDULED, FRESH, DUE, OVERDUE = range(6)
SIG_NOT_ENROLLED, NOT_TRACKED, PRESENT, SILENT = range(4)

# AMM §Test Cases: worked example (mcp-timeout-cycle)
SCHEMA_IDS = (
    "amm.layer.runtime/1",
    "amm.layer.memory-skills/1",
    "amm.layer.tasks-roles/1",
    "amm.layer.cognition/1",
)
SCHEMA_HASHES = tuple(h32(x) for x in (
    "0x6a00023d50bfe315bf6650953a4bb81910aef335c63ee465d2f52937b860790b",
    "0x2862ecb7722af301f96bf7b7127d96568563c9c6cd281308f315e97b433d2055",
    "0x739b5fc9aa474200ce364ed1db095acd99a4407eb27e258f294f3e65ffff40ad",
    "0x086a5b8a0101b4013c63de2d7392ddb4ae22c61e33afd0eaef58387952c1f468",
))
PRE_CONTENT = tuple(h32(x) for x in (
    "0xa25eae406d69cd3802dbb588487f486e5b5e006b7ef521303ea24406979a4731",
    "0xf3640f14c472bf43b5e89ea5a0a7d1e3681f47c81a7cf1a0d3f41cc685ed1701",
    "0x1cefdfbcd841dc162bea189aa25d1e3e2a031d5805901a407db4003706cafdd5",
    "0xc6e5d3da30fc9d27be29773df620dbed9a359d6bba795d93bafcdb5963e9ede8",
))
PRE_SALTS = (
    ZERO32,
    h32("0x9b1e4c7a2d5f8b0c3e6a9d1f4b7e0a3c6f9b2e5d8a1c4f7b0e3a6d9c2f5b8e1a"),
    ZERO32,
    h32("0x4d7a0c3f6b9e2d5a8c1f4b7e0a3d6c9f2b5e8a1d4c7f0b3e6a9d2c5f8b1e4a7d"),
)
PRE_COMMITMENTS = tuple(h32(x) for x in (
    "0x053bdcecda479dd30b5bfd7a02661df67b79e978fea6888245df8aa167d6d282",
    "0x3a8a0162793df87f7094634e37d9e5d3d8470bd43cc7fee5669f609d922ee9c3",
    "0x3d3356ae1bc86136718f1ecd7f42d8a0570db2d21116c886cab291a789010585",
    "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e",
))
PRE_ROOT = h32("0x090e63d66e6cdb08331fece350bd0320551287d53d6644d5af158b04d94d149f")
# post state: layers 0..2 (layer 3 unchanged)
POST_CONTENT = tuple(h32(x) for x in (
    "0xacd47bc6d2511898088ea3f2b561707ff0f23f434385f4fee7fd53991e50b881",
    "0x205d5acb2bec31ae30aeaad85e5761ff592b1d50011138dc0d5cd2f38fcfb607",
    "0x8c008b3acd189eea792a1c56b70020fef36a2ed9bb75cfa07944bfdeac6115cd",
))
POST_SALTS = (
    ZERO32,
    h32("0xc3f6a9d2e5b8c1f4a7d0e3b6c9f2a5d8e1b4c7f0a3d6e9b2c5f8a1d4e7b0c3f6"),
    ZERO32,
)
POST_COMMITMENTS = tuple(h32(x) for x in (
    "0xb5a33b6d3732e664a08a19ed068432a6ab1085bf7013b3ffce1ff88ec7dd8519",
    "0xd24fedfca7a64b7596414751a6d4a1ed7a89bf906bce4b453453a7b086d26641",
    "0x8f03de4a144d8d453c84d2d4546fb0f01af23bd6f7ba31d18dac0c6dd1a942f0",
    "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e",
))
POST_ROOT = h32("0x9918ebff7f3bc97ca08580033da3aa99b27871d8d57b2b8c9845221fa3dec3de")
POLICY_HASH = h32("0x5dfdd440a0eced1f62839fa0281f21cadacfa0f527642ea586b5f5c1ce5e41d9")
RECORD_HASH = h32("0xdcbc7047b5bf0d600b98d7829fc37757bdac9406ec992128cc90e910e9645088")
INTERVALS = (86400, 604800, 2592000, 7776000)
DUE_WINDOW = 3600
PULSE_INTERVAL = 21600
STARTED_AT = 1762653600
ENDED_AT = 1762654500
NEXT_PLANNED_AT = 1762740000
OPS_MASK = 0x0456
INTERFACE_ID = 0x9C81B550

# The specification does not give the enrolment time or the block that records the cycle; these are
# chosen before the cycle's start (so policy version 1 governs it) and after its end.
GENESIS = 1762600000
ENROLLED_AT = 1762650000
RECORDED_AT = 1762654800


def registry_fixtures(setup=None):
    """``deployed``, ``chain`` and ``reg`` for a module testing the honest AMM registry alone.

    ``deployed`` and ``chain`` as ``deployment_fixtures`` makes them for REGISTRY on its own
    anvil from GENESIS, then ``setup(chain)`` if given; ``reg`` (per test) is the registry.
    Assign all three at module level: ``deployed, chain, reg = registry_fixtures()``.
    """
    return (*deployment_fixtures(REGISTRY, genesis=GENESIS, setup=setup),
            contract_fixture(REGISTRY))


def layer_commitment(layer: int, schema_hash: bytes, content_hash: bytes, salt: bytes) -> bytes:
    """AMM §Commitment format, computed here independently of the contract."""
    return keccak(encode(
        ["bytes32", "uint8", "bytes32", "bytes32", "bytes32"],
        [TAG_LAYER_COMMITMENT, layer, schema_hash, content_hash, salt],
    ))


def state_root(commitments) -> bytes:
    """AMM §Commitment format: root = keccak256(abi.encode(TAG_STATE_ROOT, c0, c1, c2, c3))."""
    return keccak(encode(["bytes32"] * 5, [TAG_STATE_ROOT, *commitments]))


def policy(
    supported: int = 0x0F,
    required: int = 0x0F,
    triggers: int = 0x0F,
    disclosure: int = 0,
    due_window: int = DUE_WINDOW,
    pulse_interval: int = PULSE_INTERVAL,
    intervals=INTERVALS,
    policy_hash: bytes = POLICY_HASH,
    uri: str = "",
) -> tuple:
    """A `Policy` tuple (AMM §Policy and floor); defaults are the worked example's policy."""
    return (policy_hash, uri, supported, required, triggers, disclosure, due_window,
            pulse_interval, list(intervals))


def floor(required: int, pulse_interval: int = 0, intervals=(0, 0, 0, 0)) -> tuple:
    return (required, pulse_interval, list(intervals))


def cycle(
    base_version: int,
    pre_root: bytes,
    post,
    layer_mask: int = 0x0F,
    completed: int = 0x0F,
    ops: int = 0,
    outcome: int = COMPLETED,
    trigger: int = EVENT,
    policy_version: int = 1,
    started: int = STARTED_AT,
    ended: int = ENDED_AT,
    next_planned: int = 0,
    restores: int = 0,
    record_hash: bytes = ZERO32,
    uri: str = "",
) -> tuple:
    """A `CycleReport` tuple (AMM §Cycle records)."""
    return (base_version, pre_root, list(post), layer_mask, completed, ops, outcome, trigger,
            policy_version, started, ended, next_planned, restores, record_hash, uri)


def worked_example_cycle() -> tuple:
    """The cycle record of AMM §Test Cases, field for field."""
    return cycle(
        base_version=1, pre_root=PRE_ROOT, post=POST_COMMITMENTS, layer_mask=0x0F,
        completed=0x0F, ops=OPS_MASK, outcome=COMPLETED, trigger=EVENT, policy_version=1,
        started=STARTED_AT, ended=ENDED_AT, next_planned=NEXT_PLANNED_AT, restores=0,
        record_hash=RECORD_HASH,
    )


ZERO_ADDRESS = "0x" + "00" * 20


def enroll(chain: Chain, reg, subject: str, ts: int, pol: tuple | None = None,
           controller: str = ZERO_ADDRESS, rights: int = 0, baseline=PRE_COMMITMENTS):
    """Enroll ``subject`` at ``ts`` (default: the worked example's policy and pre state)."""
    pol = policy() if pol is None else pol
    return chain.transact(
        reg.functions.enroll(list(baseline), pol, controller, rights), subject, ts
    )


def events(contract, name: str, receipt) -> list[dict]:
    """Decoded ``name`` events of ``contract`` in ``receipt`` (other logs ignored)."""
    return [e["args"] for e in getattr(contract.events, name)().process_receipt(
        receipt, errors=DISCARD)]


def commitment(label: str) -> bytes:
    """A distinct stand-in layer commitment for behavioural tests."""
    return keccak(label.encode())


# --------------------------------------------------------------------------- ERC-8312 tree
# The aggregate-budget delegation tree shared by test_meters_aggregate_budget / _lying.

CAP = 100
PERIOD = 86400
ANCHOR = 1767300000  # after the devnet genesis (2026-01-01), so creation precedes period 0
SETUP_AT = 1767250000
SALT = keccak(b"tree-1")
A, B, C, D, E = (keccak(n.encode()) for n in ("node-A", "node-B", "node-C", "node-D", "node-E"))
ROOT_NODE = b"\x00" * 32
EXCEEDED = "RootCapExceeded(bytes32,uint256,uint256,uint256)"
DRAWN_TOPIC = keccak(b"Drawn(bytes32,bytes32,uint256,uint256)")


def build_tree(chain, meter, setup_at: int = SETUP_AT):
    """issuer accounts[1]; root agent accounts[2]; A, B, C (node caps 50 each, together 150 >
    cap) under the root, agents accounts[3..5]; D uncapped (accounts[6])."""
    issuer, top = chain.accounts[1], chain.accounts[2]
    chain.transact(meter.functions.createRoot(SALT, top, CAP, PERIOD, ANCHOR), issuer, setup_at)
    root_id = keccak(encode(["address", "bytes32"], [issuer, SALT]))
    for node, agent, node_cap in ((A, 3, 50), (B, 4, 50), (C, 5, 50), (D, 6, 0)):
        chain.transact(meter.functions.delegate(root_id, ROOT_NODE, node, chain.accounts[agent],
                                                node_cap), top)
    return root_id


def drawn_sums(chain, meter, root_id) -> dict[int, int]:
    """Σ Drawn.amount per periodIndex for ``root_id``, decoded from raw logs by hand."""
    logs = chain.w3.eth.get_logs({"address": meter.address, "fromBlock": 0,
                                  "topics": ["0x" + DRAWN_TOPIC.hex(), "0x" + root_id.hex()]})
    sums: dict[int, int] = defaultdict(int)
    for log in logs:
        period = int.from_bytes(log["topics"][3], "big")
        (amount,) = decode(["uint256"], log["data"])
        sums[period] += amount
    return dict(sums)


def spent_slot(chain, meter, root_id, period) -> int:
    """spentRoot[rootId][period] at keccak(period ‖ keccak(rootId ‖ 0))."""
    inner = mapping_slot(root_id, 0)
    return storage_word(chain, meter.address, mapping_slot(period, inner, "uint256"))
