"""AMM §Test Cases on-chain: domain tags, layer commitments, roots, the ERC-165 id and the worked
example cycle record (mcp-timeout-cycle) registered against AgentMeditationRegistry."""

from __future__ import annotations

import pytest
from amm_helpers import (
    COMPLETED,
    DUE_WINDOW,
    ENDED_AT,
    ENROLLED_AT,
    EVENT,
    FRESH,
    GENESIS,
    INTERFACE_ID,
    INTERVALS,
    NEXT_PLANNED_AT,
    OPS_MASK,
    POLICY_HASH,
    POST_COMMITMENTS,
    POST_CONTENT,
    POST_ROOT,
    POST_SALTS,
    PRE_COMMITMENTS,
    PRE_CONTENT,
    PRE_ROOT,
    PRE_SALTS,
    PULSE_INTERVAL,
    RECORD_HASH,
    RECORDED_AT,
    SCHEMA_HASHES,
    SCHEMA_IDS,
    STARTED_AT,
    events,
    h32,
    layer_commitment,
    plain,
    policy,
    start_chain,
    state_root,
    worked_example_cycle,
)
from eth_hash.auto import keccak

# The canonical signatures of the 23 functions of IAgentMeditation (AMM §Interface), written
# out by hand from the specification's structures.
POLICY_T = "(bytes32,string,uint8,uint8,uint8,uint8,uint48,uint48,uint48[4])"
FLOOR_T = "(uint8,uint48,uint48[4])"
REPORT_T = ("(uint64,bytes32,bytes32[4],uint8,uint8,uint16,uint8,uint8,uint32,uint48,uint48,"
            "uint48,uint64,bytes32,string)")
INTERFACE_SIGNATURES = [
    f"enroll(bytes32[4],{POLICY_T},address,uint8)",
    "setOperator(address,uint8)",
    "revokeOperator(address,address)",
    "setController(address,address,uint8)",
    f"setPolicy(address,{POLICY_T})",
    f"setFloor(address,{FLOOR_T})",
    "demand(address,uint8,uint48)",
    "withdrawDemand(address,uint8)",
    f"report(address,{REPORT_T})",
    "pulse(address,uint48)",
    "headOf(address)",
    "checkpointOf(address,uint8)",
    "rootAt(address,uint64)",
    "policyOf(address,uint32)",
    "policyEffectiveFrom(address,uint32)",
    "floorOf(address)",
    "demandOf(address,uint8)",
    "operatorPermissions(address,address)",
    "requirementsOf(address)",
    "layerStatus(address,uint8)",
    "signalStatus(address)",
    "computeRoot(bytes32[4])",
    "computeLayerCommitment(uint8,bytes32,bytes32,bytes32)",
]


@pytest.fixture(scope="module")
def example():
    """Deploy, enroll the example subject with the pre state, register the example cycle."""
    chain = start_chain(GENESIS, "AgentMeditationRegistry")
    try:
        reg = chain.contracts["AgentMeditationRegistry"]
        subject = chain.accounts[1]
        chain.transact(
            reg.functions.enroll(list(PRE_COMMITMENTS), policy(), "0x" + "00" * 20, 0),
            subject, ENROLLED_AT,
        )
        receipt = chain.transact(
            reg.functions.report(subject, worked_example_cycle()), subject, RECORDED_AT
        )
        yield chain, reg, subject, receipt
    finally:
        chain.node.stop()


def test_domain_tags_match_seed():
    # AMM §Test Cases, Domain tags
    assert keccak(b"AgentMeditationMechanism/LayerCommitment/v1") == h32(
        "0xc76b0a7a69207b3cf002d75e6493bc9fe99e8d75b5096ead1276bc4339b69d85")
    assert keccak(b"AgentMeditationMechanism/StateRoot/v1") == h32(
        "0xe2251470d039826c2565c6e003924bb890e07cd981b370528c245e47f1c3e7c6")


def test_contract_domain_tags(example):
    _, reg, _, _ = example
    assert reg.functions.TAG_LAYER_COMMITMENT().call() == h32(
        "0xc76b0a7a69207b3cf002d75e6493bc9fe99e8d75b5096ead1276bc4339b69d85")
    assert reg.functions.TAG_STATE_ROOT().call() == h32(
        "0xe2251470d039826c2565c6e003924bb890e07cd981b370528c245e47f1c3e7c6")


def test_schema_hashes_are_keccak_of_schema_ids():
    assert tuple(keccak(s.encode()) for s in SCHEMA_IDS) == SCHEMA_HASHES


@pytest.mark.parametrize("layer", range(4))
def test_pre_layer_commitments(example, layer):
    _, reg, _, _ = example
    args = (layer, SCHEMA_HASHES[layer], PRE_CONTENT[layer], PRE_SALTS[layer])
    assert layer_commitment(*args) == PRE_COMMITMENTS[layer]
    assert reg.functions.computeLayerCommitment(*args).call() == PRE_COMMITMENTS[layer]


@pytest.mark.parametrize("layer", range(3))
def test_post_layer_commitments(example, layer):
    _, reg, _, _ = example
    args = (layer, SCHEMA_HASHES[layer], POST_CONTENT[layer], POST_SALTS[layer])
    assert layer_commitment(*args) == POST_COMMITMENTS[layer]
    assert reg.functions.computeLayerCommitment(*args).call() == POST_COMMITMENTS[layer]


