"""Soak and chaos: ``recompute watch`` following the living devnet for a while, through reorgs,
node restarts, a withholding beacon and SIGKILLs of the watch itself. A script, not a test
(tests/devnet/test_live.py runs a short one).

    .venv/bin/python benchmarks/soak_watch.py [--minutes 20] [--block-time 2] [--reorg-every 7]
        [--kill-every 45] [--node-every 240] [--node-pause 5] [--withhold-every 300]
        [--withhold-for 45] [--seed 1] [--work DIR]

Set-up: a fresh living devnet (``recompute devnet up --live --reorg-every K``, in --work) and
two follow-mode watches of examples/devnet-watch.toml, each a real ``python -m recompute
watch`` whose stdout is appended to a file:

- ``rpc``: ``--rpc`` with ``--store`` and ``--confirmations 3`` (the devnet's reorgs are at most
  3 deep), from the block after the first live one; SIGKILLed at random moments (every
  --kill-every seconds, +-50 %) and started again on the same store and the same stdout file;
- ``beacon``: ``--beacon`` (the light client, the devnet's ``network.json``), never killed: its
  resident memory is sampled every 5 s and its metrics are compared with its lines at the end.

Meanwhile, every --node-every seconds anvil is stopped (SIGTERM: it dumps its state) and
started again --node-pause seconds later from that state (a declared outage), and every
--withhold-every seconds the devnet's beacon withholds new updates for --withhold-for seconds
(SIGUSR1 / SIGUSR2 to it; how ``watch --beacon`` shows a light client that falls behind is
checked only as far as the invariants below hold either way: its lines stay canonical, none
twice, none missing once it catches up).

At the end, against the node's canonical chain:
  every line about a block (hash not null) is about a canonical block or was retracted (its
  hash is in a reorg event's ``orphaned``); no final line is retracted or off the canonical
  chain; every block from the first final one to the last final one has a final line for every
  check active there (a block missing one is allowed only inside a declared outage, and none
  is expected: follow mode resumes right after the last verified block), and the last final
  block is near the head (the rpc watch within its confirmations + 8 blocks, the beacon watch
  within BEACON_BEHIND: a watch that stopped following fails); no line (block, hash,
  check, final) is written twice, across restarts included (lines with ``hash`` null, the node
  trouble lines a watch writes at each retry, are not keys); the outages show as node-trouble
  lines and in ``rpc_errors_total``; every stdout line is whole JSON; the beacon watch's
  resident memory at the end is at most 10 % above its first sample after warm-up (the first
  quarter of the run, at least 60 s); its metrics (``verdicts_total``, ``final_verdicts_total``
  per check and verdict, ``reorgs_total``) equal what its lines say.
The last line printed is one JSON object with the figures; exit 0 when every invariant holds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recompute.devnet.anvil import free_port, rpc_call  # noqa: E402
from recompute.devnet.lifecycle import LiveOptions, down, restart_node, up  # noqa: E402
from recompute.watch.config import load_config  # noqa: E402

CONFIG = ROOT / "examples" / "devnet-watch.toml"
CONFIRMATIONS = 3  # the living devnet's reorgs are 1 to 3 deep
# how far behind the head a watch's last final line may be at the end: the rpc watch's
# confirmations plus a few blocks; the light client's finality (two epochs, 16 to 24 slots,
# plus publication) plus a few
BEACON_BEHIND = 40
COMPARED = ("verdicts_total", "final_verdicts_total", "reorgs_total")  # metrics vs lines


# ---- processes ---------------------------------------------------------------------------


class WatchProcess:
    """A ``recompute watch`` appending its stdout to one file across restarts."""

    def __init__(self, name: str, args: list[str], work: Path, metrics: bool = False):
        self.name = name
        self.args = args
        self.out = work / f"{name}.jsonl"
        self.err = work / f"{name}.err"
        self.metrics_port = free_port() if metrics else None
        self.process: subprocess.Popen | None = None
        self.restarts = 0  # started again: after a SIGKILL (kills) or after it exited
        self.kills = 0

    def start(self) -> None:
        extra = ["--metrics-port", str(self.metrics_port)] if self.metrics_port else []
        with open(self.out, "ab") as out, open(self.err, "ab") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "recompute", "watch", *self.args, *extra],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT)

    def kill(self) -> None:
        """SIGKILL, at whatever point the watch is."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def rss_kib(self) -> int | None:
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except (OSError, AttributeError):
            return None
        found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
        return int(found.group(1)) if found else None

    def metrics(self) -> dict[tuple, float]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                    timeout=10) as answer:
            text = answer.read().decode()
        out = {}
        for row in text.splitlines():
            found = re.match(r"recompute_watch_(\w+?)(?:\{(.*)\})? ([0-9.e+-]+)$", row)
            if found:
                labels = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', found.group(2) or "")))
                out[(found.group(1), labels)] = float(found.group(3))
        return out


