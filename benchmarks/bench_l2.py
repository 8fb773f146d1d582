"""What one L2 verdict pinned through L1 costs, against the same verdict pinned by the L2 block's
hash, in one run. A script, not a test.

    .venv/bin/python benchmarks/bench_l2.py [--rounds 5] [--pair games|registry]

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

``--pair registry``: the release pair of the registry path's tests (tests/l2/release_pair.py:
an L1 anvil on chain id 1 with OP Mainnet's portal and AnchorStateRegistry proxies naming
op-contracts v7's listed implementations, the registry anchored on a game of L2 block 11;
docs/l2.md §Current releases), measured the same way:

  (a) ``recompute proof --chain op-mainnet --l1-rpc L1 --l1-block-hash H``: the slot at the
      anchor root's L2 block (11);
  (b) the same at L2 block 7 (``-b 7``: reached below the anchored block);
  (c) the L2-block-hash pin of block 11, as above.

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
from tests.l2.release_pair import build_release_pair  # noqa: E402
from tests.rpcproxy import RpcProxy  # noqa: E402

Cases = dict[str, tuple[list[str], str, dict[str, RpcProxy]]]  # name -> (args, --expect, proxies)


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


def measure(cases: Cases, rounds: int) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (args, expect, proxies) in cases.items():
            results[name].append(run(args, expect, proxies))
    return results


def games_pair(l1: Anvil, l2: Anvil, rounds: int) -> dict[str, list[dict]]:
    pair = build_pair(l1, l2)
    with RpcProxy(l1.url) as p1, RpcProxy(l2.url) as p2, \
            RpcProxy(l1.url, batches=False) as p1_plain:
        l1_hash = pair.l1_head()
        l2_hash = rpc_call(l2.url, "eth_getBlockByNumber", [hex(11), False])["hash"]
        through = ["--rpc", p2.url, "--l2-portal", hx(PORTAL), "--l1-rpc", p1.url,
                   "--l1-block-hash", l1_hash]
        return measure({
            "a_l2_game_named": (through + ["--l2-game", hx(pair.games["final"])], "0=11",
                                {"l1": p1, "l2": p2}),
            "b_l2_games_scanned": (through + ["-b", "11"], "0=11", {"l1": p1, "l2": p2}),
            "c_l2_block_hash": (["--rpc", p2.url, "--block-hash", l2_hash], "0=11", {"l2": p2}),
            "d_l2_game_named_no_batches": (
                ["--rpc", p2.url, "--l2-portal", hx(PORTAL), "--l1-rpc", p1_plain.url,
                 "--l1-block-hash", l1_hash, "--l2-game", hx(pair.games["final"])], "0=11",
                {"l1": p1_plain, "l2": p2}),
        }, rounds)


def registry_pair(l1: Anvil, l2: Anvil, rounds: int) -> dict[str, list[dict]]:
    release = build_release_pair(l1, l2)  # kept alive while the commands run
    with RpcProxy(l1.url) as p1, RpcProxy(l2.url) as p2:
        l1_hash = rpc_call(l1.url, "eth_getBlockByNumber", ["latest", False])["hash"]
        l2_hash = rpc_call(l2.url, "eth_getBlockByNumber", [hex(11), False])["hash"]
        through = ["--rpc", p2.url, "--chain", "op-mainnet", "--l1-rpc", p1.url,
                   "--l1-block-hash", l1_hash]
        results = measure({
            "a_registry_root": (through, "0=11", {"l1": p1, "l2": p2}),
            "b_registry_below": (through + ["-b", "7"], "0=7", {"l1": p1, "l2": p2}),
            "c_l2_block_hash": (["--rpc", p2.url, "--block-hash", l2_hash], "0=11", {"l2": p2}),
        }, rounds)
    del release
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pair", choices=("games", "registry"), default="games")
    options = parser.parse_args()
    rounds = options.rounds
    registry = options.pair == "registry"
    l1, l2 = Anvil(chain_id=1).start() if registry else Anvil().start(), Anvil().start()
    try:
        results = (registry_pair if registry else games_pair)(l1, l2, rounds)
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
    print(json.dumps({"load": load, "rounds": rounds, "pair": options.pair, **summary}))


if __name__ == "__main__":
    main()
