"""Shared fixtures: a real anvil on a free loopback port, started and stopped by the tests."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

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


@pytest.fixture(scope="session")
def devnet():
    """``(node, manifest)``: the whole devnet (every history) built once per test session on
    its own anvil; shared read-only, so tests must not send transactions to it."""
    from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build

    node = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP).start()
    try:
        yield node, build(node)
    finally:
        node.stop()


# Property tests explore new cases on every local run; under CI they replay a fixed sequence
# (derandomized), so a submission's verdict does not depend on the draw.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
