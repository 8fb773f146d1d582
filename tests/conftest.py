"""Shared fixtures: a real anvil on a free loopback port, started and stopped by the tests;
``run_cli`` for the command line as a user runs it; the ``anvil`` marker.

Every test that needs a chain is marked ``anvil`` here, without the test having to say so: by its
fixtures (any fixture that starts one) or because its module starts anvil itself (a devnet, a
watch process). ``make test-fast`` runs the rest (``-m "not anvil"``) with ``RECOMPUTE_ANVIL``
pointing at no file, so a test that starts anvil without being marked fails loudly there.

recompute runs anvil and solc-js only from where it is told (docs/executables.md): the tests
name the checkout's pinned ``node_modules`` through ``RECOMPUTE_ANVIL`` and ``RECOMPUTE_SOLC``
(a value already set, as ``make test-fast`` sets one, wins); every process they start inherits
them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from recompute.devnet.anvil import Anvil
from tests import REPO_ROOT, cli

os.environ.setdefault("RECOMPUTE_ANVIL", str(REPO_ROOT / "node_modules"))
os.environ.setdefault("RECOMPUTE_SOLC", str(REPO_ROOT / "node_modules"))
# The devnets `devnet up` starts are recorded in $XDG_STATE_HOME/recompute/devnets, which a
# bare `devnet down` stops: each test process records its own, never the user's (nor another
# test process's).
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="recompute-test-state-")

ANVIL_FIXTURES = {"anvil", "module_anvil", "devnet", "zoo", "chain", "deployed", "example",
                  "devnet_folder"}
# Modules whose tests start anvil themselves (a devnet through the CLI, a watch process).
ANVIL_MODULES = {"test_demo", "test_live_anvil", "test_receipts", "test_lifecycle", "test_moments",
                 "test_amm_devnet", "test_sai_charter_chain", "test_follow", "test_outage",
                 "test_range", "test_reorg", "test_alerts", "test_live", "test_mutations"}


# The files that take longest, longest first (per-file sums of a whole run's test times,
# docs/performance.md §The test suite's time). `make test` and `make test-fast` hand each file
# whole to one of their pytest-xdist workers (--dist loadfile), in the order below
# (--no-loadscope-reorder): a long file handed out last would keep one worker busy while the
# other has nothing left to do.
LONGEST_FIRST = ("contracts/test_artifacts_up_to_date.py", "devnet/test_lifecycle.py",
                 "watch/test_node_requests.py", "devnet/test_l2_lifecycle.py",
                 "watch/test_sparse.py", "core/test_demo.py", "test_docs_examples.py",
                 "vectors/test_vectors.py", "watch/test_cluster.py", "core/test_live_anvil.py",
                 "devnet/test_l2_devnet.py", "ux/test_verified_source.py",
                 "soundness/test_executables.py", "fuzz/test_fuzz.py",
                 "lightclient/test_cli_sync.py", "core/test_mpt_pytrie.py",
                 "lightclient/test_bls.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = Path(str(item.fspath)).stem
        if ANVIL_FIXTURES & set(getattr(item, "fixturenames", ())) or module in ANVIL_MODULES:
            item.add_marker(pytest.mark.anvil)
    items[:] = _longest_first(items)


def _longest_first(items: list) -> list:
    """The items, file by file: the files of LONGEST_FIRST first in its order, then the others
    by their number of tests, most first (what pytest-xdist's own reordering would do); within
    a file, the collection's order."""
    by_file: dict[str, list] = {}
    for item in items:
        by_file.setdefault(item.nodeid.split("::")[0], []).append(item)
    rank = {f"tests/{name}": place for place, name in enumerate(LONGEST_FIRST)}
    order = sorted(by_file, key=lambda name: (rank.get(name, len(rank)), -len(by_file[name])))
    return [item for name in order for item in by_file[name]]


@pytest.fixture
def run_cli():
    """Run ``recompute ARGS…`` as a user does (a fresh process): :func:`tests.cli.run_cli`."""
    return cli.run_cli


def running_anvil(timestamp: int | None = None):
    """Start an anvil (on anvil's own clock: a chain of now, or at the fixed genesis
    ``timestamp``), yield it, stop it."""
    node = Anvil(timestamp=timestamp).start()
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture
def anvil():
    """A fresh anvil for one test."""
    yield from running_anvil()


@pytest.fixture(scope="module")
def module_anvil():
    """One anvil shared by the tests of a module (cheaper when state can be shared)."""
    yield from running_anvil()


@pytest.fixture(scope="session")
def devnet():
    """``(node, manifest)``: the whole devnet (every history) built once per test process (each
    of ``make test``'s pytest-xdist workers builds its own) on its own anvil; shared read-only,
    so tests must not send transactions to it."""
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
