"""The devnet's scripted history for the ERC-8312 meters (the four storage shapes).

Runs after the AMM history, from ``START`` (2025-11-13), with constant timestamps:

- ``ReservedConfirmedMeter`` (StatefulBound shape, ``reserved + confirmed <= cap``): one key
  (cap 1000); reservations under the cap, a confirm, a cancel, a reservation that reaches the
  cap exactly, a reservation past it refused on chain, a confirm at the cap.
- ``HeadroomMeter`` (turnover cursor, ``cumulativeTurnover <= maxCumulativeTurnover``): one
  envelope (cap 8000, the value the ERC-8312 thread's vector uses), used, then used up.
- ``MandateMeter`` (ERC-8226 RAMS, ``cumulativeUsed <= maxCumulativeValue`` per (agent,
  principal)): one agent with mandates from two principals, one used in part, one to its cap.
- ``AggregateBudgetMeter`` (ERC-8312 §5.1, ``spentRoot[rootId][periodIndex] <= cap``): one
  tree, three capped edges A, B, C (node caps 50 each, 150 together, over the root cap 100);
  in period 0 A and B draw 40 each, C's draw of 40 is refused on chain (root sum 120), C draws
  20 (root at cap); in period 1 A draws 30 and C 25.
- ``LyingAggregateBudgetMeter``: the same tree; A and B draw 40 each, then the owner's
  privileged ``overdraw`` puts C's 40 through: three edges each under their cap, root sum 120
  over the cap 100 (the ERC-8312 thread's ``fanout-exceeds-root-cap`` vector).

Named moments: ``meter.*``.
"""

from __future__ import annotations

from typing import Any

from eth_abi.abi import encode
from eth_hash.auto import keccak
from web3.contract import Contract

from recompute.devnet.driver import Driver, HistoryError
from recompute.devnet.history_amm import hx

RESERVED_CONFIRMED = "ReservedConfirmedMeter"
HEADROOM = "HeadroomMeter"
MANDATE = "MandateMeter"
AGGREGATE = "AggregateBudgetMeter"
LYING_AGGREGATE = "LyingAggregateBudgetMeter"

START = 1763000000  # after the AMM history's last block (1762997200)

# ReservedConfirmedMeter
KEY = keccak(b"devnet/meter/key-1")
KEY_CAP = 1000
# HeadroomMeter
ENVELOPE = keccak(b"devnet/meter/envelope-1")
PORTFOLIO_VALUE = 100_000
MAX_TURNOVER = 8000
TURNOVER = (2500, 3000, 2500)
# MandateMeter
MANDATE_CAPS = (5000, 1000)  # principal accounts[1], principal accounts[2]; agent accounts[4]
# AggregateBudgetMeter
SALT = keccak(b"devnet/tree-1")
ROOT_CAP = 100
PERIOD_LENGTH = 86400
PERIOD_ANCHOR = START + 10000
ROOT_NODE = b"\x00" * 32
NODE_CAP = 50
NODES = {name: keccak(f"devnet/node-{name}".encode()) for name in ("A", "B", "C")}
DRAW_GAS = 500_000


def reservation_id(key: bytes, nonce: int) -> bytes:
    """ReservedConfirmedMeter: reservationId = keccak256(abi.encode(key, nonce))."""
    return keccak(encode(["bytes32", "uint256"], [key, nonce]))


def root_id(issuer: str, salt: bytes) -> bytes:
    """AggregateBudgetMeter: rootId = keccak256(abi.encode(issuer, salt))."""
    return keccak(encode(["address", "bytes32"], [issuer, salt]))


def run(driver: Driver) -> None:
    """Deploy the five meters and play the script (see the module docstring)."""
    if driver.now >= START:
        raise HistoryError(f"the meters history starts at {START}; the chain is at {driver.now}")
    acc = driver.accounts
    section = driver.section("meters")
    rc = driver.deploy(RESERVED_CONFIRMED, sender=acc[0], at=START)
    headroom = driver.deploy(HEADROOM, sender=acc[0])
    mandate = driver.deploy(MANDATE, sender=acc[0])
    aggregate = driver.deploy(AGGREGATE, sender=acc[0])
    lying = driver.deploy(LYING_AGGREGATE, sender=acc[0])
    section["roles"] = {"deployer": acc[0], "lying-meter-owner": acc[0]}

    section["reserved_confirmed"] = _reserved_confirmed(driver, rc, acc)
    section["headroom"] = _headroom(driver, headroom, acc)
    section["mandate"] = _mandate(driver, mandate, acc)
    honest_tree, lying_tree = _trees(driver, aggregate, lying, acc)
    section["aggregate"] = {"contract": AGGREGATE, "trees": {"tree-1": honest_tree}}
    section["aggregate_lying"] = {"contract": LYING_AGGREGATE, "owner": acc[0],
                                  "trees": {"tree-1": lying_tree}}


