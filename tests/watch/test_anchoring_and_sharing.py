"""``anchor.by_parent_link`` (a child block tied to an anchored parent), and the watch's shared
proof source: the same outcomes as ``step`` on a plain source, with one ``eth_getProof`` per
contract per block once the checks' slots are known."""

from __future__ import annotations

import pytest

from recompute.core.anchor import anchor_block, by_parent_link
from recompute.core.errors import Unverifiable
from recompute.evaluator.job import step
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.cache import SharedSource
from recompute.sources.live import LiveSource
from recompute.watch.config import Check
from recompute.watch.evaluate import BlockEvaluator


def test_a_child_is_anchored_by_its_parent_link(anvil):
    for _ in range(3):
        anvil.rpc("evm_mine")
    source = LiveSource(anvil.url)
    parent = anchor_block([source], block=1)
    child_json = anvil.rpc("eth_getBlockByNumber", "0x2", False)
    child = by_parent_link(parent, child_json)
    assert (child.number, "0x" + child.hash.hex()) == (2, child_json["hash"])
    assert child.anchor.method == "parent-link"
    assert child.anchor.detail["parent_hash"] == "0x" + parent.hash.hex()
    assert child.anchor.detail["root_anchor"] == "single-rpc"
    grandchild = by_parent_link(child, anvil.rpc("eth_getBlockByNumber", "0x3", False))
    assert grandchild.anchor.detail["root_number"] == 1
    assert grandchild.anchor.detail["root_anchor"] == "single-rpc"


def test_a_block_that_is_not_the_child_is_refused(anvil):
    for _ in range(3):
        anvil.rpc("evm_mine")
    parent = anchor_block([LiveSource(anvil.url)], block=1)
    with pytest.raises(Unverifiable) as caught:
        by_parent_link(parent, anvil.rpc("eth_getBlockByNumber", "0x3", False))
    assert caught.value.reason == "header-mismatch"
    forged = dict(anvil.rpc("eth_getBlockByNumber", "0x2", False), stateRoot="0x" + "11" * 32)
    with pytest.raises(Unverifiable) as caught:
        by_parent_link(parent, forged)  # its fields no longer hash to the hash it claims
    assert caught.value.reason == "rpc-inconsistent"


def test_shared_proofs_give_steps_outcomes_with_one_proof_per_block(devnet):
    node, manifest = devnet
    recipe = get_recipe("amm/layer-status")
    layout = load_layout(recipe.layout)
    address = bytes.fromhex(manifest["contracts"]["AgentMeditationRegistry"][2:])
    subject = manifest["amm"]["subjects"]["controlled"]["address"]
    checks = [Check(f"layer-{n}", recipe, recipe.parse_params({"subject": subject,
                                                                "layer": str(n)}),
                    address, layout) for n in range(4)]
    shared = SharedSource(LiveSource(node.url))
    evaluator = BlockEvaluator(checks)
    plain = LiveSource(node.url)
    # the AMM history's last transaction; the block after it does not touch the registry
    last_amm = manifest["moments"]["amm.floor-holds"]["number"]
    for number in (last_amm, last_amm + 1):
        before = shared.proof_calls
        lines = evaluator.evaluate(anchor_block([shared], block=number))
        if number > last_amm:
            assert shared.proof_calls - before == 1  # every slot known from the block before
        block = anchor_block([plain], block=number)
        for check, line in zip(checks, lines, strict=True):
            outcome = step(check.recipe, check.params, block, check.address, check.layout)
            assert (line.verdict, line.derived, line.evidence_digest) == (
                outcome.verdict, outcome.evidence["derived"], outcome.evidence["evidence_digest"])
