"""Light-client cost on real mainnet data (tests/fixtures/light-client/helios-mainnet-capella),
against baselines in the same run. A script, not a test.

    .venv/bin/python benchmarks/bench_lightclient.py [--repeat 5] [--no-py-ecc]

Timed, best of --repeat:
  (a) bootstrap + one sync-committee period: decode the bootstrap, check it against the
      trusted root, apply the period-862 update (learns the next committee) and the
      period-863 update (moves to the next period): two signature checks of 512 keys;
  (b) one sync-aggregate check, warm (keys already decompressed, as within a period) and
      cold (keys decompressed and subgroup-checked first, as at a period change);
  (c) pin a block: decode the finality update, validate and apply it to a synced store,
      read the authenticated execution header;
  (d) the whole sync through the beacon client over loopback HTTP (fixture server:
      bootstrap, 6 period updates, finality, optimistic);
baselines:
  (e) the raw BLS call: one pairing check on an already aggregated key (lower bound);
  (f) py_ecc's FastAggregateVerify of the same aggregate (pure Python; one run).
Last line: one JSON object with the figures (milliseconds).
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

from py_arkworks_bls12381 import GT, G1Point, G2Point  # noqa: E402

from recompute.devnet.beacon import FixtureBeaconServer  # noqa: E402
from recompute.lightclient import (  # noqa: E402
    MAINNET,
    bls,
    bootstrap,
    decode_bootstrap,
    decode_finality_update,
    decode_update,
)
from recompute.lightclient.proofs import sync_committee_signing_root  # noqa: E402
from recompute.sources.beacon import BeaconClient, sync_light_client  # noqa: E402

SET = ROOT / "tests" / "fixtures" / "light-client" / "helios-mainnet-capella"


def load(name: str):
    return json.loads((SET / name).read_text())


def best(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-py-ecc", action="store_true", help="skip the slow baseline")
    args = parser.parse_args()

    meta = load("meta.json")
    trusted = bytes.fromhex(meta["trusted_block_root"][2:])
    slot = meta["current_slot_hint"]
    documents = {"bootstrap": load("bootstrap.json"), "updates": load("updates.json"),
                 "finality": load("finality.json")}

    def one_period():
        store = bootstrap(trusted, decode_bootstrap(documents["bootstrap"], MAINNET), MAINNET)
        for document in documents["updates"][:2]:
            store = store.apply_update(decode_update(document, MAINNET), current_slot=slot)
        assert store.sync_period == 863
        return store

    def cold_period():
        bls.decode_pubkey.cache_clear()
        one_period()

    t_period_cold = best(args.repeat, cold_period)
    t_period_warm = best(args.repeat, one_period)

    store = bootstrap(trusted, decode_bootstrap(documents["bootstrap"], MAINNET), MAINNET)
    for document in documents["updates"]:
        store = store.apply_update(decode_update(document, MAINNET), current_slot=slot)
    update = decode_finality_update(documents["finality"], MAINNET)
    committee = store.current_sync_committee
    signers = [key for bit, key in zip(update.sync_aggregate.bits, committee.pubkeys,
                                       strict=True) if bit]
    message = sync_committee_signing_root(MAINNET, update.attested_header.beacon_root,
                                          update.signature_slot)
    signature = update.sync_aggregate.signature

    def verify():
        assert bls.fast_aggregate_verify(signers, message, signature)

    def verify_cold():
        bls.decode_pubkey.cache_clear()
        verify()

    t_verify_cold = best(args.repeat, verify_cold)
    t_verify = best(args.repeat, verify)

    def pin():
        pinned = store.apply_update(decode_finality_update(documents["finality"], MAINNET),
                                    current_slot=slot).finalized_execution()
        assert pinned.block_number == meta["expected"]["after_updates_and_finality"][
            "execution_block_number"]

    t_pin = best(args.repeat, pin)

    with FixtureBeaconServer(SET, MAINNET) as server:
        def over_http():
            with BeaconClient(server.url) as client:
                synced = sync_light_client(client, MAINNET, trusted, current_slot=slot)
            assert synced.finalized_execution().block_number == 17923026

        t_http = best(args.repeat, over_http)

    aggregate = bls.decode_pubkey(signers[0])
    for key in signers[1:]:
        aggregate = aggregate + bls.decode_pubkey(key)
    hashed = G2Point.hash_to_curve(message, bls.DST)
    point = G2Point.from_compressed_bytes(signature)

    def raw_check():
        assert GT.pairing_check([aggregate, -G1Point()], [hashed, point])

    t_raw = best(args.repeat, raw_check)

    t_py_ecc = None
    if not args.no_py_ecc:
        from py_ecc.bls import G2ProofOfPossession

        start = time.perf_counter()
        assert G2ProofOfPossession.FastAggregateVerify(signers, message, signature)
        t_py_ecc = time.perf_counter() - start

    figures = {
        "bootstrap_plus_one_period_ms": round(t_period_warm * 1e3, 2),
        "bootstrap_plus_one_period_cold_keys_ms": round(t_period_cold * 1e3, 2),
        "signature_check_ms": round(t_verify * 1e3, 2),
        "signature_check_cold_keys_ms": round(t_verify_cold * 1e3, 2),
        "pin_block_ms": round(t_pin * 1e3, 2),
        "full_sync_over_http_ms": round(t_http * 1e3, 2),
        "raw_pairing_check_ms": round(t_raw * 1e3, 2),
        "py_ecc_signature_check_ms": None if t_py_ecc is None else round(t_py_ecc * 1e3, 1),
    }
    print(f"machine: {os.cpu_count()} cores; helios mainnet capella set, 512-key committees, "
          f"best of {args.repeat}")
    print(f"(a) bootstrap + one period          {figures['bootstrap_plus_one_period_ms']:>9} ms"
          f"   (cold keys {figures['bootstrap_plus_one_period_cold_keys_ms']} ms)")
    print(f"(b) one sync-aggregate check        {figures['signature_check_ms']:>9} ms"
          f"   (cold keys {figures['signature_check_cold_keys_ms']} ms)")
    print(f"(c) pin a block (finality update)   {figures['pin_block_ms']:>9} ms")
    print(f"(d) full sync over loopback HTTP    {figures['full_sync_over_http_ms']:>9} ms")
    print(f"(e) raw pairing check (lower bound) {figures['raw_pairing_check_ms']:>9} ms")
    if t_py_ecc is not None:
        print(f"(f) py_ecc FastAggregateVerify      {figures['py_ecc_signature_check_ms']:>9} ms"
              f"   (b/f: {t_py_ecc / t_verify:.0f}x faster)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
