"""The consensus-spec-tests light_client/sync cases (minimal preset, deneb and electra):
after every step, the store's finalized and optimistic headers must be the ones steps.json
names (slot, beacon root, execution root)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from recompute.lightclient import (
    bootstrap,
    decode_bootstrap,
    decode_update,
    minimal_network,
)
from recompute.lightclient.proofs import get_lc_execution_root
from recompute.lightclient.sync import apply_light_client_update
from tests.lightclient.data import FIXTURES, load, root

CASES = sorted(
    f"{fork}/{case.name}"
    for fork in ("deneb", "electra")
    for case in (FIXTURES / "spec-tests-minimal" / fork).iterdir()
)


def spec_force_update(store, current_slot):
    """The spec's process_light_client_store_force_update, restated here only to replay the
    step lists that use it: recompute's store deliberately has no such escape hatch (it
    would treat a header no finality proof covers as finalized)."""
    best = store.best_valid_update
    if best is None or current_slot <= store.finalized_header.slot + store.network.update_timeout:
        return store
    if best.finalized_header.slot <= store.finalized_header.slot:
        best = replace(best, finalized_header=best.attested_header)
    return replace(apply_light_client_update(store, best), best_valid_update=None)


def check(store, checks, step):
    for name, header in (("finalized_header", store.finalized_header),
                         ("optimistic_header", store.optimistic_header)):
        want = checks[name]
        assert header.slot == want["slot"], (step, name)
        assert header.beacon_root == root(want["beacon_root"]), (step, name)
        assert get_lc_execution_root(store.network, header) == root(want["execution_root"]), (
            step, name)


def test_all_cases_present():
    assert len(CASES) == 6


@pytest.mark.parametrize("case", CASES)
def test_spec_case(case):
    folder = ("spec-tests-minimal", *case.split("/"))
    meta = load(*folder, "meta.json")
    network = minimal_network(load(*folder, "config.json"), root(meta["genesis_validators_root"]))
    store = bootstrap(root(meta["trusted_block_root"]),
                      decode_bootstrap(load(*folder, "bootstrap.json"), network), network)
    steps = load(*folder, "steps.json")
    assert steps
    for index, step in enumerate(steps):
        (kind, body), = step.items()
        if kind == "process_update":
            update = decode_update(load(*folder, "updates", body["update"] + ".json"), network)
            store = store.apply_update(update, current_slot=body["current_slot"])
        else:
            assert kind == "force_update"
            store = spec_force_update(store, body["current_slot"])
        check(store, body["checks"], index)
