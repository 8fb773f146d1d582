"""What recompute costs the node: HTTP requests, JSON-RPC calls by method, the node's own CPU
time, and a provider's compute units, per block. A script, not a test.

    .venv/bin/python benchmarks/bench_node_cost.py [--quiet-blocks 300] [--baseline DIR]

--baseline DIR: (a)-(d) also with the recompute of another checkout (``python -m recompute``
run in DIR, e.g. a ``git worktree`` of an earlier commit), on the same chain in the same run.

Setup: the devnet (every history of ``recompute devnet up``) on a fresh anvil, then
--quiet-blocks empty blocks 12 s apart; a counting proxy (tests/rpcproxy.py: it relays
JSON-RPC batches as batches) between each client and anvil. Measured, each in turn:

  (a) ``recompute watch --from --to --block-hash`` over the quiet blocks, with the example
      config (examples/devnet-watch.toml);
  (b) the same over the history (block 1 to the last history block);
  (c) ``recompute watch --block-hash <first quiet block> --max-blocks N`` following the quiet
      blocks up to the head (a follower catching up);
  (d) one ``recompute step`` verdict (amm/layer-status at the head);
  (e) the raw floor over the quiet blocks: per block one header and one account proof per
      contract the checks read, sent as one JSON-RPC batch (what a proof-checking client cannot
      do without);
  (f) a view-calling bot on the same checks over the quiet blocks: per block the header by
      number, then one ``eth_call`` per check (the first view function its recipe names,
      recompute.recipes.plan.ViewCheck), one HTTP request each, as a bot that trusts the
      node's view functions does.

The node's CPU is anvil's process's (utime + stime from /proc/<pid>/stat) over each run,
divided by the blocks of the run. Everything a run costs is counted in it (a watch's cold
first block, its walk down parent links), so per-block figures of short runs include start-up.
The machine is shared: the load average is printed beside the figures; the node's CPU time
is its own, but caches and frequency scaling are shared too.

Compute units: the per-method table published by Gelato RPC (docs.gelato.network/
developer-services/rpc-nodes/compute-units, "CU Costs for Common Calls", as read on
2026-12-01; its "Last updated" date was not in the copy read), where a batch costs the sum of
its calls: eth_getProof 21, eth_getBlockByHash 21, eth_getBlockByNumber 16, eth_call 26,
eth_getBlockReceipts 500, eth_getTransactionReceipt 15, eth_blockNumber 10, eth_chainId 0.
Alchemy's table (alchemy.com/docs/reference/compute-unit-costs, read the same day) is close:
eth_getProof 20, eth_getBlockByHash 20, eth_getBlockByNumber 20, eth_call 26.

The last line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RECOMPUTE_ANVIL", str(ROOT / "node_modules"))

from recompute.core.keccak import keccak256  # noqa: E402
from recompute.devnet.anvil import Anvil, rpc_call  # noqa: E402
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build  # noqa: E402
from recompute.watch.config import load_config  # noqa: E402
from tests.rpcproxy import RpcProxy  # noqa: E402

CONFIG = ROOT / "examples" / "devnet-watch.toml"
# Gelato RPC, "CU Costs for Common Calls" (see the module docstring): a batch is the sum of
# its calls
COMPUTE_UNITS = {"eth_getProof": 21, "eth_getBlockByHash": 21, "eth_getBlockByNumber": 16,
                 "eth_call": 26, "eth_getBlockReceipts": 500, "eth_getTransactionReceipt": 15,
                 "eth_blockNumber": 10, "eth_chainId": 0}
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (/proc/<pid>/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Run:
    """What one client cost the node: requests, calls, CPU; per block."""

    def __init__(self, name: str, blocks: int, proxy: RpcProxy, cpu: float, seconds: float):
        self.name = name
        self.blocks = blocks
        self.requests = proxy.requests
        self.methods = dict(proxy.methods)
        self.cpu = cpu
        self.seconds = seconds

    @property
    def units(self) -> int:
        return sum(COMPUTE_UNITS.get(m, 20) * n for m, n in self.methods.items())

    def figures(self) -> dict:
        b = self.blocks
        return {"blocks": b, "http_requests_per_block": round(self.requests / b, 3),
                "calls_per_block": {m: round(n / b, 3) for m, n in sorted(self.methods.items())},
                "node_cpu_ms_per_block": round(1000 * self.cpu / b, 2),
                "compute_units_per_block": round(self.units / b, 1),
                "wall_s": round(self.seconds, 2)}


def measure(name: str, node: Anvil, proxy: RpcProxy, blocks: int, action) -> Run:
    proxy.reset()
    before, started = cpu_seconds(node.process.pid), time.monotonic()
    action()
    cpu = cpu_seconds(node.process.pid) - before
    return Run(name, blocks, proxy, cpu, time.monotonic() - started)


def watch(url: str, *args: object, code: Path = ROOT) -> None:
    done = subprocess.run([sys.executable, "-m", "recompute", "watch", "--rpc", url,
                           "--config", str(CONFIG), *map(str, args)],
                          capture_output=True, text=True, cwd=code)
    if done.returncode not in (0, 1):
        raise SystemExit(f"watch {args}: exit {done.returncode}: {done.stderr[-800:]}")


def post(url: str, body: object) -> object:
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def floor(url: str, hashes: list[str], addresses: list[str]) -> None:
    """One batch a block: its header and each contract's account proof."""
    for block_hash in hashes:
        calls = [{"jsonrpc": "2.0", "id": 0, "method": "eth_getBlockByHash",
                  "params": [block_hash, False]}]
        calls += [{"jsonrpc": "2.0", "id": i + 1, "method": "eth_getProof",
                   "params": [a, [], {"blockHash": block_hash}]}
                  for i, a in enumerate(addresses)]
        post(url, calls)


