"""ERC-8312 pure derivations without a chain: shapes, slots, cap conservation, aggregate budget.

Expected values are hand computations from the specification's definitions (ERC-8312 thread:
``struct:S:A:C``, reserved + confirmed; §5.1 Σ admitted Drawn) or the layout engine's own slot
derivation for the bundled reference layouts (an independent implementation), never outputs
of the code under test.
"""

from __future__ import annotations

import pytest

from recompute.core.errors import UsageError
from recompute.core.keccak import keccak256
from recompute.devnet.contracts import load_artifact
from recompute.layout import load_layout, resolve
from recompute.recipes.erc8312 import (
    DRAWN,
    Draw,
    Shape,
    aggregate_budget,
    cap_conservation,
    cap_slots,
    parse_shape,
    per_edge_max,
    struct_slots,
)

# The envelope the ERC-8312 thread recomputed (Base Sepolia, `struct:2:2:1`).
SEED_ENVELOPE = bytes.fromhex("48e972a25a6ecc83b0dd9c2943b63155ec899b53e10c1f1eb34ebc1d57bcb041")


@pytest.mark.parametrize("text,shape", [
    ("cap:1000", Shape("cap", cap=1000)),
    ("cap:0x3e8", Shape("cap", cap=1000)),
    ("cap:0", Shape("cap", cap=0)),
    ("struct:2:2:1", Shape("struct", slot=2, aggregate=2, cap_offset=1)),
    ("struct:0:0:1", Shape("struct", slot=0, aggregate=0, cap_offset=1)),
    ("mandate", Shape("mandate")),
    ("headroom", Shape("headroom")),
    ("reserved-confirmed", Shape("reserved-confirmed")),
])
def test_shapes_parse(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize("text", [
    "", "cap", "cap:", "cap:-1", "cap:1e3", f"cap:{1 << 256}", "struct:2:2", "struct:2:2:1:0",
    "struct:a:b:c", "struct:2:-2:1", "Mandate", "cursor",
])
def test_bad_shapes_are_usage_errors(text):
    with pytest.raises(UsageError):
        parse_shape(text)


def _layout_slot(layout: str, path: str) -> int:
    return resolve(load_layout(layout), path).slot


def test_struct_slots_are_where_the_headroom_layout_puts_the_cursor():
    # ERC-8312 thread: "cursorValues at mapping-slot 2, aggregate = cumulativeTurnover (+2),
    # cap = maxCumulativeTurnover (+1)"; the layout engine derives the same two slots.
    aggregate, cap = struct_slots(SEED_ENVELOPE, parse_shape("struct:2:2:1"))
    path = f"cursorValues[0x{SEED_ENVELOPE.hex()}]"
    assert aggregate == _layout_slot("meter-headroom", f"{path}.cumulativeTurnover")
    assert cap == _layout_slot("meter-headroom", f"{path}.maxCumulativeTurnover")
    base = int.from_bytes(keccak256(SEED_ENVELOPE + (2).to_bytes(32, "big")), "big")
    assert (aggregate - base, cap - base) == (2, 1)


def test_cap_slots_are_reserved_and_confirmed_of_the_statefulbound_layout():
    key = keccak256(b"any key")
    reserved, confirmed = cap_slots(key)
    assert reserved == _layout_slot("meter-reserved-confirmed", f"reserved[0x{key.hex()}]")
    assert confirmed == _layout_slot("meter-reserved-confirmed", f"confirmed[0x{key.hex()}]")


def test_struct_offsets_wrap_modulo_2_256():
    key = bytes(32)
    base = int.from_bytes(keccak256(bytes(64)), "big")  # keccak256(key ‖ uint256(0))
    aggregate, cap = struct_slots(key, parse_shape(f"struct:0:{(1 << 256) - 1}:0"))
    assert (aggregate, cap) == (base - 1, base)


@pytest.mark.parametrize("aggregate,cap,headroom,within", [
    (700, 1000, 300, True),     # under the cap
    (1000, 1000, 0, True),      # at the cap: the invariant is <=, not <
    (1001, 1000, -1, False),    # one over: headroom shows the excess
    (0, 8000, 8000, True),      # the thread's headroom vector: 0 <= 8000, remaining 8000
    (0, 0, 0, True),
])
def test_cap_conservation(aggregate, cap, headroom, within):
    assert cap_conservation(aggregate, cap) == {
        "aggregate": aggregate, "cap": cap, "headroom": headroom, "within_cap": within}


R1 = "0x" + "11" * 32
R2 = "0x" + "22" * 32


def _draws():
    return [
        Draw(R1, "a", 3, 30),
        Draw(R1, "b", 3, 50),
        Draw(R1, "a", 3, 20),
        Draw(R1, "c", 3, 100, admitted=False),  # refused: never touches the meter
        Draw(R1, "c", 4, 70),                    # another period
        Draw(R2, "c", 3, 90),                    # another root
    ]


def test_aggregate_budget_sums_the_root_meter_and_keeps_attribution():
    got = aggregate_budget(_draws(), 100, 100, root=R1, period=3)
    assert got == {"aggregate": 100, "spent_root": 100, "cap": 100, "within_cap": True,
                   "sum_matches_storage": True, "draws": 3, "per_node": {"a": 50, "b": 50},
                   "holds": True}


def test_aggregate_budget_over_the_cap_fails():
    got = aggregate_budget(_draws(), 99, 100, root=R1, period=3)
    assert (got["within_cap"], got["sum_matches_storage"], got["holds"]) == (False, True, False)


def test_aggregate_budget_storage_must_match_the_log():
    # under the cap, but the slot says 90 while the admitted draws sum to 100
    got = aggregate_budget(_draws(), 1000, 90, root=R1, period=3)
    assert (got["within_cap"], got["sum_matches_storage"], got["holds"]) == (True, False, False)


def test_aggregate_budget_without_storage_is_the_log_predicate_alone():
    got = aggregate_budget(_draws(), 100, root=R1, period=3)
    assert (got["aggregate"], got["sum_matches_storage"], got["holds"]) == (100, None, True)


def test_aggregate_budget_other_period_and_root_are_other_meters():
    assert aggregate_budget(_draws(), 100, root=R1, period=4)["aggregate"] == 70
    assert aggregate_budget(_draws(), 100, root=R2, period=3)["aggregate"] == 90
    assert aggregate_budget(_draws(), 100, root=R1.upper().replace("0X", "0x"),
                            period=3)["aggregate"] == 100


def test_per_edge_max_is_fooled_by_a_fan_out():
    # two edges of 60 under a root cap of 100: each edge passes, the root is at 120
    draws = [Draw(R1, "a", 0, 60), Draw(R1, "b", 0, 60)]
    assert per_edge_max(draws, 100) is True
    assert aggregate_budget(draws, 100)["within_cap"] is False


def test_drawn_topic_is_the_reference_meters_event():
    # solc's ABI of the reference meter: Drawn(rootId, nodeId, periodIndex indexed; amount data)
    event = next(e for e in load_artifact("AggregateBudgetMeter")["abi"]
                 if e["type"] == "event" and e["name"] == "Drawn")
    signature = f"Drawn({','.join(i['type'] for i in event['inputs'])})"
    assert DRAWN == keccak256(signature.encode())
    assert [(i["name"], i["indexed"]) for i in event["inputs"]] == [
        ("rootId", True), ("nodeId", True), ("periodIndex", True), ("amount", False)]
