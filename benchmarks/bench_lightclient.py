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
  (g) pin a block through the CLI path (recompute.cli.beacon_options.light_client_anchor:
      beacon client, sync, the light-client anchor): on the mainnet set (an anvil that does not
      have the block serves the proofs, so its header is not served) and on the devnet beacon
      chain over an anvil chain (the header is fetched and re-hashed);
  (h) ``recompute proof --beacon`` as a process on that devnet chain (interpreter start-up
      included);
baselines:
  (e) the raw BLS call: one pairing check on an already aggregated key (lower bound);
  (f) py_ecc's FastAggregateVerify of the same aggregate (pure Python; one run);
  (i) the block-hash anchor of the same devnet block, in process and as a process.
Last line: one JSON object with the figures (milliseconds).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# the checkout's pinned anvil, named (recompute never looks in the working directory:
# docs/executables.md); a value already in the environment wins
os.environ.setdefault("RECOMPUTE_ANVIL", str(ROOT / "node_modules"))

from py_arkworks_bls12381 import GT, G1Point, G2Point  # noqa: E402

from recompute.cli.beacon_options import (  # noqa: E402
    LightClientRequest,
    light_client_anchor,
)
from recompute.core.anchor import anchor_block  # noqa: E402
from recompute.core.clock import Clock  # noqa: E402
from recompute.devnet.anvil import Anvil, rpc_call  # noqa: E402
from recompute.devnet.beacon_http import FixtureBeaconServer  # noqa: E402
from recompute.devnet.beacon_server import DevnetBeaconServer  # noqa: E402
from recompute.lightclient import (  # noqa: E402
    DEVNET,
    MAINNET,
    bls,
    bootstrap,
    decode_bootstrap,
    decode_finality_update,
    decode_update,
)
from recompute.lightclient.proofs import sync_committee_signing_root  # noqa: E402
from recompute.sources.beacon import BeaconClient, sync_light_client  # noqa: E402
from recompute.sources.live import LiveSource  # noqa: E402

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

    cli_path = pin_through_the_cli(args.repeat, trusted)

    t_py_ecc = None if args.no_py_ecc else py_ecc_check(signers, message, signature)

    figures = {
        "bootstrap_plus_one_period_ms": round(t_period_warm * 1e3, 2),
        "bootstrap_plus_one_period_cold_keys_ms": round(t_period_cold * 1e3, 2),
        "signature_check_ms": round(t_verify * 1e3, 2),
        "signature_check_cold_keys_ms": round(t_verify_cold * 1e3, 2),
        "pin_block_ms": round(t_pin * 1e3, 2),
        "full_sync_over_http_ms": round(t_http * 1e3, 2),
        "raw_pairing_check_ms": round(t_raw * 1e3, 2),
        "py_ecc_signature_check_ms": None if t_py_ecc is None else round(t_py_ecc * 1e3, 1),
        **cli_path,
    }
    print_figures(figures, args.repeat, t_py_ecc, t_verify)


def py_ecc_check(signers: list, message: bytes, signature: bytes) -> float:
    """(f): the same signature check by py_ecc, once (it is slow), in seconds."""
    from py_ecc.bls import G2ProofOfPossession

    start = time.perf_counter()
    assert G2ProofOfPossession.FastAggregateVerify(signers, message, signature)
    return time.perf_counter() - start


def print_figures(figures: dict, repeat: int, t_py_ecc: float | None, t_verify: float) -> None:
    """The figures as lines (a) to (i), then as JSON on the last line."""
    print(f"machine: {os.cpu_count()} cores; helios mainnet capella set, 512-key committees, "
          f"best of {repeat}")
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
    print(f"(g) pin through the CLI path, mainnet {figures['cli_pin_mainnet_ms']:>9} ms"
          f"   (devnet {figures['cli_pin_devnet_ms']} ms; (i) block-hash anchor "
          f"{figures['block_hash_anchor_devnet_ms']} ms)")
    added = figures["process_proof_beacon_ms"] - figures["process_proof_block_hash_ms"]
    print(f"(h) recompute proof --beacon process {figures['process_proof_beacon_ms']:>8} ms"
          f"   ((i) --block-hash {figures['process_proof_block_hash_ms']} ms: the light "
          f"client adds {added:.0f} ms)")
    print(json.dumps(figures))


def pin_through_the_cli(repeat: int, trusted: bytes) -> dict:
    """(g), (h) and (i): see the module doc."""
    with Anvil() as node:
        for _ in range(4):
            rpc_call(node.url, "evm_mine", [])
        head = int(rpc_call(node.url, "eth_blockNumber", []), 16)
        blocks = [rpc_call(node.url, "eth_getBlockByNumber", [hex(n), False])
                  for n in range(head + 1)]
        source = LiveSource(node.url)
        with FixtureBeaconServer(SET, MAINNET) as mainnet:
            request = LightClientRequest(mainnet.url, trusted, MAINNET)
            # recorded data, judged as of its optimistic update's signature slot (and its
            # trusted root, days older, accepted): docs/lightclient.md §Clock
            signed = json.loads((SET / "optimistic.json").read_text())["data"]["signature_slot"]
            recorded = Clock(at=MAINNET.genesis_time + 12 * int(signed),
                             accept_old_checkpoint=True)

            def mainnet_pin():
                block = light_client_anchor(source, request, None, recorded)
                assert block.number == 17923026

            t_mainnet = best(repeat, mainnet_pin)
        with DevnetBeaconServer(blocks) as devnet:
            request = LightClientRequest(devnet.url, devnet.trusted_block_root, DEVNET)
            pinned = bytes.fromhex(blocks[-2]["hash"][2:])

            def devnet_pin():  # the devnet server signs each answer: its time is in here
                assert light_client_anchor(source, request, None).hash == pinned

            def block_hash_pin():
                assert anchor_block([source], block_hash=pinned).hash == pinned

            t_devnet = best(repeat, devnet_pin)
            t_block_hash = best(repeat, block_hash_pin)
            account = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"
            common = [sys.executable, "-m", "recompute", "proof", "--rpc", node.url,
                      "--address", account, "--slot", "0"]
            beacon = ["--beacon", devnet.url, "--trusted-root",
                      "0x" + devnet.trusted_block_root.hex(), "--network", "devnet"]

            def process(extra):
                def run():
                    done = subprocess.run(common + extra, capture_output=True, cwd=ROOT,
                                          env={**os.environ, "PYTHONPATH": str(ROOT)})
                    assert done.returncode == 0, done.stdout + done.stderr
                return run

            t_process_beacon = best(repeat, process(beacon))
            t_process_hash = best(repeat, process(["--block-hash", blocks[-2]["hash"]]))
    return {
        "cli_pin_mainnet_ms": round(t_mainnet * 1e3, 2),
        "cli_pin_devnet_ms": round(t_devnet * 1e3, 2),
        "block_hash_anchor_devnet_ms": round(t_block_hash * 1e3, 2),
        "process_proof_beacon_ms": round(t_process_beacon * 1e3, 1),
        "process_proof_block_hash_ms": round(t_process_hash * 1e3, 1),
    }


if __name__ == "__main__":
    main()
