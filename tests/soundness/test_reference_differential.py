"""The fast path agrees with the reference evaluator, line for line (docs/design.md
§Soundness): generated chains (tests/soundness/differential.py) of writes to the reference
contracts, storage written with no transaction or log, code removed and restored, quiet blocks,
time jumps (to the last second before a status turns and onto it) and reorgs, under 23
checks sharing three contracts and their layouts; then the same lines (verdict, reason, derived
values, evidence digest, detail, anchor) in follow mode, range mode (1 and 4 workers, from the
first block and from mid-range), ``step_many`` over the blocks in a drawn order (each from an
honest node or one that forges the account proofs of some blocks, the same way every time), and a
segmented audit (``--processes 2 --store``) against ``watch --reference``.

The expected lines are the reference evaluator's: every read proven afresh at every block,
nothing kept (recompute.evaluator.reference), never the fast path's own. Few examples by
default (the suite's time); ``RECOMPUTE_DIFF_EXAMPLES=200`` for a long run. Each reuse rule
broken on purpose fails these comparisons: ``python -m tests.soundness.reuse_mutations``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompute.core.verdict import Verdict
from tests import REPO_ROOT
from tests.soundness.differential import (
    FIXED,
    PROBES,
    SUBJECTS,
    Devchain,
    Follow,
    audit,
    forged_storage_proofs,
    layouts_shared,
    step_many_in_order,
)

EXAMPLES = int(os.environ.get("RECOMPUTE_DIFF_EXAMPLES", "3"))

OPERATIONS = st.one_of(
    st.just(("quiet",)),
    st.tuples(st.just("jump"), st.sampled_from([1, 60, 3600, 43_200, 86_400, 400_000])),
    st.tuples(st.just("edge"), st.sampled_from(SUBJECTS), st.integers(0, 3),
              st.sampled_from([-1, 0])),
    st.tuples(st.just("pulse"), st.sampled_from(("pulser", "controlled", "example"))),
    st.tuples(st.just("demand"), st.integers(1, 15), st.sampled_from([1, 100, 40_000])),
    st.tuples(st.just("policy"), st.integers(0, 2)),
    st.tuples(st.just("draw"), st.sampled_from("ABC"), st.integers(1, 60)),
    st.tuples(st.just("poke"), st.integers(0, 1), st.integers(0, 300)),
    st.just(("nocode",)),
    st.just(("code",)),
    st.tuples(st.just("reorg"), st.integers(1, 4)),
    st.tuples(st.just("reorg"), st.integers(1, 3),
              st.tuples(st.sampled_from("ABC"), st.integers(1, 20))),
)


@pytest.fixture(scope="module")
def chain():
    node = Devchain()
    try:
        folder = Path(tempfile.mkdtemp(prefix="recompute-diff-"))
        yield node, node.checks(folder), folder
    finally:
        node.stop()


def test_the_checks_share_contracts_and_layouts(chain):
    _, checks, _ = chain
    addresses = [c.address for c in checks]
    assert len(checks) == 23 and len(set(addresses)) == 3
    assert layouts_shared(checks)  # one layout loaded twice: two objects, one digest


@pytest.mark.timeout(120 + 10 * EXAMPLES)  # a long run (RECOMPUTE_DIFF_EXAMPLES) takes its time
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=st.lists(OPERATIONS, min_size=3, max_size=12), order=st.randoms(use_true_random=False),
       workers=st.sampled_from([1, 4]), mid=st.booleans(), forging=st.booleans())
def test_fast_and_reference_lines_are_the_same(chain, ops, order, workers, mid, forging):
    node, checks, _ = chain
    node.reset()
    follow = Follow(node.url, checks, forging)
    for op in ops:
        for number in node.apply(op):
            follow.see(node.block_hash(number))
    assert follow.disagreements == [], ops
    assert follow.lines >= len(ops) * len(checks)

    first, last = node.first, node.head()
    if mid:
        first = (first + last) // 2
    reference = audit(node.url, checks, first, last, reference=True, workers=1,
                      forging=forging)
    assert len(reference) == len(checks) * (last - first + 1)
    assert audit(node.url, checks, first, last, workers=workers, forging=forging) == reference

    hashes = [node.block_hash(n) for n in range(node.first, last + 1)]
    order.shuffle(hashes)
    assert (step_many_in_order(node.url, checks, hashes, False, forging)
            == step_many_in_order(node.url, checks, hashes, True, forging)), ops


def test_a_segmented_audit_writes_what_the_reference_writes(chain):
    node, checks, folder = chain
    node.reset()
    for op in FIXED:
        node.apply(op)
    first, last = node.first, node.head()
    config = str(folder / "checks.toml")

    def watch(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "recompute", "watch", "--rpc", node.url, "--config", config,
             "--recipes", str(PROBES), "--from", str(first), "--to", str(last), *extra],
            capture_output=True, text=True, timeout=180, cwd=REPO_ROOT)

    reference = watch("--reference")
    assert reference.returncode in (1, 2), reference.stderr
    lines = reference.stdout.splitlines()
    assert len(lines) == len(checks) * (last - first + 1)
    verdicts = {Verdict(json.loads(t)["verdict"]) for t in lines}
    assert verdicts == set(Verdict)  # GOOD, BAD and UNVERIFIABLE lines all compared
    segmented = watch("--processes", "2", "--store", str(folder / "audit.sqlite"),
                      "--segment-blocks", "5")
    assert segmented.returncode == reference.returncode, segmented.stderr
    assert segmented.stdout == reference.stdout


def test_a_forged_storage_proof_is_refused_by_the_fast_walk_as_by_the_plain_one(chain):
    """Storage proofs whose first node is forged, under a storageRoot whose top walks the fast
    prover keeps (it has just walked the honest proofs): both provers say UNVERIFIABLE, as
    the general walk (recompute.core.mpt.verify, the reference's) finds. The line differential
    cannot put this to the fast path (a forged storage proof where the account proof shows a
    storageRoot proven before is never asked for: docs/design.md §Soundness)."""
    node, checks, _ = chain
    node.reset()
    differences, forged = forged_storage_proofs(node.url, checks, node.block_hash(node.head()))
    assert forged >= 10  # storage proofs of three nodes or more were forged and walked
    assert differences == []


def test_step_reference_prints_what_step_prints(chain):
    """``recompute step --reference`` on the chain as the segmented test left it: the same
    JSON outcome (verdict, derived values, digest), though from more requests."""
    node, _, _ = chain
    registry, subject = node.registry_address, node.subjects["controlled"]

    def step(*extra: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "recompute", "step", "amm/layer-status", "--rpc", node.url,
             "--address", registry, "--param", f"subject={subject}", "--param", "layer=3",
             "--block", str(node.head()), "--json", *extra],
            capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
        assert done.returncode in (0, 1), done.stderr
        return json.loads(done.stdout)

    fast, plain = step(), step("--reference")
    assert fast["verdict"] == plain["verdict"]
    assert fast["evidence"]["derived"] == plain["evidence"]["derived"]
    assert fast["evidence"]["evidence_digest"] == plain["evidence"]["evidence_digest"]
    assert plain["evidence"]["proof_requests"] >= fast["evidence"]["proof_requests"]
