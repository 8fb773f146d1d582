"""Where the suite's CPU goes, per test file: a pytest plugin, loaded by name.

    PYTHONPATH=benchmarks .venv/bin/python -m pytest -q -p pytest_cpu [-n 2 --dist loadfile]

At the end it prints the files using the most CPU: user+sys of the pytest process and of the
processes it waited for (anvil, ``recompute`` subprocesses, solc-js, chromium), and wall time.
Under pytest-xdist each worker measures its own files and prints them with its name. CPU, not
wall: the machine the suite runs on is often shared, and wall time is the load's as much as the
tests'. A module fixture's teardown (an anvil stopped) counts in its file's last test.
"""

from __future__ import annotations

import os
import resource
import sys
import time

TOP = int(os.environ.get("PYTEST_CPU_TOP", "30"))
_started: dict[str, tuple[float, float, float]] = {}
_files: dict[str, list[float]] = {}


def _now() -> tuple[float, float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime, waited.ru_utime + waited.ru_stime, time.monotonic())


def pytest_runtest_protocol(item, nextitem):
    _started[item.nodeid] = _now()


def pytest_runtest_logfinish(nodeid, location):
    start = _started.pop(nodeid, None)
    if start is None:  # the xdist controller hears of tests its workers ran
        return
    end = _now()
    row = _files.setdefault(nodeid.split("::")[0], [0.0, 0.0, 0.0, 0])
    for i in range(3):
        row[i] += end[i] - start[i]
    row[3] += 1


def pytest_sessionfinish(session):
    if not _files:
        return
    who = os.environ.get("PYTEST_XDIST_WORKER", "pytest")
    total = [sum(row[i] for row in _files.values()) for i in range(3)]
    out = [f"\n[{who}] CPU s (own + waited children) and wall s per test file; total "
           f"own {total[0]:.1f} children {total[1]:.1f} wall {total[2]:.1f}",
           f"[{who}]     cpu     own    kids    wall tests  file"]
    ranked = sorted(_files.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:TOP]
    out += [f"[{who}] {own + kids:7.1f} {own:7.1f} {kids:7.1f} {wall:7.1f} {n:5d}  {name}"
            for name, (own, kids, wall, n) in ranked]
    print("\n".join(out), file=sys.__stderr__)
