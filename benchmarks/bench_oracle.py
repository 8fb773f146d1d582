"""The honest reference contracts as an oracle, long run: a script, not a test.

    .venv/bin/python benchmarks/bench_oracle.py [--ops 3000] [--max-len 12] [--seed 1]

On one fresh anvil of its own, hypothesis draws sequences of operations for each registry
(tests/oracle.py: the ERC-8312 aggregate-budget meter, the reserved-confirmed meter, the AMM
registry) until at least ``--ops`` operations were applied to each. Every operation the
honest contract accepts is followed by the recipes owning its rules (derived values equal to
the contract's own views, GOOD where the rule is concerned); every one it rejects for a rule
a lying variant skips is forced into that variant (VERIFIED-BAD, the rule's mistaken method
misses it). Prints per registry: operations, accepted, rejected (by error), forced, recipe
runs and the wall time; the last line is one JSON object. Any disagreement stops the run with
hypothesis's smallest failing sequence.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from recompute.devnet.anvil import Anvil  # noqa: E402
from tests.oracle import REGISTRIES, Chain  # noqa: E402


def run(name: str, oracle, ops_strategy, target: int, max_len: int, rng_seed: int,
        seconds_cap: float | None = None) -> dict:
    start = time.perf_counter()
    while oracle.stats.ops < target:
        if seconds_cap is not None and time.perf_counter() - start > seconds_cap:
            print(f"{name}: stopped at --seconds {seconds_cap:g}", flush=True)
            break
        missing = target - oracle.stats.ops
        batch = max(1, min(20, missing // max(1, max_len // 2)))

        @seed(rng_seed + oracle.stats.ops)
        @settings(max_examples=batch, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.lists(ops_strategy, min_size=1, max_size=max_len))
        def check(ops):
            oracle.start()
            for op in ops:
                oracle.apply(op)

        check()
        print(f"{name}: {oracle.stats.ops} operations, {time.perf_counter() - start:.0f} s",
              flush=True)
    seconds = time.perf_counter() - start
    s = oracle.stats
    out = {"registry": name, "ops": s.ops, "accepted": s.accepted, "rejected": s.rejected,
           "forced": s.forced, "recipe_runs": s.checks, "by_error": s.by_error,
           "forced_by_rule": s.by_rule,
           "seconds": round(seconds, 1)}
    print(f"{name}: {s.ops} operations in {seconds:.1f} s ({s.accepted} accepted, "
          f"{s.rejected} rejected, {s.forced} forced into a lying variant; {s.checks} recipe "
          f"runs); rejections {s.by_error}; forced, by rule {s.by_rule}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=3000, help="operations per registry")
    parser.add_argument("--max-len", type=int, default=12, help="longest sequence drawn")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, help="stop each registry after this long "
                        "(its figures say how many operations it reached)")
    parser.add_argument("--only", choices=list(REGISTRIES), action="append")
    args = parser.parse_args()
    results = []
    with Anvil() as node:
        chain = Chain(node)
        for name, (cls, ops) in REGISTRIES.items():
            if args.only and name not in args.only:
                continue
            results.append(run(name, cls(chain), ops, args.ops, args.max_len, args.seed,
                               args.seconds))
    print(json.dumps({"oracle": results}))


if __name__ == "__main__":
    main()
