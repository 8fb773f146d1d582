"""The cost of the stdout journal in a range audit's writing phase (docs/watch.md §Restarts):
each block's lines written as a segmented audit writes them, to a regular file, (a) plain, as
before the journal (the store's ``emitted_through`` advanced at each segment's end), and (b)
journaled (each block's write committed to the store first: recompute.watch.recording.
AuditSink), in the same process, alternately. A script, not a test.

    .venv/bin/python benchmarks/bench_journal.py [--blocks 700] [--checks 7] [--rounds 5]

Lines as a watch writes them (anchor, derived values, evidence digest); no node is asked: what
is measured is only what the journal adds per block, to set beside the audit's CPU per block
(benchmarks/bench_audit.py). Prints each round's ms per block and the ratio (b)/(a), then the
medians as one JSON object.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recompute.core.verdict import Verdict  # noqa: E402
from recompute.watch.evaluate import Line  # noqa: E402
from recompute.watch.metrics import Metrics  # noqa: E402
from recompute.watch.recording import AuditSink  # noqa: E402
from recompute.watch.sink import Sink  # noqa: E402
from recompute.watch.store import Store  # noqa: E402

SEGMENT = 64


def lines_of(blocks: int, checks: int) -> list[list[Line]]:
    anchor = {"method": "parent-link", "pinned_hash": "0x" + "11" * 32}
    return [[Line(b, f"0x{b:064x}", f"check-{i}", Verdict.GOOD, "predicate-holds", False, True,
                  {"status": "OK", "value": str(b * i)}, "cd" * 32, anchor=anchor)
             for i in range(checks)] for b in range(1, blocks + 1)]


def write(store: Store, path: Path, blocks: list[list[Line]], journal: bool) -> float:
    """Seconds to write every block's lines to ``path``."""
    with open(path, "w") as out:
        started = time.perf_counter()
        if journal:
            sink = AuditSink(Metrics(), out, io.StringIO(), store=store,
                             text_of=lambda lo, hi: "")  # no restart here
            for number, lines in enumerate(blocks, 1):
                sink.block(number, lines)
            sink.close()
        else:
            plain = Sink(Metrics(), out, io.StringIO())
            for number, lines in enumerate(blocks, 1):
                plain.evaluated(lines)
                if number % SEGMENT == 0 or number == len(blocks):
                    store.put({"emitted_through": number})
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=700)
    parser.add_argument("--checks", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    blocks = lines_of(args.blocks, args.checks)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "audit.sqlite")
        store.put({"mode": "range", "config_hash": "ab" * 32, "first": 1, "last": args.blocks,
                   "checks": [{"name": f"check-{i}", "healthy": "VERIFIED-GOOD", "since": 0}
                              for i in range(args.checks)],
                   "pinned_hash": "0x" + "11" * 32, "anchor": {"method": "block-hash",
                                                              "trusts": "the hash given"},
                   "head": None, "confirmations": 2, "segment_blocks": SEGMENT})
        plain, journaled = [], []
        for n in range(args.rounds):
            a = write(store, Path(tmp) / "a.jsonl", blocks, False) / args.blocks
            b = write(store, Path(tmp) / "b.jsonl", blocks, True) / args.blocks
            plain.append(a)
            journaled.append(b)
            print(f"round {n}: plain {a * 1e3:.3f} ms/block, journaled {b * 1e3:.3f} ms/block, "
                  f"ratio {b / a:.2f}")
        store.close()
    print(f"machine: {os.cpu_count()} core(s), load average (1 min) {os.getloadavg()[0]:.1f}")
    print(json.dumps({"blocks": args.blocks, "checks": args.checks,
                      "plain_ms_per_block": round(statistics.median(plain) * 1e3, 3),
                      "journaled_ms_per_block": round(statistics.median(journaled) * 1e3, 3),
                      "added_ms_per_block": round((statistics.median(journaled)
                                                   - statistics.median(plain)) * 1e3, 3)}))


if __name__ == "__main__":
    main()
