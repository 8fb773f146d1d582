"""A log scan is kept per block hash and carried to the next block up (recompute.core.caching):
the carried evidence equals a fresh scan's, names the header it comes from, and never lets
one node's answers stand in for another's. Expected values: a fresh ``step`` on a fresh
source at the same block (no memo), and the devnet history's draws (history_meters.py)."""

from __future__ import annotations

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.errors import Unverifiable
from recompute.evaluator.job import step
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource

BUDGET = "8312/aggregate-budget"


class LyingReceipts:
    """The real node, except that every receipt's status is flipped."""

    def __init__(self, url: str):
        self.live = LiveSource(url)
        self.label = url

    def __getattr__(self, name):
        return getattr(self.live, name)

    def block_receipts(self, block_hash):
        receipts = self.live.block_receipts(block_hash)
        for receipt in receipts or []:
            receipt["status"] = "0x0" if receipt.get("status") == "0x1" else "0x1"
        return receipts


@pytest.fixture(scope="module")
def budget(devnet):
    node, manifest = devnet
    tree = manifest["meters"]["aggregate"]["trees"]["tree-1"]
    recipe = get_recipe(BUDGET)
    params = recipe.parse_params({"root": tree["root_id"], "period": "0",
                                  "from_block": str(min(d["block"] for d in tree["draws"]))})
    address = bytes.fromhex(manifest["contracts"]["AggregateBudgetMeter"][2:])
    pinned = bytes.fromhex(manifest["moments"]["meter.period-1"]["hash"][2:])
    return node.url, recipe, params, address, load_layout(recipe.layout), pinned


def _at(source, block_hash: bytes):
    return anchor_block([source], block_hash=block_hash)


def test_the_next_block_carries_the_scan_below_it(budget):
    url, recipe, params, address, layout, pinned = budget
    source = LiveSource(url)
    top = _at(source, pinned)
    parent_hash = top.header.parent_hash
    below = step(recipe, params, _at(source, parent_hash), address, layout)
    assert "carried" not in below.evidence  # first scan: every block proven
    carried = step(recipe, params, top, address, layout)
    fresh = step(recipe, params, _at(LiveSource(url), pinned), address, layout)

    assert carried.evidence["carried"] == [{
        "logs": "0x" + recipe_topic(recipe).hex(), "from_block": params["from_block"],
        "through_block": top.number - 1, "header": "0x" + parent_hash.hex()}]
    for key in ("derived", "logs", "reads", "evidence_digest", "receipts_proven",
                "blocks_walked"):
        assert carried.evidence[key] == fresh.evidence[key], key
    assert carried.evidence["derived"]["aggregate"] == "100"  # A 40 + B 40 + C 20
    assert carried.verdict == fresh.verdict


def test_a_lying_node_is_not_covered_by_another_nodes_scan(budget):
    url, recipe, params, address, layout, pinned = budget
    honest = LiveSource(url)
    step(recipe, params, _at(honest, pinned), address, layout)  # scanned and kept for honest
    liar = LyingReceipts(url)
    with pytest.raises(Unverifiable):
        step(recipe, params, _at(liar, pinned), address, layout)


def recipe_topic(recipe) -> bytes:
    from recompute.recipes.erc8312 import DRAWN
    return DRAWN
