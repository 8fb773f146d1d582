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

from tests.oracle import REGISTRIES, Chain

EXAMPLES = int(os.environ.get("RECOMPUTE_ORACLE_EXAMPLES", "6"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def chain(module_anvil):
    return Chain(module_anvil)


@pytest.fixture(scope="module")
def oracles(chain):
    return {name: cls(chain) for name, (cls, _) in REGISTRIES.items()}


# registry -> (an explicit sequence that reaches both sides, the stats that must be non-zero)
CASES = {
    "budget": ([("draw", "A", 50), ("draw", "B", 50), ("wait", 3600), ("draw", "C", 50),
                ("draw", "A", 50), ("draw", "B", 1)], ("accepted", "forced")),
    "rc": ([("reserve", 600), ("confirm", 0), ("reserve", 400), ("reserve", 1)],
           ("accepted", "forced")),
    # a change, a valid rollback, one that changes nothing, then restoresVersion == base
    "amm": ([("report", 15, 15, 7, "none", "ok", 1, False),
             ("report", 15, 15, 0, "valid", "ok", 1, False),
             ("report", 15, 15, 0, "valid", "ok", 1, False),
             ("report", 15, 15, 0, "current", "ok", 1, False)], ("accepted", "rejected")),
    "swarm": ([("apply", 3, "worker"), ("admit", 3, "worker"), ("admit", 4, "coordinator"),
               ("accept", 4), ("activate",), ("amend", True), ("leave", 3)],
              ("accepted", "rejected")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_honest_contract_is_an_oracle(oracles, name):
    oracle, (_, ops) = oracles[name], REGISTRIES[name]
    sequence, exercised = CASES[name]

    @SETTINGS
    @given(st.lists(ops, min_size=1, max_size=10))
    @example(sequence)
    def run(ops):
        oracle.start()
        for op in ops:
            oracle.apply(op)
    run()
    assert all(getattr(oracle.stats, side) for side in exercised), oracle.stats
