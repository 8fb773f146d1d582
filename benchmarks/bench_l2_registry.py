"""What one L2 verdict anchored by a standard release's AnchorStateRegistry costs (docs/l2.md
§Current releases), against the same verdict pinned by the L2 block's hash, in one run. A
script, not a test.

    .venv/bin/python benchmarks/bench_l2_registry.py [--rounds 5]

Setup: the release pair of the registry path's tests (tests/l2/release_pair.py: an L1 anvil on
chain id 1 with OP Mainnet's portal and AnchorStateRegistry proxies naming op-contracts v7's
listed implementations, the registry anchored on a game of L2 block 11), a counting proxy
(tests/rpcproxy.py) in front of each node. Measured, alternately, ``--rounds`` times each:

  (a) ``recompute proof --chain op-mainnet --l1-rpc L1 --l1-block-hash H``: one slot of the L2
      registry at the anchor root's L2 block (11);
  (b) the same at L2 block 7 (``-b 7``: reached below the anchored block);
  (c) ``recompute proof --rpc L2 --block-hash <L2 block 11's hash>``: the same slot, the same
      verdict, pinned by the hash the user brings.

For each: HTTP requests and JSON-RPC calls by method, to L1 and to L2, and the median wall time
of a whole command (a fresh process: start-up included). The load average is printed beside
the figures; the last line is one JSON object with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RECOMPUTE_ANVIL", str(ROOT / "node_modules"))

from recompute.devnet.anvil import Anvil, rpc_call  # noqa: E402
from tests.l2.op_stack_pair import REGISTRY, hx  # noqa: E402
from tests.l2.release_pair import build_release_pair  # noqa: E402
from tests.rpcproxy import RpcProxy  # noqa: E402


def run(args: list[str], expect: str, proxies: dict[str, RpcProxy]) -> dict:
    for proxy in proxies.values():
        proxy.reset()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "recompute", "proof", *args, "--address",
                           hx(REGISTRY), "--slot", "0", "--expect", expect, "--json"],
                          capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - start
    out = json.loads(done.stdout)
    assert out["verdict"] == "VERIFIED-GOOD", out
    return {"wall_s": wall, **{f"{name}_requests": proxy.requests
                               for name, proxy in proxies.items()},
            **{f"{name}_calls": dict(proxy.methods) for name, proxy in proxies.items()}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    l1, l2 = Anvil(chain_id=1).start(), Anvil().start()
    try:
        release = build_release_pair(l1, l2)
        with RpcProxy(l1.url) as p1, RpcProxy(l2.url) as p2:
            l1_hash = rpc_call(l1.url, "eth_getBlockByNumber", ["latest", False])["hash"]
            l2_hash = rpc_call(l2.url, "eth_getBlockByNumber", [hex(11), False])["hash"]
            through = ["--rpc", p2.url, "--chain", "op-mainnet", "--l1-rpc", p1.url,
                       "--l1-block-hash", l1_hash]
            cases = {
                "a_registry_root": (through, "0=11", {"l1": p1, "l2": p2}),
                "b_registry_below": (through + ["-b", "7"], "0=7", {"l1": p1, "l2": p2}),
                "c_l2_block_hash": (["--rpc", p2.url, "--block-hash", l2_hash], "0=11",
                                    {"l2": p2}),
            }
            results: dict[str, list[dict]] = {name: [] for name in cases}
            for _ in range(rounds):
                for name, (args, expect, proxies) in cases.items():
                    results[name].append(run(args, expect, proxies))
        del release
    finally:
        l1.stop()
        l2.stop()
    load = os.getloadavg()
    summary = {}
    for name, runs in results.items():
        summary[name] = {key: value for key, value in runs[-1].items() if key != "wall_s"}
        summary[name]["median_wall_s"] = round(statistics.median(r["wall_s"] for r in runs), 3)
    base = summary["c_l2_block_hash"]["median_wall_s"]
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {rounds} rounds")
    for name, figures in summary.items():
        calls = ", ".join(f"{side}: {figures.get(side + '_requests', 0)} HTTP "
                          f"{figures.get(side + '_calls', {})}" for side in ("l1", "l2"))
        print(f"{name}: median {figures['median_wall_s']:.3f} s "
              f"({figures['median_wall_s'] / base:.2f}x the L2-block-hash pin); {calls}")
    print(json.dumps({"load": load, "rounds": rounds, **summary}))


if __name__ == "__main__":
    main()