def view_calls() -> list[tuple[str, str]]:
    """(contract, calldata) of the first view function of each check's recipe."""
    from eth_abi import encode

    out = []
    for check in load_config(CONFIG):
        views = check.recipe.views(check.params)
        if views:
            view = views[0]
            data = keccak256(view.signature.encode())[:4] + encode(list(view.arg_types),
                                                                   list(view.args))
            out.append(("0x" + check.address.hex(), "0x" + data.hex()))
    return out


def view_bot(url: str, numbers: list[int], calls: list[tuple[str, str]]) -> None:
    """Per block: the header by number, then each view, one HTTP request each."""
    for number in numbers:
        header = rpc_call(url, "eth_getBlockByNumber", [hex(number), False])
        for to, data in calls:
            rpc_call(url, "eth_call", [{"to": to, "data": data}, {"blockHash": header["hash"]}])


def recompute_runs(node: Anvil, proxy: RpcProxy, tag: str, code: Path, history: int, lo: int,
                   hi: int, hashes: list[str], at: int, subject) -> list[Run]:
    """(a)-(d) with the recompute of ``code``."""
    quiet = hi - lo + 1
    runs = [
        measure("watch, quiet blocks (range)" + tag, node, proxy, quiet, lambda: watch(
            proxy.url, "--from", lo, "--to", hi, "--block-hash", hashes[hi],
            "--confirmations", 0, code=code)),
        measure("watch, history (range)" + tag, node, proxy, history, lambda: watch(
            proxy.url, "--from", 1, "--to", history, "--block-hash", hashes[history],
            "--confirmations", 0, code=code)),
        measure("watch, quiet blocks (follow)" + tag, node, proxy, quiet, lambda: watch(
            proxy.url, "--block-hash", hashes[lo], "--max-blocks", quiet, "--poll", 0.05,
            "--confirmations", 0, "--at", at, code=code))]
    params = [f"--param={k}={v}" for k, v in subject.params.items()]

    def step() -> None:
        done = subprocess.run(
            [sys.executable, "-m", "recompute", "step", subject.recipe.name, "-r", proxy.url,
             "--block-hash", hashes[hi], "--address", "0x" + subject.address.hex(), *params],
            capture_output=True, text=True, cwd=code)
        if done.returncode not in (0, 1):
            raise SystemExit(f"step: exit {done.returncode}: {done.stderr[-800:]}")

    runs.append(measure("step, one verdict" + tag, node, proxy, 1, step))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quiet-blocks", type=int, default=300)
    parser.add_argument("--baseline", type=Path, help="another checkout, measured beside")
    args = parser.parse_args()
    quiet = args.quiet_blocks
    print(f"cpus {os.cpu_count()}, load {os.getloadavg()[0]:.2f} (machine shared)")
    node = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP).start()
    try:
        build(node)
        history = int(rpc_call(node.url, "eth_blockNumber"), 16)
        rpc_call(node.url, "anvil_mine", [hex(quiet), hex(12)])
        lo, hi = history + 1, history + quiet
        headers = [rpc_call(node.url, "eth_getBlockByNumber", [hex(n), False])
                   for n in range(0, hi + 1)]
        hashes = [h["hash"] for h in headers]
        at = int(headers[-1]["timestamp"], 16)
        addresses = sorted({"0x" + c.address.hex() for c in load_config(CONFIG)})
        views = view_calls()
        subject = next(c for c in load_config(CONFIG) if c.recipe.name == "amm/layer-status")
        runs: list[Run] = []
        with RpcProxy(node.url) as proxy:
            codes = [("", ROOT)] + ([(" [baseline]", args.baseline)] if args.baseline else [])
            for tag, code in codes:
                runs += recompute_runs(node, proxy, tag, code, history, lo, hi, hashes, at,
                                       subject)
            runs.append(measure("floor: header + account proofs, one batch", node, proxy,
                                quiet, lambda: floor(proxy.url, hashes[lo:hi + 1], addresses)))
            runs.append(measure(f"view bot: header + {len(views)} eth_call", node, proxy, quiet,
                                lambda: view_bot(proxy.url, list(range(lo, hi + 1)), views)))
    finally:
        node.stop()
    print(f"devnet history blocks 1..{history}, quiet blocks {lo}..{hi}; "
          f"{len(addresses)} contracts, {len(load_config(CONFIG))} checks; "
          f"load after {os.getloadavg()[0]:.2f}")
    print(f"{'per block':48} {'HTTP':>6} {'calls':>6} {'node CPU ms':>12} {'CU':>7}")
    for run in runs:
        f = run.figures()
        calls = sum(f["calls_per_block"].values())
        print(f"{run.name:48} {f['http_requests_per_block']:6.2f} {calls:6.2f} "
              f"{f['node_cpu_ms_per_block']:12.2f} {f['compute_units_per_block']:7.1f}")
        print(f"{'':48} {f['calls_per_block']}")
    quiet_run, _, follow_run, _ = runs[:4]
    floor_run, bot_run = runs[-2:]
    print(json.dumps({
        "quiet_blocks": quiet, "history_blocks": history,
        "load_average": round(os.getloadavg()[0], 2),
        "recompute_node_cpu_ms_per_block": quiet_run.figures()["node_cpu_ms_per_block"],
        "floor_node_cpu_ms_per_block": floor_run.figures()["node_cpu_ms_per_block"],
        "view_bot_node_cpu_ms_per_block": bot_run.figures()["node_cpu_ms_per_block"],
        "recompute_http_requests_per_block": quiet_run.figures()["http_requests_per_block"],
        "recompute_follow_http_requests_per_block":
            follow_run.figures()["http_requests_per_block"],
        "recompute_compute_units_per_block": quiet_run.figures()["compute_units_per_block"],
        "floor_compute_units_per_block": floor_run.figures()["compute_units_per_block"],
        "view_bot_compute_units_per_block": bot_run.figures()["compute_units_per_block"],
        **({"baseline_node_cpu_ms_per_block": runs[4].figures()["node_cpu_ms_per_block"],
            "baseline_http_requests_per_block": runs[4].figures()["http_requests_per_block"],
            "baseline_compute_units_per_block": runs[4].figures()["compute_units_per_block"]}
           if args.baseline else {}),
        "runs": {run.name: run.figures() for run in runs},
        "compute_units_table": "Gelato RPC, docs.gelato.network/developer-services/rpc-nodes/"
                               "compute-units, read 2026-12-01",
    }))


if __name__ == "__main__":
    main()
