"""Each reuse rule of the fast path broken on purpose must fail the differential
(docs/design.md §Soundness). The gate that ``make test`` runs is
tests/soundness/test_mutations.py (one play of the fixed history, every mutant beside the
unbroken fast path, under a minute); ``python -m tests.soundness.reuse_mutations`` is the longer
look, every mode for each mutation (a few minutes).

One mutation at a time is patched into the running process (the function's code replaced by a
copy with one condition changed), the fixed generated history (tests/soundness/differential.py
FIXED) is evaluated by the fast path and by the reference evaluator in follow mode and
``step_many`` (blocks newest first) from a node that forges the account proofs of some blocks
(differential.Forging), and in range mode from an honest one; the script prints whether the
lines differed (CAUGHT) or not (MISSED), with the first difference. The run without a mutation
comes first and must be clean. Exit status 1 if any mutation is missed or the clean run
differs.

``python -m tests.soundness.reuse_mutations NAME...`` runs only the mutations named.
"""

from __future__ import annotations
import __future__

import inspect
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from recompute.core import caching, mpt
from recompute.evaluator import carry, digest, kept_plans, runner
from recompute.sources import cache
from tests.soundness.differential import (
    FIXED,
    Devchain,
    Follow,
    audit,
    forged_storage_proofs,
    step_many_in_order,
)


