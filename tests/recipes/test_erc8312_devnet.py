"""ERC-8312 recipes through the real CLI on the devnet, pinned by ``--block-hash`` of each
``meter.*`` moment; and the thread's own ``struct:2:2:1`` command on a small anvil of our own.

Expected values are written from the history script (``recompute/devnet/history_meters.py``:
its amounts, caps and moments), never read from the contracts; the manifest only says which
address, key, root and block hash to point at. Nothing here sends a transaction to the shared
devnet.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from recompute.core.anchor import anchor_block
from recompute.devnet.contracts import connect, deploy
from recompute.evaluator.job import step
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource
from tests import REPO_ROOT

CAP = "8312/cap-conservation"
BUDGET = "8312/aggregate-budget"


def run_step(rpc: str, block_hash: str, address: str, recipe: str, *args: str):
    """``recompute step RECIPE … --json`` as a user runs it: (exit code, JSON outcome)."""
    done = subprocess.run(
        [sys.executable, "-m", "recompute", "step", recipe, "--rpc", rpc,
         "--block-hash", block_hash, "--address", address, *args, "--json"],
        capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.fixture(scope="module")
def meters(devnet):
    node, manifest = devnet
    section = manifest["meters"]

    def at(moment: str, contract: str, recipe: str, *args: str):
        return run_step(node.url, manifest["moments"][moment]["hash"],
                        manifest["contracts"][contract], recipe, *args)

    return at, section, manifest


# ---- 8312/cap-conservation --------------------------------------------------------------

RC, HR, MD = "ReservedConfirmedMeter", "HeadroomMeter", "MandateMeter"

# (moment, meter, shape, layout, mandate, aggregate, cap, headroom): from history_meters.py
CAP_CASES = [
    ("meter.reserved", RC, "cap:1000", None, None, 700, 1000, 300),  # r1 400 + r2 300 reserved
    ("meter.confirmed", RC, "reserved-confirmed", None, None, 700, 1000, 300),  # 300 + 400
    ("meter.cancelled", RC, "cap:1000", None, None, 400, 1000, 600),  # r2 released
    ("meter.at-cap", RC, "cap:1000", None, None, 1000, 1000, 0),  # 600 + 400 == cap
    ("meter.reserve-refused", RC, "reserved-confirmed", None, None, 1000, 1000, 0),
    ("meter.confirmed-at-cap", RC, "cap:1000", None, None, 1000, 1000, 0),
    ("meter.headroom-used", HR, "struct:2:2:1", None, None, 5500, 8000, 2500),  # 2500 + 3000
    ("meter.headroom-at-cap", HR, "struct:2:2:1", None, None, 8000, 8000, 0),
    ("meter.headroom-at-cap", HR, "headroom", "meter-headroom", None, 8000, 8000, 0),
    ("meter.mandate-used", MD, "mandate", "meter-mandate", "mandate-1", 2000, 5000, 3000),
    ("meter.mandate-at-cap", MD, "mandate", "meter-mandate", "mandate-2", 1000, 1000, 0),
    ("meter.mandate-at-cap", MD, "mandate", "meter-mandate", "mandate-1", 2000, 5000, 3000),
]


def cap_args(section: dict, meter: str, shape: str, layout: str | None,
             mandate: str | None) -> list[str]:
    args = ["--param", f"shape={shape}"]
    if meter == RC:
        args += ["--param", f"key={section['reserved_confirmed']['keys']['key-1']['key']}"]
    elif meter == HR:
        args += ["--param", f"key={section['headroom']['envelopes']['envelope-1']['id']}"]
    else:
        m = section["mandate"]["mandates"][mandate]
        args += ["--param", f"agent={m['agent']}", "--param", f"principal={m['principal']}"]
    return args + (["--layout", layout] if layout else [])


@pytest.mark.parametrize("moment,meter,shape,layout,mandate,aggregate,cap,headroom", CAP_CASES)
def test_cap_conservation_good(meters, moment, meter, shape, layout, mandate, aggregate, cap,
                               headroom):
    at, section, manifest = meters
    code, out = at(moment, meter, CAP, *cap_args(section, meter, shape, layout, mandate),
                   "--compare-views")
    assert (code, out["verdict"], out["reason"]) == (0, "VERIFIED-GOOD", "ok")
    ev = out["evidence"]
    assert ev["derived"] == {"aggregate": str(aggregate), "cap": str(cap),
                             "headroom": str(headroom), "within_cap": True}
    assert ev["block"]["hash"] == manifest["moments"][moment]["hash"]
    assert ev["findings"] == [] and ev["views"] and all(v["agrees"] for v in ev["views"])
    raw = shape.startswith(("cap:", "struct:"))
    assert all(r["path"].startswith("slot:0x") == raw for r in ev["reads"])


def test_raw_and_named_shapes_prove_the_same_slots(meters):
    at, section, _ = meters
    raw = at("meter.headroom-used", HR, CAP, *cap_args(section, HR, "struct:2:2:1", None, None))
    named = at("meter.headroom-used", HR, CAP,
               *cap_args(section, HR, "headroom", "meter-headroom", None))
    slots = [{(r["slot"], r["value"]) for r in out["evidence"]["reads"]} for _, out in (raw, named)]
    assert slots[0] == slots[1] and len(slots[0]) == 2
    stateful = at("meter.confirmed", RC, CAP, *cap_args(section, RC, "cap:1000", None, None))
    stored = at("meter.confirmed", RC, CAP,
                *cap_args(section, RC, "reserved-confirmed", None, None))
    both = [{(r["slot"], r["value"]) for r in out["evidence"]["reads"]}
            for _, out in (stateful, stored)]
    assert both[0] < both[1] and len(both[1]) == 3  # the named shape also proves cap[key]


def test_cap_conservation_bad_when_the_literal_cap_is_below_the_aggregate(meters):
    at, section, _ = meters
    code, out = at("meter.at-cap", RC, CAP, *cap_args(section, RC, "cap:999", None, None))
    assert (code, out["verdict"], out["reason"]) == (1, "VERIFIED-BAD", "predicate-failed")
    assert out["evidence"]["derived"] == {"aggregate": "1000", "cap": "999", "headroom": "-1",
                                          "within_cap": False}


def test_cap_conservation_expect_turns_a_value_into_bad(meters):
    at, section, _ = meters
    args = cap_args(section, RC, "cap:1000", None, None)
    code, out = at("meter.reserved", RC, CAP, *args, "--expect", "headroom=300")
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD")
    code, out = at("meter.reserved", RC, CAP, *args, "--expect", "headroom=1")
    assert (code, out["verdict"], out["reason"]) == (1, "VERIFIED-BAD", "predicate-failed")
    assert out["evidence"]["expectations"] == [
        {"key": "headroom", "expected": "1", "derived": "300", "holds": False}]


def test_cap_conservation_usage_errors(meters):
    _, section, _ = meters
    mandate = section["mandate"]["mandates"]["mandate-1"]
    # refused before any node is asked (the endpoint here listens nowhere)
    for args, says in (
            (["--param", "shape=mandate", "--param", f"agent={mandate['agent']}"],
             "shape=mandate needs --param agent=… and --param principal=…"),
            (["--param", "shape=struct:2:2"], "is not cap:N, struct:S:A:C"),
            (["--param", "shape=cap:1000"], "shape=cap:1000 needs --param key=")):
        done = subprocess.run(
            [sys.executable, "-m", "recompute", "step", CAP, "--rpc", "http://127.0.0.1:9",
             "--address", mandate["agent"], *args, "--json"],
            capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
        assert done.returncode == 64 and says in done.stderr, done.stderr


# ---- 8312/aggregate-budget --------------------------------------------------------------

AB, LYING = "AggregateBudgetMeter", "LyingAggregateBudgetMeter"

# (moment, meter, period, Σ, draws, per node by name): history_meters.py, cap 100
BUDGET_CASES = [
    ("meter.draw-refused", AB, 0, 80, 2, {"A": 40, "B": 40}),  # C's 40 refused on chain
    ("meter.period-0", AB, 0, 100, 3, {"A": 40, "B": 40, "C": 20}),  # at the cap
    ("meter.period-1", AB, 1, 55, 2, {"A": 30, "C": 25}),
    ("meter.period-1", AB, 0, 100, 3, {"A": 40, "B": 40, "C": 20}),  # period 0 its own meter
]


def tree(section: dict, meter: str) -> dict:
    return section["aggregate" if meter == AB else "aggregate_lying"]["trees"]["tree-1"]


def budget_args(section: dict, meter: str, period: int, from_block: int | None = None):
    t = tree(section, meter)
    first = min(d["block"] for d in t["draws"])
    args = ["--param", f"root={t['root_id']}", "--param", f"period={period}",
            "--param", f"from_block={first if from_block is None else from_block}"]
    return args + (["--layout", "meter-aggregate-budget-lying"] if meter == LYING else [])


def per_node_by_name(section: dict, meter: str, per_node: dict) -> dict:
    names = {n["id"]: name for name, n in tree(section, meter)["nodes"].items()}
    return {names[node]: int(amount) for node, amount in per_node.items()}


@pytest.mark.parametrize("moment,meter,period,total,draws,per_node", BUDGET_CASES)
def test_aggregate_budget_good(meters, moment, meter, period, total, draws, per_node):
    at, section, _ = meters
    code, out = at(moment, meter, BUDGET, *budget_args(section, meter, period),
                   "--compare-views")
    assert (code, out["verdict"], out["reason"]) == (0, "VERIFIED-GOOD", "ok")
    derived = out["evidence"]["derived"]
    assert {k: derived[k] for k in ("aggregate", "spent_root", "cap", "draws")} == {
        "aggregate": str(total), "spent_root": str(total), "cap": "100", "draws": str(draws)}
    assert derived["within_cap"] is True and derived["sum_matches_storage"] is True
    assert per_node_by_name(section, meter, derived["per_node"]) == per_node
    assert out["evidence"]["findings"] == []
    assert len(out["evidence"]["logs"]) >= draws


def test_aggregate_budget_lying_meter_over_cap_is_bad(meters):
    at, section, _ = meters
    # the owner's overdraw puts C's 40 through: A 40 + B 40 + C 40 = 120 > cap 100, each
    # edge under its node cap 50 (the thread's fanout-exceeds-root-cap, on chain)
    code, out = at("meter.over-cap", LYING, BUDGET, *budget_args(section, LYING, 0))
    assert (code, out["verdict"], out["reason"]) == (1, "VERIFIED-BAD", "predicate-failed")
    derived = out["evidence"]["derived"]
    assert {k: derived[k] for k in ("aggregate", "spent_root", "cap", "draws")} == {
        "aggregate": "120", "spent_root": "120", "cap": "100", "draws": "3"}
    assert derived["within_cap"] is False and derived["sum_matches_storage"] is True
    assert per_node_by_name(section, LYING, derived["per_node"]) == {"A": 40, "B": 40, "C": 40}


def test_aggregate_budget_compare_views_on_the_lying_meter(meters):
    at, section, _ = meters
    code, out = at("meter.over-cap", LYING, BUDGET, *budget_args(section, LYING, 0),
                   "--compare-views")
    assert (code, out["verdict"]) == (1, "VERIFIED-BAD")  # the verdict follows storage
    found = {f["view"]: (f["view_says"], f["storage_says"])
             for f in out["evidence"]["findings"] if f["finding"] == "view-disagrees"}
    # LyingAggregateBudgetMeter: withinCap always true; remainingInPeriod leaves the
    # overdrawn 40 out: cap 100 - (120 - 40) = 20, where storage says max(100 - 120, 0) = 0
    assert found == {"withinCap(bytes32,uint256)": (True, False),
                     "remainingInPeriod(bytes32,uint256)": ("20", "0")}


def test_aggregate_budget_expect_turns_a_value_into_bad(meters):
    at, section, _ = meters
    args = budget_args(section, AB, 0)
    code, out = at("meter.period-0", AB, BUDGET, *args, "--expect", "aggregate=100",
                   "--expect", "within_cap=true")
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD")
    code, out = at("meter.period-0", AB, BUDGET, *args, "--expect", "aggregate=99")
    assert (code, out["verdict"], out["reason"]) == (1, "VERIFIED-BAD", "predicate-failed")


def test_aggregate_budget_missing_draws_contradict_storage(meters):
    at, section, _ = meters
    # collecting from C's admitted draw on misses A's and B's 40: the log says 20, the slot 100
    c_draw = [d for d in tree(section, AB)["draws"] if d["node"] == "C" and d["admitted"]]
    code, out = at("meter.period-0", AB, BUDGET,
                   *budget_args(section, AB, 0, from_block=c_draw[0]["block"]))
    assert (code, out["verdict"]) == (1, "VERIFIED-BAD")
    derived = out["evidence"]["derived"]
    assert (derived["aggregate"], derived["spent_root"]) == ("20", "100")
    assert derived["within_cap"] is True and derived["sum_matches_storage"] is False


def test_the_per_edge_method_is_told_apart_on_chain(meters):
    # The mistaken method (recipe.mistakes(), recompute-kit's --tamper) at the lying meter's
    # over-cap block: each edge's own 40 is under the cap 100, so it calls the tree
    # conserved where the root sum is 120.
    _, section, manifest = meters
    recipe = get_recipe(BUDGET)
    mistaken = recipe.mistakes()["8312.aggregate-budget.root-sum"]
    t = tree(section, LYING)
    params = recipe.parse_params({"root": t["root_id"], "period": "0",
                                  "from_block": str(min(d["block"] for d in t["draws"]))})
    pinned = bytes.fromhex(manifest["moments"]["meter.over-cap"]["hash"][2:])
    block = anchor_block([LiveSource(manifest["rpc"])], block_hash=pinned)
    address = bytes.fromhex(manifest["contracts"][LYING][2:])
    layout = load_layout("meter-aggregate-budget-lying")
    right, wrong = (step(r, params, block, address, layout) for r in (recipe, mistaken))
    assert (right.evidence["derived"]["aggregate"], right.evidence["derived"]["within_cap"],
            right.verdict.value) == ("120", False, "VERIFIED-BAD")
    assert (wrong.evidence["derived"]["aggregate"],
            wrong.evidence["derived"]["within_cap"]) == ("40", True)


# ---- UNVERIFIABLE -----------------------------------------------------------------------


def test_unknown_block_hash_is_unverifiable(meters):
    _, section, manifest = meters
    code, out = run_step(manifest["rpc"], "0x" + "ab" * 32, manifest["contracts"][AB], BUDGET,
                         *budget_args(section, AB, 0))
    assert (code, out["verdict"], out["reason"]) == (2, "UNVERIFIABLE", "block-unknown")


SEED_ENVELOPE = "0x48e972a25a6ecc83b0dd9c2943b63155ec899b53e10c1f1eb34ebc1d57bcb041"


def test_the_threads_struct_command_then_a_stopped_node(anvil):
    # ERC-8312 thread: `recompute-step 8312/cap-conservation RPC 0x091f…07d1 0x48e972a2…bcb041
    # struct:2:2:1` → VERIFIED-GOOD, aggregate 0 <= cap 8000, remainingTurnover 8000
    # (portfolioValue 10000). The same envelope id and numbers on a HeadroomMeter of our own,
    # read as raw slots with no layout named.
    w3 = connect(anvil.url)
    meter = deploy(w3, "HeadroomMeter")
    principal, operator = w3.eth.accounts[1], w3.eth.accounts[3]
    tx = meter.functions.openEnvelope(bytes.fromhex(SEED_ENVELOPE[2:]), operator, 10000,
                                      8000).transact({"from": principal})
    block_hash = w3.eth.get_block(w3.eth.wait_for_transaction_receipt(tx)["blockNumber"])["hash"]
    args = (anvil.url, block_hash.to_0x_hex(), meter.address, CAP,
            "--param", f"key={SEED_ENVELOPE}", "--param", "shape=struct:2:2:1")
    code, out = run_step(*args, "--compare-views")
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD")
    assert out["evidence"]["derived"] == {"aggregate": "0", "cap": "8000", "headroom": "8000",
                                          "within_cap": True}
    summary = {v["value"]: v["view_says"] for v in out["evidence"]["views"]
               if v["view"] == "cursorSummary(bytes32)"}
    assert summary == {"aggregate": "0", "cap": "8000", "remaining": "8000"}

    anvil.stop()
    code, out = run_step(*args)
    assert (code, out["verdict"], out["reason"]) == (2, "UNVERIFIABLE", "rpc-unreachable")


@pytest.mark.parametrize("moment,contract,layout,tree,code,aggregate", [
    # honest meter, period 0 after A 40, B 40 (C's 40 refused), C 20: 100 of 100
    ("meter.period-1", "AggregateBudgetMeter", "meter-aggregate-budget", "aggregate", 0, 100),
    # the lying meter after 40 + 40 and the owner's overdraw of 40: 120 of 100
    ("meter.over-cap", "LyingAggregateBudgetMeter", "meter-aggregate-budget-lying",
     "aggregate_lying", 1, 120),
])
def test_aggregate_budget_shape_reads_spent_root_and_cap(meters, moment, contract, layout, tree,
                                                         code, aggregate):
    at, section, _ = meters
    root = section[tree]["trees"]["tree-1"]["root_id"]
    rc, out = at(moment, contract, CAP, "--layout", layout, "--param", "shape=aggregate-budget",
                 "--param", f"key={root}", "--param", "period=0", "--compare-views")
    assert rc == code
    assert out["evidence"]["derived"]["aggregate"] == str(aggregate)
    assert out["evidence"]["derived"]["cap"] == "100"
    disagreements = [f for f in out["evidence"]["findings"] if f["finding"] == "view-disagrees"]
    # only the liar's withinCap view says "within cap" while storage is over it
    assert bool(disagreements) is (contract == "LyingAggregateBudgetMeter")
