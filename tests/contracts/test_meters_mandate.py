"""ERC-8312 thread / ERC-8226 shape (MandateMeter): a counter keyed (agent, principal) holding
cumulativeUsed and maxCumulativeValue, use bounded by the max, read back from storage."""

from __future__ import annotations

from amm_helpers import contract_fixture, deployment_fixtures, error_data, storage_word
from eth_abi import encode
from eth_hash.auto import keccak


def grant_mandate(chain) -> None:
    """Module state: principal accounts[1] grants agent accounts[2] a mandate of 1000."""
    meter = chain.contracts["MandateMeter"]
    principal, agent = chain.accounts[1], chain.accounts[2]
    chain.transact(meter.functions.grant(agent, 1000), principal)


deployed, chain = deployment_fixtures("MandateMeter", setup=grant_mandate)
meter = contract_fixture("MandateMeter")


def mandate_words(chain, meter, agent, principal):
    """(cumulativeUsed, maxCumulativeValue) at keccak(principal ‖ keccak(agent ‖ 0)) + 0 / + 1."""
    inner = keccak(encode(["address", "uint256"], [agent, 0]))
    base = int.from_bytes(keccak(encode(["address", "bytes32"], [principal, inner])), "big")
    return storage_word(chain, meter.address, base), storage_word(chain, meter.address, base + 1)


def test_use_bounded_by_max(chain, meter):
    principal, agent = chain.accounts[1], chain.accounts[2]
    chain.transact(meter.functions.recordExecution(principal, 600), agent)
    assert meter.functions.canExecute(agent, principal, 400).call() is True
    assert meter.functions.canExecute(agent, principal, 401).call() is False
    chain.transact(meter.functions.recordExecution(principal, 400), agent)
    assert chain.revert_data(meter.functions.recordExecution(principal, 1), agent) == \
        error_data("MandateCapExceeded(address,address,uint256,uint256)", agent, principal,
                   1000, 1001)
    assert mandate_words(chain, meter, agent, principal) == (1000, 1000)
    assert meter.functions.remaining(agent, principal).call() == 0
    assert meter.functions.withinCap(agent, principal).call() is True


def test_mandates_are_keyed_by_agent_and_principal(chain, meter):
    principal, agent, principal2 = chain.accounts[1], chain.accounts[2], chain.accounts[3]
    chain.transact(meter.functions.grant(agent, 50), principal2)
    chain.transact(meter.functions.recordExecution(principal, 700), agent)
    chain.transact(meter.functions.recordExecution(principal2, 50), agent)
    assert mandate_words(chain, meter, agent, principal) == (700, 1000)
    assert mandate_words(chain, meter, agent, principal2) == (50, 50)
    assert chain.revert_data(meter.functions.recordExecution(principal2, 1), agent) == \
        error_data("MandateCapExceeded(address,address,uint256,uint256)", agent, principal2,
                   50, 51)


def test_revoked_mandate_stops_and_cannot_be_regranted(chain, meter):
    principal, agent = chain.accounts[1], chain.accounts[2]
    chain.transact(meter.functions.recordExecution(principal, 10), agent)
    chain.transact(meter.functions.revoke(agent), principal)
    assert chain.revert_data(meter.functions.recordExecution(principal, 1), agent) == \
        error_data("MandateInactive(address,address)", agent, principal)
    # a re-grant would reset the counter; it is refused
    assert chain.revert_data(meter.functions.grant(agent, 10**6), principal) == \
        error_data("MandateExists(address,address)", agent, principal)
    assert mandate_words(chain, meter, agent, principal) == (10, 1000)
