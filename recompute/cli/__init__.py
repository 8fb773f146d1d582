"""The ``recompute`` command line (click). Each command lives in its own module.

Exit codes (docs/design.md §Verdicts): 0 VERIFIED-GOOD, 1 VERIFIED-BAD, 2 UNVERIFIABLE, 64 usage,
70 internal error. Every error a user can provoke ends as one line on stderr and the right code,
never a traceback; any other exception is a bug, and is one line and exit 70 too (never 0, 1 or
2, which would read as a verdict).
"""

from __future__ import annotations

import sys

import click

from recompute import __version__
from recompute.core.boundedjson import reset_recursion_limit
from recompute.core.errors import RecomputeError, Unverifiable, UsageError
from recompute.core.verdict import EXIT_INTERNAL, EXIT_UNVERIFIABLE, EXIT_USAGE


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="recompute")
def cli() -> None:
    """Re-derive what agent registries claim, from storage proofs rooted in a pinned header."""


def _register_commands() -> None:
    # One import per command module; each module adds its commands to `cli`.
    from recompute.cli import (  # noqa: F401
        demo_cmd,
        devnet_cmd,
        layout_cmd,
        proof_cmd,
        read_cmd,
        recipes_cmd,
        vectors_cmd,
        watch_cmd,
    )


def main(argv: list[str] | None = None) -> None:
    try:
        _register_commands()
        reset_recursion_limit()  # web3's py_ecc raised it to 100,000: deep input would SIGSEGV
        code = cli.main(args=argv, prog_name="recompute", standalone_mode=False)
    except click.exceptions.Exit as done:
        code = done.exit_code
    except click.Abort:
        click.echo("aborted", err=True)
        code = EXIT_USAGE
    except click.UsageError as exc:  # bad options: one line, exit 64 (not click's 2)
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        click.echo(f"error: {exc.format_message()}{hint}", err=True)
        code = EXIT_USAGE
    except click.ClickException as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        code = EXIT_USAGE
    except UsageError as exc:
        click.echo(f"error: {exc}", err=True)
        code = EXIT_USAGE
    except Unverifiable as exc:
        click.echo(f"UNVERIFIABLE ({exc.reason}): {exc.detail}", err=True)
        code = EXIT_UNVERIFIABLE
    except RecomputeError as exc:
        click.echo(f"error: {exc}", err=True)
        code = EXIT_USAGE
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:  # noqa: BLE001 -- the catch-all: a bug, never a verdict's code
        message = " ".join(str(exc).split())[:300]
        click.echo(f"internal error: {type(exc).__name__}: {message} — this is a bug, please "
                   "report it", err=True)
        code = EXIT_INTERNAL
    sys.exit(code if isinstance(code, int) else 0)