def _reserved_confirmed(driver: Driver, rc: Contract, acc: list[str]) -> dict[str, Any]:
    principal, reserver = acc[1], acc[2]
    f = rc.functions
    driver.tx(f.openKey(KEY, KEY_CAP), sender=principal, at=START + 600)
    driver.tx(f.setReserver(KEY, reserver, True), sender=principal)
    reservations = {}

    def reserve(name: str, nonce: int, amount: int, at: int | None = None) -> bytes:
        driver.tx(f.reserve(KEY, amount), sender=reserver, at=at)
        rid = reservation_id(KEY, nonce)
        reservations[name] = {"id": hx(rid), "amount": amount, "reserver": reserver,
                              "fate": "open"}
        return rid

    r1 = reserve("r1", 1, 400, START + 1200)
    r2 = reserve("r2", 2, 300)
    driver.moment("meter.reserved")  # reserved 700, confirmed 0
    driver.tx(f.confirm(r1), sender=reserver, at=START + 1800)
    reservations["r1"]["fate"] = "confirmed"
    driver.moment("meter.confirmed")  # reserved 300, confirmed 400
    driver.tx(f.cancel(r2), sender=reserver, at=START + 2400)
    reservations["r2"]["fate"] = "cancelled"
    driver.moment("meter.cancelled")  # reserved 0, confirmed 400
    r3 = reserve("r3", 3, 600, START + 3000)
    driver.moment("meter.at-cap")  # reserved 600 + confirmed 400 == cap 1000
    refused = driver.tx_reverting(f.reserve(KEY, 1), sender=reserver, at=START + 3012)
    driver.moment("meter.reserve-refused")  # CapExceeded: 1001 > 1000
    driver.tx(f.confirm(r3), sender=reserver, at=START + 3600)
    reservations["r3"]["fate"] = "confirmed"
    driver.moment("meter.confirmed-at-cap")  # reserved 0, confirmed 1000
    return {
        "contract": RESERVED_CONFIRMED,
        "keys": {"key-1": {"key": hx(KEY), "cap": KEY_CAP, "principal": principal,
                           "reservers": [reserver]}},
        "reservations": reservations,
        "refused": [{"key": "key-1", "amount": 1,
                     "tx": refused["transactionHash"].to_0x_hex()}],
    }


def _headroom(driver: Driver, headroom: Contract, acc: list[str]) -> dict[str, Any]:
    principal, operator = acc[1], acc[3]
    f = headroom.functions
    driver.tx(f.openEnvelope(ENVELOPE, operator, PORTFOLIO_VALUE, MAX_TURNOVER),
              sender=principal, at=START + 4200)
    driver.tx(f.recordTurnover(ENVELOPE, TURNOVER[0]), sender=operator, at=START + 4800)
    driver.tx(f.recordTurnover(ENVELOPE, TURNOVER[1]), sender=operator)
    driver.moment("meter.headroom-used")  # cumulativeTurnover 5500 of 8000
    driver.tx(f.recordTurnover(ENVELOPE, TURNOVER[2]), sender=operator, at=START + 5400)
    driver.moment("meter.headroom-at-cap")  # 8000 of 8000
    return {
        "contract": HEADROOM,
        "envelopes": {"envelope-1": {
            "id": hx(ENVELOPE), "principal": principal, "operator": operator,
            "portfolio_value": PORTFOLIO_VALUE, "max_cumulative_turnover": MAX_TURNOVER,
            "turnover": list(TURNOVER)}},
    }


def _mandate(driver: Driver, mandate: Contract, acc: list[str]) -> dict[str, Any]:
    agent, principals = acc[4], (acc[1], acc[2])
    f = mandate.functions
    driver.tx(f.grant(agent, MANDATE_CAPS[0]), sender=principals[0], at=START + 6000)
    driver.tx(f.grant(agent, MANDATE_CAPS[1]), sender=principals[1])
    driver.tx(f.recordExecution(principals[0], 1200), sender=agent, at=START + 6600)
    driver.tx(f.recordExecution(principals[0], 800), sender=agent)
    driver.moment("meter.mandate-used")  # (agent, principal 1): 2000 of 5000
    driver.tx(f.recordExecution(principals[1], 1000), sender=agent, at=START + 7200)
    driver.moment("meter.mandate-at-cap")  # (agent, principal 2): 1000 of 1000
    return {
        "contract": MANDATE,
        "mandates": {
            "mandate-1": {"agent": agent, "principal": principals[0],
                          "max_cumulative_value": MANDATE_CAPS[0], "executions": [1200, 800]},
            "mandate-2": {"agent": agent, "principal": principals[1],
                          "max_cumulative_value": MANDATE_CAPS[1], "executions": [1000]},
        },
    }


