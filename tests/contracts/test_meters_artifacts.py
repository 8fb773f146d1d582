"""The ERC-8312 meter artifacts: EIP-170 size and the storage slots the cap-conservation recipes
address (ERC-8312 thread: reserved/confirmed at slots 0/1, `struct:2:2:1`, the (agent, principal)
mandate, and spentRoot as the one root-keyed meter)."""

from __future__ import annotations

import pytest

from recompute.devnet.contracts import load_artifact

METERS = ["ReservedConfirmedMeter", "HeadroomMeter", "MandateMeter", "AggregateBudgetMeter",
          "LyingAggregateBudgetMeter"]


def slots(name: str) -> list[tuple[str, str]]:
    return [(v["label"], v["slot"]) for v in load_artifact(name)["storageLayout"]["storage"]]


@pytest.mark.parametrize("name", METERS)
def test_fits_eip170(name):
    code = load_artifact(name)["deployedBytecode"]
    assert 0 < (len(code) - 2) // 2 <= 24576


def test_reserved_confirmed_slots():
    assert slots("ReservedConfirmedMeter")[:3] == [
        ("reserved", "0"), ("confirmed", "1"), ("cap", "2")]


def test_headroom_struct_2_2_1():
    a = load_artifact("HeadroomMeter")
    assert slots("HeadroomMeter")[2] == ("cursorValues", "2")
    (cursor,) = [t for n, t in a["storageLayout"]["types"].items()
                 if n.startswith("t_struct(CursorValues)")]
    by_label = {m["label"]: m["slot"] for m in cursor["members"]}
    assert (by_label["maxCumulativeTurnover"], by_label["cumulativeTurnover"]) == ("1", "2")


def test_mandate_slot():
    assert slots("MandateMeter") == [("mandates", "0")]


def test_aggregate_budget_slots():
    expected = [("spentRoot", "0"), ("cap", "1"), ("periodLength", "2"), ("periodAnchor", "3"),
                ("issuer", "4"), ("nodes", "5"), ("nodeSpent", "6")]
    assert slots("AggregateBudgetMeter") == expected
    assert slots("LyingAggregateBudgetMeter") == [*expected, ("overdrawn", "7")]
