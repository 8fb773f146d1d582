"""A user's own recipe module, as README §Recipes shows it, loads with --recipes and runs."""

from __future__ import annotations

import json
from pathlib import Path

from recompute.devnet.contracts import connect, deploy
from tests.cli import run_cli

SLOTBOX = Path(__file__).resolve().parents[1] / "core" / "artifacts"

MODULE = '''
from recompute.recipe import Derivation, Param, Reads, Recipe, register

@register
class BoxA(Recipe):
    name = "mine/box-a"
    help = "The proven value of SlotBox.a is the expected one."
    params = (Param("expected", "uint", "what a should hold"),)
    layout = "LAYOUT"

    def plan(self, p, clock):
        a = (yield Reads(["a"]))["a"]
        return Derivation(holds=a == p["expected"], derived={"a": a},
                          predicate="a == expected")
'''




def test_a_user_recipe_module(anvil, tmp_path):
    layout = tmp_path / "slotbox.json"
    assert run_cli("layout", "import", str(SLOTBOX / "SlotBox.json"), "-o",
                   str(layout)).returncode == 0
    module = tmp_path / "mine.py"
    module.write_text(MODULE.replace("LAYOUT", str(layout)))
    listing = run_cli("recipes", "--recipes", str(module))
    assert "mine/box-a  The proven value of SlotBox.a is the expected one." in listing.stdout
    w3 = connect(anvil.url)
    box = deploy(w3, "SlotBox", directory=str(SLOTBOX))
    common = ["step", "mine/box-a", "--recipes", str(module), "--rpc", anvil.url, "--block",
              "latest", "--address", box.address, "--json"]
    good = run_cli(*common, "--param", "expected=56")  # SlotBox.a = 0x38
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["evidence"]["derived"] == {"a": "56"}
    bad = run_cli(*common, "--param", "expected=57")
    assert bad.returncode == 1


def test_a_broken_user_module_is_one_line(tmp_path):
    module = tmp_path / "broken.py"
    module.write_text("raise RuntimeError('nope')\n")
    result = run_cli("recipes", "--recipes", str(module))
    assert result.returncode == 64
    assert "failed to load: nope" in result.stderr and "Traceback" not in result.stderr
