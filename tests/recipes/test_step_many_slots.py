"""step_many combines raw-slot (``Slots``) reads as it combines layout reads: N independent
``struct:2:2:1`` checks of one contract cost one eth_getProof, and each verdict is the one a
lone ``step`` gives. Expected values are the amounts sent to the contract in this test."""

from __future__ import annotations

from recompute.core.anchor import anchor_block
from recompute.devnet.contracts import connect, deploy
from recompute.evaluator.job import Job, step, step_many
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource

CAP = "8312/cap-conservation"


def _key(i: int) -> str:
    return "0x" + i.to_bytes(32, "big").hex()


def test_hundred_struct_keys_cost_one_proof_request(anvil):
    w3 = connect(anvil.url)
    meter = deploy(w3, "HeadroomMeter")
    operator = w3.eth.accounts[3]
    opened = {i: 1000 + i for i in range(1, 6)}  # five envelopes: cap 1000+i, turnover 0
    for i, cap in opened.items():
        tx = meter.functions.openEnvelope(bytes.fromhex(_key(i)[2:]), operator, 10_000,
                                          cap).transact({"from": w3.eth.accounts[1]})
        w3.eth.wait_for_transaction_receipt(tx)
    source = LiveSource(anvil.url)
    block = anchor_block([source], block="latest")
    recipe = get_recipe(CAP)
    layout = load_layout(recipe.layout)
    address = bytes.fromhex(meter.address[2:])
    jobs = [Job(recipe, recipe.parse_params({"key": _key(i), "shape": "struct:2:2:1"}),
                address, layout) for i in range(1, 101)]

    before = source.calls
    outcomes = step_many(block, jobs)
    assert source.calls - before == 1  # one eth_getProof for all 100 jobs' 200 slots

    for i, outcome in enumerate(outcomes, start=1):
        assert outcome.verdict.value == "VERIFIED-GOOD"
        cap = opened.get(i, 0)  # an unopened envelope: 0 <= 0
        assert outcome.evidence["derived"] == {"aggregate": "0", "cap": str(cap),
                                               "headroom": str(cap), "within_cap": True}
        assert len(outcome.evidence["reads"]) == 2
    alone = step(recipe, jobs[2].params, block, address, layout)
    assert alone.evidence["reads"] == outcomes[2].evidence["reads"]
    assert alone.evidence["derived"] == outcomes[2].evidence["derived"]


def test_carried_struct_slots_are_counted_per_check(anvil):
    """Three struct: checks read 2 slots each (6 in the group); once carried to a quiet
    block, each check's carried entry counts its own 2, as its ``reads`` do."""
    w3 = connect(anvil.url)
    meter = deploy(w3, "HeadroomMeter")
    recipe = get_recipe(CAP)
    layout = load_layout(recipe.layout)
    address = bytes.fromhex(meter.address[2:])
    jobs = [Job(recipe, recipe.parse_params({"key": _key(i), "shape": "struct:2:2:1"}),
                address, layout) for i in range(1, 4)]
    source = LiveSource(anvil.url)
    step_many(anchor_block([source], block="latest"), jobs)
    anvil.rpc("evm_mine")  # nothing written: the slots are carried
    for outcome in step_many(anchor_block([source], block="latest"), jobs):
        (entry,) = outcome.evidence["carried"]
        assert entry["slots"] == len(outcome.evidence["reads"]) == 2
