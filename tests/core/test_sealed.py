"""What the verifier proved cannot be edited afterwards (docs/design.md §Trust flow).

A proven account, an anchored block and an outcome are statements about a pinned header: code
that holds one may read it, never change it, so a recipe or a bot cannot turn a proof into a
claim by assignment.
"""

from __future__ import annotations

import dataclasses

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.outcome import Outcome
from recompute.core.prover import ProvenAccount, prove_account
from recompute.core.verdict import Verdict
from recompute.sources.fixture_node import FixtureNode
from recompute.sources.live import LiveSource
from tests.core.fixturedata import CONTRACT, FIXTURES, LATEST

# The hash of block 54, the head of the fixtures (their eth_getBlockByNumber/get-latest.io).
HEAD_HASH = bytes.fromhex("d226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7")


@pytest.fixture(scope="module")
def proven():
    with FixtureNode(FIXTURES) as node:
        block = anchor_block([LiveSource(node.url)], block_hash=HEAD_HASH)
        yield block, prove_account(block, bytes.fromhex(CONTRACT[2:]), [0])


def test_a_proven_account_is_read_only(proven):
    _, account = proven
    assert account.storage[0] == 0x38 and account.balance == 118  # the fixture's own values
    with pytest.raises(AttributeError, match="read-only"):
        account.balance = 10**18
    with pytest.raises(AttributeError, match="read-only"):
        account.exists = False
    with pytest.raises(AttributeError, match="read-only"):
        del account.code_hash
    with pytest.raises(TypeError):
        account.storage[0] = 1  # a read-only mapping
    assert account.balance == 118 and account.storage[0] == 0x38


def test_an_anchored_block_is_read_only(proven):
    block, _ = proven
    with pytest.raises(AttributeError, match="read-only"):
        block.header = None
    with pytest.raises(AttributeError, match="read-only"):
        block.chain_id = 1
    assert block.hash == HEAD_HASH and block.number == LATEST


def test_only_the_prover_builds_a_proven_account(proven):
    block, _ = proven
    with pytest.raises(TypeError, match="built by recompute.core.prover only"):
        ProvenAccount(object(), block, b"\0" * 20, (0, 10**18, b"\0" * 32, b"\0" * 32), {})


def test_an_outcome_is_frozen():
    outcome = Outcome(Verdict.BAD, "predicate-failed", {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.verdict = Verdict.GOOD
