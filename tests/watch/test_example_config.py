"""examples/devnet-watch.toml names the devnet's deterministic addresses, keys and ids: checked
against the manifest of a freshly built devnet (the session devnet)."""

from __future__ import annotations

import tomllib

from recompute.watch.config import load_config
from tests.watch.watchproc import EXAMPLE


def test_every_recipe_area_is_watched():
    checks = load_config(EXAMPLE)
    assert {c.recipe.name.split("/")[0] for c in checks} == {"amm", "8312", "sai"}
    assert "sai/roster" in {c.recipe.name for c in checks}


def test_the_example_matches_a_fresh_devnet(devnet):
    _, manifest = devnet
    raw = {c["name"]: c for c in tomllib.loads(EXAMPLE.read_text())["check"]}
    contracts = {k: v.lower() for k, v in manifest["contracts"].items()}
    subjects = manifest["amm"]["subjects"]
    enrolled = manifest["moments"]["amm.enrolled"]["number"]
    for name, subject in (("amm/example/layer-0", "example"), ("amm/pulser/layer-0", "pulser"),
                          ("amm/controlled/signal", "controlled")):
        check = raw[name]
        assert check["address"].lower() == contracts["AgentMeditationRegistry"]
        assert check["params"]["subject"].lower() == subjects[subject]["address"].lower()
        assert check["since"] == enrolled

    rc = raw["8312/reserved-confirmed/key-1"]
    assert rc["address"].lower() == contracts["ReservedConfirmedMeter"]
    assert rc["params"]["key"] == manifest["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"]

    tree = manifest["meters"]["aggregate_lying"]["trees"]["tree-1"]
    cap = raw["8312/lying-meter/cap"]
    assert cap["address"].lower() == contracts["LyingAggregateBudgetMeter"]
    assert cap["params"] == {"shape": "aggregate-budget", "key": tree["root_id"], "period": 0}

    budget = raw["8312/lying-meter/budget"]
    first_draw = min(d["block"] for d in tree["draws"])
    assert budget["address"].lower() == contracts["LyingAggregateBudgetMeter"]
    assert budget["params"]["root"] == tree["root_id"]
    assert budget["params"]["from_block"] == budget["since"] == first_draw

    roster = raw["sai/challenged/roster"]
    swarm = manifest["swarm"]["swarms"]["challenged"]
    assert roster["address"].lower() == contracts[swarm["registry"]]
    assert roster["params"]["swarm"] == swarm["id"]
    assert roster["params"]["from_block"] == roster["since"] == swarm["formed_block"]


def test_every_check_starts_at_or_after_its_contract(devnet):
    """No check of the example asks for a block where its contract has no code yet (it would
    count no-contract lines): each has a `since` at or above the first block with code, the
    node's own eth_getCode (a check of a contract there from block 1 needs no `since`)."""
    node, _ = devnet
    head = int(node.rpc("eth_blockNumber"), 16)
    for check in tomllib.loads(EXAMPLE.read_text())["check"]:
        since = check.get("since", 1)
        if since > head:
            # a check of the living devnet (docs/devnet.md §The living devnet) starts at its
            # first block, the one after the static history's head (a history that grows
            # moves it), on a contract the static history deployed
            assert since == head + 1, (check["name"], since, head)
            since = head
        assert node.rpc("eth_getCode", check["address"], hex(since)) != "0x", check["name"]
