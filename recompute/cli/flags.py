"""How the command line words the errors the layers below it raise as data
(:class:`~recompute.core.errors.OptionError`): each option by the flag that gives it."""

from __future__ import annotations

from recompute.core.errors import OptionError

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
