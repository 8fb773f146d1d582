"""Decoding value types and bytes/string, and the round planner, on hand-made words."""

from __future__ import annotations

import pytest
from eth_hash.auto import keccak
from hypothesis import given, settings
from hypothesis import strategies as st

from recompute.core.errors import UsageError
from recompute.layout import IndexOutOfBounds, ReadPlan, StorageMismatch
from recompute.layout.decode import decode_value, encode_value, extract, insert
from recompute.layout.types import ValueKind, ValueType

from .conftest import solc_slot

WORD = 1 << 256


def vt(kind: str, size: int) -> ValueType:
    return ValueType(f"t_{kind}{size}", f"{kind}{size * 8}", size, ValueKind(kind))


@st.composite
def placed_values(draw):
    kind = draw(st.sampled_from(["uint", "int", "fixedbytes", "bool", "address"]))
    size = {"bool": 1, "address": 20}.get(kind) or draw(st.integers(1, 32))
    t = vt(kind, size)
    if kind == "uint":
        value = draw(st.integers(0, (1 << (8 * size)) - 1))
    elif kind == "int":
        half = 1 << (8 * size - 1)
        value = draw(st.integers(-half, half - 1))
    elif kind == "fixedbytes":
        value = draw(st.binary(min_size=size, max_size=size))
    elif kind == "bool":
        value = draw(st.booleans())
    else:
        value = "0x" + draw(st.binary(min_size=20, max_size=20)).hex()
    offset = draw(st.integers(0, 32 - size))
    return t, value, offset, draw(st.integers(0, WORD - 1))


@settings(max_examples=500, deadline=None)
@given(placed_values())
def test_decode_encode_round_trip_in_a_packed_slot(case):
    t, value, offset, neighbours = case
    word = insert(neighbours, offset, t.size, encode_value(t, value))
    assert decode_value(t, extract(word, offset, t.size)) == value
    # the neighbours' bytes are untouched
    mask = ((1 << (8 * t.size)) - 1) << (8 * offset)
    assert word & ~mask == neighbours & ~mask


def test_hand_words():
    # int8 -5 at byte offset 24: 0xfb in byte 24 from the right
    assert decode_value(vt("int", 1), extract(0xFB << 192, 24, 1)) == -5
    # int128 minimum in the high half
    assert decode_value(vt("int", 16), extract(1 << 255, 16, 16)) == -(2**127)
    # bytes4 at offset 27: bytes come out in big-endian order
    assert decode_value(vt("fixedbytes", 4), extract(0xDEADBEEF << 216, 27, 4)) == bytes.fromhex(
        "deadbeef")
    assert decode_value(vt("address", 20), 0xA11CE) == "0x" + "0" * 35 + "a11ce"


@pytest.mark.parametrize("kind,size,value", [("uint", 1, 256), ("uint", 1, -1), ("int", 1, 128),
                                             ("bool", 1, 1), ("fixedbytes", 2, b"a")])
def test_encode_refuses_out_of_range(kind, size, value):
    with pytest.raises(UsageError):
        encode_value(vt(kind, size), value)


class Store:
    """Hand-made storage: the test states every word; records each round's question."""

    def __init__(self, words: dict[int, int]):
        self.words = words
        self.asked: list[set[int]] = []

    def run(self, plan: ReadPlan):
        while slots := plan.next_round():
            self.asked.append(slots)
            plan.feed({s: self.words.get(s, 0) for s in slots})
        return plan.results()


def data_of(slot: int) -> int:
    return int.from_bytes(keccak(slot.to_bytes(32, "big")), "big")


def test_whole_dynamic_array_takes_two_rounds(zoo_layout):
    n = solc_slot("nums")
    store = Store({n: 2, data_of(n): 5, data_of(n) + 1: 6})
    (res,) = store.run(ReadPlan(zoo_layout, ["nums"]))
    assert res.value == [5, 6]
    assert store.asked == [{n}, {data_of(n), data_of(n) + 1}]
    assert res.slots == [n, data_of(n), data_of(n) + 1]
    assert res.slot_paths[n] == "nums.length"


def test_long_string_reads_length_then_ceil_len_over_32_slots(zoo_layout):
    s = solc_slot("longStr")
    text = b"x" * 65
    words = {data_of(s) + i: int.from_bytes(text[32 * i:32 * i + 32].ljust(32, b"\0"), "big")
             for i in range(3)}
    store = Store({s: 2 * 65 + 1, **words})
    (res,) = store.run(ReadPlan(zoo_layout, ["longStr"]))
    assert res.value == "x" * 65
    assert store.asked == [{s}, {data_of(s), data_of(s) + 1, data_of(s) + 2}]


def test_short_string_of_31_bytes_is_one_round(zoo_layout):
    s = solc_slot("str31")
    store = Store({s: int.from_bytes(b"y" * 31 + bytes([62]), "big")})
    (res, length) = store.run(ReadPlan(zoo_layout, ["str31", "str31.length"]))
    assert (res.value, length.value) == ("y" * 31, 31)
    assert store.asked == [{s}]


def test_index_checks_come_before_dependent_rounds(zoo_layout):
    n = solc_slot("names")
    # names has proven length 1; names[4]'s slot holds a "long string" word: never followed
    store = Store({n: 1, data_of(n) + 4: 2 * 10**6 + 1})
    plan = ReadPlan(zoo_layout, ["names[4]"])
    with pytest.raises(IndexOutOfBounds) as err:
        store.run(plan)
    assert (err.value.index, err.value.length) == (4, 1)
    assert "proven length of names is 1" in str(err.value)
    assert store.asked == [{n, data_of(n) + 4}]


def test_paths_share_rounds_and_slots(zoo_layout):
    base = solc_slot("baseSmall")
    store = Store({base: 0xAB})
    results = store.run(ReadPlan(zoo_layout, ["baseSmall", "baseFlag", "neg8", "baseMid"]))
    assert store.asked == [{base}]
    assert [r.value for r in results] == [0xAB, False, 0, 0]


def test_huge_lengths_are_refused_not_followed(zoo_layout):
    n = solc_slot("nums")
    with pytest.raises(UsageError, match=r"nums spans .* slots, more than the 65536"):
        Store({n: 2**200}).run(ReadPlan(zoo_layout, ["nums"]))
    s = solc_slot("longStr")
    with pytest.raises(UsageError, match=r"more than the 65536 one path may read"):
        Store({s: 2 * 2**40 + 1}).run(ReadPlan(zoo_layout, ["longStr"]))


@pytest.mark.parametrize("word,message", [
    (80, r"claims a short value of 40 > 31 bytes"),
    (2 * 5 + 1, r"long-form length of 5 < 32 bytes"),
])
def test_words_solc_never_writes_are_a_mismatch(zoo_layout, word, message):
    with pytest.raises(StorageMismatch, match=message):
        Store({solc_slot("shortStr"): word}).run(ReadPlan(zoo_layout, ["shortStr"]))


def test_protocol_misuse(zoo_layout):
    plan = ReadPlan(zoo_layout, ["neg8"])
    first = plan.next_round()
    assert plan.next_round() == first  # not fed yet: same question
    with pytest.raises(RuntimeError):
        plan.results()
    with pytest.raises(ValueError):
        plan.feed({0: WORD})
    with pytest.raises(ValueError):
        plan.feed({0: -1})
    plan.feed({0: 0xFB << 192})
    with pytest.raises(ValueError, match="fed twice"):
        plan.feed({0: 1})
    assert plan.next_round() == set()
    assert plan.results()[0].value == -5
