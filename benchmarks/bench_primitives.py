"""The primitives under every proof, each candidate timed in one process on the same input.
A script, not a test.

    .venv/bin/python benchmarks/bench_primitives.py [--keys 2000] [--repeat 5]

Input: the proof nodes of --keys slots of a storage trie built with py-trie (branch, extension
and leaf nodes as a real contract's storage has them) and the 32-byte slot keys.
  keccak256 per call: safe-pysha3 (``sha3.keccak_256``, recompute's backend), eth-hash with
      its pycryptodome backend (the previous one), pycryptodome called directly;
  strict RLP decoding per node: recompute.core.rlpcodec against pyrlp ``decode(strict=True)``
      (the two are proven equal by tests/core/test_rlpcodec.py).
The last line is one JSON object: microseconds per call and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import rlp
from Crypto.Hash import keccak as crypto_keccak
from eth_hash.backends.pycryptodome import CryptodomeBackend
from trie import HexaryTrie

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recompute.core import rlpcodec  # noqa: E402
from recompute.core.keccak import BACKEND, keccak256  # noqa: E402


def per_call(repeat: int, fn, items) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - start)
    return best / len(items) * 1e6


def corpus(keys: int) -> tuple[list[bytes], list[bytes]]:
    trie = HexaryTrie({})
    slot_keys = [keccak256(i.to_bytes(32, "big")) for i in range(keys)]
    for i, key in enumerate(slot_keys):
        trie[key] = rlp.encode(i * 7 + 1)
    nodes = {rlp.encode(node) for key in slot_keys for node in trie.get_proof(key)}
    return sorted(nodes), [i.to_bytes(32, "big") for i in range(keys)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    nodes, words = corpus(args.keys)
    data = nodes + words
    eth_hash = CryptodomeBackend()
    for node in nodes:
        assert rlpcodec.decode(node) == rlp.decode(node, strict=True)
        assert keccak256(node) == eth_hash.keccak256(node)
    figures = {
        "keccak_backend": BACKEND,
        "keccak_recompute_us": per_call(args.repeat, keccak256, data),
        "keccak_eth_hash_pycryptodome_us": per_call(args.repeat, eth_hash.keccak256, data),
        "keccak_pycryptodome_direct_us": per_call(
            args.repeat, lambda b: crypto_keccak.new(data=b, digest_bits=256).digest(), data),
        "rlp_recompute_us": per_call(args.repeat, rlpcodec.decode, nodes),
        "rlp_pyrlp_strict_us": per_call(args.repeat, lambda b: rlp.decode(b, strict=True),
                                        nodes),
    }
    figures["keccak_speedup"] = figures["keccak_eth_hash_pycryptodome_us"] / figures[
        "keccak_recompute_us"]
    figures["rlp_speedup"] = figures["rlp_pyrlp_strict_us"] / figures["rlp_recompute_us"]
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {len(nodes)} "
          f"distinct proof nodes of {args.keys} keys + {len(words)} words; best of "
          f"{args.repeat}")
    print(f"keccak256  recompute ({BACKEND}) {figures['keccak_recompute_us']:.2f} us, eth-hash/"
          f"pycryptodome {figures['keccak_eth_hash_pycryptodome_us']:.2f} us "
          f"({figures['keccak_speedup']:.1f}x), pycryptodome direct "
          f"{figures['keccak_pycryptodome_direct_us']:.2f} us")
    print(f"RLP strict decode per node: recompute {figures['rlp_recompute_us']:.2f} us, pyrlp "
          f"{figures['rlp_pyrlp_strict_us']:.2f} us ({figures['rlp_speedup']:.1f}x)")
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v
                      for k, v in figures.items()}))


if __name__ == "__main__":
    main()
