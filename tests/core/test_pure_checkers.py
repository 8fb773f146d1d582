"""The checkers keep nothing (docs/design.md §Soundness): ``core/mpt.py``, ``core/prover.py``,
``core/receipts.py``, ``core/anchor.py``, ``core/header.py``, the history contract's hops
(``core/hops.py``, ``core/history_window.py``) and the OP-stack L2's checkers (``l2/``) are
functions of their arguments. Every reuse of a verified value is in ``core/caching.py``.

Read statically (no checker imports the caching module or keeps a module-level container or
memoizing decorator) and in use: a checker asked twice asks its source twice and leaves the
process's node cache as it found it; the caching layer asks once, and only for the same hash.
Expected counts are those of the calls made below, counted by hand.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from recompute.core import caching, receipts
from recompute.core.anchor import anchor_block
from recompute.core.caching import SHARED_NODES
from recompute.core.clock import Clock
from recompute.core.prover import verify_account_proof
from recompute.sources.fixture_node import FixtureNode
from recompute.sources.live import LiveSource
from tests.core.fixturedata import FIXTURES

PACKAGE = Path(caching.__file__).parent.parent
# the proof checkers, the history contract's hops, the OP-stack L2's output roots and games
CHECKERS = ("core/mpt", "core/prover", "core/receipts", "core/anchor", "core/header",
            "core/history_window", "core/hops", "l2/output_root", "l2/clone", "l2/versions",
            "l2/game", "l2/finality")
RECORDED = Clock(at=540)  # the recorded chain's head time (tests/core/test_receipts.py)


def _module_level_state(tree: ast.Module) -> list[str]:
    """Module-level names bound to a container or a cache object, and memoizing decorators."""
    found = []
    kept = {"dict", "list", "set", "OrderedDict", "defaultdict", "NodeCache", "Memo",
            "WeakKeyDictionary", "WeakValueDictionary"}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            value = node.value
            called = value.func if isinstance(value, ast.Call) else None
            name = getattr(called, "id", getattr(called, "attr", None))
            if name in kept or isinstance(value, ast.Dict | ast.List | ast.Set) and not (
                    isinstance(node, ast.Assign) and all(
                        isinstance(t, ast.Name) and t.id.isupper() for t in node.targets)):
                found.append(f"line {node.lineno}")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                name = getattr(deco, "id", getattr(deco, "attr", None))
                if isinstance(deco, ast.Call):
                    name = getattr(deco.func, "id", getattr(deco.func, "attr", None))
                if name in {"lru_cache", "cache"}:
                    found.append(f"{node.name} (@{name})")
    return found


@pytest.mark.parametrize("name", CHECKERS)
def test_a_checker_imports_no_cache_and_keeps_nothing_at_module_level(name):
    tree = ast.parse((PACKAGE / f"{name}.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
    assert "recompute.core.caching" not in imported
    assert _module_level_state(tree) == []


class Counting:
    """A proof source that counts the receipts and headers asked of it."""

    def __init__(self, inner: LiveSource):
        self.inner = inner
        self.label = inner.label
        self.asked: list[str] = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def block_receipts(self, block_hash: bytes):
        self.asked.append("receipts")
        return self.inner.block_receipts(block_hash)

    def block_by_hash(self, block_hash: bytes):
        self.asked.append("header")
        return self.inner.block_by_hash(block_hash)


def test_proving_receipts_twice_asks_twice_and_the_caching_layer_asks_once():
    with FixtureNode(FIXTURES) as node:
        source = Counting(LiveSource(node.url))
        block = anchor_block([source], block="latest", clock=RECORDED)
        source.asked.clear()
        first, second = receipts.prove_receipts(block), receipts.prove_receipts(block)
        assert source.asked == ["receipts", "receipts"]  # the checker keeps nothing
        assert first.logs == second.logs and len(first.logs) == 11
        kept = caching.prove_receipts(block)
        again = caching.prove_receipts(block)
        assert source.asked == ["receipts"] * 3 and kept is again  # asked once, then kept
        assert kept.logs == first.logs


def test_walking_to_an_ancestor_twice_asks_twice_and_the_caching_layer_asks_once():
    from recompute.core.anchor import ancestor

    with FixtureNode(FIXTURES) as node:
        source = Counting(LiveSource(node.url))
        block = anchor_block([source], block="latest", clock=RECORDED)
        source.asked.clear()
        plain = [ancestor(block, block.number - 3) for _ in range(2)]
        assert source.asked == ["header"] * 6  # three parentHash links, walked twice
        assert plain[0].hash == plain[1].hash
        source.asked.clear()
        kept = [caching.ancestor(block, block.number - 3) for _ in range(2)]
        assert source.asked == ["header"] * 3
        assert kept[0].hash == plain[0].hash and kept[0].anchor == plain[0].anchor


def test_a_proof_checked_without_a_cache_leaves_the_shared_node_cache_untouched():
    from tests.core.fixturedata import CONTRACT, exchanges

    answer = next(r["result"] for n, _, r in exchanges("eth_getProof")
                  if n == "get-account-proof-with-storage.io")
    with FixtureNode(FIXTURES) as node:
        block = anchor_block([LiveSource(node.url)], block="latest", clock=RECORDED)
    address = bytes.fromhex(CONTRACT[2:])
    SHARED_NODES.clear()
    try:
        assert verify_account_proof(block, address, [0], answer).storage[0] == 0x38
        assert len(SHARED_NODES) == 0  # nothing kept where no cache was given
        assert verify_account_proof(block, address, [0], answer,
                                    nodes=SHARED_NODES).storage[0] == 0x38
        assert len(SHARED_NODES) > 0  # the fast path's cache, given, keeps the upper nodes
    finally:
        SHARED_NODES.clear()
