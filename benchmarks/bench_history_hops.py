"""One verdict at an old block: the header walk against hops through the history storage
contract (EIP-2935). A script, not a test.

    .venv/bin/python benchmarks/bench_history_hops.py [--depths 1000,8000,20000]

Setup: anvil (hardfork prague: the contract is in its genesis) grown to max(depths) + 10
empty blocks, its states kept on disk (``--max-persisted-states``) so that old blocks' states
can be proven; in front of it a relay that counts HTTP requests, JSON-RPC calls by method and
the bytes it returns. Measured, for each depth D and each ``--history`` (walk, hops):
``recompute proof --checkpoint HEAD --block HEAD-D --address <history contract> --slot 0``
(a VERIFIED-GOOD verdict at the old block, pinned by the head's hash), its requests, calls,
bytes and CPU (the command: RUSAGE_CHILDREN). The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RECOMPUTE_ANVIL", str(ROOT / "node_modules"))

from recompute.devnet.anvil import Anvil, rpc_call  # noqa: E402

HISTORY = "0x0000F90827F1C53a10cb7A02335B175320002935"


class CountingRelay:
    """Relays every request to ``upstream`` unchanged; counts requests, calls and bytes."""

    def __init__(self, upstream: str):
        self.requests = 0
        self.calls: Counter[str] = Counter()
        self.bytes = 0
        lock = threading.Lock()
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 -- http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = json.loads(body)
                calls = request if isinstance(request, list) else [request]
                forwarded = urllib.request.Request(upstream, data=body, headers={
                    "Content-Type": "application/json"})
                with urllib.request.urlopen(forwarded, timeout=120) as response:
                    answer = response.read()
                with lock:
                    relay.requests += 1
                    relay.calls.update(c.get("method", "?") for c in calls)
                    relay.bytes += len(answer)
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def reset(self) -> None:
        self.requests, self.bytes = 0, 0
        self.calls.clear()


def verdict(relay: CountingRelay, head_hash: str, number: int, history: str) -> dict:
    relay.reset()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "recompute", "proof", "--rpc", relay.url, "--checkpoint",
         head_hash, "--block", str(number), "--address", HISTORY, "--slot", "0",
         "--history", history, "--json"], capture_output=True, text=True, cwd=ROOT, timeout=1800)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"--history {history} at {number}: exit {done.returncode}: "
                         f"{(done.stdout + done.stderr)[-600:]}")
    out = json.loads(done.stdout)
    path = out["evidence"]["anchor"]["history_path"]
    return {"verdict": out["verdict"], "block_hash": out["evidence"]["block"]["hash"],
            "via": path["via"], "requests": relay.requests, "calls": sum(relay.calls.values()),
            "by_method": dict(relay.calls), "kbytes": round(relay.bytes / 1024, 1),
            "cpu_s": round((after.ru_utime - before.ru_utime)
                           + (after.ru_stime - before.ru_stime), 2),
            "wall_s": round(wall, 2), "load": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--depths", default="1000,8000,20000")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    print(f"cpus {os.cpu_count()}, load {os.getloadavg()[0]:.2f} (machine shared)", flush=True)
    # its states beyond memory persisted in the folder anvil is given, removed when it stops
    node = Anvil(extra_args=["--max-persisted-states", "100000"]).start()
    try:
        grow = max(depths) + 10
        started = time.monotonic()
        for start in range(0, grow, 500):  # in steps: one call stays within its timeout
            rpc_call(node.url, "anvil_mine", [hex(min(500, grow - start))], timeout=600)
        head = rpc_call(node.url, "eth_getBlockByNumber", ["latest", False])
        top = int(head["number"], 16)
        print(f"grown to block {top} in {time.monotonic() - started:.0f} s", flush=True)
        relay = CountingRelay(node.url)
        figures: dict[str, dict[str, dict]] = {}
        for depth in depths:
            number = top - depth
            want = rpc_call(node.url, "eth_getBlockByNumber", [hex(number), False])["hash"]
            row = {}
            for history in ("hops", "walk"):
                row[history] = verdict(relay, head["hash"], number, history)
                assert row[history]["block_hash"] == want, (depth, history)
                print(f"depth {depth} --history {history}: {json.dumps(row[history])}",
                      flush=True)
            figures[str(depth)] = row
    finally:
        node.stop()
    for depth, row in figures.items():
        hops, walk = row["hops"], row["walk"]
        print(f"depth {depth}: hops {hops['requests']} requests, {hops['kbytes']} KiB, "
              f"{hops['cpu_s']} s CPU; walk {walk['requests']} requests, {walk['kbytes']} KiB, "
              f"{walk['cpu_s']} s CPU")
    print(json.dumps({"head": top, "figures": figures}))


if __name__ == "__main__":
    main()
