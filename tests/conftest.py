"""Shared fixtures: a real anvil on a free loopback port, started and stopped by the tests."""

from __future__ import annotations

import pytest

from recompute.devnet.anvil import Anvil


@pytest.fixture
def anvil():
    """A fresh anvil for one test."""
    node = Anvil().start()
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="module")
def module_anvil():
    """One anvil shared by the tests of a module (cheaper when state can be shared)."""
    node = Anvil().start()
    try:
        yield node
    finally:
        node.stop()
