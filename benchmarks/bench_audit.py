"""Range audits past one process: blocks per second of ``recompute watch --from 1 --to M`` with
``examples/devnet-watch.toml`` (its 7 checks of the static devnet, every recipe area) over the
devnet history plus --quiet blocks mined after it. A script, not a test.

    .venv/bin/python benchmarks/bench_audit.py [--quiet 2000] [--segment-blocks 64]

Setup: a fresh anvil, the whole devnet (recompute/devnet/build.py), then --quiet empty blocks.
Measured, each through the real command (``python -m recompute watch`` as a subprocess), wall
time of the whole command (process start, anchoring, a local cluster's start included):
  (a) one process: the thread auditor (``--workers 4``), the baseline;
  (b) one process in segments with ``--store`` (the coordinator and the store's cost);
  (c) ``--processes 2``: 2 local worker processes;
  (d) ``--cluster``: a scheduler and 2 workers started here with ``dask scheduler`` / ``dask
      worker`` on 127.0.0.1 (TCP on loopback), the audit as a client;
  (e) per-segment overhead: (b) again with segments of a quarter of the size; the extra time
      divided by the extra segments;
and, per audited block, the CPU seconds of recompute (the command, its local workers, an
outside cluster's workers) and of anvil (from /proc) in each run: on a shared machine wall time
depends on the load, CPU time does not; throughput with W free cores is about
W / (recompute CPU per block), until the node's CPU per block says it is the limit. Every
run's stdout must be byte-identical to (a)'s. Printed with ``os.cpu_count()`` and the load
average; the last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# the checkout's pinned anvil, named (recompute never looks in the working directory:
# docs/executables.md); a value already in the environment wins
os.environ.setdefault("RECOMPUTE_ANVIL", str(ROOT / "node_modules"))

from recompute.devnet.anvil import Anvil, free_port  # noqa: E402
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build  # noqa: E402

EXAMPLE = ROOT / "examples" / "devnet-watch.toml"
# The example's checks of the static devnet (7): its last section watches the living devnet
# from block 227 on, where this script's quiet blocks are; cut off, the figures stay comparable
# with earlier runs.
CONFIG = Path(tempfile.mkdtemp(prefix="bench-audit-")) / "devnet-watch.toml"
CONFIG.write_text(EXAMPLE.read_text().split("# ---- The living devnet")[0])
BIN = Path(sys.executable).parent


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def audit(node: Anvil, last: int, *extra: str, workers: list[int] = ()
          ) -> tuple[float, float, float, str]:
    """(wall seconds, anvil CPU seconds, recompute CPU seconds, stdout) of one range audit
    1..last; recompute's CPU is the command's and its reaped children's (a local cluster's
    workers), plus that of the ``workers`` processes of an outside cluster."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = cpu_seconds(node.process.pid), children_cpu(), sum(map(cpu_seconds, workers))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "recompute", "watch", "--rpc", node.url,
                           "--config", str(CONFIG), "--from", "1", "--to", str(last), *extra],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.monotonic() - started
    if done.returncode != 1:  # the lying meter is VERIFIED-BAD from block 69
        raise SystemExit(f"audit {extra}: exit {done.returncode}\n{done.stderr[-2000:]}")
    ours = children_cpu() - before[1] + sum(map(cpu_seconds, workers)) - before[2]
    return wall, cpu_seconds(node.process.pid) - before[0], ours, done.stdout


