"""Errors that reach the user as one line and an exit code (docs/design.md §Verdicts)."""

from __future__ import annotations

from collections.abc import Callable


class RecomputeError(Exception):
    """Base of every error recompute raises on purpose."""


class UsageError(RecomputeError):
    """Bad arguments, unknown layout path, malformed file: exit 64."""

    exit_code = 64


class ArgumentError(UsageError, ValueError):
    """A malformed argument of a library call (docs/library.md): the message starts with the
    argument's name. A :class:`UsageError` (exit 64 on the command line) and a ``ValueError``."""


class Unverifiable(RecomputeError):
    """The question cannot be answered from proofs: exit 2 with a reason code.

    ``reason`` is one of :data:`recompute.core.verdict.REASONS`; ``detail`` is the one line a
    user reads.
    """

    exit_code = 2

    def __init__(self, reason: str, detail: str):
        from recompute.core.verdict import REASONS

        if reason not in REASONS:  # a code the README's reason table does not explain: a bug
            raise ValueError(f"unknown reason code {reason!r}")
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def malformed(message: str) -> Unverifiable:
    """The node's (or a vector's) data is not well-formed: ``rpc-malformed``."""
    return Unverifiable("rpc-malformed", message)


def malformed_in(what: str) -> Callable[[str], Unverifiable]:
    """An ``rpc-malformed`` factory whose messages say where (``eth_getProof: …``), for the
    strict parsers of :mod:`recompute.core.hexdata`."""
    return lambda message: malformed(f"{what}: {message}")
