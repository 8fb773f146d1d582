"""No module below the command line names one of its flags (docs/design.md §Trust flow).

The layers below ``recompute/cli`` are a library too (docs/library.md): an error they raise
carries what went wrong and which input as data (:class:`~recompute.core.errors.OptionError`,
:class:`~recompute.core.errors.Unverifiable`'s options), and only the command line words that
input as its flag (``recompute/cli/flags.py``). Every string constant of every module below the
CLI is read with ``ast`` (f-strings' literal parts included) and searched for ``--name`` where
``--name`` is a flag of a ``recompute`` command (read from click's own command tree).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import click

import recompute
from recompute.cli import COMMANDS, cli

PACKAGE = Path(recompute.__file__).resolve().parent

# Not scanned, and why:
# - recompute/cli: it is the command line, it words the flags.
# - recompute/devnet: the devnet's helper programs (live.py, beacon_serve.py) have command lines
#   of their own (argparse), and lifecycle.py starts them with those flags; anvil's flags are
#   anvil's. None of these is a flag of `recompute`.
# - recompute/api.py, recompute/recipe.py, recompute/__main__.py: the public face, above the
#   layers (tests/test_import_direction.py TOP); api.py reads an OptionError's text.
NOT_BELOW = {"cli", "devnet"}
TOP_FILES = {"api.py", "recipe.py", "__main__.py"}
# A docstring may show the command line a module serves (documentation, not a message): skipped.
# Text that is not an error and names a flag on purpose, file by file (each reason said):
NOT_MESSAGES = {
    # a bundled vector's description: data recorded in vectors/devnet/*.json
    "vectors/devnet_cases.py": "--expect",
    # the watch's own output, not errors: its progress notes advise the pins and endpoints it
    # was run with, its hooks' delivery notes name the hook, the HTML audit report says how to
    # re-check a line, a metric's help names the option behind it (an UNVERIFIABLE's options
    # in lines and notes are worded by the Sink: Sink.spell)
    "watch/auditor.py": "--block-hash --checkpoint --quorum",
    "watch/coordinator.py": "--block-hash --checkpoint --quorum",
    "watch/follower.py": "--block-hash --checkpoint --quorum --rpc",
    "watch/hooks.py": "--on-bad",
    "watch/webhook.py": "--on-bad-webhook",
    "watch/audit_page.py": "--block-hash --checkpoint --quorum --json",
    # the report's words: how a single-rpc audit could have been pinned, the --at clock
    "watch/report_words.py": "--at --block-hash --checkpoint --quorum",
    "watch/metrics.py": "--confirmations --max-anchor-age",
}

FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")


def _flags() -> set[str]:
    for module in {module for module, _ in COMMANDS.values()}:
        importlib.import_module(f"recompute.cli.{module}")
    found: set[str] = set()

    def walk(command: click.Command) -> None:
        for param in command.params:
            found.update(opt for opt in (*param.opts, *param.secondary_opts)
                         if opt.startswith("--"))
        if isinstance(command, click.Group):
            for sub in command.commands.values():
                walk(sub)

    walk(cli)
    return found - {"--help", "--version"}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _below_cli() -> list[Path]:
    paths = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] in NOT_BELOW or (len(parts) == 1 and parts[0] in TOP_FILES):
            continue
        paths.append(path)
    return paths


def _own_command_line(tree: ast.AST) -> set[int]:
    """The strings of ``parser.add_argument(...)`` calls: a helper program's own flags
    (recompute/sources/fixture_node.py serves the recorded chain with ``--dir``/``--port``)."""
    ids = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            ids |= {id(arg) for arg in node.args}
    return ids


def _named_in(path: Path, source: str, flags: set[str]) -> list[str]:
    tree = ast.parse(source, str(path))
    skip = _docstrings(tree) | _own_command_line(tree)
    allowed = NOT_MESSAGES.get(path.as_posix().split("recompute/", 1)[-1], "").split()
    named = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            for match in FLAG.finditer(node.value):
                flag = "--" + match.group(1)
                if flag in flags and flag not in allowed:
                    named.append(f"{path}:{node.lineno}: {flag}")
    return named


def _named(flags: set[str]) -> list[str]:
    return [hit for path in _below_cli()
            for hit in _named_in(path.relative_to(PACKAGE.parent), path.read_text(), flags)]


def test_the_flag_list_is_the_command_lines():
    flags = _flags()
    # a few flags every reader knows, so that an empty or wrong list cannot pass the test below
    assert {"--rpc", "--block", "--block-hash", "--quorum", "--beacon", "--max-anchor-age",
            "--store", "--param"} <= flags


def test_no_module_below_the_cli_names_a_flag():
    assert _named(_flags()) == []


def test_the_scan_finds_a_flag_in_an_error_and_skips_a_docstring():
    # the scanner itself bites: a flag in an f-string's literal part is found, in a docstring
    # or a helper program's add_argument it is not
    source = ('"""Run with --rpc URL."""\n'
              'parser.add_argument("--rpc")\n'
              'def f(url):\n'
              '    raise UsageError(f"{url}: give --block-hash H")\n')
    assert _named_in(Path("recompute/core/x.py"), source, _flags()) == [
        "recompute/core/x.py:4: --block-hash"]
