"""How a decoded value is copied for each check that is handed it.

Checks of one block that read the same path share one proof, and later blocks share it while
the contract's storageRoot is the same (:class:`recompute.evaluator.carry.Carry`); each check
is still handed a copy of the value's containers of its own, so that a plan that alters what
it was handed reaches neither a sibling check nor a later block (tests/recipes/
test_sibling_isolation.py). The kept value is never handed out nor altered, so its shape is
fixed: :func:`copier` reads that shape once and returns a function that copies exactly its
containers (``dict.copy`` for a struct of plain values, one C call), instead of walking the
value and testing every leaf at every hand-out.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

Copier = Callable[[Any], Any]
LEAVES = frozenset({int, bool, bytes, str, type(None)})  # immutable: shared, never copied


def copier(value: Any) -> Copier | None:
    """A function returning a copy of ``value``'s containers (equal to it, sharing no
    container with it), for values of ``value``'s very shape; None if nothing in it can be
    altered (a leaf, or a tuple of leaves). A mapping proxy (a hand-out's read-only values,
    recompute.evaluator.carry.HandOut) is copied as a dict."""
    kind = value.__class__
    if kind in LEAVES:
        return None
    if kind is dict or kind is MappingProxyType:  # a proxy: read-only kept values, as a dict
        return _dict_copier(value)
    if kind is list or kind is tuple:
        inner = [copier(v) for v in value]
        if not any(inner):
            return list.copy if kind is list else None
        return _sequence_copier(kind, inner)
    return copy.deepcopy  # anything else (a user decoder's object): the general copy


def _dict_copier(value: Mapping[Any, Any]) -> Copier:
    inner = [(k, c) for k, v in value.items() if (c := copier(v)) is not None]
    if not inner:
        return dict.copy if value.__class__ is dict else _mapping_copy

    def copy_dict(v: dict[Any, Any] | MappingProxyType[Any, Any]) -> dict[Any, Any]:
        out = v.copy()
        for k, c in inner:
            out[k] = c(v[k])
        return out

    return copy_dict


def _mapping_copy(value: MappingProxyType[Any, Any]) -> dict[Any, Any]:
    return value.copy()  # a dict of its own (the proxy's dict copied)


def _sequence_copier(kind: type, inner: list[Copier | None]) -> Copier:
    if kind is list:
        def copy_list(v: list[Any]) -> list[Any]:
            return [x if c is None else c(x) for c, x in zip(inner, v, strict=True)]

        return copy_list

    def copy_tuple(v: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple([x if c is None else c(x) for c, x in zip(inner, v, strict=True)])

    return copy_tuple


def frozen(value: Any) -> Any:
    """``value`` with every container made read-only, or None if it holds anything else (a
    user decoder's object): dicts as ``types.MappingProxyType`` of a dict of their own (equal
    to them, read the same way, with no method that alters them), lists and tuples as tuples.
    What a kept plan hands a derivation at every block (recompute.evaluator.kept_plans)."""
    kind = value.__class__
    if kind in LEAVES:
        return value
    if kind is dict:
        inner = {}
        for k, v in value.items():
            inner[k] = v = frozen(v)
            if v is None and value[k] is not None:
                return None
        return MappingProxyType(inner)
    if kind is list or kind is tuple:
        out = tuple([frozen(v) for v in value])
        if any(f is None and v is not None for f, v in zip(out, value, strict=True)):
            return None
        return out
    return None