def _signal_pid(state_dir: Path, name: str, signum: int) -> None:
    os.kill(int((state_dir / f"{name}.pid").read_text()), signum)


# ---- the invariants ----------------------------------------------------------------------


def read_lines(path: Path) -> tuple[list[dict], int]:
    """The JSON objects of a stdout file, and how many of its lines are not whole JSON."""
    objects, broken = [], 0
    for text in path.read_text().splitlines():
        try:
            value = json.loads(text)
        except ValueError:
            broken += 1
            continue
        objects.append(value) if isinstance(value, dict) else None
    return objects, broken


def analyse(objects: list[dict], canonical: dict[int, str], since: dict[str, int],
            outages: list[tuple[int, int]]) -> dict:
    """The invariants of one watch's lines against the canonical chain."""
    events = [o for o in objects if o.get("event") == "reorg"]
    lines = [o for o in objects if "check" in o]
    retracted = {h for e in events for h in e.get("orphaned", ())}
    final_orphaned = {h for e in events for h in e.get("final_orphaned", ())}
    keyed = Counter((x["block"], x["hash"], x["check"], x["final"]) for x in lines
                    if x["hash"] is not None)
    duplicates = sum(n - 1 for n in keyed.values() if n > 1)
    off_chain = [x for x in lines if x["hash"] is not None
                 and canonical.get(x["block"]) != x["hash"] and x["hash"] not in retracted]
    finals = [x for x in lines if x["final"]]
    bad_finals = [x for x in finals if x["hash"] in retracted or x["hash"] in final_orphaned
                  or canonical.get(x["block"]) != x["hash"]]
    have = {(x["block"], x["check"]) for x in finals if canonical.get(x["block"]) == x["hash"]}
    missing, excused = [], 0
    if finals:
        for number in range(min(x["block"] for x in finals), max(x["block"] for x in finals) + 1):
            for check, first in since.items():
                if number >= first and (number, check) not in have:
                    if any(lo <= number <= hi for lo, hi in outages):
                        excused += 1
                    else:
                        missing.append((number, check))
    trouble = [x for x in lines if x["hash"] is None and x["verdict"] == "UNVERIFIABLE"]
    return {
        "lines": len(lines), "final_lines": len(finals), "reorg_events": len(events),
        "retracted_blocks": len(retracted), "duplicates": duplicates,
        "off_chain_unretracted": len(off_chain), "final_retracted": len(bad_finals),
        "missing_final": len(missing), "missing_in_outage": excused,
        "node_trouble_lines": len(trouble),
        "node_trouble_reasons": sorted({x["reason"] for x in trouble}),
        "first_final": min((x["block"] for x in finals), default=None),
        "last_line": max((x["block"] for x in lines if x["hash"]), default=None),
        "last_final": max((x["block"] for x in finals), default=None),
        "examples": {"duplicate": [k for k, n in keyed.items() if n > 1][:3],
                     "off_chain": [(x["block"], x["check"]) for x in off_chain[:3]],
                     "missing": missing[:3]},
    }


