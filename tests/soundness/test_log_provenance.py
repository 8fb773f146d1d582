"""Events from another contract never count.

A stranger's contract (``tests/soundness/contracts/Stranger.sol``) emits the meter's own
``Drawn(rootId, nodeId, periodIndex, amount)`` signature in the very block where the real
meter admits a draw. The expected figures are the meter's rule (ERC-8312 §5.1: Σ Drawn ==
spentRoot <= cap) applied to what this test draws: one draw of 100 under a cap of 100.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from recompute.core.anchor import anchor_block
from recompute.devnet.contracts import connect, deploy
from recompute.evaluator.job import step
from recompute.evaluator.runner import Runner
from recompute.layout import load_layout
from recompute.recipes.plan import ReceiptsAt
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ARTIFACTS = str(HERE / "artifacts")
SALT = b"\x11" * 32
CAP = 100


@pytest.fixture(scope="module")
def forged(module_anvil):
    """(url, block hash, meter address, stranger address, rootId) of the block holding the
    meter's real draw of 100 and the stranger's forged Drawn of 1,000 for the same root."""
    node = module_anvil
    w3 = connect(node.url)
    node.rpc("evm_mine")  # block 1: before the meter exists
    meter = deploy(w3, "AggregateBudgetMeter")
    stranger = deploy(w3, "Stranger", directory=ARTIFACTS)
    me = w3.eth.default_account
    w3.eth.wait_for_transaction_receipt(
        meter.functions.createRoot(SALT, me, CAP, 0, 0).transact())
    root = w3.keccak(w3.codec.encode(["address", "bytes32"], [me, SALT]))
    node.rpc("evm_setAutomine", False)
    real = meter.functions.draw(root, bytes(32), 100).transact({"gas": 300_000})
    fake = stranger.functions.forgeDrawn(root, b"\x22" * 32, 0, 1000).transact({"gas": 100_000})
    node.rpc("evm_mine")
    node.rpc("evm_setAutomine", True)
    first = w3.eth.get_transaction_receipt(real)
    second = w3.eth.get_transaction_receipt(fake)
    assert first["blockNumber"] == second["blockNumber"]  # one block, both logs
    assert first["status"] == second["status"] == 1
    return (node.url, first["blockHash"], meter.address, stranger.address, root,
            first["blockNumber"])


def _run(forged, recipe_name="8312/aggregate-budget"):
    url, block_hash, meter, _, root, number = forged
    recipe = get_recipe(recipe_name)
    block = anchor_block([LiveSource(url)], block_hash=bytes(block_hash))
    params = recipe.parse_params({"root": "0x" + bytes(root).hex(), "period": "0",
                                  "from_block": str(number - 3)})
    return step(recipe, params, block, bytes.fromhex(meter[2:]), load_layout(recipe.layout))


def test_a_strangers_drawn_does_not_count(forged):
    outcome = _run(forged)
    assert outcome.evidence["derived"]["aggregate"] == "100"  # the meter's draw only
    assert outcome.evidence["derived"]["spent_root"] == "100"
    assert outcome.verdict.value == "VERIFIED-GOOD"


def test_every_log_used_is_the_meters_and_listed(forged):
    _, _, meter, stranger, _, number = forged
    outcome = _run(forged)
    logs = outcome.evidence["logs"]
    assert logs and {log["address"].lower() for log in logs} == {meter.lower()}
    assert stranger.lower() not in str(outcome.evidence).lower()
    drawn = [log for log in logs if log["block"] == number]
    assert len(drawn) == 1


def test_receipts_at_and_logs_share_one_path(forged):
    url, block_hash, meter, _, _, number = forged
    block = anchor_block([LiveSource(url)], block_hash=bytes(block_hash))
    runner = Runner(block, bytes.fromhex(meter[2:]), load_layout("meter-aggregate-budget"))
    logs = runner.answer(ReceiptsAt(number), get_recipe("8312/aggregate-budget"))
    assert {log.address for log in logs} == {bytes.fromhex(meter[2:])}
    assert len(runner.trace.logs) == len(logs)


@pytest.mark.skipif(not (ROOT / "node_modules" / "solc").is_dir() or not shutil.which("node"),
                    reason="needs node and node_modules/solc (make setup installs them)")
def test_the_stranger_artifact_is_a_fresh_build(tmp_path):
    subprocess.run(["node", "contracts/build.mjs", "--out", str(tmp_path),
                    "tests/soundness/contracts"], cwd=ROOT, check=True, capture_output=True,
                   timeout=600)
    assert (tmp_path / "Stranger.json").read_bytes() == (HERE / "artifacts" /
                                                         "Stranger.json").read_bytes()


@pytest.mark.parametrize("request_above", ["reads", "logs", "receipts"])
def test_a_block_above_the_pin_is_a_usage_error_not_an_empty_answer(forged, request_above):
    from recompute.core.errors import UsageError
    from recompute.recipes.plan import Logs, Reads

    url, block_hash, meter, _, _, number = forged
    block = anchor_block([LiveSource(url)], block_hash=bytes(block_hash))
    runner = Runner(block, bytes.fromhex(meter[2:]), load_layout("meter-aggregate-budget"))
    request = {"reads": Reads(["cap[0x" + "00" * 32 + "]"], block=number + 1),
               "logs": Logs(b"\x01" * 32, number + 2),
               "receipts": ReceiptsAt(number + 1)}[request_above]
    with pytest.raises(UsageError, match="above the pinned block"):
        runner.answer(request, get_recipe("8312/aggregate-budget"))
    # events from the block after the pin up to the pin: an empty range, answered empty
    assert runner.answer(Logs(b"\x01" * 32, number + 1), get_recipe("8312/aggregate-budget")) == []


# ---- two layouts with one contract name are two layouts ----------------


def test_two_layouts_of_one_contract_name_are_read_each_through_its_own(forged):
    import json as _json

    from recompute.core.outcome import Outcome
    from recompute.evaluator.job import Job, step_many
    from recompute.layout.descriptor import parse_descriptor
    from recompute.recipes.base import Recipe
    from recompute.recipes.plan import Derivation, Reads

    url, block_hash, meter, _, root, _ = forged
    real = load_layout("meter-aggregate-budget")
    moved = _json.loads(real.dumps())
    for variable in moved["storage"]:
        if variable["label"] == "cap":
            variable["slot"] = "0"  # same name, same contract: cap declared at slot 0
    moved = parse_descriptor(moved, "moved-cap")
    assert moved.name == real.name and moved.digest != real.digest

    class CapOf(Recipe):
        name = "test/cap"

        def plan(self, p, clock):
            path = f"cap[0x{bytes(root).hex()}]"
            got = yield Reads([path])
            return Derivation(holds=True, derived={"cap": got[path]})

    block = anchor_block([LiveSource(url)], block_hash=bytes(block_hash))
    address = bytes.fromhex(meter[2:])
    first, second = step_many(block, [Job(CapOf(), {}, address, real),
                                      Job(CapOf(), {}, address, moved)])
    assert isinstance(first, Outcome) and isinstance(second, Outcome)
    # cap[root] = 100 at slot 1 (createRoot); at slot 0, keccak(root . 0) is the base of the
    # spentRoot[root] mapping, which holds nothing itself: 0.
    assert first.evidence["derived"]["cap"] == "100"
    assert second.evidence["derived"]["cap"] == "0"


# ---- an address with no contract gives no verdict -----------------------


def _cap_check(forged, address: bytes, block_hash=None, layout=None):
    url, pinned, _, _, root, _ = forged
    recipe = get_recipe("8312/cap-conservation")
    block = anchor_block([LiveSource(url)], block_hash=bytes(block_hash or pinned))
    params = recipe.parse_params({"shape": "cap:1000", "key": "0x" + bytes(root).hex()})
    return step(recipe, params, block, address, layout or load_layout(recipe.layout))


@pytest.mark.parametrize("who", ["nobody", "an externally owned account"])
def test_an_address_without_a_contract_is_no_contract_never_good(forged, who):
    from recompute.core.errors import Unverifiable

    address = {"nobody": b"\x12" * 20,
               # anvil's first dev account: a balance, no code
               "an externally owned account":
                   bytes.fromhex("f39fd6e51aad88f6f4ce6ab8827279cfffb92266")}[who]
    with pytest.raises(Unverifiable) as caught:
        _cap_check(forged, address)
    assert caught.value.reason == "no-contract"


def test_a_block_before_deployment_is_no_contract(forged, module_anvil):
    from recompute.core.errors import Unverifiable

    genesis = module_anvil.rpc("eth_getBlockByNumber", "0x1", False)["hash"]
    with pytest.raises(Unverifiable) as caught:
        _cap_check(forged, bytes.fromhex(forged[2][2:]), bytes.fromhex(genesis[2:]))
    assert caught.value.reason == "no-contract"


def test_a_layout_recording_another_code_hash_is_reported(forged, module_anvil):
    import json as _json

    from recompute.core.keccak import keccak256
    from recompute.layout.descriptor import parse_descriptor

    meter = forged[2]
    code = bytes.fromhex(module_anvil.rpc("eth_getCode", meter, "latest")[2:])
    document = _json.loads(load_layout("meter-aggregate-budget").dumps())
    document["runtimeCodeHash"] = "0x" + bytes(32).hex().replace("0", "ab", 1)[:64]
    other = parse_descriptor(document, "other-code")
    document["runtimeCodeHash"] = "0x" + keccak256(code).hex()
    same = parse_descriptor(document, "same-code")
    address = bytes.fromhex(meter[2:])
    findings = _cap_check(forged, address, layout=other).evidence["findings"]
    assert [f["finding"] for f in findings] == ["code-hash-differs"]
    assert findings[0]["proven_code_hash"] == "0x" + keccak256(code).hex()
    assert _cap_check(forged, address, layout=same).evidence["findings"] == []


# ---- a view the node will not call is not compared -----------------------


def test_a_refused_view_is_not_compared_and_not_agreeing(forged):
    from recompute.core.errors import Unverifiable

    class RefusesCalls(LiveSource):
        def call(self, to, data, block_hash):
            raise Unverifiable("rpc-error", f"{self.label} eth_call: method not allowed")

    url, block_hash, meter, _, root, number = forged
    recipe = get_recipe("8312/aggregate-budget")
    params = recipe.parse_params({"root": "0x" + bytes(root).hex(), "period": "0",
                                  "from_block": str(number - 3)})
    address, layout = bytes.fromhex(meter[2:]), load_layout(recipe.layout)
    honest = step(recipe, params, anchor_block([LiveSource(url)], block_hash=bytes(block_hash)),
                  address, layout, compare_views=True)
    assert honest.evidence["views"] and all(v["agrees"] is True and v["compared"]
                                            for v in honest.evidence["views"])
    refused = step(recipe, params,
                   anchor_block([RefusesCalls(url)], block_hash=bytes(block_hash)),
                   address, layout, compare_views=True)
    views = refused.evidence["views"]
    assert views and all(v["compared"] is False and v["agrees"] is None for v in views)
    assert all(v["skipped"] == "rpc-error" for v in views)
    assert refused.evidence["findings"] == [] and refused.verdict == honest.verdict
