"""The whole devnet, built once per test session on its own anvil (shared read-only)."""

from __future__ import annotations

import pytest

from recompute.devnet.anvil import Anvil
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build


@pytest.fixture(scope="session")
def devnet():
    """``(node, manifest)``: every history run; tests must not send transactions to it."""
    node = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP).start()
    try:
        yield node, build(node)
    finally:
        node.stop()
