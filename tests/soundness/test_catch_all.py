"""An unexpected exception is a bug, reported in one line with exit 70 (never 0, 1
or 2, which read as verdicts); web3's raised recursion limit does not survive into parsing."""

from __future__ import annotations

import sys

import pytest

from recompute.cli import main
from recompute.core.verdict import EXIT_INTERNAL
from recompute.sources.fixture_node import FixtureNode
from tests.core.fixturedata import FIXTURES

BROKEN = '''
from recompute.recipe import Reads, Recipe, register

@register
class Broken(Recipe):
    name = "mine/broken"
    help = "A recipe with a bug."

    def plan(self, p, clock):
        yield Reads([])
        return 1 / 0
'''


def test_an_unexpected_exception_is_one_line_and_exit_70(tmp_path, run_cli):
    module = tmp_path / "broken.py"  # loaded in a process of its own: no registry left behind
    module.write_text(BROKEN)
    with FixtureNode(FIXTURES) as node:
        done = run_cli("step", "mine/broken", "--recipes", str(module), "--rpc", node.url,
                       "--block", "latest", "--at", "540", "--address",
                       "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df",
                       "--layout", "meter-aggregate-budget")
    err = done.stderr
    assert done.returncode == EXIT_INTERNAL == 70, err
    assert err.startswith("internal error: ZeroDivisionError: division by zero")
    assert "this is a bug, please report it" in err and err.count("\n") == 1


def test_the_recursion_limit_is_back_to_the_default_after_web3(capsys):
    import web3  # noqa: F401 -- py_ecc raises the limit to 100,000 on import

    sys.setrecursionlimit(100_000)
    with pytest.raises(SystemExit):
        main(["recipes"])
    capsys.readouterr()
    assert sys.getrecursionlimit() <= 1000
