"""Segmented audits against a node that costs (almost) nothing: does a second process scale? A
script, not a test.

    .venv/bin/python benchmarks/bench_replay_scaling.py [--quiet 400] [--segment-blocks 64]
        [--instructions]

Setup: the devnet (recompute/devnet/build.py) and --quiet empty blocks on anvil, and in front of
it a replay node: an HTTP JSON-RPC server (batches too) answering every call it has seen from
memory, keyed by method and parameters (a recorded answer replayed, as the project's replay
source answers a vector from its record; an unseen call is asked of anvil once and kept).
Warm-up: the audits below run once each through it, so that the measured runs are served from
memory (the misses of the measured runs are printed: 0 means anvil was not asked).

Measured: ``recompute watch --from 1 --to M --block-hash H --processes P --segment-blocks B``
for P = 1 and 2 (P local worker processes; their start is included), each run's wall time, the
CPU of recompute (the command and its workers: RUSAGE_CHILDREN) and of the replay node (this
process) per block, and the calls the replay node served (by method: the work that does not
depend on the machine's load); with ``--instructions``, the instructions the command and its
workers ran (valgrind), a CPU figure the load does not change either. On a machine shared with
other work the wall-time ratio is not the verifier's: the CPU per block is the figure to
compare; the projected throughput with W free cores is W x 1000 / (recompute CPU ms per block).
The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RECOMPUTE_ANVIL", str(ROOT / "node_modules"))

from recompute.devnet.anvil import Anvil, rpc_call  # noqa: E402
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build  # noqa: E402

CONFIG = ROOT / "examples" / "devnet-watch.toml"


class ReplayNode:
    """Answers from memory; an unseen call is asked of ``upstream`` once and kept."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.answers: dict[str, str] = {}  # method + params -> '"result": ...' JSON text
        self.misses = 0
        self.calls: Counter[str] = Counter()  # calls served, by method (the run's requests)
        self.lock = threading.Lock()
        node = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 -- http.server's name
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                calls = request if isinstance(request, list) else [request]
                parts = [f'{{"jsonrpc":"2.0","id":{json.dumps(c.get("id"))},{node.answer(c)}}}'
                         for c in calls]
                data = (f"[{','.join(parts)}]" if isinstance(request, list) else parts[0])
                body = data.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, call: dict) -> str:
        key = call["method"] + json.dumps(call.get("params", []), sort_keys=True)
        with self.lock:
            self.calls[call["method"]] += 1
        text = self.answers.get(key)
        if text is None:
            try:
                text = '"result":' + json.dumps(rpc_call(self.upstream, call["method"],
                                                         call.get("params", [])))
            except RuntimeError as exc:
                text = '"error":' + json.dumps({"code": -32000, "message": str(exc)})
            with self.lock:
                self.misses += 1
                self.answers[key] = text
        return text