def metrics_agree(metrics: dict[tuple, float], objects: list[dict]) -> list[str]:
    """Where a watch's metrics differ from its lines (empty when they agree)."""
    lines = [o for o in objects if "check" in o]
    said = {
        "verdicts_total": Counter((x["check"], x["verdict"]) for x in lines if not x["final"]),
        "final_verdicts_total": Counter((x["check"], x["verdict"]) for x in lines if x["final"]),
    }
    differences = []
    for family, counts in said.items():
        shown = {(dict(labels)["check"], dict(labels)["verdict"]): value
                 for (name, labels), value in metrics.items() if name == family}
        for key in set(counts) | {k for k, v in shown.items() if v}:
            if counts.get(key, 0) != shown.get(key, 0):
                differences.append(f"{family}{key}: lines {counts.get(key, 0)}, metrics "
                                   f"{shown.get(key, 0)}")
    reorgs = sum(1 for o in objects if o.get("event") == "reorg")
    shown_reorgs = metrics.get(("reorgs_total", ()), 0)
    if reorgs != shown_reorgs:
        differences.append(f"reorgs_total: lines {reorgs}, metrics {shown_reorgs}")
    return differences


def canonical_chain(rpc: str, first: int) -> dict[int, str]:
    head = int(rpc_call(rpc, "eth_blockNumber"), 16)
    return {n: rpc_call(rpc, "eth_getBlockByNumber", [hex(n), False])["hash"]
            for n in range(first, head + 1)}


def stable_metrics(watch: WatchProcess, timeout: float = 60.0) -> tuple[dict, list[dict]]:
    """The watch's metrics and lines at a moment when neither moves (two reads alike)."""
    deadline = time.monotonic() + timeout
    before = None
    while True:
        metrics = watch.metrics()
        objects, _ = read_lines(watch.out)
        now = ({k: v for k, v in metrics.items() if k[0] in COMPARED}, len(objects))
        if now == before or time.monotonic() > deadline:
            return metrics, objects
        before = now
        time.sleep(2.0)


# ---- the run -----------------------------------------------------------------------------


class Chaos:
    """The schedule of disturbances: SIGKILLs of the rpc watch, node restarts, withholding."""

    def __init__(self, args, state: Path, watch: WatchProcess, started: float, end: float):
        self.args, self.state, self.watch, self.end = args, state, watch, end
        self.rng = random.Random(args.seed)
        self.next_kill = started + self.rng.uniform(0.5, 1.5) * args.kill_every
        self.next_node = started + args.node_every
        self.next_withhold = started + args.withhold_every
        self.withhold_until: float | None = None
        self.node_restarts = self.withholds = 0
        self.outages: list[tuple[float, float]] = []  # (down, up) by the wall clock

    def tick(self, now: float) -> None:
        args = self.args
        if not self.watch.alive():
            self.watch.start()  # it exited (the node away at its start): start it again
            self.watch.restarts += 1
        if now >= self.next_kill:
            self.watch.kill()
            self.watch.kills += 1
            time.sleep(self.rng.uniform(0.2, 2.0))
            self.watch.start()
            self.watch.restarts += 1
            self.next_kill = time.monotonic() + self.rng.uniform(0.5, 1.5) * args.kill_every
        if now >= self.next_node and now + args.node_pause + 5 < self.end:
            down_at = time.time()
            restart_node(self.state, pause=args.node_pause)
            self.outages.append((down_at, time.time()))
            self.node_restarts += 1
            self.next_node = time.monotonic() + args.node_every
        if (self.withhold_until is None and now >= self.next_withhold
                and now + args.withhold_for < self.end):
            _signal_pid(self.state, "beacon", signal.SIGUSR1)
            self.withhold_until = now + args.withhold_for
            self.withholds += 1
        if self.withhold_until is not None and now >= self.withhold_until:
            self.release()
            self.next_withhold = time.monotonic() + args.withhold_every

    def release(self) -> None:
        if self.withhold_until is not None:
            _signal_pid(self.state, "beacon", signal.SIGUSR2)
            self.withhold_until = None


