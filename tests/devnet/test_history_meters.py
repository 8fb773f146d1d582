"""The devnet's ERC-8312 meter history, checked through the meters' views and logs.

Expected values are the script's amounts written out by hand (``recompute/devnet/
history_meters.py``): key cap 1000 with reservations 400, 300 (cancelled), 600; envelope cap
8000 with turnover 2500 + 3000 + 2500; mandates 5000 (used 1200 + 800) and 1000 (used 1000);
a tree with root cap 100 and edges A, B, C (node caps 50): period 0 draws 40, 40, 20 (C's 40
refused), period 1 draws 30, 25; on the lying meter 40, 40 and an overdraw of 40.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from eth_abi import decode, encode
from eth_hash.auto import keccak

from recompute.devnet.contracts import connect, load_artifact

METERS = ("ReservedConfirmedMeter", "HeadroomMeter", "MandateMeter", "AggregateBudgetMeter",
          "LyingAggregateBudgetMeter")
START = 1763000000
ANCHOR = START + 10000
PERIOD = 86400
MOMENTS = {
    "meter.reserved": START + 1212, "meter.confirmed": START + 1800,
    "meter.cancelled": START + 2400, "meter.at-cap": START + 3000,
    "meter.reserve-refused": START + 3012, "meter.confirmed-at-cap": START + 3600,
    "meter.headroom-used": START + 4812, "meter.headroom-at-cap": START + 5400,
    "meter.mandate-used": START + 6612, "meter.mandate-at-cap": START + 7200,
    "meter.draw-refused": ANCHOR + 1200, "meter.period-0": ANCHOR + 1800,
    "meter.over-cap": ANCHOR + 3000, "meter.period-1": ANCHOR + PERIOD + 612,
}
ORDER = list(MOMENTS)
# extend(), after every history: period 3 of the lying tree (the first whole period after the
# AMM extension's last block 1763186946: (1763186946 - ANCHOR) // PERIOD + 1 == 3); A draws
# at its start + 600, B 12 s later, the overdraw 12 s after that
EXTENDED = {"meter.lying-at-cap": ANCHOR + 3 * PERIOD + 612,
            "meter.one-above": ANCHOR + 3 * PERIOD + 624}
KEY = keccak(b"devnet/meter/key-1")
ENVELOPE = keccak(b"devnet/meter/envelope-1")
DRAWN = keccak(b"Drawn(bytes32,bytes32,uint256,uint256)")
# the script's admitted draws per meter and period (the overdraw is what the liar let through)
SCRIPT_DRAWS = {
    "AggregateBudgetMeter": {0: [40, 40, 20], 1: [30, 25]},
    "LyingAggregateBudgetMeter": {0: [40, 40, 40], 3: [50, 50, 1]},
}


class Meters:
    def __init__(self, devnet):
        node, self.manifest = devnet
        self.w3 = connect(node.url)
        self.c = {n: self.w3.eth.contract(address=self.manifest["contracts"][n],
                                          abi=load_artifact(n)["abi"]) for n in METERS}
        self.acc = self.manifest["accounts"]
        issuer = self.acc[1]
        self.root = keccak(encode(["address", "bytes32"],
                                  [issuer, keccak(b"devnet/tree-1")]))

    def number(self, label: str) -> int:
        return self.manifest["moments"][label]["number"]

    def at(self, label: str, meter: str, fn: str, *args):
        call = getattr(self.c[meter].functions, fn)(*args)
        value = call.call(block_identifier=self.number(label))
        return list(value) if isinstance(value, (list, tuple)) else value

    def receipt(self, label: str) -> dict:
        block = self.w3.eth.get_block(self.number(label))
        assert len(block["transactions"]) == 1
        return self.w3.eth.get_transaction_receipt(block["transactions"][0])


@pytest.fixture(scope="module")
def meters(devnet):
    return Meters(devnet)


def test_moments_named_at_the_scripted_times(meters):
    moments = {k: v for k, v in meters.manifest["moments"].items() if k.startswith("meter.")}
    assert {k: v["timestamp"] for k, v in moments.items()} == {**MOMENTS, **EXTENDED}
    numbers = [moments[k]["number"] for k in [*ORDER, *EXTENDED]]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    for m in moments.values():
        block = meters.w3.eth.get_block(m["number"])
        assert (block["hash"].to_0x_hex(), block["timestamp"]) == (m["hash"], m["timestamp"])


def test_manifest_addresses_the_meters(meters):
    section = meters.manifest["meters"]
    key = section["reserved_confirmed"]["keys"]["key-1"]
    assert (key["key"], key["cap"]) == ("0x" + KEY.hex(), 1000)
    env = section["headroom"]["envelopes"]["envelope-1"]
    assert (env["id"], env["max_cumulative_turnover"]) == ("0x" + ENVELOPE.hex(), 8000)
    for which in ("aggregate", "aggregate_lying"):
        tree = section[which]["trees"]["tree-1"]
        assert (tree["root_id"], tree["cap"], tree["period_length"], tree["period_anchor"]) == (
            "0x" + meters.root.hex(), 100, PERIOD, ANCHOR)
        assert {n: (v["id"], v["node_cap"]) for n, v in tree["nodes"].items()} == {
            n: ("0x" + keccak(f"devnet/node-{n}".encode()).hex(), 50) for n in "ABC"}
    assert section["aggregate"]["trees"]["tree-1"]["periods"] == [0, 1]
    assert section["aggregate_lying"]["trees"]["tree-1"]["periods"] == [0, 3]


# (reserved, confirmed) of key-1 at each moment
RESERVED_CONFIRMED = {
    "meter.reserved": (700, 0), "meter.confirmed": (300, 400), "meter.cancelled": (0, 400),
    "meter.at-cap": (600, 400), "meter.reserve-refused": (600, 400),
    "meter.confirmed-at-cap": (0, 1000),
}


@pytest.mark.parametrize("label", ORDER)
def test_reserved_confirmed_within_cap(meters, label):
    expected = RESERVED_CONFIRMED.get(label, (0, 1000))  # unchanged after confirmed-at-cap
    m = "ReservedConfirmedMeter"
    reserved, confirmed = meters.at(label, m, "reserved", KEY), meters.at(label, m, "confirmed",
                                                                          KEY)
    assert (reserved, confirmed) == expected
    assert meters.at(label, m, "cap", KEY) == 1000
    assert reserved + confirmed <= 1000
    assert meters.at(label, m, "withinCap", KEY) is True
    assert meters.at(label, m, "remaining", KEY) == 1000 - reserved - confirmed


def test_reservations_and_the_refused_one(meters):
    m = "ReservedConfirmedMeter"
    rid = [keccak(encode(["bytes32", "uint256"], [KEY, n])) for n in (1, 2, 3)]
    reserver = meters.acc[2]
    end = "meter.period-1"
    # (key, reserver, open, amount): r1 and r3 confirmed, r2 cancelled: none open
    assert [meters.at(end, m, "reservations", r) for r in rid] == [
        [KEY, reserver, False, 400], [KEY, reserver, False, 300], [KEY, reserver, False, 600]]
    assert meters.at("meter.reserved", m, "reservations", rid[1])[2] is True
    receipt = meters.receipt("meter.reserve-refused")
    assert receipt["status"] == 0 and receipt["to"] == meters.c[m].address
    assert meters.at(end, m, "reservationCount") == 3  # the refused one took no id


@pytest.mark.parametrize("label", ORDER)
def test_headroom_bound(meters, label):
    m = "HeadroomMeter"
    used = {"meter.headroom-used": 5500}
    if ORDER.index(label) < ORDER.index("meter.headroom-used"):
        expected = (0, 0)  # no envelope yet
    else:
        expected = (used.get(label, 8000), 8000)
    summary = meters.at(label, m, "cursorSummary", ENVELOPE)
    cumulative, cap = summary[1], summary[2]
    assert (cumulative, cap) == expected
    assert cumulative <= cap
    if cap:
        assert summary == [100000, cumulative, cap, cap - cumulative, True]


@pytest.mark.parametrize("label", ORDER)
def test_mandates_within_cap(meters, label):
    m, agent, p1, p2 = "MandateMeter", meters.acc[4], meters.acc[1], meters.acc[2]
    i = ORDER.index(label)
    if i < ORDER.index("meter.mandate-used"):
        expected = ([0, 0, False, False], [0, 0, False, False])
    elif label == "meter.mandate-used":
        expected = ([2000, 5000, True, True], [0, 1000, True, True])
    else:
        expected = ([2000, 5000, True, True], [1000, 1000, True, True])
    got = (meters.at(label, m, "mandates", agent, p1), meters.at(label, m, "mandates", agent, p2))
    assert got == expected
    for used, cap, _, _ in got:
        assert used <= cap


# spentRoot[root][period] on each meter at each moment from the tree's draws on
SPENT = {
    "meter.draw-refused": {"AggregateBudgetMeter": {0: 80}},
    "meter.period-0": {"AggregateBudgetMeter": {0: 100}},
    "meter.over-cap": {"AggregateBudgetMeter": {0: 100}, "LyingAggregateBudgetMeter": {0: 120}},
    "meter.period-1": {"AggregateBudgetMeter": {0: 100, 1: 55},
                       "LyingAggregateBudgetMeter": {0: 120}},
}


@pytest.mark.parametrize("label", ORDER)
def test_aggregate_conservation(meters, label):
    """ERC-8312 §5.1: spentRoot[root][period] <= cap at every moment, except on the lying
    meter after its privileged overdraw."""
    after_overdraw = ORDER.index(label) >= ORDER.index("meter.over-cap")
    for m in ("AggregateBudgetMeter", "LyingAggregateBudgetMeter"):
        spent = {p: meters.at(label, m, "spentRoot", meters.root, p) for p in (0, 1)}
        expected = SPENT.get(label, {}).get(m, {})
        assert spent == {p: expected.get(p, 0) for p in (0, 1)}, m
        cap = meters.at(label, m, "cap", meters.root)
        # the trees are created after meter.mandate-at-cap
        assert cap == (100 if ORDER.index(label) > ORDER.index("meter.mandate-at-cap") else 0)
        lying_over = m == "LyingAggregateBudgetMeter" and after_overdraw
        assert (spent[0] > cap) is lying_over
        assert spent[1] <= cap


def test_lying_meter_hides_the_overdraw(meters):
    m = "LyingAggregateBudgetMeter"
    assert meters.at("meter.over-cap", m, "withinCap", meters.root, 0) is True  # the lie
    assert meters.at("meter.over-cap", m, "remainingInPeriod", meters.root, 0) == 20  # 100 - 80
    honest = "AggregateBudgetMeter"
    assert meters.at("meter.period-0", honest, "remainingInPeriod", meters.root, 0) == 0
    # three edges, each under its node cap (50), root sum over the root cap (100)
    edges = [meters.at("meter.over-cap", m, "nodeSpent", meters.root,
                       keccak(f"devnet/node-{n}".encode()), 0) for n in "ABC"]
    assert edges == [40, 40, 40] and all(e < 50 for e in edges) and sum(edges) > 100
    receipt = meters.receipt("meter.over-cap")
    assert receipt["status"] == 1 and receipt["from"] == meters.acc[0]  # the owner's overdraw


def test_refused_draw_is_on_chain(meters):
    receipt = meters.receipt("meter.draw-refused")
    assert receipt["status"] == 0
    assert receipt["to"] == meters.c["AggregateBudgetMeter"].address
    assert receipt["from"] == meters.acc[5]  # edge C's agent
    assert receipt["logs"] == []


def _drawn_sums(logs, root: bytes) -> dict[int, int]:
    """Σ Drawn.amount per periodIndex, decoded by hand from raw logs."""
    sums: dict[int, int] = defaultdict(int)
    for log in logs:
        if bytes(log["topics"][0]) != DRAWN or bytes(log["topics"][1]) != root:
            continue
        period = int.from_bytes(log["topics"][3], "big")
        (amount,) = decode(["uint256"], bytes(log["data"]))
        sums[period] += amount
    return dict(sums)


@pytest.mark.parametrize("meter", ["AggregateBudgetMeter", "LyingAggregateBudgetMeter"])
def test_spent_root_equals_script_and_drawn_events(meters, meter):
    expected = {p: sum(a) for p, a in SCRIPT_DRAWS[meter].items()}
    end = "meter.one-above"
    spent = {p: meters.at(end, meter, "spentRoot", meters.root, p) for p in expected}
    assert spent == expected
    address = meters.c[meter].address
    # the Drawn logs of the whole chain
    logs = meters.w3.eth.get_logs({"address": address, "fromBlock": 0,
                                   "toBlock": meters.number(end)})
    assert _drawn_sums(logs, meters.root) == expected
    # the receipts of the draws the manifest lists: admitted ones emit Drawn, refused ones don't
    tree = meters.manifest["meters"]["aggregate" if meter == "AggregateBudgetMeter"
                                      else "aggregate_lying"]["trees"]["tree-1"]
    from_receipts: dict[int, int] = defaultdict(int)
    listed: dict[int, list[int]] = defaultdict(list)
    for draw in tree["draws"]:
        receipt = meters.w3.eth.get_transaction_receipt(draw["tx"])
        assert receipt["status"] == (1 if draw["admitted"] else 0)
        ts = meters.w3.eth.get_block(receipt["blockNumber"])["timestamp"]
        assert (ts - ANCHOR) // PERIOD == draw["period"]
        for period, amount in _drawn_sums(receipt["logs"], meters.root).items():
            from_receipts[period] += amount
        if draw["admitted"]:
            listed[draw["period"]].append(draw["amount"])
    assert dict(from_receipts) == expected
    assert dict(listed) == SCRIPT_DRAWS[meter]