@contextmanager
def patched(function: Any, old: str, new: str, *more: str) -> Iterator[None]:
    """``function`` (a plain function or a method) with the text ``old`` of its source replaced
    by ``new`` (and each further pair of ``more``) while the block runs: its code object
    swapped, so every caller, wherever it imported it from, runs the mutant."""
    function = getattr(function, "__func__", function)
    source = textwrap.dedent(inspect.getsource(function))
    pairs = [(old, new), *zip(more[::2], more[1::2], strict=True)]
    for before, after in pairs:
        if before not in source:
            raise SystemExit(f"mutation text not found in {function.__qualname__}: {before!r}")
        source = source.replace(before, after, 1)
    namespace: dict[str, Any] = {}
    code = compile(source, inspect.getsourcefile(function) or "?", "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, function.__globals__, namespace)  # noqa: S102 - our own source, one line changed
    mutant = namespace[function.__name__]
    mutant = getattr(mutant, "__func__", mutant)
    saved = function.__code__
    function.__code__ = mutant.__code__
    try:
        yield
    finally:
        function.__code__ = saved


@contextmanager
def chained(*patches: Any) -> Iterator[None]:
    """Several patches applied together (one rule kept in two functions)."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch)
        yield


# name -> (the reuse rule it breaks, the patch)
MUTATIONS: dict[str, tuple[str, Callable[[], Any]]] = {
    "carry-root-not-compared": (
        "a carried read stands in without the block's storageRoot compared (carry.Carry.kept)",
        lambda: patched(carry.Carry.kept, "return entry if entry.root == "
                        "self.account(address).storage_root else None", "return entry")),
    "whole-plan-root-not-compared": (
        "a kept plan answered whole without the storageRoot compared (carry.carried_whole)",
        lambda: patched(carry.carried_whole, "if account.storage_root != last.trace.root:",
                        "if False:")),
    "kept-round-after-a-write": (
        "a kept plan's round reused for an answer that differs (Round.after)",
        lambda: patched(kept_plans.Round.after, "if kept[0] is answer or kept[0] == answer:",
                        "if True:")),
    "whole-plan-not-all-kept": (
        "a plan remembered as answered whole when a round was proven afresh "
        "(carry.RoundsKept.whole_root: every round asked answered from a kept read)",
        lambda: patched(carry.RoundsKept.whole_root, "len(self.rounds) != self.asked",
                        "False")),
    "log-scan-by-number": (
        "a kept log scan found by block number, not hash: reused across a reorg "
        "(core.caching.kept_scan, keep_scan)",
        lambda: chained(patched(caching.kept_scan, "memo.get((block.hash, query))",
                                "memo.get((block.number, query))"),
                        patched(caching.keep_scan, "memo.put((block.hash, query), scan)",
                                "memo.put((block.number, query), scan)"))),
    "ancestor-by-number": (
        "a kept ancestor found by its number alone, not under its descendant's hash: reused "
        "across a reorg (core.caching.ancestor)",
        lambda: patched(caching.ancestor, "memo.get((block.hash, number)) or "
                        "memo.get((block.header.parent_hash, number))", "memo.get(number)",
                        "memo.put((block.hash, number), header)", "memo.put(number, header)")),
    "ancestor-read-by-number": (
        "a read at an ancestor kept by the ancestor's number, not its hash: reused across a "
        "reorg (carry.Carry.read_key)",
        lambda: patched(carry.Carry.read_key, 'key = ("reads-at", at.hash, *key[1:])',
                        'key = ("reads-at", at.number, *key[1:])')),
    "receipts-by-number": (
        "proven receipts kept by block number, not hash: reused across a reorg "
        "(core.caching.prove_receipts)",
        lambda: patched(caching.prove_receipts, "memo.get(block.hash)",
                        "memo.get(block.number)", "memo.put(block.hash, proven)",
                        "memo.put(block.number, proven)")),
    "parent-header-by-number": (
        "a kept parent header found by number, not by the parentHash (core.caching.ancestors)",
        lambda: patched(caching.ancestors, "kept = memo.get(header.parent_hash)",
                        "kept = memo.get(header.number - 1)", "memo.put(header.hash, header)",
                        "memo.put(header.number, header)")),
    "memo-stale-entry": (
        "a memo asked for a key it does not hold answers with the entry kept last "
        "(core.caching.Memo.get): a stale value of the same kind returned",
        lambda: patched(caching.Memo.get, "value = self._items.get(key)",
                        "value = self._items.get(key, next(reversed(self._items.values()), "
                        "None))")),
    "raw-proofs-across-blocks": (
        "the shared raw proof answers kept per contract, not per block (SharedSource: "
        "_account_map, which get_proof, prefetch_many and block_with_accounts use)",
        lambda: patched(cache.SharedSource._account_map, "self._proofs.get(block_hash)",
                        "self._proofs.get(b'')", "self._proofs.put(block_hash, accounts)",
                        "self._proofs.put(b'', accounts)")),
    "digest-groups-partial": (
        "the digest taken from the kept group texts when they miss some reads "
        "(evidence_digest)",
        lambda: patched(digest.evidence_digest, "if groups and sum(map(len, groups)) == "
                        "len(reads):", "if groups:")),
    "hand-out-by-first-path": (
        "a hand-out kept and found by its first path only (carry.paths_key, the key "
        "KeptPaths keeps and finds a hand-out under)",
        lambda: patched(carry.paths_key, "key = paths[0] if len(paths) == 1 else "
                        "tuple(paths)", "key = paths[0]")),
    "carry-any-layout": (
        "a carried read taken for a layout of another digest (carry.Carry.read_key: the "
        "layout's digest left out of the key)",
        lambda: patched(carry.Carry.read_key, "(\"reads\", address, layout.digest, "
                        "tuple(paths))", "(\"reads\", address, tuple(paths))")),
    "node-cache-text-unchecked": (
        "a cached trie node taken for a listed node of other text (core.mpt.verify)",
        lambda: patched(mpt.verify, "if node is None or node[0] != text:",
                        "if node is None:")),
    "top-walk-text-unchecked": (
        "a kept top walk taken for a proof whose first nodes are of other text "
        "(core.mpt.verify_many)",
        lambda: patched(mpt.verify_many, "if top is None or proof[0] != top[0] or "
                        "proof[1] != top[1]:", "if top is None:")),
    # The reference's independence: a mistake in the fast path's evidence code is seen only
    # because the reference assembles its own (recompute.evaluator.reference).
    "fast-entry-path": (
        "the fast path's read entries name the path asked, not the slot's own path "
        "(runner.read_entries): the reference writes its entries itself",
        lambda: patched(runner.read_entries, "path=result.slot_paths.get(slot, result.path))",
                        "path=result.path)")),
    "fast-digest-without-logs": (
        "the fast path's digest leaves the logs out (digest.evidence_digest): the reference "
        "takes its digest itself",
        lambda: patched(digest.evidence_digest,
                        '"logs": {canonical_json(logs) if logs else "[]"}', '"logs": []')),
}

# Rules of the batched node calls that an honest node never puts to the test, so the
# differential (an honest node, or one forging account proofs the same way however asked)
# cannot see them broken: name -> (the rule, what catches its break). Not run by this script
# (the test named runs the CLI in a subprocess: the patch was applied by hand to a copy of the
# source tree and that test run there).
ELSEWHERE: dict[str, tuple[str, str]] = {
    "batch-answer-by-position": (
        "a batched eth_getProof answer taken by its position, not checked against the account "
        "and keys asked (sources.live.LiveSource._check_proof: `return` at once)",
        "tests/watch/test_node_requests.py::"
        "test_a_batch_answer_not_matching_its_calls_is_rpc_malformed[_swap_ids] fails: the "
        "swapped proofs are refused later by the prover's address check (rpc-inconsistent), "
        "not as rpc-malformed; no verdict is given from them"),
    "prefetched-proof-not-rooted": (
        "an account proof fetched with a header by number held for that header's hash without "
        "its first node checked against the header's stateRoot (sources.cache._rooted_in: "
        "`return True`)",
        "none: not a soundness rule; a proof held for the wrong block is verified in full "
        "against the header's stateRoot when used (UNVERIFIABLE invalid-proof, never a "
        "verdict); the check only keeps a block that moved between the calls from costing that"),
    "header-held-unhashed": (
        "a header fetched by number held under the hash it claims, not re-hashed "
        "(sources.cache.SharedSource._hold_header)",
        "none: harmless by construction; every header served is re-hashed when used "
        "(core.anchor._fetch_header: Header.from_rpc), and a walk checks each parent's hash "
        "against the parentHash (core.anchor.ancestors): a lying node's header is refused "
        "there, never used"),
}


def differential(node: Devchain, checks) -> list[str]:
    """The fixed history, fast against reference: the differences (mode: fast != reference)."""
    node.reset()
    follow = Follow(node.url, checks, forging=True)
    for op in FIXED:
        for number in node.apply(op):
            follow.see(node.block_hash(number))
    found = [f"follow: {f}\n   reference: {r}" for f, r in follow.disagreements]
    first, last = node.first, node.head()
    reference = audit(node.url, checks, first, last, reference=True, workers=1)
    for workers in (1, 4):
        fast = audit(node.url, checks, first, last, workers=workers)
        found += [f"range ({workers} workers): {f}\n   reference: {r}"
                  for f, r in zip(fast, reference, strict=False) if f != r]
    hashes = [node.block_hash(n) for n in range(last, first - 1, -1)]
    fast = step_many_in_order(node.url, checks, hashes, False, forging=True)
    plain = step_many_in_order(node.url, checks, hashes, True, forging=True)
    found += [f"step_many: {f}\n   reference: {r}" for f, r in zip(fast, plain, strict=False)
              if f != r]
    forged, _ = forged_storage_proofs(node.url, checks, node.block_hash(last))
    found += [f"forged storage proofs: {d}" for d in forged]
    return found


def main(names: list[str]) -> int:
    unknown = set(names) - set(MUTATIONS)
    if unknown:
        raise SystemExit(f"unknown mutation(s): {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(MUTATIONS)}")
    node = Devchain()
    missed = 0
    try:
        checks = node.checks(Path(tempfile.mkdtemp(prefix="recompute-mutations-")))
        started = time.monotonic()
        clean = differential(node, checks)
        print(f"no mutation: {'clean' if not clean else f'{len(clean)} DIFFERENCES'} "
              f"({time.monotonic() - started:.1f} s)", flush=True)
        for difference in clean[:3]:
            print("   ", difference)
        missed += bool(clean)
        for name in names or list(MUTATIONS):
            rule, patch = MUTATIONS[name]
            started = time.monotonic()
            try:
                with patch():
                    found = differential(node, checks)
            except Exception as exc:  # the mutant crashed the fast path: that is caught too
                found = [f"the fast path raised {type(exc).__name__}: {exc}"]
            verdict = "CAUGHT" if found else "MISSED"
            missed += not found
            print(f"{verdict} {name}: {rule}: {len(found)} difference(s) "
                  f"({time.monotonic() - started:.1f} s)", flush=True)
            if found:
                print("   ", found[0][:400])
    finally:
        node.stop()
    if not names:
        for name, (rule, caught_by) in ELSEWHERE.items():
            print(f"ELSEWHERE {name}: {rule}: {caught_by}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