def run(args) -> dict:
    work = Path(args.work or tempfile.mkdtemp(prefix="recompute-soak-"))
    work.mkdir(parents=True, exist_ok=True)
    state = work / "devnet"
    manifest, _ = up(state, fresh=True, live=LiveOptions(args.block_time, args.reorg_every))
    rpc, beacon = manifest["rpc"], manifest["beacon"]
    first = manifest["live"]["first_block"] + 1
    since = {check.name: max(check.since, first) for check in load_config(CONFIG)}
    common = ["--config", str(CONFIG), "--poll", "0.5", "--max-backoff", "2"]
    by_rpc = WatchProcess("rpc", ["--rpc", rpc, "--store", str(work / "rpc.sqlite"),
                                  "--confirmations", str(CONFIRMATIONS), "--from", str(first),
                                  *common], work)
    by_beacon = WatchProcess("beacon", ["--rpc", rpc, "--beacon", beacon["url"],
                                        "--trusted-root", beacon["trusted_root"],
                                        "--network", beacon["network_file"],
                                        # the trusted root is the genesis, dated 2025: older
                                        # than the weak-subjectivity bound by the wall clock
                                        "--accept-old-checkpoint",
                                        "--lc-store", str(work / "beacon-lc.json"),
                                        "--from", str(first), *common], work, metrics=True)
    rss: list[tuple[float, int]] = []
    try:
        by_rpc.start()
        by_beacon.start()
        started = time.monotonic()
        chaos = Chaos(args, state, by_rpc, started, started + args.minutes * 60)
        next_sample = started
        while time.monotonic() < chaos.end:
            now = time.monotonic()
            if now >= next_sample:
                kib = by_beacon.rss_kib()
                if kib is not None:
                    rss.append((now - started, kib))
                next_sample = now + 5.0
            chaos.tick(now)
            time.sleep(0.1)
        chaos.release()
        # the end: the chain still moving, until the beacon watch has final lines (a short run
        # ends before the light client's finality, two epochs behind, reaches its first block)
        deadline = time.monotonic() + 40 * args.block_time
        while time.monotonic() < deadline and not any(
                o.get("final") for o in read_lines(by_beacon.out)[0]):
            time.sleep(1.0)
        # then no more blocks; let the watches catch up, then freeze and compare
        _signal_pid(state, "producer", signal.SIGTERM)
        time.sleep(3 * args.block_time)
        beacon_metrics, beacon_seen = stable_metrics(by_beacon)  # a pair read at one moment
        final_rss = by_beacon.rss_kib()
        if final_rss is not None:
            rss.append((time.monotonic() - started, final_rss))
        by_rpc.stop()
        by_beacon.stop()
        canonical = canonical_chain(rpc, first)
        reorgs = sum(1 for text in (state / "producer.log").read_text().splitlines()
                     if '"reorg"' in text)
    finally:
        by_rpc.kill()
        by_beacon.kill()
        down(state)
    return figures(args, work, chaos, (by_rpc, by_beacon), canonical, since,
                   (beacon_metrics, beacon_seen), rss, reorgs)