def test_roots(example):
    _, reg, _, _ = example
    assert state_root(PRE_COMMITMENTS) == PRE_ROOT
    assert state_root(POST_COMMITMENTS) == POST_ROOT
    assert reg.functions.computeRoot(list(PRE_COMMITMENTS)).call() == PRE_ROOT
    assert reg.functions.computeRoot(list(POST_COMMITMENTS)).call() == POST_ROOT


def test_interface_id_is_xor_of_the_23_selectors(example):
    _, reg, _, _ = example
    assert len(INTERFACE_SIGNATURES) == 23
    iid = 0
    for sig in INTERFACE_SIGNATURES:
        iid ^= int.from_bytes(keccak(sig.encode())[:4], "big")
    assert iid == INTERFACE_ID
    assert reg.functions.supportsInterface(iid.to_bytes(4, "big")).call() is True
    assert reg.functions.supportsInterface(bytes.fromhex("01ffc9a7")).call() is True
    assert reg.functions.supportsInterface(bytes.fromhex("ffffffff")).call() is False
    # the compiled ABI declares exactly these signatures (a check on the hand-written list)
    declared = {
        f"{item['name']}({','.join(_canonical(i) for i in item['inputs'])})"
        for item in reg.abi if item["type"] == "function"
    }
    assert set(INTERFACE_SIGNATURES) <= declared


def _canonical(param: dict) -> str:
    kind = param["type"]
    if kind.startswith("tuple"):
        inner = ",".join(_canonical(c) for c in param["components"])
        return f"({inner}){kind[len('tuple'):]}"
    return kind


def test_clock_is_timestamp(example):
    chain, reg, _, _ = example
    assert reg.functions.CLOCK_MODE().call() == "mode=timestamp"
    assert reg.functions.clock().call() == chain.w3.eth.get_block("latest")["timestamp"]


def test_enrolment_registered_version_1(example):
    _, reg, subject, _ = example
    assert reg.functions.rootAt(subject, 1).call() == PRE_ROOT
    assert reg.functions.policyEffectiveFrom(subject, 1).call() == ENROLLED_AT
    assert plain(reg.functions.policyOf(subject, 1).call()) == [
        POLICY_HASH, "", 0x0F, 0x0F, 0x0F, 0, DUE_WINDOW, PULSE_INTERVAL, list(INTERVALS)]


def test_head_after_example(example):
    _, reg, subject, _ = example
    head = plain(reg.functions.headOf(subject).call())
    # (enrolled, controller, rights, policyVersion, floorVersion, stateVersion, recordCount,
    #  root, enrolledAt, lastSignalAt, nextPlannedAt)
    assert head == [True, "0x" + "00" * 20, 0, 1, 0, 2, 1, POST_ROOT, ENROLLED_AT, RECORDED_AT,
                    NEXT_PLANNED_AT]


def test_roots_of_both_versions(example):
    _, reg, subject, _ = example
    assert reg.functions.rootAt(subject, 1).call() == PRE_ROOT
    assert reg.functions.rootAt(subject, 2).call() == POST_ROOT
    assert reg.functions.rootAt(subject, 3).call() == b"\x00" * 32


@pytest.mark.parametrize("layer,changed_at", [(0, 2), (1, 2), (2, 2), (3, 1)])
def test_checkpoints_after_example(example, layer, changed_at):
    _, reg, subject, _ = example
    cp = plain(reg.functions.checkpointOf(subject, layer).call())
    # (commitment, lastCompletedAt, lastCompletedRecordedAt, completedUnderPolicy,
    #  lastChangedVersion): every layer completed at 1762654500 under policy 1; layer 3's
    #  lastChangedVersion stays 1 (AMM §Test Cases, Expected effects)
    assert cp == [POST_COMMITMENTS[layer], ENDED_AT, RECORDED_AT, 1, changed_at]


def test_cycle_recorded_event(example):
    _, reg, subject, receipt = example
    (args,) = events(reg, "CycleRecorded", receipt)
    assert args["subject"] == subject
    assert (args["seq"], args["baseVersion"], args["newVersion"]) == (1, 1, 2)
    assert args["changedLayers"] == 0x07
    assert args["recordedAt"] == RECORDED_AT
    assert args["submitter"] == subject
    r = args["report"]
    assert r["preRoot"] == PRE_ROOT and list(r["postCommitments"]) == list(POST_COMMITMENTS)
    assert (r["layerMask"], r["completedLayers"], r["opsMask"]) == (0x0F, 0x0F, OPS_MASK)
    assert (r["outcome"], r["trigger"], r["policyVersion"]) == (COMPLETED, EVENT, 1)
    assert (r["reportedStartedAt"], r["reportedEndedAt"]) == (STARTED_AT, ENDED_AT)
    assert (r["nextPlannedAt"], r["restoresVersion"], r["recordHash"]) == (
        NEXT_PLANNED_AT, 0, RECORD_HASH)


def test_layer_commitment_changed_events(example):
    _, reg, subject, receipt = example
    got = [(e["layer"], e["version"], e["previousCommitment"], e["newCommitment"])
           for e in events(reg, "LayerCommitmentChanged", receipt)]
    assert got == [(i, 2, PRE_COMMITMENTS[i], POST_COMMITMENTS[i]) for i in range(3)]


@pytest.mark.parametrize("layer", range(4))
def test_layers_fresh_after_example(example, layer):
    _, reg, subject, _ = example
    status, deadline, never = reg.functions.layerStatus(subject, layer).call()
    # deadline = completion 1762654500 + the layer's maxInterval (AMM §Status derivation)
    assert (status, deadline, never) == (FRESH, ENDED_AT + INTERVALS[layer], False)
