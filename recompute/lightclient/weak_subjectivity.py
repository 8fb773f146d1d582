"""How old a trusted root may be: the weak-subjectivity period of a network, by the consensus
specs' formula (docs/lightclient.md §Clock).

consensus-specs electra weak-subjectivity guide, ``compute_weak_subjectivity_period``::

    t = get_total_active_balance(state)
    delta = get_balance_churn_limit(state)
    epochs_for_validator_set_churn = SAFETY_DECAY * t // (2 * delta * 100)
    return MIN_VALIDATOR_WITHDRAWABILITY_DELAY + epochs_for_validator_set_churn

with electra beacon-chain ``get_balance_churn_limit``: ``max(MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA,
t // CHURN_LIMIT_QUOTIENT)`` rounded down to ``EFFECTIVE_BALANCE_INCREMENT``. A light client
does not hold the beacon state, so ``t`` is a documented recent value per network
(:data:`TOTAL_ACTIVE_BALANCE`); a network without one, or a root before electra (whose formula
differs), gets the floor, ``MIN_VALIDATOR_WITHDRAWABILITY_DELAY`` epochs: never longer than the
true period, so conservative. Pure functions, nothing kept.
"""

from __future__ import annotations

from recompute.lightclient.networks import Network

GWEI_PER_ETH = 10**9
# consensus-specs phase0 §Configuration (time parameters)
MIN_VALIDATOR_WITHDRAWABILITY_DELAY = 256
# consensus-specs phase0 weak-subjectivity guide §Constants
SAFETY_DECAY = 10
# consensus-specs phase0 §Configuration (validator cycle), §Gwei values
CHURN_LIMIT_QUOTIENT = 2**16
EFFECTIVE_BALANCE_INCREMENT = GWEI_PER_ETH
# consensus-specs electra §Configuration (validator cycle): 2**7 ETH
MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA = 128 * GWEI_PER_ETH

# The total active balance (Gwei) a network's period is computed from: a documented recent
# value, rounded down (a smaller stake gives a shorter period). mainnet: 34 million ETH, the
# stake public dashboards reported through 2025 (about a million active validators) rounded
# down; any value above 8.4 million ETH (128 ETH x 2**16) gives the same period within an
# epoch, since the churn then grows with the stake, so the figure need not be exact.
TOTAL_ACTIVE_BALANCE = {"mainnet": 34_000_000 * GWEI_PER_ETH}


def balance_churn_limit(total_active_balance: int) -> int:
    """Electra's ``get_balance_churn_limit`` for a total active balance (Gwei)."""
    churn = max(MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA, total_active_balance // CHURN_LIMIT_QUOTIENT)
    return churn - churn % EFFECTIVE_BALANCE_INCREMENT


def period_epochs(total_active_balance: int | None) -> int:
    """Electra's ``compute_weak_subjectivity_period`` for a total active balance (Gwei); the
    floor when it is not known."""
    if total_active_balance is None:
        return MIN_VALIDATOR_WITHDRAWABILITY_DELAY
    delta = balance_churn_limit(total_active_balance)
    return MIN_VALIDATOR_WITHDRAWABILITY_DELAY + SAFETY_DECAY * total_active_balance // (
        2 * delta * 100)


def network_period_epochs(network: Network, slot: int) -> int:
    """The period for a trusted root at ``slot`` of ``network``: the formula with the
    network's documented balance from electra on, else the floor."""
    if not network.is_active("electra", slot):
        return MIN_VALIDATOR_WITHDRAWABILITY_DELAY
    return period_epochs(TOTAL_ACTIVE_BALANCE.get(network.name))


def network_period_seconds(network: Network, slot: int) -> int:
    return network_period_epochs(network, slot) * network.slots_per_epoch * network.seconds_per_slot
