"""Peak memory of a range audit whose node answers every proof request with a JSON bomb: a
64 MiB answer (under the answer cap) of ``[{},{},…]``, 22 million empty objects. A script, not
a test; loopback only, bounded in time and memory.

    .venv/bin/python benchmarks/bench_answer_bomb.py [--workers 8] [--blocks 16]
        [--max-seconds 300] [--memory-limit-gb 8] [--code DIR] [--honest]

Setup: the devnet (every history of ``recompute devnet up``) on a fresh anvil, then --blocks
empty blocks 12 s apart. A server on 127.0.0.1 relays each request to anvil, except that every
request holding an ``eth_getProof`` call is answered with the bomb (headers and the chain id
are relayed, so the audit reaches its proofs: with --workers threads fetching ahead, that many
bombs arrive at once). Measured: ``recompute watch --from --to --block-hash --workers W`` over
the empty blocks with the example config (examples/devnet-watch.toml), run by a small parent
process that prints the peak RSS of its child (``getrusage(RUSAGE_CHILDREN).ru_maxrss``: the
watch alone, not anvil or this script). --code DIR runs the recompute of another checkout
(e.g. a ``git worktree`` of an earlier commit) the same way. The watch is killed past
--max-seconds, and its address space is limited to --memory-limit-gb (RLIMIT_AS), so that a
recompute without the bound cannot take the machine: a run that hits either says so.
--honest relays every request (no bomb): the same audit's peak RSS without the attack.

The last line is one JSON object with the figures and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RECOMPUTE_ANVIL", str(ROOT / "node_modules"))

from recompute.devnet.anvil import Anvil, rpc_call  # noqa: E402
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build  # noqa: E402

OBJECTS = 22_000_000  # 3 bytes each: 66,000,001 bytes, under the 64 MiB answer cap
# The parent of the measured watch: it runs argv[1:] and prints its child's peak RSS in KiB
# (Linux: ru_maxrss is KiB) and its exit code; RLIMIT_AS from the environment.
MEASURE = """
import os, resource, subprocess, sys
limit = int(os.environ["BOMB_AS_LIMIT"])
def bound():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    code = subprocess.run(sys.argv[1:], preexec_fn=bound, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=float(os.environ["BOMB_SECONDS"]),
                          text=True)
    result, tail = code.returncode, (code.stderr.strip().splitlines() or [""])[-1]
except subprocess.TimeoutExpired:
    result, tail = "killed after the time bound", ""
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{peak} {result!s:.60} | {tail[:300]}")
"""


def bomb_server(upstream: str, honest: bool) -> tuple[ThreadingHTTPServer, dict[str, int]]:
    bomb = b"[" + b"{}," * (OBJECTS - 1) + b"{}]"
    counts = {"relayed": 0, "bombs": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802 -- http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if b"eth_getProof" in body and not honest:
                answer = bomb
                with lock:
                    counts["bombs"] += 1
            else:
                request = urllib.request.Request(upstream, data=body,
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=60) as response:
                    answer = response.read()
                with lock:
                    counts["relayed"] += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            try:
                self.wfile.write(answer)
            except OSError:  # the client gave up on it (its bound, or its deadline)
                self.close_connection = True

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    parser.add_argument("--memory-limit-gb", type=float, default=8.0)
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--honest", action="store_true")
    args = parser.parse_args()
    node = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP).start()
    server = None
    try:
        build(node)
        history = int(rpc_call(node.url, "eth_blockNumber"), 16)
        rpc_call(node.url, "anvil_mine", [hex(args.blocks), hex(12)])
        lo, hi = history + 1, history + args.blocks
        top = rpc_call(node.url, "eth_getBlockByNumber", [hex(hi), False])["hash"]
        server, counts = bomb_server(node.url, args.honest)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        watch = [sys.executable, "-m", "recompute", "watch", "--rpc", url, "--config",
                 str(ROOT / "examples" / "devnet-watch.toml"), "--from", str(lo), "--to",
                 str(hi), "--block-hash", top, "--confirmations", "0",
                 "--workers", str(args.workers)]
        env = dict(os.environ, BOMB_AS_LIMIT=str(int(args.memory_limit_gb * 2**30)),
                   BOMB_SECONDS=str(args.max_seconds))
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", MEASURE, *watch], cwd=args.code, env=env,
                              capture_output=True, text=True, check=True)
        seconds = time.monotonic() - started
        peak_kib, rest = done.stdout.strip().split(" ", 1)
        result, _, tail = rest.partition(" | ")
        load = os.getloadavg()
        figures = {"peak_rss_mib": round(int(peak_kib) / 1024), "exit": result,
                   "wall_s": round(seconds, 1), "workers": args.workers, "blocks": args.blocks,
                   "bombs_sent": counts["bombs"], "relayed": counts["relayed"],
                   "bomb_bytes": 3 * OBJECTS, "load_avg": [round(x, 1) for x in load],
                   "code": str(args.code), "honest": args.honest}
        print(f"peak RSS of the watch: {figures['peak_rss_mib']} MiB; exit {result}; "
              f"{seconds:.1f} s; {counts['bombs']} bomb answers sent; load {load[0]:.1f}")
        if tail:
            print(f"its last stderr line: {tail}")
        print(json.dumps(figures))
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
        node.stop()


if __name__ == "__main__":
    main()
