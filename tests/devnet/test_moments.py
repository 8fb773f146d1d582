"""The devnet manifest's named moments say what each is about (subject, layer or swarm, the
recipe that shows it, its parameters and its expected verdict), `recompute devnet up` writes
them, and each says true: the expected verdicts were worked out by hand from the specifications and
the history script (recompute/devnet/moments.py), and running the named recipe at the moment must
give them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recompute.core.anchor import anchor_block
from recompute.data import VECTORS
from recompute.devnet.moments import ABOUT
from recompute.evaluator.job import step
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe, load_recipes
from recompute.sources.live import LiveSource
from recompute.vectors import load_json
from tests.cli import run_cli

SUITE = {v["name"]: v for v in (load_json(VECTORS / e["path"]) for e in
                                json.loads((VECTORS / "suite.json").read_text())["vectors"])}


def test_devnet_up_writes_what_every_moment_is_about(tmp_path):
    state = str(tmp_path / "dn")
    result = run_cli("devnet", "up", "--state-dir", state)
    try:
        assert result.returncode == 0, result.stderr
        manifest = json.loads((tmp_path / "dn" / "manifest.json").read_text())
    finally:
        run_cli("devnet", "down", "--state-dir", state)
    # the summary says where the devnet is (8545 by default, else a line says where), the
    # beacon URL and trusted root --beacon needs, and the commands to try next
    rpc, beacon = manifest["rpc"], manifest["beacon"]
    assert f"rpc {rpc} (chain 31337)" in result.stdout.splitlines()
    assert rpc == "http://127.0.0.1:8545" or f"note: the devnet listens on {rpc}" in result.stderr
    assert f"beacon {beacon['url']} (network devnet, --beacon)" in result.stdout
    assert f"trusted root {beacon['trusted_root']} (--trusted-root" in result.stdout
    tries = result.stdout.split("try next:\n", 1)[1].splitlines()
    # the state dir is not .devnet: the `down` to try names it
    assert tries[-1] == f"  recompute devnet down --state-dir {Path(state).resolve()}"
    assert any(f"--beacon {beacon['url']} --trusted-root {beacon['trusted_root']}" in line
               for line in tries)
    assert f"named moments: {len(ABOUT)}" in result.stdout
    # the human summary says it too, under each moment
    assert "amm/layer-status -> VERIFIED-BAD: the same subject is OVERDUE at its deadline" \
        in result.stdout
    recipes = load_recipes()
    assert set(manifest["moments"]) == set(ABOUT)
    for label, moment in manifest["moments"].items():
        about = moment["about"]
        assert about["recipe"] in recipes, label
        assert about["verdict"] in ("VERIFIED-GOOD", "VERIFIED-BAD"), label
        assert about["contract"] in manifest["contracts"], label
        assert about["text"] and about["params"], label
        assert {"subject", "swarm", "meter"} & set(about), label  # who it is about
        name = about["vector"]
        if name is not None:  # the shipped vector captured at this moment agrees
            vector = SUITE[name]
            assert vector["pinned_block_hash"] == moment["hash"], (label, name)
            assert vector["recipe"] == about["recipe"], (label, name)
            assert vector["expected"]["verdict"] == about["verdict"], (label, name)
            assert vector.get("expect", {}) == about.get("expect", {}), (label, name)
            given = {k: v for k, v in vector["params"].items() if isinstance(v, str)}
            assert given == about["params"], (label, name)


@pytest.mark.parametrize("label", sorted(ABOUT))
def test_each_moment_shows_its_verdict(devnet, label):
    _, manifest = devnet
    moment = manifest["moments"][label]
    about = moment["about"]
    recipe = get_recipe(about["recipe"])
    block = anchor_block([LiveSource(manifest["rpc"])],
                         block_hash=bytes.fromhex(moment["hash"][2:]))
    address = bytes.fromhex(manifest["contracts"][about["contract"]][2:])
    layout = load_layout(about["layout"] or recipe.layout)
    outcome = step(recipe, recipe.parse_params(about["params"]), block, address, layout,
                   about.get("expect"))
    assert outcome.verdict.value == about["verdict"], (label, outcome.evidence.get("derived"))
