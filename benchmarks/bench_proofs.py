"""Proof verification throughput: recompute's batched verifier against the naive way and
against a lower bound, all in one process on one corpus. A script, not a test.

    .venv/bin/python benchmarks/bench_proofs.py [--slots 2000] [--batch 500] [--repeat 5]

Corpus: SlotBox (tests/core/contracts) on a fresh anvil, its mapping filled with N slots,
proven in batches of B keys per eth_getProof (as a user asks for them), plus the real
go-ethereum fixture proof. Timed, best of --repeat:
  (a) recompute: verify_account_proof on each answer (shared nodes hashed/decoded once);
  (b) naive, as the web3.py docs show it: per slot, hex-decode and rlp-decode the proof
      nodes and call trie's HexaryTrie.get_from_proof (nothing shared);
  (c) lower bound: keccak256 of every distinct proof node and of every slot key, once each;
  (d) end to end through the public API: anchor the block and prove all N slots (RPC to
      anvil included, batched as recompute batches).
Last line: one JSON object with the four rates.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import rlp
from eth_hash.auto import keccak
from trie import HexaryTrie

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recompute.core.anchor import anchor_block  # noqa: E402
from recompute.core.prover import prove_account, verify_account_proof  # noqa: E402
from recompute.data import FIXTURE_CHAIN  # noqa: E402
from recompute.devnet.anvil import Anvil  # noqa: E402
from recompute.devnet.contracts import connect, deploy  # noqa: E402
from recompute.sources.fixture_node import FixtureNode  # noqa: E402
from recompute.sources.live import LiveSource  # noqa: E402

MAPPING_SLOT = 3


def mapping_slot(key: int) -> int:
    return int.from_bytes(keccak(key.to_bytes(32, "big") + MAPPING_SLOT.to_bytes(32, "big")), "big")


def best(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def naive(answers, block) -> int:
    """The web3.py-docs way: each slot on its own, every node decoded and hashed per slot."""
    count = 0
    for address, slots, answer in answers:
        account_nodes = [rlp.decode(bytes.fromhex(n[2:])) for n in answer["accountProof"]]
        leaf = HexaryTrie.get_from_proof(block.state_root, keccak(address), account_nodes)
        storage_root = rlp.decode(leaf)[2]
        for slot, entry in zip(slots, answer["storageProof"], strict=True):
            nodes = [rlp.decode(bytes.fromhex(n[2:])) for n in entry["proof"]]
            raw = HexaryTrie.get_from_proof(storage_root, keccak(slot.to_bytes(32, "big")), nodes)
            value = rlp.decode(raw, sedes=rlp.sedes.big_endian_int) if raw else 0
            assert value == int(entry["value"], 16)
            count += 1
    return count


def bound(answers) -> None:
    """keccak256 of every distinct node and every slot key, once each: no walking at all."""
    seen = set()
    for _, slots, answer in answers:
        for node in answer["accountProof"]:
            seen.add(node)
        for entry in answer["storageProof"]:
            seen.update(entry["proof"])
        for slot in slots:
            keccak(slot.to_bytes(32, "big"))
    for node in seen:
        keccak(bytes.fromhex(node[2:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n, batch = args.slots, args.batch

    with Anvil() as node:
        w3 = connect(node.url)
        box = deploy(w3, "SlotBox", directory=str(ROOT / "tests" / "core" / "artifacts"))
        for start in range(0, n, 500):
            tx = box.functions.fill(start, min(500, n - start)).transact({"gas": 29_000_000})
            w3.eth.wait_for_transaction_receipt(tx)
        source = LiveSource(node.url)
        block = anchor_block([source], block="latest")
        address = bytes.fromhex(box.address[2:])
        slots = [mapping_slot(k) for k in range(n)]
        batches = [slots[i : i + batch] for i in range(0, n, batch)]
        answers = [(address, b, source.get_proof(address, b, block.hash)) for b in batches]

        # the real go-ethereum proof joins the corpus
        with FixtureNode(FIXTURE_CHAIN) as fixture:
            fsource = LiveSource(fixture.url)
            fblock = anchor_block([fsource], block="latest")
            faddress = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")
            fanswer = fsource.get_proof(faddress, [0], fblock.hash)

        def ours():
            for addr, bslots, answer in answers:
                verify_account_proof(block, addr, bslots, answer)
            verify_account_proof(fblock, faddress, [0], fanswer)

        def theirs():
            naive(answers, block)
            naive([(faddress, [0], fanswer)], fblock)

        def lower():
            bound(answers + [(faddress, [0], fanswer)])

        total = n + 1
        t_ours = best(args.repeat, ours)
        t_naive = best(args.repeat, theirs)
        t_bound = best(args.repeat, lower)

        def end_to_end():
            anchored = anchor_block([LiveSource(node.url)], block="latest")
            for b in batches:
                account = prove_account(anchored, address, b)
                assert len(account.storage) == len(b)

        t_e2e = best(args.repeat, end_to_end)

    rates = {
        "slots": total,
        "recompute_slots_per_s": round(total / t_ours),
        "naive_slots_per_s": round(total / t_naive),
        "bound_slots_per_s": round(total / t_bound),
        "end_to_end_slots_per_s": round(n / t_e2e),
    }
    print(f"machine: {os.cpu_count()} cores; {n} slots of one mapping in batches of {batch}, "
          f"plus 1 real geth slot; best of {args.repeat}")
    print(f"(a) recompute batched verification  {rates['recompute_slots_per_s']:>8} slots/s")
    print(f"(b) naive per-slot get_from_proof   {rates['naive_slots_per_s']:>8} slots/s")
    print(f"(c) lower bound (keccak only)       {rates['bound_slots_per_s']:>8} slots/s")
    print(f"(d) end to end, RPC included        {rates['end_to_end_slots_per_s']:>8} slots/s")
    print(f"a/b = {t_naive / t_ours:.1f}x (goal >= 5)   c/a = {t_ours / t_bound:.1f}x "
          f"(goal <= 5)   d goal >= 10000")
    print(json.dumps(rates))


if __name__ == "__main__":
    main()
