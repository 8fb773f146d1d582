"""``recompute watch`` throughput and latency: 400 checks (amm/layer-status, 4 layers x 100
subjects) on a devnet of our own. A script, not a test.

    .venv/bin/python benchmarks/bench_watch.py [--subjects 100] [--range-blocks 40]
                                               [--follow-blocks 10] [--workers 4]

Setup: a fresh anvil with 101 dev accounts, one AgentMeditationRegistry, 100 subjects each
enrolled from its own account in its own block (the devnet's worked-example policy and
baseline, AMM §Roles and authorization), then --range-blocks empty blocks.
Measured, both through the real command (``python -m recompute watch`` as a subprocess):
  (a) range mode: ``--from A --to B`` over the empty blocks after the enrolments, every
      check at every block; blocks per second from the first to the last stdout line (the
      anchoring walk and process start are excluded, reported separately as wall time);
  (b) follow mode (``--poll 0.1``): a block mined every --interval seconds; latency from
      ``evm_mine`` returning to the last line of that block on stdout, mean and max.
Printed with ``os.cpu_count()``; the last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recompute.devnet import history_amm as amm  # noqa: E402
from recompute.devnet.anvil import Anvil  # noqa: E402
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP  # noqa: E402
from recompute.devnet.contracts import connect  # noqa: E402
from recompute.devnet.driver import Driver  # noqa: E402


def setup(node: Anvil, subjects: int, empty: int) -> tuple[str, list[str], int, int]:
    """Deploy, enrol ``subjects`` accounts, mine ``empty`` blocks: (registry, subjects,
    first empty block, last empty block)."""
    w3 = connect(node.url)
    driver = Driver(w3, start_timestamp=node.timestamp)
    registry = driver.deploy(amm.REGISTRY, sender=driver.accounts[0])
    enrolled = driver.accounts[1:subjects + 1]
    for subject in enrolled:
        driver.tx(registry.functions.enroll(list(amm.EXAMPLE_PRE_COMMITMENTS),
                                            amm.EXAMPLE_POLICY, amm.ZERO_ADDRESS, 0),
                  sender=subject)
    first = driver.mine()
    for _ in range(empty - 1):
        driver.mine()
    return registry.address, enrolled, first, w3.eth.block_number


def write_config(path: Path, registry: str, subjects: list[str]) -> int:
    out = []
    for i, subject in enumerate(subjects):
        for layer in range(4):
            out += ["[[check]]", f'name = "s{i:03d}/layer-{layer}"',
                    'recipe = "amm/layer-status"', f'address = "{registry}"',
                    f'params = {{ subject = "{subject}", layer = {layer} }}', ""]
    path.write_text("\n".join(out))
    return len(subjects) * 4


class Reader:
    """stdout lines of a watch with their arrival times."""

    def __init__(self, process: subprocess.Popen):
        self.arrivals: list[tuple[float, dict]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self.thread.start()

    def _read(self, process) -> None:
        for text in process.stdout:
            now = time.monotonic()
            with self.lock:
                self.arrivals.append((now, json.loads(text)))

    def lines_of(self, number: int) -> list[tuple[float, dict]]:
        with self.lock:
            return [(t, x) for t, x in self.arrivals if x.get("block") == number]


def watch(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "recompute", "watch", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=ROOT)


def range_mode(url: str, config: Path, first: int, last: int, workers: int, checks: int):
    started = time.monotonic()
    process = watch("--rpc", url, "--config", str(config), "--from", str(first),
                    "--to", str(last), "--workers", str(workers), "--confirmations", "0")
    reader = Reader(process)
    code = process.wait()
    reader.thread.join(10)
    wall = time.monotonic() - started
    times = [t for t, _ in reader.arrivals]
    lines = len(times)
    if code != 0 or lines != checks * (last - first + 1):
        raise SystemExit(f"range mode: exit {code}, {lines} lines")
    # first block's lines out .. last block's lines out: (blocks - 1) block intervals
    sustained = (last - first) / (times[-1] - times[checks - 1])
    return sustained, wall


def follow_mode(node: Anvil, config: Path, blocks: int, interval: float, checks: int):
    process = watch("--rpc", node.url, "--config", str(config), "--poll", "0.1",
                    "--confirmations", "0")
    reader = Reader(process)
    try:
        start = int(node.rpc("eth_blockNumber"), 16)
        _wait(lambda: len(reader.lines_of(start)) >= checks, 120, "the first block")
        latencies = []
        for _ in range(blocks):
            node.rpc("evm_mine")
            mined = time.monotonic()
            number = int(node.rpc("eth_blockNumber"), 16)
            _wait(lambda n=number: len(reader.lines_of(n)) >= checks, 120, f"block {number}")
            latencies.append(max(t for t, _ in reader.lines_of(number)) - mined)
            time.sleep(max(interval - latencies[-1], 0.0))
    finally:
        process.terminate()
        process.wait(20)
    return sum(latencies) / len(latencies), max(latencies)


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=100)
    parser.add_argument("--range-blocks", type=int, default=40)
    parser.add_argument("--follow-blocks", type=int, default=10)
    parser.add_argument("--interval", type=float, default=3.0,
                        help="seconds between blocks mined in follow mode")
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    cores = os.cpu_count()
    print(f"machine: {cores} core(s); {args.subjects} subjects x 4 layers")
    with Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP, accounts=args.subjects + 1) as node, \
            tempfile.TemporaryDirectory() as tmp:
        t = time.monotonic()
        registry, subjects, first, last = setup(node, args.subjects, args.range_blocks)
        print(f"setup: {len(subjects)} subjects enrolled, blocks {first}..{last} to audit "
              f"({time.monotonic() - t:.1f}s)")
        config = Path(tmp) / "checks.toml"
        checks = write_config(config, registry, subjects)
        rate, wall = range_mode(node.url, config, first, last, args.workers, checks)
        print(f"range mode: {last - first + 1} blocks x {checks} checks, {args.workers} "
              f"workers: {rate:.2f} blocks/s sustained ({rate * checks:.0f} checks/s); "
              f"{wall:.1f}s wall with process start and anchoring")
        mean, worst = follow_mode(node, config, args.follow_blocks, args.interval, checks)
        print(f"follow mode: {args.follow_blocks} blocks, new block -> its last line: "
              f"mean {mean * 1000:.0f} ms, max {worst * 1000:.0f} ms (poll 0.1 s)")
    print(json.dumps({
        "cpu_count": cores, "checks": checks, "subjects": len(subjects),
        "range_blocks": last - first + 1, "range_workers": args.workers,
        "range_blocks_per_s": round(rate, 3), "range_checks_per_s": round(rate * checks, 1),
        "range_wall_s": round(wall, 2), "follow_blocks": args.follow_blocks,
        "follow_poll_s": 0.1, "follow_mean_latency_s": round(mean, 3),
        "follow_max_latency_s": round(worst, 3)}))


if __name__ == "__main__":
    main()
