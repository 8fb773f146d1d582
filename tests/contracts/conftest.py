"""The contract tests script absolute block times from 2026-01-01T00:00:00Z (creation before
period 0, deadlines, phase timers: amm_helpers.py, swarm_helpers.py), so their anvils start at
that fixed genesis rather than on anvil's own clock (the default of the shared fixtures)."""

from __future__ import annotations

import pytest

from recompute.devnet.anvil import DEFAULT_GENESIS_TIMESTAMP
from tests.conftest import running_anvil


@pytest.fixture
def anvil():
    """A fresh anvil for one test, at the fixed genesis."""
    yield from running_anvil(DEFAULT_GENESIS_TIMESTAMP)


@pytest.fixture(scope="module")
def module_anvil():
    """One anvil shared by the tests of a module, at the fixed genesis."""
    yield from running_anvil(DEFAULT_GENESIS_TIMESTAMP)
