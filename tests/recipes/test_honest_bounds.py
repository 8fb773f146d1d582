"""What a verdict does not prove (docs/design.md §Verdicts follow the normative text).

- The ERC-8312 verdicts name their bound: Σ metered draws <= cap covers only draws routed
  through the meter; non-bypassability is the substrate's obligation (ERC-8312, the §5.1
  thread: "it asserts Σ metered draws ≤ cap only over draws routed through the meter —
  non-bypassability is the substrate obligation the profile states, not something the
  recompute proves").
- A log-based check asked of a node that pruned receipts (the thread: "a storage proof verifies
  from any node that kept the state, the log set needs one that retained receipts") is
  UNVERIFIABLE ``receipts-unavailable``, saying which node would answer, never a verdict from
  the storage half alone. The pruned node is a real HTTP hop in front of the devnet's anvil
  answering the receipt methods as a history-expired geth does (error 4444 "pruned history
  unavailable"), or with nulls / no receipts.
"""

from __future__ import annotations

import pytest

from tests.recipes.test_erc8312_devnet import AB, BUDGET, CAP, LYING, budget_args, run_step
from tests.rpcproxy import RpcProxy


def _expired(style: str):
    def rewrite(method: str, params: list, reply: dict) -> dict:
        if method == "eth_getBlockReceipts":
            if style == "geth":
                return {"jsonrpc": "2.0", "id": reply["id"],
                        "error": {"code": 4444, "message": "pruned history unavailable"}}
            return {"jsonrpc": "2.0", "id": reply["id"],
                    "result": None if style == "null" else []}
        if method == "eth_getTransactionReceipt":
            return {"jsonrpc": "2.0", "id": reply["id"], "result": None}
        return reply
    return rewrite


@pytest.fixture(scope="module")
def budget(devnet):
    node, manifest = devnet
    section = manifest["meters"]

    def at(url: str, moment: str, meter: str, *extra: str):
        return run_step(url, manifest["moments"][moment]["hash"], manifest["contracts"][meter],
                        BUDGET, *budget_args(section, meter, 0), *extra)
    return node, manifest, at


def test_aggregate_budget_verdicts_name_what_they_do_not_prove(budget):
    node, _, at = budget
    for moment, meter, verdict in (("meter.period-0", AB, "VERIFIED-GOOD"),
                                   ("meter.over-cap", LYING, "VERIFIED-BAD")):
        _, out = at(node.url, moment, meter)
        assert out["verdict"] == verdict
        bounds = " ".join(out["evidence"]["bounds"])
        assert "bypasses the meter" in bounds and "substrate's obligation" in bounds
        assert "keeps receipts" in bounds


def test_cap_conservation_names_its_bound(devnet):
    node, manifest = devnet
    key = manifest["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"]
    code, out = run_step(node.url, manifest["moments"]["meter.at-cap"]["hash"],
                         manifest["contracts"]["ReservedConfirmedMeter"], CAP,
                         "--param", f"key={key}", "--param", "shape=reserved-confirmed")
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD")
    assert any("bypasses the meter" in b for b in out["evidence"]["bounds"])


@pytest.mark.parametrize("style", ["geth", "null", "empty"])
def test_pruned_receipts_are_unverifiable_never_a_storage_only_verdict(budget, style):
    node, _, at = budget
    # over-cap on the lying meter: the storage half alone (spentRoot 120 > cap 100) would say
    # BAD; at-cap on the honest one it would say GOOD. Neither may come without the logs.
    with RpcProxy(node.url, _expired(style)) as pruned:
        for moment, meter in (("meter.over-cap", LYING), ("meter.period-0", AB)):
            code, out = at(pruned.url, moment, meter)
            assert (code, out["verdict"], out["reason"]) == \
                (2, "UNVERIFIABLE", "receipts-unavailable"), out
            assert "archive node" in out["detail"] and "keeps receipts" in out["detail"]


def test_pruned_receipts_leave_a_storage_only_recipe_alone(devnet):
    """The same pruned node still answers a check that reads storage only."""
    node, manifest = devnet
    key = manifest["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"]
    with RpcProxy(node.url, _expired("geth")) as pruned:
        code, out = run_step(pruned.url, manifest["moments"]["meter.at-cap"]["hash"],
                             manifest["contracts"]["ReservedConfirmedMeter"], CAP,
                             "--param", f"key={key}", "--param", "shape=reserved-confirmed")
    assert (code, out["verdict"]) == (0, "VERIFIED-GOOD")
