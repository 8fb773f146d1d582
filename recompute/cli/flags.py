"""How the command line words the errors the layers below it raise as data
(:class:`~recompute.core.errors.OptionError`): each option by the flag that gives it."""

from __future__ import annotations

from recompute.core.errors import OptionError, Unverifiable
from recompute.core.outcome import Outcome

# option (as the core names it) -> the flag that gives it (docs/connection.md)
FLAGS = {
    "block": "--block",
    "block_hash": "--block-hash",
    "checkpoint": "--checkpoint",
    "quorum": "--quorum",
    "rpc": "--rpc",
}


def flag(option: str) -> str:
    return FLAGS.get(option, "--" + option.replace("_", "-"))


def cli_message(error: Exception) -> str:
    """``error``'s one line as the command line says it: an OptionError's options as flags."""
    return error.worded(flag) if isinstance(error, OptionError) else str(error)


def cli_detail(error: Unverifiable) -> str:
    """An UNVERIFIABLE's detail as the command line says it: the options it names as flags."""
    return error.worded(flag)


def cli_outcome(error: Unverifiable, evidence: dict[str, object] | None = None) -> Outcome:
    """:meth:`Outcome.unverifiable`, its detail worded by the command line."""
    outcome = Outcome.unverifiable(error, evidence)
    return Outcome(outcome.verdict, outcome.reason, outcome.evidence, cli_detail(error))
