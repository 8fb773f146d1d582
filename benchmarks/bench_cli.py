"""One ERC-8312 verdict, cold and warm, against the raw-RPC floor. A script, not a test.

    .venv/bin/python benchmarks/bench_cli.py [--repeat 7] [--keys 100]

Setup: a fresh anvil with a HeadroomMeter whose envelope is the ERC-8312 thread's
(0x48e9…b041: portfolio 10000, cap 8000), plus --keys opened envelopes. Measured, best of
--repeat, all in this one run:
  (a) cold CLI: ``python -m recompute step 8312/cap-conservation RPC ADDR KEY struct:2:2:1``
      as a fresh process (the thread's command), to its exit;
  (b) cold floor: a fresh ``python`` sending the verdict's 3 JSON-RPC requests (eth_chainId,
      eth_getBlockByNumber, eth_getProof) with the standard library and exiting; and a bare
      ``python -c pass`` (the interpreter's own start);
  (c) recompute-kit's ``recompute-step`` with the same arguments when ``cast`` is on PATH
      (its verifier shells out to it), else "skipped";
  (d) in process: anchor + step with a fresh source (nothing carried from the run before)
      on a kept-alive connection, against the same 3 requests over one kept-alive session;
  (e) step_many over --keys independent ``struct:`` keys: eth_getProof calls and time,
      against the layout route (``shape=headroom``, the same slots by layout paths).
The last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recompute.core.anchor import anchor_block  # noqa: E402
from recompute.devnet.anvil import Anvil  # noqa: E402
from recompute.devnet.contracts import connect, deploy  # noqa: E402
from recompute.layout import load_layout  # noqa: E402
from recompute.recipes.framework import get_recipe  # noqa: E402
from recompute.recipes.runner import Job, step, step_many  # noqa: E402
from recompute.sources.live import LiveSource  # noqa: E402

ENVELOPE = "0x48e972a25a6ecc83b0dd9c2943b63155ec899b53e10c1f1eb34ebc1d57bcb041"
CAP = "8312/cap-conservation"

FLOOR = """
import json, sys, urllib.request
url, address, key = sys.argv[1:4]
def ask(method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    request = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request).read())["result"]
ask("eth_chainId", [])
block = ask("eth_getBlockByNumber", ["latest", False])
ask("eth_getProof", [address, [key, key], {"blockHash": block["hash"]}])
"""


def best(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run(*argv: str, code: int = 0) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode != code:
        raise SystemExit(f"{argv[:4]}... exited {done.returncode}: {done.stderr[-300:]}")


def raw_three(session: requests.Session, url: str, address: str, keys: list[str]) -> None:
    def ask(method, params):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        reply = session.post(url, data=body, headers={"Content-Type": "application/json"})
        return json.loads(reply.content)["result"]
    ask("eth_chainId", [])
    block = ask("eth_getBlockByNumber", ["latest", False])
    ask("eth_getProof", [address, keys, {"blockHash": block["hash"]}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--keys", type=int, default=100)
    args = parser.parse_args()
    figures: dict = {}
    with Anvil() as node:
        w3 = connect(node.url)
        meter = deploy(w3, "HeadroomMeter")
        keys = [ENVELOPE] + ["0x" + i.to_bytes(32, "big").hex() for i in range(1, args.keys)]
        for i, key in enumerate(keys):
            tx = meter.functions.openEnvelope(bytes.fromhex(key[2:]), w3.eth.accounts[3],
                                              10_000, 8000 + i).transact(
                                                  {"from": w3.eth.accounts[1]})
        w3.eth.wait_for_transaction_receipt(tx)
        address = meter.address
        verdict = [sys.executable, "-m", "recompute", "step", CAP, node.url, address, ENVELOPE,
                   "struct:2:2:1"]
        recipe = get_recipe(CAP)
        layout = load_layout(recipe.layout)
        params = recipe.parse_params({"key": ENVELOPE, "shape": "struct:2:2:1"})
        from recompute.recipes.erc8312 import struct_slots
        slots = [f"0x{s:064x}" for s in struct_slots(bytes.fromhex(ENVELOPE[2:]),
                                                      _shape("struct:2:2:1"))]

        figures["cold_cli_s"] = best(args.repeat, lambda: run(*verdict))
        figures["cold_floor_s"] = best(args.repeat, lambda: run(
            sys.executable, "-c", FLOOR, node.url, address, slots[0]))
        figures["python_start_s"] = best(args.repeat, lambda: run(sys.executable, "-c", "pass"))
        if shutil.which("cast") and shutil.which("recompute-step"):
            figures["recompute_kit_s"] = best(args.repeat, lambda: run(
                "recompute-step", CAP, node.url, address, ENVELOPE, "struct:2:2:1"))
        else:
            figures["recompute_kit_s"] = "skipped"

        source = LiveSource(node.url)
        addr = bytes.fromhex(address[2:])

        def fresh() -> LiveSource:
            """A new source (nothing kept from an earlier verdict: recompute.core.memo is per
            source) on the same kept-alive connection, as the raw floor has."""
            new = LiveSource(node.url)
            new.client = source.client
            new._chain_id = None
            return new

        def in_process():
            block = anchor_block([fresh()], block="latest")
            outcome = step(recipe, params, block, addr, layout)
            assert outcome.evidence["derived"]["cap"] == "8000"

        session = requests.Session()
        calls = source.calls
        in_process()
        figures["in_process_calls"] = source.calls - calls
        figures["in_process_s"] = best(args.repeat * 3, in_process)
        figures["raw_three_calls_s"] = best(args.repeat * 3,
                                            lambda: raw_three(session, node.url, address, slots))

        def many(shape: str, layout_name: str):
            chosen = load_layout(layout_name)
            jobs = [Job(recipe, recipe.parse_params({"key": k, "shape": shape}), addr, chosen)
                    for k in keys]

            def go():
                block = anchor_block([fresh()], block="latest")
                outcomes = step_many(block, jobs)
                assert all(o.evidence["derived"]["within_cap"] for o in outcomes)
            block = anchor_block([fresh()], block="latest")
            before = source.calls
            step_many(block, jobs)
            return source.calls - before, best(args.repeat, go)

        figures["many_slots_proofs"], figures["many_slots_s"] = many("struct:2:2:1", recipe.layout)
        figures["many_layout_proofs"], figures["many_layout_s"] = many("headroom",
                                                                       "meter-headroom")

    kit = figures["recompute_kit_s"]
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; best of "
          f"{args.repeat}")
    print(f"(a) cold CLI verdict            {figures['cold_cli_s'] * 1000:7.0f} ms")
    print(f"(b) cold raw 3 requests         {figures['cold_floor_s'] * 1000:7.0f} ms  "
          f"(python start alone {figures['python_start_s'] * 1000:.0f} ms)")
    kit_text = "skipped (no cast on PATH)" if kit == "skipped" else f"{kit * 1000:6.0f} ms"
    print(f"(c) recompute-kit recompute-step {kit_text}")
    print(f"(d) in process: verdict {figures['in_process_s'] * 1000:.2f} ms "
          f"({figures['in_process_calls']} calls), 3 raw calls "
          f"{figures['raw_three_calls_s'] * 1000:.2f} ms, ratio "
          f"{figures['in_process_s'] / figures['raw_three_calls_s']:.2f} (goal <= 1.3)")
    print(f"(e) {args.keys} struct keys: {figures['many_slots_proofs']} eth_getProof, "
          f"{figures['many_slots_s'] * 1000:.0f} ms; layout route "
          f"{figures['many_layout_proofs']} eth_getProof, "
          f"{figures['many_layout_s'] * 1000:.0f} ms")
    figures["cli_over_floor"] = round(figures["cold_cli_s"] / figures["cold_floor_s"], 2)
    figures["in_process_over_raw"] = round(figures["in_process_s"] /
                                           figures["raw_three_calls_s"], 2)
    print(f"cold CLI / cold floor = {figures['cli_over_floor']}")
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v
                      for k, v in figures.items()}))


def _shape(text: str):
    from recompute.recipes.erc8312 import parse_shape
    return parse_shape(text)


if __name__ == "__main__":
    main()