class Cluster:
    """A scheduler and two one-thread workers on 127.0.0.1, stopped by process id."""

    def __init__(self, directory: Path):
        self.address = f"tcp://127.0.0.1:{free_port()}"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        common = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
        self.processes = [subprocess.Popen(
            [str(BIN / "dask"), "scheduler", "--port", self.address.rsplit(":", 1)[1],
             *common], env=env, cwd=directory, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)]
        for n in range(2):
            self.processes.append(subprocess.Popen(
                [str(BIN / "dask"), "worker", self.address, "--nthreads", "1", "--name",
                 f"w{n}", "--local-directory", str(directory), *common], env=env,
                cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        with Client(self.address, timeout="30s", set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)
            self.worker_pids = list(client.run(os.getpid).values())

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", type=int, default=2000, help="empty blocks after the history")
    parser.add_argument("--segment-blocks", type=int, default=64)
    args = parser.parse_args()
    cores = os.cpu_count()
    size = args.segment_blocks
    with Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP) as node, \
            tempfile.TemporaryDirectory() as tmp:
        t = time.monotonic()
        build(node)
        for start in range(0, args.quiet, 100):  # in steps: a loaded machine mines slowly
            node.rpc("anvil_mine", hex(min(100, args.quiet - start)))
        last = int(node.rpc("eth_blockNumber"), 16)
        print(f"machine: {cores} core(s); devnet history + {args.quiet} quiet blocks: blocks "
              f"1..{last}, 7 checks ({time.monotonic() - t:.1f}s setup)")
        runs: dict[str, tuple[float, float, float]] = {}

        def measure(name: str, *extra: str, reference: str | None = None,
                    workers: list[int] = ()) -> str:
            wall, node_cpu, ours, out = audit(node, last, *extra, workers=workers)
            if reference is not None and out != reference:
                raise SystemExit(f"{name}: stdout differs from the one-process run")
            runs[name] = (wall, node_cpu, ours)
            print(f"{name:<34} {last / wall:6.1f} blocks/s {wall:6.1f}s wall  CPU/block: "
                  f"recompute {1000 * ours / last:5.1f} ms, anvil {1000 * node_cpu / last:4.1f} "
                  "ms")
            return out

        one = measure("(a) 1 process, threads")
        measure("(b) 1 process, segments + store", "--segment-blocks", str(size), "--store",
                str(Path(tmp) / "b.sqlite"), reference=one)
        measure("(c) --processes 2", "--segment-blocks", str(size), "--processes", "2",
                reference=one)
        cluster = Cluster(Path(tmp))
        try:
            measure("(d) --cluster, 2 workers over TCP", "--segment-blocks", str(size),
                    "--cluster", cluster.address, reference=one,
                    workers=cluster.worker_pids)
        finally:
            cluster.stop()
        small = max(1, size // 4)
        measure(f"(e) as (b), segments of {small}", "--segment-blocks", str(small), "--store",
                str(Path(tmp) / "e.sqlite"), reference=one)
    segments_b, segments_e = -(-last // size), -(-last // small)
    b, e = runs["(b) 1 process, segments + store"], runs[f"(e) as (b), segments of {small}"]
    overhead = (e[0] - b[0]) / (segments_e - segments_b)
    overhead_cpu = (e[2] - b[2]) / (segments_e - segments_b)
    rate = {k: last / v[0] for k, v in runs.items()}
    a, c, d = (rate["(a) 1 process, threads"], rate["(c) --processes 2"],
               rate["(d) --cluster, 2 workers over TCP"])
    print(f"--processes 2 / 1 process: {c / a:.2f}x; --cluster / 1 process: {d / a:.2f}x; "
          f"per-segment overhead {overhead * 1000:.0f} ms wall, {overhead_cpu * 1000:.0f} ms "
          f"recompute CPU ({segments_e - segments_b} more segments)")
    load = os.getloadavg()[1]
    print(f"load average (5 min) at the end: {load:.1f} on {cores} core(s)")
    print(json.dumps({
        "cpu_count": cores, "blocks": last, "checks": 7, "quiet_blocks": args.quiet,
        "segment_blocks": size,
        "one_process_blocks_per_s": round(a, 2),
        "segments_store_blocks_per_s": round(rate["(b) 1 process, segments + store"], 2),
        "processes_2_blocks_per_s": round(c, 2), "cluster_2_blocks_per_s": round(d, 2),
        "processes_2_speedup": round(c / a, 2), "cluster_2_speedup": round(d / a, 2),
        "per_segment_overhead_s": round(overhead, 3),
        "per_segment_overhead_cpu_s": round(overhead_cpu, 3),
        "recompute_cpu_ms_per_block": {k.split(" ", 1)[0]: round(1000 * v[2] / last, 2)
                                       for k, v in runs.items()},
        "anvil_cpu_ms_per_block": {k.split(" ", 1)[0]: round(1000 * v[1] / last, 2)
                                   for k, v in runs.items()},
        "load_average_5min": round(load, 2)}))


if __name__ == "__main__":
    main()
