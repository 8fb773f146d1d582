"""What one L2 verdict pinned through L1 costs, against the same verdict pinned by the L2 block's
hash, in one run. A script, not a test.

    .venv/bin/python benchmarks/bench_l2.py [--rounds 5]

Setup: the scripted L1 + L2 anvil pair of the op-stack anchor's tests
(tests/l2/op_stack_pair.py: contracts-bedrock 0.17.3's code on L1, seven games made by the real
factory), a counting proxy (tests/rpcproxy.py) in front of each node. Measured, alternately,
``--rounds`` times each:

  (a) ``recompute proof --l2-portal P --l2-game G --l1-rpc L1 --l1-block-hash H`` (the game
      named): one slot of the L2 registry at the game's L2 block;
  (b) the same without ``--l2-game``, ``-b`` the game's block (the factory's list scanned from
      its newest game down to the closest usable one);
  (c) ``recompute proof --rpc L2 --block-hash <that L2 block's hash>``: the same slot, the same
      verdict, pinned by the hash the user brings;
  (d) (a) through an L1 proxy that refuses JSON-RPC batches: every L1 call its own request, as
      before the L1 side asked together what it could (recompute/l2/l1_reads.py).

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
from tests.l2.op_stack_pair import PORTAL, REGISTRY, build_pair, hx  # noqa: E402
from tests.rpcproxy import RpcProxy  # noqa: E402


def run(args: list[str], proxies: dict[str, RpcProxy]) -> dict:
    for proxy in proxies.values():
        proxy.reset()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "recompute", "proof", *args, "--address",
                           hx(REGISTRY), "--slot", "0", "--expect", "0=11", "--json"],
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
    l1, l2 = Anvil().start(), Anvil().start()
    try:
        pair = build_pair(l1, l2)
        with RpcProxy(l1.url) as p1, RpcProxy(l2.url) as p2, \
                RpcProxy(l1.url, batches=False) as p1_plain:
            l1_hash = pair.l1_head()
            l2_hash = rpc_call(l2.url, "eth_getBlockByNumber", [hex(11), False])["hash"]
            through = ["--rpc", p2.url, "--l2-portal", hx(PORTAL), "--l1-rpc", p1.url,
                       "--l1-block-hash", l1_hash]
            cases = {
                "a_l2_game_named": (through + ["--l2-game", hx(pair.games["final"])],
                                    {"l1": p1, "l2": p2}),
                "b_l2_games_scanned": (through + ["-b", "11"], {"l1": p1, "l2": p2}),
                "c_l2_block_hash": (["--rpc", p2.url, "--block-hash", l2_hash], {"l2": p2}),
                "d_l2_game_named_no_batches": (
                    ["--rpc", p2.url, "--l2-portal", hx(PORTAL), "--l1-rpc", p1_plain.url,
                     "--l1-block-hash", l1_hash, "--l2-game", hx(pair.games["final"])],
                    {"l1": p1_plain, "l2": p2}),
            }
            results: dict[str, list[dict]] = {name: [] for name in cases}
            for _ in range(rounds):
                for name, (args, proxies) in cases.items():
                    results[name].append(run(args, proxies))
    finally:
        l1.stop()
        l2.stop()
    load = os.getloadavg()
    summary = {}
    for name, runs in results.items():
        first = runs[-1]
        summary[name] = {key: value for key, value in first.items() if key != "wall_s"}
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
