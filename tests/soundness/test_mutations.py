"""The mutation gate (docs/design.md §Soundness): every reuse rule of the fast path, broken on
purpose (tests/soundness/reuse_mutations.py ``MUTATIONS``), must make the fast path's lines differ
from the reference evaluator's on one fixed history (differential.FIXED), with no search and no
shrinking: the history is the whole budget.

The history is played once. At each block the node shows (a reorged branch's too), in the
order it shows them, the reference evaluator gives the expected lines once, then the unbroken
fast path and each mutant (its patch applied for that evaluation only) evaluate the block with
evaluators and a shared source of their own, so one mutant's memos never reach another's.
The node is honest: which blocks a forging node would lie about depends on their hashes, which
differ from run to run, and a forged block hides what a reorg would show. Lies are told after
the history, at its head, about what the fast path has just proven honestly (so its node cache
holds the honest nodes under the same hashes): the first node of every storage proof, then of
every account proof, forged; the fast prover must refuse them as the plain one does. Last, a
range audit of the whole history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest

from recompute.watch.evaluate import BlockEvaluator
from tests.soundness.differential import (
    FIXED,
    Devchain,
    anchored,
    audit,
    forged_storage_proofs,
    shared,
    texts,
)
from tests.soundness.reuse_mutations import MUTATIONS

CLEAN = "no mutation"


def _patch(name: str) -> Callable[[], AbstractContextManager[Any]]:
    return nullcontext if name == CLEAN else MUTATIONS[name][1]


def _lines(name: str, source, evaluator: BlockEvaluator, block_hash: str) -> list[str]:
    with _patch(name)():
        try:
            block = anchored(source, block_hash)
            evaluator.prepare(block)
            return texts(evaluator.evaluate(block))
        except Exception as exc:  # a mutant that crashes the fast path is caught too
            return [f"the fast path raised {type(exc).__name__}: {exc}"]


@pytest.fixture(scope="module")
def differences(tmp_path_factory) -> Iterator[dict[str, list[str]]]:
    """Mutation name (and CLEAN) -> the first differences from the reference found for it."""
    node = Devchain()
    try:
        checks = node.checks(tmp_path_factory.mktemp("mutations"))
        node.reset()
        names = [CLEAN, *MUTATIONS]
        reference_source = shared(node.url)
        reference = BlockEvaluator(checks, reference=True)
        fast = {name: (shared(node.url), BlockEvaluator(checks)) for name in names}
        found: dict[str, list[str]] = {name: [] for name in names}
        for op in FIXED:
            for number in node.apply(op):
                block_hash = node.block_hash(number)
                expected = texts(reference.evaluate(anchored(reference_source, block_hash)))
                for name, (source, evaluator) in fast.items():
                    if len(found[name]) < 3:
                        got = _lines(name, source, evaluator, block_hash)
                        found[name] += [f"follow: {g}\n   reference: {e}" for g, e in
                                        zip(got, expected, strict=False) if g != e][:3]
                        if len(got) != len(expected):
                            found[name].append(f"follow: {len(got)} lines, {len(expected)} "
                                               "expected")
        head = node.block_hash(node.head())
        for name in names:
            if not found[name] or name == CLEAN:
                for account in (False, True):
                    with _patch(name)():
                        forged, _ = forged_storage_proofs(node.url, checks, head, account)
                    found[name] += [f"forged {'account' if account else 'storage'} proofs: {d}"
                                    for d in forged]
        expected_range = audit(node.url, checks, node.first, node.head(), reference=True,
                               workers=1)
        for name in names:
            if not found[name] or name == CLEAN:
                with _patch(name)():
                    got = audit(node.url, checks, node.first, node.head(), workers=1)
                found[name] += [f"range: {g}\n   reference: {e}"
                                for g, e in zip(got, expected_range, strict=False) if g != e][:3]
                if len(got) != len(expected_range):
                    found[name].append("range: the number of lines differs")
        yield found
    finally:
        node.stop()


def test_the_unbroken_fast_path_agrees_with_the_reference(differences):
    assert differences[CLEAN] == []


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_each_broken_reuse_rule_is_caught(differences, name):
    assert differences[name], f"mutation {name} ({MUTATIONS[name][0]}) was not caught"