def figures(args, work: Path, chaos: Chaos, watches: tuple[WatchProcess, WatchProcess],
            canonical: dict[int, str], since: dict[str, int],
            beacon_seen: tuple[dict, list[dict]], rss: list[tuple[float, int]],
            reorgs: int) -> dict:
    """The invariants checked and the figures, as the last line's JSON object."""
    by_rpc, by_beacon = watches
    results, broken = {}, {}
    for watch in watches:
        objects, broken[watch.name] = read_lines(watch.out)
        # no block is mined while the node is down and follow mode resumes right after the
        # last verified block: no block is excused from having its final lines
        results[watch.name] = analyse(objects, canonical, since, outages=[])
    beacon_metrics, beacon_objects = beacon_seen
    disagreements = metrics_agree(beacon_metrics, beacon_objects)
    warm = max(60.0, args.minutes * 60 / 4)
    after = [kib for t, kib in rss if t >= warm]  # none in a run shorter than the warm-up:
    rss_start, rss_end = (after[0], after[-1]) if len(after) > 1 else (None, None)  # unjudged
    failures = []
    head = max(canonical)
    for name, behind in (("rpc", CONFIRMATIONS + 8), ("beacon", BEACON_BEHIND)):
        last = results[name]["last_final"]
        if last is None or last < head - behind:
            failures.append(f"{name}: stopped following: last final block {last}, head {head}")
    for name, result in results.items():
        for key in ("duplicates", "off_chain_unretracted", "final_retracted", "missing_final"):
            if result[key]:
                failures.append(f"{name}: {key} {result[key]} {result['examples']}")
        if broken[name]:
            failures.append(f"{name}: {broken[name]} stdout line(s) not whole JSON")
        if not result["final_lines"]:
            failures.append(f"{name}: no final line")
    if chaos.node_restarts and not results["rpc"]["node_trouble_lines"] \
            and not results["beacon"]["node_trouble_lines"]:
        failures.append("the node restarts show in no node-trouble line")
    if chaos.node_restarts and not sum(v for (name, _), v in beacon_metrics.items()
                                       if name == "rpc_errors_total"):
        failures.append("beacon: the node restarts show in no rpc_errors_total")
    failures += [f"beacon metrics: {d}" for d in disagreements]
    if rss_start and rss_end and rss_end > rss_start * 1.10:
        failures.append(f"beacon watch RSS grew {rss_start} -> {rss_end} KiB (> 10 %)")
    return {
        "minutes": args.minutes, "block_time": args.block_time, "reorg_every": args.reorg_every,
        "blocks": len(canonical), "reorgs": reorgs, "node_restarts": chaos.node_restarts,
        "watch_restarts": by_rpc.restarts, "watch_kills": by_rpc.kills,
        "beacon_withholds": chaos.withholds,
        "lines": {name: r["lines"] for name, r in results.items()},
        "final_lines": {name: r["final_lines"] for name, r in results.items()},
        "retractions": {name: r["reorg_events"] for name, r in results.items()},
        "retracted_blocks": {name: r["retracted_blocks"] for name, r in results.items()},
        "final_retracted": sum(r["final_retracted"] for r in results.values()),
        "duplicates": sum(r["duplicates"] for r in results.values()),
        "missing_final": sum(r["missing_final"] for r in results.values()),
        "head": head, "last_final": {name: r["last_final"] for name, r in results.items()},
        "node_trouble_lines": {name: r["node_trouble_lines"] for name, r in results.items()},
        "outages_s": [round(b - a, 1) for a, b in chaos.outages],
        "rss_kib": {"start": rss_start, "end": rss_end,
                    "max": max((kib for _, kib in rss), default=None), "warm_up_s": warm},
        "metrics_agree": not disagreements, "work": str(work),
        "ok": not failures, "failures": failures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--block-time", type=int, default=2)
    parser.add_argument("--reorg-every", type=int, default=7)
    parser.add_argument("--kill-every", type=float, default=45.0)
    parser.add_argument("--node-every", type=float, default=240.0)
    parser.add_argument("--node-pause", type=float, default=5.0)
    parser.add_argument("--withhold-every", type=float, default=300.0)
    parser.add_argument("--withhold-for", type=float, default=45.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", help="Folder for the devnet, the stores and the stdout files.")
    args = parser.parse_args()
    figures = run(args)
    for failure in figures["failures"]:
        print(f"FAILED: {failure}")
    print(json.dumps(figures))
    sys.exit(0 if figures["ok"] else 1)


if __name__ == "__main__":
    main()
