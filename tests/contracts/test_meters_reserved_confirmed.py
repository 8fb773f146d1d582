"""ERC-8312 StatefulBound shape (ReservedConfirmedMeter): reserved + confirmed <= cap, reserved at
slot 0 and confirmed at slot 1 (read back from the hand-computed storage slots), and reservation
binding (only the reserver confirms or cancels)."""

from __future__ import annotations

from amm_helpers import (
    contract_fixture,
    deployment_fixtures,
    error_data,
    mapping_slot,
    storage_word,
)
from eth_hash.auto import keccak

KEY = keccak(b"envelope-1")
CAP = 100


def open_key(chain) -> None:
    """Module state: principal accounts[1] opens KEY with CAP; accounts[2] and [3] may reserve."""
    meter = chain.contracts["ReservedConfirmedMeter"]
    principal, agent, other = chain.accounts[1], chain.accounts[2], chain.accounts[3]
    chain.transact(meter.functions.openKey(KEY, CAP), principal)
    chain.transact(meter.functions.setReserver(KEY, agent, True), principal)
    chain.transact(meter.functions.setReserver(KEY, other, True), principal)


deployed, chain = deployment_fixtures("ReservedConfirmedMeter", setup=open_key)
meter = contract_fixture("ReservedConfirmedMeter")


def reserve(chain, meter, who, amount) -> bytes:
    receipt = chain.transact(meter.functions.reserve(KEY, amount), who)
    (ev,) = meter.events.Reserved().process_receipt(receipt)
    return ev["args"]["reservationId"]


def slots(chain, meter):
    """(reserved, confirmed, cap) read from slots keccak(key‖0), keccak(key‖1), keccak(key‖2)."""
    return tuple(storage_word(chain, meter.address, mapping_slot(KEY, s)) for s in range(3))


def test_cap_enforced_on_reserved_plus_confirmed(chain, meter):
    agent = chain.accounts[2]
    first = reserve(chain, meter, agent, 60)
    assert chain.revert_data(meter.functions.reserve(KEY, 50), agent) == \
        error_data("CapExceeded(bytes32,uint256,uint256)", KEY, CAP, 110)
    chain.transact(meter.functions.confirm(first), agent)
    assert slots(chain, meter) == (0, 60, CAP)
    reserve(chain, meter, agent, 40)  # aggregate exactly at the cap
    assert slots(chain, meter) == (40, 60, CAP)
    assert chain.revert_data(meter.functions.reserve(KEY, 1), agent) == \
        error_data("CapExceeded(bytes32,uint256,uint256)", KEY, CAP, 101)
    assert meter.functions.remaining(KEY).call() == 0
    assert meter.functions.withinCap(KEY).call() is True


def test_cancel_releases_headroom(chain, meter):
    agent = chain.accounts[2]
    rid = reserve(chain, meter, agent, 70)
    assert meter.functions.remaining(KEY).call() == 30
    chain.transact(meter.functions.cancel(rid), agent)
    assert slots(chain, meter) == (0, 0, CAP)
    reserve(chain, meter, agent, 100)
    assert meter.functions.remaining(KEY).call() == 0


def test_only_the_reserver_confirms_or_cancels(chain, meter):
    principal, agent, other = chain.accounts[1], chain.accounts[2], chain.accounts[3]
    rid = reserve(chain, meter, agent, 30)
    for who in (other, principal):
        for fn in (meter.functions.confirm(rid), meter.functions.cancel(rid)):
            assert chain.revert_data(fn, who) == error_data("NotReserver(address)", who)
    assert slots(chain, meter) == (30, 0, CAP)
    chain.transact(meter.functions.confirm(rid), agent)
    assert chain.revert_data(meter.functions.cancel(rid), agent) == \
        error_data("ReservationNotOpen(bytes32)", rid)
    assert slots(chain, meter) == (0, 30, CAP)


def test_unauthorised_reserver_and_write_once_cap(chain, meter):
    stranger = chain.accounts[4]
    assert chain.revert_data(meter.functions.reserve(KEY, 1), stranger) == \
        error_data("NotAllowedReserver(address)", stranger)
    assert chain.revert_data(meter.functions.openKey(KEY, 10**9), stranger) == \
        error_data("KeyExists(bytes32)", KEY)

