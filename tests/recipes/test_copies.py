"""recompute.evaluator.copies.copier: a copy made for a value's shape equals the value and shares
none of its containers, so altering the copy (anywhere inside) leaves the value as it was.
Expected values: the value itself, and copy.deepcopy of it taken before."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompute.evaluator.copies import copier

leaves = st.one_of(st.integers(), st.booleans(), st.binary(max_size=4), st.text(max_size=4),
                   st.none())
values = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=4),
    st.lists(inner, max_size=3).map(tuple)), max_leaves=20)


def _containers(value) -> list[int]:
    """ids of every alterable container in ``value``."""
    out = []
    if isinstance(value, dict):
        out.append(id(value))
        for v in value.values():
            out += _containers(v)
    elif isinstance(value, list):
        out.append(id(value))
        for v in value:
            out += _containers(v)
    elif isinstance(value, tuple):
        for v in value:
            out += _containers(v)
    return out


@given(values)
def test_a_copy_equals_the_value_and_shares_no_container(value):
    before = copy.deepcopy(value)
    make = copier(value)
    made = value if make is None else make(value)
    assert made == before
    assert not set(_containers(made)) & set(_containers(value))
    if make is not None:  # the same copier serves every value of that shape
        again = make(value)
        assert again == before and again is not made


def test_altering_a_nested_copy_leaves_the_value():
    value = {"requiredLayers": 1, "maxInterval": [86400, 0, 0, 0],
             "history": ({"at": 1, "tags": ["a"]},)}
    before = copy.deepcopy(value)
    made = copier(value)(value)
    made["maxInterval"][0] = 1
    made["history"][0]["tags"].append("b")
    made["history"][0]["at"] = 2
    made["requiredLayers"] = 0
    assert value == before


class Decoded:
    """A user decoder's own object: copied by the general copy."""

    def __init__(self):
        self.items = [1, 2]


@pytest.mark.parametrize("value", [Decoded(), {"x": Decoded()}, [Decoded()]])
def test_other_objects_are_copied_whole(value):
    made = copier(value)(value)
    inner = made if isinstance(made, Decoded) else (made["x"] if isinstance(made, dict)
                                                    else made[0])
    inner.items.append(3)
    original = value if isinstance(value, Decoded) else (value["x"] if isinstance(value, dict)
                                                         else value[0])
    assert original.items == [1, 2]


def test_nothing_to_copy_in_leaves_and_tuples_of_leaves():
    assert copier(5) is None and copier(b"\x01") is None and copier((1, "a")) is None