def _trees(driver: Driver, aggregate: Contract, lying: Contract,
           acc: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    issuer, top = acc[1], acc[2]
    agents = {"A": acc[3], "B": acc[4], "C": acc[5]}
    rid = root_id(issuer, SALT)
    trees = {}
    for meter, at in ((aggregate, START + 7800), (lying, START + 8400)):
        driver.tx(meter.functions.createRoot(SALT, top, ROOT_CAP, PERIOD_LENGTH, PERIOD_ANCHOR),
                  sender=issuer, at=at)
        for name, node in NODES.items():
            driver.tx(meter.functions.delegate(rid, ROOT_NODE, node, agents[name], NODE_CAP),
                      sender=top)
        trees[meter.address] = {
            "root_id": hx(rid), "salt": hx(SALT), "issuer": issuer, "agent": top,
            "cap": ROOT_CAP, "period_length": PERIOD_LENGTH, "period_anchor": PERIOD_ANCHOR,
            "nodes": {name: {"id": hx(node), "agent": agents[name], "parent": hx(ROOT_NODE),
                             "node_cap": NODE_CAP} for name, node in NODES.items()},
            "periods": [], "draws": []}
    honest, liar = trees[aggregate.address], trees[lying.address]

    def draw(meter: Contract, tree: dict[str, Any], name: str, amount: int, period: int,
             at: int | None = None,
             admitted: bool = True, overdraw: bool = False) -> None:
        f = meter.functions
        if overdraw:
            receipt = driver.tx(f.overdraw(rid, NODES[name], amount), sender=acc[0], at=at,
                                gas=DRAW_GAS)
        elif admitted:
            receipt = driver.tx(f.draw(rid, NODES[name], amount), sender=agents[name], at=at,
                                gas=DRAW_GAS)
        else:
            receipt = driver.tx_reverting(f.draw(rid, NODES[name], amount), sender=agents[name],
                                          at=at, gas=DRAW_GAS)
        tree["draws"].append({"node": name, "period": period, "amount": amount,
                              "admitted": admitted, "privileged": overdraw,
                              "tx": receipt["transactionHash"].to_0x_hex(),
                              "block": receipt["blockNumber"]})
        if admitted and period not in tree["periods"]:
            tree["periods"].append(period)

    # period 0: [PERIOD_ANCHOR, PERIOD_ANCHOR + PERIOD_LENGTH)
    draw(aggregate, honest, "A", 40, 0, PERIOD_ANCHOR + 600)
    draw(aggregate, honest, "B", 40, 0)
    draw(aggregate, honest, "C", 40, 0, PERIOD_ANCHOR + 1200, admitted=False)
    driver.moment("meter.draw-refused")  # RootCapExceeded: 80 + 40 > 100
    draw(aggregate, honest, "C", 20, 0, PERIOD_ANCHOR + 1800)
    driver.moment("meter.period-0")  # spentRoot[root][0] == 100 == cap
    draw(lying, liar, "A", 40, 0, PERIOD_ANCHOR + 2400)
    draw(lying, liar, "B", 40, 0)
    draw(lying, liar, "C", 40, 0, PERIOD_ANCHOR + 3000, overdraw=True)
    driver.moment("meter.over-cap")  # lying spentRoot[root][0] == 120 > cap 100
    # period 1
    draw(aggregate, honest, "A", 30, 1, PERIOD_ANCHOR + PERIOD_LENGTH + 600)
    draw(aggregate, honest, "C", 25, 1)
    driver.moment("meter.period-1")  # spentRoot[root][1] == 55
    return honest, liar


def extend(driver: Driver) -> None:
    """Rule-inventory moments (vectors/rules.json), after every history: on the lying meter's
    tree, in the first whole period after the chain's last block, A and B draw 50 each (root
    sum 100 == cap, ``meter.lying-at-cap``), then the owner's ``overdraw`` puts 1 through for C
    (101, one above the cap, ``meter.one-above``)."""
    acc = driver.accounts
    lying = driver.contract(LYING_AGGREGATE)
    tree = driver.section("meters")["aggregate_lying"]["trees"]["tree-1"]
    rid = root_id(acc[1], SALT)
    agents = {"A": acc[3], "B": acc[4]}
    period = (driver.now - PERIOD_ANCHOR) // PERIOD_LENGTH + 1
    at = PERIOD_ANCHOR + period * PERIOD_LENGTH + 600
    blocks = []
    for name, amount in (("A", 50), ("B", 50)):
        receipt = driver.tx(lying.functions.draw(rid, NODES[name], amount),
                            sender=agents[name], at=at if name == "A" else None, gas=DRAW_GAS)
        blocks.append(receipt["blockNumber"])
        tree["draws"].append({"node": name, "period": period, "amount": amount,
                              "admitted": True, "privileged": False,
                              "tx": receipt["transactionHash"].to_0x_hex(),
                              "block": receipt["blockNumber"]})
    driver.moment("meter.lying-at-cap")  # lying spentRoot[root][period] == 100 == cap
    receipt = driver.tx(lying.functions.overdraw(rid, NODES["C"], 1), sender=acc[0],
                        gas=DRAW_GAS)
    tree["draws"].append({"node": "C", "period": period, "amount": 1, "admitted": True,
                          "privileged": True, "tx": receipt["transactionHash"].to_0x_hex(),
                          "block": receipt["blockNumber"]})
    tree["periods"].append(period)
    tree["rule_period"] = {"period": period, "first_block": blocks[0]}
    driver.moment("meter.one-above")  # lying spentRoot[root][period] == 101 == cap + 1
