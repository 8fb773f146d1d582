"""``--expect`` values are checked against the derived value's type when the
command or checks.toml is parsed, before any node is asked, naming the check; an integer
written in hex equals the same decimal."""

from __future__ import annotations

import pytest

from recompute.cli import main
from recompute.core.errors import UsageError
from recompute.evaluator.evidence import expectation_holds
from recompute.recipes.registry import get_recipe, load_recipes
from recompute.watch.config import load_config

DEAD = "http://127.0.0.1:9"  # nothing listens: asking it would be rpc-unreachable (exit 2)
SUBJECT = "0x" + "11" * 20
ADDRESS = "0x" + "22" * 20


def run(capsys, *args) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    return done.value.code, capsys.readouterr().err


@pytest.mark.parametrize("expect, words", [
    ("status=overdue-ish", "not one of"),
    ("deadline=abc", "not an integer"),
    ("never_completed=maybe", "not true or false"),
    ("nothing=1", "derives no 'nothing'"),
])
def test_a_bad_expectation_is_a_usage_error_before_any_node(capsys, expect, words):
    code, err = run(capsys, "step", "amm/layer-status", "--rpc", DEAD, "--block", "1",
                    "--address", ADDRESS, "--param", f"subject={SUBJECT}", "--param", "layer=0",
                    "--expect", expect)
    assert code == 64, err
    assert words in err and err.count("\n") == 1


def test_enum_names_are_canonical_and_ints_compare_as_numbers():
    recipe = get_recipe("amm/layer-status")
    assert recipe.parse_expect({"status": "overdue", "deadline": "0x69113928"}) == {
        "status": "OVERDUE", "deadline": "1762736424"}
    assert expectation_holds(1762736424, "0x69113928")
    assert expectation_holds(1762736424, "1762736424")
    assert not expectation_holds(1762736424, "1762736425")
    assert expectation_holds(True, "TRUE") and not expectation_holds(False, "true")


def test_every_bundled_recipe_declares_what_it_derives():
    bundled = {n: r for n, r in load_recipes().items()
               if type(r).__module__.startswith("recompute.recipes.")}
    assert len(bundled) >= 11
    for name, recipe in bundled.items():
        assert recipe.outputs, f"{name} declares no outputs"


def test_a_bad_expectation_in_checks_toml_names_the_check(tmp_path):
    config = tmp_path / "checks.toml"
    config.write_text(f'''
[[check]]
name = "the-budget"
recipe = "8312/aggregate-budget"
address = "{ADDRESS}"
params = {{ root = "0x{'33' * 32}", period = 0, from_block = 0 }}
expect = {{ within_cap = "yes" }}
''')
    with pytest.raises(UsageError, match="check 'the-budget'.*not true or false"):
        load_config(config)


def test_every_value_a_bundled_vector_derives_is_declared():
    import json

    from recompute.data import VECTORS

    recipes = load_recipes()
    checked = 0
    for path in sorted(VECTORS.rglob("*.json")):
        vector = json.loads(path.read_text())
        if not isinstance(vector, dict) or vector.get("kind") != "step":
            continue
        derived = vector["expected"].get("derived") or {}
        undeclared = set(derived) - set(recipes[vector["recipe"]].outputs)
        assert not undeclared, f"{path.name}: {vector['recipe']} derives {undeclared}"
        checked += 1
    assert checked > 10
