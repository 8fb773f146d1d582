"""The peer suite trustless-ai/recompute-kit aggregate-budget-v0, replayed with the pure function
that ``8312/aggregate-budget`` uses (``recompute.recipes.erc8312.aggregate_budget``).

The suite is hash-pinned (spec §Adapter contract: "the vectors are hash-pinned in suite.json
(fail-closed on mismatch)"), so both hashes are checked before any vector is read. Field
mapping (spec §The predicate): a log entry's ``rootId``/``periodIndex``/``amount``/``admitted``
are the draw's; ``edge`` is the attribution label (our ``node``); the vector's ``rootId``,
``periodIndex`` and ``cap`` are the pinned meter; expected ``admittedSum`` is our
``aggregate`` and ``conserves`` our ``within_cap``. The vectors carry no storage, so
``spent`` is not given.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from recompute.recipes.erc8312 import Draw, aggregate_budget, per_edge_max

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "recompute-kit" / "aggregate-budget-v0"


class SuiteHashMismatch(AssertionError):
    pass


def load_suite(folder: Path = SUITE) -> dict:
    """The vectors document, after its and the spec's sha256 match ``suite.json``."""
    suite = json.loads((folder / "suite.json").read_text())
    for part in ("vectors", "spec"):
        pinned = suite[part]
        actual = hashlib.sha256((folder / pinned["path"]).read_bytes()).hexdigest()
        if actual != pinned["sha256"]:
            raise SuiteHashMismatch(f"{pinned['path']}: sha256 {actual}, suite pins "
                                    f"{pinned['sha256']}")
    return json.loads((folder / suite["vectors"]["path"]).read_text())


def inputs(vector: dict) -> tuple[list[Draw], int, dict]:
    draws = [Draw(root=e["rootId"], node=e["edge"], period=e["periodIndex"],
                  amount=int(e["amount"]), admitted=e["admitted"]) for e in vector["log"]]
    return draws, int(vector["cap"]), {"root": vector["rootId"], "period": vector["periodIndex"]}


DOCUMENT = load_suite()
VECTORS = {v["name"]: v for v in DOCUMENT["vectors"]}


def test_the_suite_is_the_one_the_thread_pinned():
    # ERC-8312 thread: "7 hash-pinned vectors (sha256 ac6f6efd…)"
    suite = json.loads((SUITE / "suite.json").read_text())
    assert suite["profile"] == DOCUMENT["profile"] == "aggregate_budget.v0"
    assert suite["vectors"]["sha256"].startswith("ac6f6efd")
    assert len(VECTORS) == 7
    assert "fanout-exceeds-root-cap" in VECTORS


def test_a_changed_byte_fails_the_hash_check(tmp_path):
    copy = tmp_path / "suite"
    shutil.copytree(SUITE, copy)
    vectors = copy / "aggregate-budget-v0.vectors.json"
    vectors.write_text(vectors.read_text().replace('"amount": "900"', '"amount": "090"', 1))
    with pytest.raises(SuiteHashMismatch):
        load_suite(copy)
    spec = copy / "aggregate-budget-v0.spec.md"
    shutil.copy(SUITE / vectors.name, vectors)
    spec.write_bytes(spec.read_bytes() + b"\n")
    with pytest.raises(SuiteHashMismatch):
        load_suite(copy)


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_vector_reproduced_by_the_recipe_derivation(name):
    vector = VECTORS[name]
    draws, cap, meter = inputs(vector)
    got = aggregate_budget(draws, cap, **meter)
    assert str(got["aggregate"]) == vector["expected"]["admittedSum"]
    assert got["within_cap"] is vector["expected"]["conserves"]
    assert got["holds"] is vector["expected"]["conserves"]


def test_fan_out_attribution_is_kept_but_not_conserved():
    draws, cap, meter = inputs(VECTORS["fanout-exceeds-root-cap"])
    got = aggregate_budget(draws, cap, **meter)
    assert got["per_node"] == {"a": 900, "b": 800, "c": 700}  # each edge under the 2000 cap
    assert (got["aggregate"], got["within_cap"]) == (2400, False)


def test_per_edge_method_fails_exactly_the_fan_out_vector():
    # spec §The counterexample: a per-edge method "reproduces every other vector and fails
    # only this one".
    wrong = []
    for name, vector in VECTORS.items():
        draws, cap, meter = inputs(vector)
        if per_edge_max(draws, cap, **meter) is not vector["expected"]["conserves"]:
            wrong.append(name)
    assert wrong == ["fanout-exceeds-root-cap"]
    draws, cap, meter = inputs(VECTORS["fanout-exceeds-root-cap"])
    assert per_edge_max(draws, cap, **meter) is True  # the false "conserves"


def test_max_per_edge_subtotal_as_the_sum_fails_five_of_seven():
    # ERC-8312 thread: the adapter's --tamper mode "computes by the per-edge-as aggregate method
    # and the suite fails 5/7" (max per-edge subtotal reported as admittedSum, spec §The
    # counterexample). Subtotals computed here, apart from the recipe's code.
    failing = 0
    for vector in VECTORS.values():
        subtotals: dict[str, int] = {}
        for e in vector["log"]:
            if (e["admitted"] and e["rootId"] == vector["rootId"]
                    and e["periodIndex"] == vector["periodIndex"]):
                subtotals[e["edge"]] = subtotals.get(e["edge"], 0) + int(e["amount"])
        tampered = max(subtotals.values())
        conserves = tampered <= int(vector["cap"])
        expected = vector["expected"]
        if (str(tampered), conserves) != (expected["admittedSum"], expected["conserves"]):
            failing += 1
    assert failing == 5
