"""The light client's only link to recompute's error types (one import to move at merge).

Every failure the light client reports is one of three, each a single line a user reads:
``malformed`` (the beacon node's answer is not well-formed: ``rpc-malformed``), ``invalid``
(a signature, participation, Merkle branch or fork check fails: ``invalid-consensus-proof``)
and ``usage`` (a bad argument or network file: exit 64).
"""

from __future__ import annotations

from recompute.core.errors import OptionError, Unverifiable, UsageError
from recompute.core.outside_text import visible

__all__ = ["OptionError", "Unverifiable", "UsageError", "invalid", "malformed", "one_line"]

MALFORMED = "rpc-malformed"
INVALID = "invalid-consensus-proof"


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters, every character that is not text
    escaped (:func:`recompute.core.outside_text.visible`): details quote outside data."""
    return visible(" ".join(str(text).split()), limit)


def malformed(detail: str) -> Unverifiable:
    return Unverifiable(MALFORMED, one_line(detail))


def invalid(detail: str) -> Unverifiable:
    return Unverifiable(INVALID, one_line(detail))