def audit(url: str, last: int, top: str, processes: int, segment: int,
          counted: Path | None = None) -> tuple[float, float, str]:
    """(wall s, recompute CPU s, stdout) of one segmented audit; with ``counted`` (a folder),
    run under valgrind, which leaves there one log per process of the command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    under = [] if counted is None else [
        "valgrind", "--tool=callgrind", "--trace-children=yes", "--callgrind-out-file=/dev/null",
        # a forked worker counts from its fork (it would count its parent's instructions too)
        "--zero-before=PyOS_AfterFork_Child", f"--log-file={counted}/process.%p"]
    done = subprocess.run(
        [*under, sys.executable, "-m", "recompute", "watch", "--rpc", url, "--config",
         str(CONFIG), "--from", "1", "--to", str(last), "--block-hash", top,
         "--confirmations", "0", "--processes", str(processes), "--segment-blocks",
         str(segment)],
        capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"audit P={processes}: exit {done.returncode}: {done.stderr[-800:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def instructions(counted: Path) -> int:
    """The instructions valgrind counted in every process of one audit (its logs' sum)."""
    total = 0
    for log in counted.glob("process.*"):
        counts = [int(line.split()[-1]) for line in log.read_text().splitlines()
                  if "Collected :" in line]
        if not counts:  # e.g. a worker killed when it took longer than EXIT_WAIT to exit
            raise SystemExit(f"{log.name}: a process ended before valgrind counted it; the "
                             "count would be short: run again on a quieter machine")
        total += sum(counts)
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quiet", type=int, default=400)
    parser.add_argument("--segment-blocks", type=int, default=64)
    parser.add_argument("--instructions", action="store_true",
                        help="also run each measured audit under valgrind (callgrind) and "
                             "count the instructions of the command and its workers: a figure "
                             "the machine's load does not change (about 60 times slower)")
    args = parser.parse_args()
    print(f"cpus {os.cpu_count()}, load {os.getloadavg()[0]:.2f} (machine shared)")
    node = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP).start()
    try:
        build(node)
        for start in range(0, args.quiet, 100):  # in steps: one call stays within its timeout
            rpc_call(node.url, "anvil_mine", [hex(min(100, args.quiet - start)), hex(12)])
        last = int(rpc_call(node.url, "eth_blockNumber"), 16)
        top = rpc_call(node.url, "eth_getBlockByNumber", [hex(last), False])["hash"]
        replay = ReplayNode(node.url)
        for processes in (1, 2):  # warm-up: every call the audits make, recorded
            audit(replay.url, last, top, processes, args.segment_blocks)
        recorded = len(replay.answers)
        figures = {}
        outputs = {}
        for processes in (1, 2):
            replay.misses = 0
            replay.calls.clear()
            own = resource.getrusage(resource.RUSAGE_SELF)
            wall, cpu, out = audit(replay.url, last, top, processes, args.segment_blocks)
            own_after = resource.getrusage(resource.RUSAGE_SELF)
            served = (own_after.ru_utime - own.ru_utime) + (own_after.ru_stime - own.ru_stime)
            outputs[processes] = out
            figures[processes] = {
                "wall_s": round(wall, 2), "blocks_per_s": round(last / wall, 1),
                "recompute_cpu_ms_per_block": round(1000 * cpu / last, 2),
                "replay_node_cpu_ms_per_block": round(1000 * served / last, 2),
                "misses": replay.misses, "load": round(os.getloadavg()[0], 2),
                "calls": dict(sorted(replay.calls.items()))}
            if args.instructions:
                with tempfile.TemporaryDirectory() as folder:
                    audit(replay.url, last, top, processes, args.segment_blocks, Path(folder))
                    figures[processes]["instructions_per_block"] = round(
                        instructions(Path(folder)) / last)
            print(f"P={processes}: {figures[processes]}")
    finally:
        node.stop()
    one, two = figures[1], figures[2]
    print(f"blocks 1..{last}, {recorded} answers recorded; stdout identical: "
          f"{outputs[1] == outputs[2]}")
    print(f"2 processes vs 1: {one['wall_s'] / two['wall_s']:.2f}x the throughput; recompute "
          f"CPU a block {two['recompute_cpu_ms_per_block'] / one['recompute_cpu_ms_per_block']:.2f}"
          "x one process's")
    if args.instructions:
        print(f"instructions a block, 2 processes vs 1: "
              f"{two['instructions_per_block'] / one['instructions_per_block']:.3f}x")
    print(json.dumps({"blocks": last, "segment_blocks": args.segment_blocks,
                      "speedup_2_vs_1": round(one["wall_s"] / two["wall_s"], 2),
                      "cpu_per_block_ratio_2_vs_1": round(
                          two["recompute_cpu_ms_per_block"] / one["recompute_cpu_ms_per_block"],
                          2),
                      "identical": outputs[1] == outputs[2], "runs": figures}))


if __name__ == "__main__":
    main()
