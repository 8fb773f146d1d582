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
# The rooms (and files) whose errors carry their options as data; the others still word some
# messages with flags and join these as they move.
ROOMS_DONE = {"core"}
FILES_DONE = {"lightclient/anchor.py"}

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
        if parts[0] not in ROOMS_DONE and "/".join(parts) not in FILES_DONE:
            continue
        paths.append(path)
    return paths


def _named(flags: set[str]) -> list[str]:
    named = []
    for path in _below_cli():
        tree = ast.parse(path.read_text(), str(path))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in skip):
                for match in FLAG.finditer(node.value):
                    if "--" + match.group(1) in flags:
                        named.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: "
                                     f"--{match.group(1)}")
    return named


def test_the_flag_list_is_the_command_lines():
    flags = _flags()
    # a few flags every reader knows, so that an empty or wrong list cannot pass the test below
    assert {"--rpc", "--block", "--block-hash", "--quorum", "--beacon", "--max-anchor-age",
            "--store", "--param"} <= flags


def test_no_module_below_the_cli_names_a_flag():
    assert _named(_flags()) == []


def test_the_scan_finds_a_flag_in_an_f_string(tmp_path):
    # the scanner itself bites: an f-string's literal part naming a flag is found
    tree = ast.parse('x = f"{a} --block-hash {b}"\n')
    texts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert any(FLAG.search(text) and "--block-hash" in text for text in texts)
