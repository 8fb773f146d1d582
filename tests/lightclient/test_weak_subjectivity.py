"""The weak-subjectivity period per network: electra's compute_weak_subjectivity_period,
checked against hand computations from the consensus specs' constants."""

from __future__ import annotations

from recompute.lightclient.networks import DEVNET, MAINNET
from recompute.lightclient.weak_subjectivity import (
    MIN_VALIDATOR_WITHDRAWABILITY_DELAY,
    balance_churn_limit,
    network_period_epochs,
    network_period_seconds,
    period_epochs,
)

GWEI = 10**9
ELECTRA_SLOT = 364032 * 32  # mainnet electra's first slot (configs/mainnet.yaml)
CAPELLA_SLOT = 194048 * 32


def test_the_churn_limit_by_hand():
    # 34e6 ETH / 2**16 = 518.798828125 ETH, rounded down to whole ETH
    assert balance_churn_limit(34_000_000 * GWEI) == 518 * GWEI
    # 1e6 ETH / 2**16 = 15.26 ETH, below the electra minimum of 128 ETH
    assert balance_churn_limit(1_000_000 * GWEI) == 128 * GWEI


def test_the_period_by_hand():
    # 256 + 10 * 34e6 // (2 * 518 * 100) = 256 + 3281 (3281.85 rounded down)
    assert period_epochs(34_000_000 * GWEI) == 3537
    # 256 + 10 * 1e6 // (2 * 128 * 100) = 256 + 390 (390.625 rounded down)
    assert period_epochs(1_000_000 * GWEI) == 646
    assert period_epochs(None) == MIN_VALIDATOR_WITHDRAWABILITY_DELAY == 256


def test_mainnet_since_electra_is_about_two_weeks_and_accepts_a_31_hour_old_root():
    seconds = network_period_seconds(MAINNET, ELECTRA_SLOT)
    assert seconds == 3537 * 32 * 12  # 15.7 days
    assert 14 * 86400 < seconds < 16 * 86400
    assert 31 * 3600 < seconds  # the 31-hour-old electra-era root helios accepts


def test_before_electra_and_unknown_networks_keep_the_floor():
    assert network_period_epochs(MAINNET, CAPELLA_SLOT) == 256  # 27.3 hours
    assert network_period_seconds(MAINNET, CAPELLA_SLOT) == 256 * 32 * 12
    assert network_period_epochs(DEVNET, 100) == 256  # no documented stake
