"""The rule inventory (vectors/rules.json): every rule of the specifications a recipe implements is
decided by at least one shipped vector, or listed with the reason none can be.

"Decided" is measured, not asserted: each rule's mistaken method (``mistakes_of(recipe)[rule id]``,
one mistake per rule) is replayed on every vector the inventory lists for it, and each must fail
(its verdict, or only a derived value, as listed). Expected outcomes of the inventory's vectors
are hand-computed from the specifications (``hand_computed``) and compared with the committed
vectors."""

from __future__ import annotations

import json

import pytest

from recompute.data import VECTORS
from recompute.recipes.registry import load_recipes
from recompute.vectors import load_json
from recompute.vectors.mistakes import mistakes_of
from recompute.vectors.replay_vector import replay
from recompute.vectors.tamper import _fails

INVENTORY = json.loads((VECTORS / "rules.json").read_text())
RULES = INVENTORY["rules"]
RECIPES = load_recipes()
SUITE = {load_json(VECTORS / e["path"])["name"]: load_json(VECTORS / e["path"])
         for e in json.loads((VECTORS / "suite.json").read_text())["vectors"]}
SEEDS = {"000_9610cfd26b874827.txt", "003_abed18a0ba624aab.txt", "004_581e4ef598d2c268.txt"}


def test_rule_ids_are_unique_and_name_a_seed_and_a_recipe():
    ids = [r["id"] for r in RULES]
    assert len(ids) == len(set(ids))
    for r in RULES:
        assert r["seed"] in SEEDS and r["section"] and r["sentence"], r["id"]
        assert r["recipe"] in RECIPES, r["id"]


def test_no_rule_is_undecided():
    """Every rule of the inventory decides at least one shipped vector (a rule no honest
    contract can break is decided on a lying variant's state: contracts/src/variants/)."""
    assert [r["id"] for r in RULES if not r["vectors"]] == []


def test_every_rule_names_a_vector_that_exists_or_a_reason():
    for r in RULES:
        if r.get("reason"):
            assert not r["vectors"] and len(r["reason"]) > 40, r["id"]
        else:
            assert r["vectors"], f"{r['id']} names no vector and no reason"
            for v in r["vectors"]:
                assert v["name"] in SUITE, f"{r['id']}: no vector {v['name']} in suite.json"
                assert SUITE[v["name"]]["recipe"] == r["recipe"], (r["id"], v["name"])


def test_one_mistake_per_rule_and_a_rule_for_every_mistake():
    decided = {r["id"]: r["recipe"] for r in RULES if not r.get("reason")}
    mistakes = {rule: name for name, recipe in RECIPES.items() for rule in mistakes_of(recipe)}
    assert mistakes == decided


@pytest.mark.parametrize("rule", [r for r in RULES if not r.get("reason")], ids=lambda r: r["id"])
def test_each_rule_decides_its_vectors(rule):
    """Mutate the rule (its mistake) and every listed vector fails, as listed."""
    mistaken = mistakes_of(RECIPES[rule["recipe"]])[rule["id"]]
    for entry in rule["vectors"]:
        vector = SUITE[entry["name"]]
        assert _fails(vector, vector, mistaken), f"{rule['id']} does not decide {entry['name']}"
        got = replay(vector, mistaken)
        on_verdict = got["verdict"] != vector["expected"]["verdict"]
        assert on_verdict == (entry["decides"] == "verdict"), (rule["id"], entry["name"])


def test_the_listed_vectors_are_all_that_a_rule_decides():
    """The table is complete: no shipped step vector of the recipe is decided but unlisted."""
    for rule in (r for r in RULES if not r.get("reason")):
        mistaken = mistakes_of(RECIPES[rule["recipe"]])[rule["id"]]
        decided = {name for name, v in SUITE.items()
                   if v.get("recipe") == rule["recipe"]
                   and v["expected"]["verdict"] != "UNVERIFIABLE" and _fails(v, v, mistaken)}
        assert decided == {v["name"] for v in rule["vectors"]}, rule["id"]


def test_a_rule_with_both_outcomes_is_decided_on_a_verdict():
    """Where a rule's vectors hold GOOD and BAD, or it is decided only on derived values, at
    least one vector flips the verdict — except where the inventory says derived is all there
    is (a rule that only shapes a derived value: a deadline, a timepoint, a hash)."""
    derived_only = {r["id"] for r in RULES if r["vectors"]
                    and all(v["decides"] == "derived" for v in r["vectors"])}
    # amm.restore.version-advances: a descriptive sentence gives a derived value, never a BAD
    # (docs/design.md §Verdicts follow the normative text)
    assert derived_only == {"amm.status.due-window", "amm.policy.interval-smallest",
                            "amm.signal.not-tracked", "amm.signal.silent-since",
                            "amm.restore.version-advances", "sai.charter.sha256-jcs",
                            "sai.member.not-carried-precedes-dissolved"}


def test_hand_computed_outcomes_match_the_committed_vectors():
    hand = INVENTORY["hand_computed"]["vectors"]
    assert len(hand) == 50
    for name, want in hand.items():
        expected = SUITE[name]["expected"]
        assert expected["verdict"] == want["verdict"], name
        for key, value in want["derived"].items():
            assert expected["derived"][key] == value, (name, key)


def test_the_readme_table_lists_every_rule():
    readme = (VECTORS / "README.md").read_text()
    for r in RULES:
        assert f"`{r['id']}`" in readme, r["id"]
