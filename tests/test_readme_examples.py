"""The README's worked outputs are what the commands print (so they cannot drift).

Each example is a command in the README and the output it shows. The test runs the command as
a user would and checks every line the README shows against the real output, in order: ``…``
in the README stands for characters it abbreviates (the middle of a hash), everything else must
be equal. The README may leave lines out; it may not show a line the command does not print.
"""

from __future__ import annotations

import re
import shlex

from recompute.sources.fixture_node import FixtureNode
from tests import REPO_ROOT
from tests.core.fixturedata import FIXTURES

README = (REPO_ROOT / "README.md").read_text()


def _block(marker: str, then: int = 0) -> list[str]:
    """The lines of the fenced block that contains ``marker`` (``then=1``: the block after)."""
    at = README.index(marker)
    start = README.index("\n", README.rindex("```", 0, at)) + 1
    end = README.index("```", at)
    for _ in range(then):
        start = README.index("\n", README.index("```", end + 3)) + 1
        end = README.index("```", start)
    return README[start:end].rstrip("\n").split("\n")


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile("".join(".*?" if part == "…" else re.escape(part)
                              for part in re.split("(…)", line)) + r"\Z")


def _assert_shown(shown: list[str], printed: list[str]) -> None:
    at = 0
    for line in shown:
        pattern = _pattern(line)
        while at < len(printed) and not pattern.match(printed[at]):
            at += 1
        assert at < len(printed), f"the README shows a line the command does not print: {line!r}"
        at += 1


def test_layout_slot_derivation(run_cli):
    block = _block("$ recompute layout slot amm-registry")
    command, shown = block[0], block[1:]
    assert command.startswith("$ recompute ")
    result = run_cli(*shlex.split(command)[2:])
    assert result.returncode == 0, result.stderr
    _assert_shown(shown, result.stdout.splitlines())


def test_proof_on_the_bundled_chain(run_cli):
    marker = ".venv/bin/python -m recompute.sources.fixture_node &"
    commands, shown = _block(marker), _block(marker, then=1)
    command = " ".join(line.rstrip("\\").strip() for line in commands[1:])
    with FixtureNode(FIXTURES) as node:
        port = node.url.rsplit(":", 1)[1]
        args = shlex.split(command.replace("PORT", port))
        assert args[0] == ".venv/bin/recompute"
        result = run_cli(*args[1:])
    assert result.returncode == 0, result.stderr
    assert len(shown) >= 5
    _assert_shown(shown, result.stdout.splitlines())
