"""The ``recompute`` command line (click). Each command lives in its own module.

Exit codes (docs/design.md §Verdicts): 0 VERIFIED-GOOD, 1 VERIFIED-BAD, 2 UNVERIFIABLE, 64 usage,
70 internal error. Every error a user can provoke ends as one line on stderr and the right code,
never a traceback; any other exception is a bug, and is one line and exit 70 too (never 0, 1 or
2, which would read as a verdict).

Command modules load lazily (README §Performance): ``recompute step …`` imports the step
module and what it needs, never the devnet's web3 or the watch; ``--help`` lists every command
from :data:`COMMANDS` without importing any (tests/core/test_cli_lazy.py keeps that table equal
to the commands' own help).
"""

from __future__ import annotations

import importlib
import sys

import click

from recompute.cli.flags import cli_detail, cli_message
from recompute.core.boundedjson import reset_recursion_limit
from recompute.core.errors import RecomputeError, Unverifiable, UsageError
from recompute.core.outside_text import visible
from recompute.core.verdict import EXIT_INTERNAL, EXIT_UNVERIFIABLE, EXIT_USAGE
from recompute.version import __version__

# name -> (module that adds it to `cli`, first paragraph of its help: what --help shortens)
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("audit_cmd", "Stored audits (recompute watch --store PATH)."),
    "demo": ("demo_cmd", "Bring the devnet up, prove and re-derive at named moments, show lying "
                         "views; stop."),
    "devnet": ("devnet_cmd", "Start or stop the devnet: anvil with the reference registries and "
                             "a scripted history."),
    "lightclient": ("lightclient_cmd", "The consensus light client behind the light-client "
                                       "anchor (--beacon)."),
    "layout": ("layout_cmd", "Storage-layout descriptors: import from solc output, show, derive "
                             "slots."),
    "proof": ("proof_cmd", "Prove an account and storage slots against a pinned header "
                           "(EIP-1186)."),
    "read": ("read_cmd", "Prove and decode storage variables by path, e.g. "
                         "'checkpoints[0xab..][2]'."),
    "recipes": ("recipes_cmd", "List every recipe (or those whose name contains FILTER) with its "
                               "parameters and its short positional form."),
    "step": ("recipes_cmd", "Run one recipe at one anchored block: prove, decode, re-derive, "
                            "judge."),
    "vectors": ("vectors_cmd", "Capture a step as a self-contained vector; verify vectors "
                               "offline."),
    "watch": ("watch_cmd", "Evaluate checks at every block: follow the head, or audit --from N "
                           "--to M."),
}


class LazyGroup(click.Group):
    """A group whose commands are imported only when asked for by name."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMANDS:
            importlib.import_module(f"recompute.cli.{COMMANDS[name][0]}")
            # a command that imports web3 (py_ecc) gets the recursion limit raised to 100,000,
            # where deep input would overflow the C stack: put it back
            reset_recursion_limit()
        return self.commands.get(name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        """A mistyped command says which it may have meant, from every command (click's own
        suggestions know only those imported)."""
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand:
            raise click.exceptions.NoSuchCommand(
                str(args[0]), possibilities=self.list_commands(ctx), ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in COMMANDS and name not in self.commands:
                text = click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)
            else:  # already imported (or added by a plugin): its own help
                text = self.commands[name].get_short_help_str(limit)
            rows.append((name, text))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="recompute")
def cli() -> None:
    """Re-derive what agent registries claim, from storage proofs rooted in a pinned header."""


def main(argv: list[str] | None = None) -> None:
    try:
        reset_recursion_limit()
        code = cli.main(args=argv, prog_name="recompute", standalone_mode=False)
    except click.exceptions.Exit as done:
        code = done.exit_code
    except click.Abort:
        _say("aborted")
        code = EXIT_USAGE
    except click.UsageError as exc:  # bad options: one line, exit 64 (not click's 2)
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        _say(f"error: {exc.format_message()}{hint}")
        code = EXIT_USAGE
    except click.ClickException as exc:
        _say(f"error: {exc.format_message()}")
        code = EXIT_USAGE
    except UsageError as exc:
        _say(f"error: {cli_message(exc)}")
        code = EXIT_USAGE
    except Unverifiable as exc:
        _say(f"UNVERIFIABLE ({exc.reason}): {cli_detail(exc)}")
        code = EXIT_UNVERIFIABLE
    except RecomputeError as exc:
        _say(f"error: {exc}")
        code = EXIT_USAGE
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:  # noqa: BLE001 -- the catch-all: a bug, never a verdict's code
        message = " ".join(str(exc).split())[:300]
        _say(f"internal error: {type(exc).__name__}: {message} — this is a bug, please "
             "report it")
        code = EXIT_INTERNAL
    sys.exit(code if isinstance(code, int) else 0)


def _say(text: str) -> None:
    """One line on stderr; what it quotes (a node's message, a file's contents) only as text."""
    click.echo(visible(text), err=True)
