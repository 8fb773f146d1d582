"""``python -m tests.fuzz``: fuzz every reader for a time budget (docs/fuzzing.md).

::

    nice python -m tests.fuzz --minutes 30              # every reader, in turn, for 30 minutes
    python -m tests.fuzz --minutes 5 --reader store     # one reader
    python -m tests.fuzz --specials                     # FIFO, /dev/zero, … for every reader

The process limits its own address space (``--memory-mb``, default 3072), so a reader that
reads without bound fails with MemoryError (exit 70, reported) rather than taking the machine.
Prints the inputs tried per reader, and for each failure Hypothesis's smallest input; exits 1
when any reader failed.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from tests.fuzz.readers import READERS, SPECIALS, Reader, Special, judge


class Broken(AssertionError):
    """One input broke the contract (what :func:`~tests.fuzz.readers.judge` says)."""


def fuzz(reader: Reader, seed: object, scratch: Path, examples: int, *,
         derandomize: bool) -> int:
    """Run ``examples`` inputs of one reader; their count. Raises :class:`Broken` (after
    Hypothesis has shrunk the input) when one breaks the contract."""
    tried = 0

    @settings(max_examples=examples, deadline=None, database=None, derandomize=derandomize,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
    @given(variant=reader.variants(seed))
    def one(variant: object) -> None:
        nonlocal tried
        tried += 1
        for outcome in reader.run(seed, variant, scratch):
            problem = judge(outcome)
            if problem is not None:
                raise Broken(f"{reader.name}: {problem}")

    one()
    return tried


def special_cases(reader: Reader) -> list[object]:
    """Every special file in the place of the reader's file (for a Sourcify folder: of its
    metadata and of one source)."""
    if reader.name == "sourcify":
        return [(name, Special(kind)) for kind in SPECIALS
                for name in ("metadata.json", "sources/contracts/src/amm/IAgentMeditation.sol")]
    return [Special(kind) for kind in SPECIALS]


def run_specials(workdir: Path) -> int:
    """One JSON line per reader and special file: {"reader", "case", "problem"}."""
    failed = 0
    for reader in READERS.values():
        seed = reader.prepare(workdir)
        for case in special_cases(reader):
            scratch = Path(tempfile.mkdtemp(dir=workdir))
            problems = [judge(o) for o in reader.run(seed, case, scratch)]
            problem = next((p for p in problems if p), None)
            failed += problem is not None
            print(json.dumps({"reader": reader.name, "case": repr(case), "problem": problem}),
                  flush=True)
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0, help="time budget (default 10)")
    parser.add_argument("--reader", action="append", choices=sorted(READERS),
                        help="fuzz only this reader (repeatable; default: every one)")
    parser.add_argument("--batch", type=int, default=200, help="inputs per turn of a reader")
    parser.add_argument("--memory-mb", type=int, default=3072, help="address-space limit")
    parser.add_argument("--specials", action="store_true",
                        help="run the special files (FIFO, /dev/zero, …) once, then stop")
    args = parser.parse_args()
    limit = args.memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    workdir = Path(tempfile.mkdtemp(prefix="recompute-fuzz-"))
    if args.specials:
        return run_specials(workdir)
    readers = [READERS[n] for n in args.reader or sorted(READERS)]
    seeds = {r.name: r.prepare(workdir) for r in readers}
    tried = dict.fromkeys(seeds, 0)
    failures: dict[str, str] = {}
    end = time.monotonic() + args.minutes * 60
    while time.monotonic() < end and len(failures) < len(readers):
        for reader in readers:
            if reader.name in failures or time.monotonic() >= end:
                continue
            scratch = Path(tempfile.mkdtemp(dir=workdir))
            try:
                tried[reader.name] += fuzz(reader, seeds[reader.name], scratch, args.batch,
                                           derandomize=False)
            except Exception as exc:  # noqa: BLE001 - Broken, or the harness itself
                found = "\n".join([str(exc)[:3000], *getattr(exc, "__notes__", [])])
                failures[reader.name] = found
                print(f"FAILED {reader.name}: {failures[reader.name]}", flush=True)
        print("tried " + ", ".join(f"{n} {c}" for n, c in tried.items()), flush=True)
    print(f"total {sum(tried.values())} inputs in {args.minutes:g} minutes; "
          f"{len(failures)} reader(s) failed" + (f": {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
