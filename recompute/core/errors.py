"""Errors that reach the user as one line and an exit code (docs/design.md §Verdicts)."""

from __future__ import annotations

from collections.abc import Callable

from recompute.core.outside_text import visible


class RecomputeError(Exception):
    """Base of every error recompute raises on purpose."""

    def __reduce__(self) -> tuple[object, ...]:
        # back whole from a Dask worker: the fields as they are, no __init__ run again (an
        # OptionError's or an Unverifiable's takes its data, not its message)
        return _restore, (type(self), self.args, self.__dict__)


def _restore(cls: type[RecomputeError], args: tuple[object, ...],
             state: dict[str, object]) -> RecomputeError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class UsageError(RecomputeError):
    """Bad arguments, unknown layout path, malformed file: exit 64."""

    exit_code = 64


class OptionError(UsageError):
    """A usage error about values the caller gave, carried as data: ``template`` names each
    option it is about as ``{name}`` (``name`` one of ``options``: ``block``, ``block_hash``,
    ``quorum``, ``checkpoint``, ``rpc``), ``values`` fills its other fields. ``str()`` words
    the options as the library's arguments (:data:`ARGUMENT_WORDS`); the command line words
    them as its flags (``recompute.cli.flags``), so that no layer below it names a flag."""

    def __init__(self, template: str, options: tuple[str, ...], **values: object):
        self.template, self.options, self.values = template, options, values
        super().__init__(self.worded(argument_word))

    def worded(self, spell: Callable[[str], str]) -> str:
        """The message, each option spelled by ``spell(name)``."""
        return word(self.template, self.options, self.values, spell)


def word(template: str, options: tuple[str, ...], values: dict[str, object],
         spell: Callable[[str], str]) -> str:
    """``template`` with each ``{option}`` spelled by ``spell`` and each other field filled
    from ``values``."""
    return template.format_map({**values, **{name: spell(name) for name in options}})


def within(prefix: str, error: UsageError) -> UsageError:
    """``error`` said of ``prefix`` (``prefix: error``), the options it names still data."""
    if isinstance(error, OptionError):
        return OptionError(literal(f"{prefix}: ") + error.template, error.options,
                           **error.values)
    return UsageError(f"{prefix}: {error}")


def literal(text: str) -> str:
    """``text`` as a part of a template: its braces are not fields."""
    return text.replace("{", "{{").replace("}", "}}")


# how the library (recompute.api.anchor_block, recompute.core.clock.Clock) calls an option that
# is not its argument's name
ARGUMENT_WORDS = {"rpc": "source", "at": "Clock.at", "max_anchor_age": "Clock.max_anchor_age",
                  "max_head_age": "Clock.max_head_age",
                  "max_clock_drift": "Clock.max_clock_drift",
                  "strict_timestamps": "Clock.strict_timestamps",
                  "accept_old_checkpoint": "Clock.accept_old_checkpoint"}


def argument_word(name: str) -> str:
    """How the library names option ``name``."""
    return ARGUMENT_WORDS.get(name, name)


class ArgumentError(UsageError, ValueError):
    """A malformed argument of a library call (docs/library.md): the message starts with the
    argument's name. A :class:`UsageError` (exit 64 on the command line) and a ``ValueError``."""


class Unverifiable(RecomputeError):
    """The question cannot be answered from proofs: exit 2 with a reason code.

    ``reason`` is one of :data:`recompute.core.verdict.REASONS`; ``detail`` is the one line a
    user reads. A detail about values the caller gave names them as data, as
    :class:`OptionError` does: ``detail`` is then a template naming each of ``options`` as
    ``{name}`` (``values`` fill its other fields); the ``detail`` attribute words them as the
    library's arguments, :meth:`worded` as the caller spells them (the command line: as flags).
    """

    exit_code = 2

    def __init__(self, reason: str, detail: str, options: tuple[str, ...] = (),
                 **values: object):
        from recompute.core.verdict import REASONS

        if reason not in REASONS:  # a code the README's reason table does not explain: a bug
            raise ValueError(f"unknown reason code {reason!r}")
        self.template, self.options, self.values = detail, options, values
        # the one line a user reads quotes outside text (a node's message): only ever as text
        detail = self.worded(argument_word) if options or values else visible(detail)
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail

    def worded(self, spell: Callable[[str], str]) -> str:
        """The detail, each option spelled by ``spell(name)``."""
        if not (self.options or self.values):
            return visible(self.template)
        return visible(word(self.template, self.options, self.values, spell))


def malformed(message: str) -> Unverifiable:
    """The node's (or a vector's) data is not well-formed: ``rpc-malformed``."""
    return Unverifiable("rpc-malformed", message)


def malformed_in(what: str) -> Callable[[str], Unverifiable]:
    """An ``rpc-malformed`` factory whose messages say where (``eth_getProof: …``), for the
    strict parsers of :mod:`recompute.core.hexdata`."""
    return lambda message: malformed(f"{what}: {message}")
