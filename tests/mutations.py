"""Single-field mutations of a valid document (JSON or TOML data), for the Hypothesis
properties over every file format: each field, in turn, swapped for a value of another type,
deleted, made huge or nested deep."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

DELETE = "<delete>"


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


# a value of every JSON type, huge ones and deep ones (deeper than the parsers' bound of 64)
JUNK: list[Any] = [None, True, 7, -1, 10**40, 1.5, "", "x" * 100_000, "a\x00b.json", "../x.json",
                   [], ["x"], {}, {"a": 1},
                   list(range(20_000)), _deep(70), _deep(20), DELETE]


def places(node: Any, depth: int = 3, prefix: tuple = ()) -> Iterator[tuple]:
    """Every field's path (keys and list indexes) down to ``depth``, depth first."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        here = (*prefix, key)
        yield here
        if isinstance(value, dict | list) and len(here) < depth:
            yield from places(value, depth, here)


def at(node: Any, place: tuple) -> Any:
    for key in place:
        node = node[key]
    return node


def mutated(original: Any, place: tuple, value: Any) -> Any:
    """A deep copy of ``original`` with the field at ``place`` deleted or set to ``value``."""
    copy = json.loads(json.dumps(original))
    node = at(copy, place[:-1])
    if value == DELETE:
        del node[place[-1]]
    else:
        node[place[-1]] = value
    return copy


def names(place: tuple) -> list[str]:
    """The names a one-line error may give the field by: its keys (not the list indexes)."""
    return [str(key) for key in place if isinstance(key, str)]
