"""Round trips and wall time of ``amm/layer-status`` for N subjects x 4 layers at one block.
A script, not a test.

    .venv/bin/python benchmarks/bench_recipes.py [--subjects 50] [--repeat 3]

On a fresh anvil, AgentMeditationRegistry gets N enrolled subjects (impersonated accounts,
the worked example's policy). Then, at one pinned block, the same 4N verdicts three ways:
  (a) batched: every check in one lockstep run (``step_many``: one eth_getProof per round
      for all checks together);
  (b) per check: ``step`` for each check on its own (3 rounds each);
  (c) per slot: every slot those checks read, each asked and verified in its own
      eth_getProof (what a user gets asking slot by slot).
Prints round trips, wall time and the ratios; the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# the checkout's pinned anvil, named (recompute never looks in the working directory:
# docs/executables.md); a value already in the environment wins
os.environ.setdefault("RECOMPUTE_ANVIL", str(ROOT / "node_modules"))

from recompute.core.anchor import anchor_block  # noqa: E402
from recompute.core.prover import prove_account  # noqa: E402
from recompute.devnet.anvil import Anvil  # noqa: E402
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP  # noqa: E402
from recompute.devnet.contracts import connect, deploy  # noqa: E402
from recompute.evaluator.job import Job, step, step_many  # noqa: E402
from recompute.layout import load_layout  # noqa: E402
from recompute.recipes.amm import LayerStatus  # noqa: E402
from recompute.sources.live import LiveSource  # noqa: E402

POLICY = (b"\x00" * 32, "", 0x0F, 0x0F, 0x0F, 0, 3600, 21600, [86400, 604800, 2592000, 7776000])


def enroll_subjects(node: Anvil, n: int):
    w3 = connect(node.url)
    registry = deploy(w3, "AgentMeditationRegistry")
    subjects = []
    for i in range(n):
        subject = w3.to_checksum_address(f"0x{0x5000 + i:040x}")
        node.rpc("anvil_impersonateAccount", subject)
        node.rpc("anvil_setBalance", subject, hex(10**18))
        baseline = [bytes([i % 256, layer + 1]) + bytes(30) for layer in range(4)]
        tx = registry.functions.enroll(baseline, POLICY, "0x" + "00" * 20, 0).transact(
            {"from": subject})
        w3.eth.wait_for_transaction_receipt(tx)
        subjects.append(subject.lower())
    return w3, registry, subjects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    recipe = LayerStatus()
    layout = load_layout("amm-registry")
    with Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP) as node:
        w3, registry, subjects = enroll_subjects(node, args.subjects)
        address = bytes.fromhex(registry.address[2:])
        head = w3.eth.get_block("latest")["hash"]
        jobs = [Job(recipe, {"subject": s, "layer": layer}, address, layout)
                for s in subjects for layer in range(4)]

        def fresh_block():
            source = LiveSource(node.url)
            return source, anchor_block([source], block_hash=bytes(head))

        def batched():
            source, block = fresh_block()
            outcomes = step_many(block, jobs)
            return source.calls, outcomes

        def per_check():
            source, block = fresh_block()
            outcomes = [step(j.recipe, j.params, block, j.address, j.layout) for j in jobs]
            return source.calls, outcomes

        def per_slot(slots: list[int]):
            source, block = fresh_block()
            for slot in slots:
                prove_account(block, address, [slot])
            return source.calls, None

        def timed(fn, *a):
            best, calls, result = float("inf"), 0, None
            for _ in range(args.repeat):
                start = time.perf_counter()
                calls, result = fn(*a)
                best = min(best, time.perf_counter() - start)
            return best, calls, result

        t_batch, calls_batch, outcomes = timed(batched)
        t_check, calls_check, outcomes_check = timed(per_check)
        assert [o.evidence["derived"] for o in outcomes] == [
            o.evidence["derived"] for o in outcomes_check]  # same verdicts, however asked
        slots = sorted({int(r["slot"], 16) for o in outcomes for r in o.evidence["reads"]})
        t_slot, calls_slot, _ = timed(per_slot, slots)

    checks = len(jobs)
    anchor_calls = 1 + 1  # eth_getBlockByHash + eth_chainId, in every mode
    figures = {
        "checks": checks,
        "slots": len(slots),
        "batched_round_trips": calls_batch - anchor_calls,
        "batched_s": round(t_batch, 3),
        "per_check_round_trips": calls_check - anchor_calls,
        "per_check_s": round(t_check, 3),
        "per_slot_round_trips": calls_slot - anchor_calls,
        "per_slot_s": round(t_slot, 3),
    }
    print(f"machine: {os.cpu_count()} cores; {args.subjects} subjects x 4 layers = {checks} "
          f"amm/layer-status verdicts at one block, {len(slots)} distinct slots; best of "
          f"{args.repeat}")
    print(f"(a) batched (step_many)  {figures['batched_round_trips']:>6} eth_getProof  "
          f"{t_batch:8.3f} s")
    print(f"(b) one step per check   {figures['per_check_round_trips']:>6} eth_getProof  "
          f"{t_check:8.3f} s   ({t_check / t_batch:.1f}x the batched time)")
    print(f"(c) one call per slot    {figures['per_slot_round_trips']:>6} eth_getProof  "
          f"{t_slot:8.3f} s   ({t_slot / t_batch:.1f}x the batched time)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
