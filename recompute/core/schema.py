"""The shapes of outside files, checked field by field before any field is used.

A file format declares its shape once, from the pieces here (:class:`Text`, :class:`Integer`,
:class:`Record`, :class:`ListOf`, :class:`MapOf`, :class:`OneOf`, :data:`ANY`), and
:func:`check` walks a parsed document against it: the first field of the wrong type is one
:class:`~recompute.core.errors.UsageError` line naming the file and the field, e.g.::

    vector x.json: field "name": expected a string, got a list

Only types and forms are checked here; what the values mean is the reader's business.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from recompute.core.errors import UsageError

MAX_TEXT = 1 << 24  # one string field: a 16 MB header or proof node is far beyond any chain


def kind_of(value: Any) -> str:
    """What a JSON/TOML value is, as the error line says it ("a list", "an integer", …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class Shape:
    """One field's expected form: :meth:`problem` is None when ``value`` has it, else what
    was expected (and :meth:`inner` walks into containers)."""

    def problem(self, value: Any) -> str | None:  # pragma: no cover - overridden
        raise NotImplementedError

    def inner(self, value: Any) -> list[tuple[str, Any, Shape]]:
        return []


class _Any(Shape):
    def problem(self, value: Any) -> str | None:
        return None


ANY = _Any()


@dataclass(frozen=True)
class Text(Shape):
    """A string, optionally matching ``pattern`` whole; ``hint`` says the form in words."""

    pattern: str | None = None
    hint: str = "a string"
    choices: tuple[str, ...] = ()
    max_length: int = MAX_TEXT

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, str):
            return self.hint
        if len(value) > self.max_length:
            return f"{self.hint} of at most {self.max_length:,} characters"
        if self.choices and value not in self.choices:
            return "one of " + ", ".join(map(repr, self.choices))
        if self.pattern is not None and not re.fullmatch(self.pattern, value):
            return self.hint
        return None


@dataclass(frozen=True)
class Integer(Shape):
    """An integer (never a boolean) in ``[low, high)``."""

    low: int = 0
    high: int = 1 << 64

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int) \
                or not self.low <= value < self.high:
            bits = self.high.bit_length() - 1
            top = f"2**{bits} - 1" if self.high == 1 << bits and bits > 32 else self.high - 1
            return f"an integer from {self.low} to {top}"
        return None


@dataclass(frozen=True)
class Boolean(Shape):
    def problem(self, value: Any) -> str | None:
        return None if isinstance(value, bool) else "a boolean"


@dataclass(frozen=True)
class ListOf(Shape):
    item: Shape = ANY
    max_items: int = 1 << 20

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, list):
            return "a list"
        if len(value) > self.max_items:
            return f"a list of at most {self.max_items:,} items" if self.max_items \
                else "an empty list"
        return None

    def inner(self, value: Any) -> list[tuple[str, Any, Shape]]:
        return [(f"[{i}]", item, self.item) for i, item in enumerate(value)]


@dataclass(frozen=True)
class MapOf(Shape):
    """An object whose keys (each matching ``key`` if given) all hold ``item``."""

    item: Shape = ANY
    key: Text | None = None

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, dict):
            return "an object"
        if self.key is not None:
            for name in value:
                if self.key.problem(name) is not None:
                    return f"an object whose keys are {self.key.hint} (not {name[:80]!r})"
        return None

    def inner(self, value: Any) -> list[tuple[str, Any, Shape]]:
        return [(f".{k}", item, self.item) for k, item in value.items()]


@dataclass(frozen=True)
class Record(Shape):
    """An object with named fields: ``required`` ones must be there, ``optional`` ones may;
    any other key is refused unless ``open``."""

    required: Mapping[str, Shape] = field(default_factory=dict)
    optional: Mapping[str, Shape] = field(default_factory=dict)
    open: bool = False

    def problem(self, value: Any) -> str | None:
        return None if isinstance(value, dict) else "an object"

    def inner(self, value: Any) -> list[tuple[str, Any, Shape]]:
        out: list[tuple[str, Any, Shape]] = []
        for key, shape in self.required.items():
            out.append((f".{key}", value.get(key, _MISSING), shape))
        for key, shape in self.optional.items():
            if key in value:
                out.append((f".{key}", value[key], shape))
        if not self.open:
            for key in value:
                if key not in self.required and key not in self.optional:
                    out.append((f".{key}", value[key], _UNKNOWN))
        return out


@dataclass(frozen=True)
class OneOf(Shape):
    shapes: tuple[Shape, ...]
    hint: str

    def problem(self, value: Any) -> str | None:
        return None if any(s.problem(value) is None for s in self.shapes) else self.hint

    def inner(self, value: Any) -> list[tuple[str, Any, Shape]]:
        for shape in self.shapes:
            if shape.problem(value) is None:
                return shape.inner(value)
        return []


class _Missing:
    pass


_MISSING = _Missing()


class _Unknown(Shape):
    def problem(self, value: Any) -> str | None:
        return "no such field"


_UNKNOWN = _Unknown()


def check(document: Any, shape: Shape, what: str,
          error: Callable[[str], Exception] = UsageError) -> None:
    """Walk ``document`` against ``shape``; the first field out of shape raises ``error`` with
    ``what: field "a.b[2]": expected …, got …`` (iteratively: no recursion on outside depth)."""
    stack: list[tuple[str, Any, Shape]] = [("", document, shape)]
    while stack:
        where, value, expected = stack.pop()
        name = where.lstrip(".") or "(the whole file)"
        if value is _MISSING:
            raise error(f'{what}: field "{name}" is missing')
        if expected is _UNKNOWN:
            raise error(f'{what}: field "{name}": unknown field')
        wrong = expected.problem(value)
        if wrong is not None:
            raise error(f'{what}: field "{name}": expected {wrong}, got {_got(value)}')
        stack += [(where + step, inner, shape)
                  for step, inner, shape in reversed(expected.inner(value))]


def _got(value: Any) -> str:
    if isinstance(value, str):
        return f"{value[:40]!r}" + ("…" if len(value) > 40 else "")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 1 << 64:
        return f"an integer of {value.bit_length()} bits"  # str() of a huge one may raise
    if isinstance(value, bool | int | float) or value is None:
        return repr(value) if value is not None else "null"
    return kind_of(value)
