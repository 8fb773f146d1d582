"""The honest reference contracts as an oracle, a short run (tests/oracle.py says what is
checked). Hypothesis draws sequences of operations; each example is a fresh subject, root or
key on one anvil of this module's own (never the shared devnet). A longer run:
``RECOMPUTE_ORACLE_EXAMPLES=500 pytest tests/recipes/test_oracle_differential.py`` or
``benchmarks/bench_oracle.py``."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.oracle import AMM_OPS, BUDGET_OPS, RC_OPS, REGISTRIES, SWARM_OPS, Chain

EXAMPLES = int(os.environ.get("RECOMPUTE_ORACLE_EXAMPLES", "6"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def chain(module_anvil):
    return Chain(module_anvil)


@pytest.fixture(scope="module")
def oracles(chain):
    return {name: cls(chain) for name, (cls, _) in REGISTRIES.items()}


def _run(oracle, ops) -> None:
    oracle.start()
    for op in ops:
        oracle.apply(op)


def test_aggregate_budget_meter_is_an_oracle(oracles):
    @SETTINGS
    @given(st.lists(BUDGET_OPS, min_size=1, max_size=10))
    @example([("draw", "A", 50), ("draw", "B", 50), ("wait", 3600), ("draw", "C", 50),
              ("draw", "A", 50), ("draw", "B", 1)])
    def run(ops):
        _run(oracles["budget"], ops)
    run()
    stats = oracles["budget"].stats
    assert stats.accepted and stats.forced  # both sides were exercised


def test_reserved_confirmed_meter_is_an_oracle(oracles):
    @SETTINGS
    @given(st.lists(RC_OPS, min_size=1, max_size=8))
    @example([("reserve", 600), ("confirm", 0), ("reserve", 400), ("reserve", 1)])
    def run(ops):
        _run(oracles["rc"], ops)
    run()
    stats = oracles["rc"].stats
    assert stats.accepted and stats.forced


def test_amm_registry_is_an_oracle(oracles):
    @SETTINGS
    @given(st.lists(AMM_OPS, min_size=1, max_size=8))
    # a change, a valid rollback, one that changes nothing, then restoresVersion == base
    @example([("report", 15, 15, 7, "none", "ok", 1, False),
              ("report", 15, 15, 0, "valid", "ok", 1, False),
              ("report", 15, 15, 0, "valid", "ok", 1, False),
              ("report", 15, 15, 0, "current", "ok", 1, False)])
    def run(ops):
        _run(oracles["amm"], ops)
    run()
    stats = oracles["amm"].stats
    assert stats.accepted and stats.rejected


def test_swarm_registry_is_an_oracle(oracles):
    @SETTINGS
    @given(st.lists(SWARM_OPS, min_size=1, max_size=8))
    @example([("apply", 3, "worker"), ("admit", 3, "worker"), ("admit", 4, "coordinator"),
              ("accept", 4), ("activate",), ("amend", True), ("leave", 3)])
    def run(ops):
        _run(oracles["swarm"], ops)
    run()
    stats = oracles["swarm"].stats
    assert stats.accepted and stats.rejected
