"""The scripted L1 + L2 anvil pair (tests/l2/op_stack_pair.py), built once per test module."""

from __future__ import annotations

import pytest

from recompute.devnet.anvil import Anvil
from tests.l2.op_stack_pair import build_pair


@pytest.fixture(scope="module")
def pair():
    l1, l2 = Anvil().start(), Anvil().start()
    try:
        yield build_pair(l1, l2)
    finally:
        l1.stop()
        l2.stop()
