"""ERC-8312 turnover-cursor shape (HeadroomMeter): cumulativeTurnover <= maxCumulativeTurnover at
layout `struct:2:2:1` (mapping slot 2, aggregate at base+2, cap at base+1, base =
keccak256(envelopeId ‖ 2)), with the numbers of the thread's live check (10000 / 8000)."""

from __future__ import annotations

from amm_helpers import (
    contract_fixture,
    deployment_fixtures,
    error_data,
    mapping_slot,
    storage_word,
)
from eth_hash.auto import keccak

ENVELOPE = keccak(b"headroom-envelope")


def open_envelope(chain) -> None:
    """Module state: principal accounts[1] opens ENVELOPE (10000 / 8000) for accounts[2]."""
    meter = chain.contracts["HeadroomMeter"]
    principal, operator = chain.accounts[1], chain.accounts[2]
    chain.transact(meter.functions.openEnvelope(ENVELOPE, operator, 10000, 8000), principal)


deployed, chain = deployment_fixtures("HeadroomMeter", setup=open_envelope)
meter = contract_fixture("HeadroomMeter")


def struct_2_2_1(chain, meter):
    """(cap, aggregate) per `struct:2:2:1`."""
    base = mapping_slot(ENVELOPE, 2)
    return tuple(storage_word(chain, meter.address, base + k) for k in (1, 2))


def test_fresh_envelope_matches_thread_numbers(chain, meter):
    # portfolioValue 10000, cumulativeTurnover 0, maxCumulativeTurnover 8000, remaining 8000
    assert meter.functions.cursorSummary(ENVELOPE).call() == [10000, 0, 8000, 8000, True]
    assert struct_2_2_1(chain, meter) == (8000, 0)
    assert storage_word(chain, meter.address, mapping_slot(ENVELOPE, 2)) == 10000


def test_headroom_bound(chain, meter):
    operator = chain.accounts[2]
    chain.transact(meter.functions.recordTurnover(ENVELOPE, 5000), operator)
    chain.transact(meter.functions.recordTurnover(ENVELOPE, 3000), operator)
    assert struct_2_2_1(chain, meter) == (8000, 8000)
    assert chain.revert_data(meter.functions.recordTurnover(ENVELOPE, 1), operator) == \
        error_data("TurnoverCapExceeded(bytes32,uint256,uint256)", ENVELOPE, 8000, 8001)
    assert meter.functions.remaining(ENVELOPE).call() == 0
    assert meter.functions.withinCap(ENVELOPE).call() is True
    assert meter.functions.turnoverCount().call() == 2


def test_only_operator_and_only_while_active(chain, meter):
    principal, operator = chain.accounts[1], chain.accounts[2]
    assert chain.revert_data(meter.functions.recordTurnover(ENVELOPE, 1), principal) == \
        error_data("NotOperator(address)", principal)
    chain.transact(meter.functions.closeEnvelope(ENVELOPE), principal)
    assert chain.revert_data(meter.functions.recordTurnover(ENVELOPE, 1), operator) == \
        error_data("EnvelopeInactive(bytes32)", ENVELOPE)
    assert struct_2_2_1(chain, meter) == (8000, 0)
