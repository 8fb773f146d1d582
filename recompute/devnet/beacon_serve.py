"""The devnet's beacon side as a process of its own (``recompute devnet up`` starts it
detached, ``down`` stops it): a :class:`~recompute.devnet.beacon_server.DevnetBeaconServer` over the
anvil chain's blocks, extended as anvil mines new ones (polled every ``--poll`` seconds).

Its sync committee keys are the devnet's, derived from a fixed public seed
(recompute/devnet/beacon_server.py): anyone can sign anything for the devnet, so a devnet pin shows
the light-client anchor end to end and proves nothing about any real chain.

    python -m recompute.devnet.beacon_serve --rpc URL --out beacon.json [--poll 0.5]
        [--live SECONDS_PER_SLOT] [--prefer-port 5052]

``--out`` receives ``{"url", "trusted_root", "network", "pid"}`` once the server listens
(with ``--live``, also ``genesis_time`` and ``seconds_per_slot``).

``--live S`` (``recompute devnet up --live``): the blocks mined from now on are the living
devnet's; their slots follow the wall clock, ``S`` seconds a slot, from a genesis time chosen
so that the blocks already there fill the slots just before now (the static chain's slots
stay as they are); finality lags two epochs; a reorganised execution chain is followed (the
beacon blocks above the fork point are replaced). SIGUSR1 makes it withhold: it signs
nothing new and serves its last updates again, as a beacon node that fell behind (or lies by
omission) does; SIGUSR2 makes it catch up.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from recompute.core.jsontext import json_line
from recompute.devnet.anvil import rpc_call
from recompute.devnet.beacon_server import DevnetBeaconServer
from recompute.disk.whole_file import write_whole
from recompute.lightclient.networks import DEVNET, Network


def live_network(blocks: int, seconds_per_slot: int, now: float) -> Network:
    """The devnet's network with a clock: ``blocks`` blocks already there take the slots up to
    one just before ``now``, each next slot is ``seconds_per_slot`` of wall-clock time."""
    genesis = int(now) - (blocks + 1) * seconds_per_slot
    return dataclasses.replace(DEVNET, genesis_time=genesis, seconds_per_slot=seconds_per_slot)


def _block(rpc: str, number: int) -> dict[str, Any]:
    block: dict[str, Any] = rpc_call(rpc, "eth_getBlockByNumber", [hex(number), False])
    return block


def serve(rpc: str, out: Path, poll: float = 0.5, stop: threading.Event | None = None,
          live: int | None = None, withhold: threading.Event | None = None,
          prefer_port: int = 0) -> None:
    stop = stop or threading.Event()
    head = int(rpc_call(rpc, "eth_blockNumber"), 16)
    blocks = [_block(rpc, number) for number in range(head + 1)]
    if len(blocks) < 2:
        rpc_call(rpc, "evm_mine")
        blocks.append(_block(rpc, 1))
    described = {"network": "devnet", "pid": os.getpid()}
    if live is None:
        server = DevnetBeaconServer(blocks)
    else:
        network = live_network(len(blocks), live, time.time())
        server = DevnetBeaconServer(blocks, network=network, live_from=len(blocks))
        described.update(genesis_time=network.genesis_time, seconds_per_slot=live)
    try:
        server.start(prefer_port)
    except OSError:  # taken: any free port (the manifest and the summary say which)
        server.start()
    write_whole(out, json_line({"url": server.url,
                                "trusted_root": "0x" + server.trusted_block_root.hex(),
                                **described}))
    try:
        while not stop.wait(poll):
            if withhold is not None and withhold.is_set():
                continue  # withholding: the last updates are served again, nothing new signed
            try:
                follow(rpc, server)
            except (OSError, RuntimeError, ValueError, TypeError):
                continue  # anvil restarting or gone: `devnet down` stops us too
    finally:
        server.stop()


def follow(rpc: str, server: DevnetBeaconServer) -> None:
    """Bring the beacon chain to the execution chain's head: forget the blocks a reorg
    replaced (walking down from the last one known until the hashes agree), sign the new."""
    latest = int(rpc_call(rpc, "eth_blockNumber"), 16)
    have = len(server.blocks)
    keep = min(have, latest + 1)
    while keep > 2:
        known = "0x" + server.blocks[keep - 1].execution.block_hash.hex()
        if _block(rpc, keep - 1)["hash"] == known:
            break
        keep -= 1
    if keep < have:
        server.truncate(keep)
    if latest >= keep:
        server.add_blocks([_block(rpc, n) for n in range(keep, latest + 1)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m recompute.devnet.beacon_serve")
    parser.add_argument("--rpc", required=True)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--poll", type=float, default=0.5)
    parser.add_argument("--live", type=int, metavar="SECONDS_PER_SLOT")
    parser.add_argument("--prefer-port", type=int, default=0,
                        help="serve on this port when it is free (default: any free port)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    withhold = threading.Event()  # SIGUSR1: withhold new updates (chaos runs); SIGUSR2: resume
    signal.signal(signal.SIGUSR1, lambda *_: withhold.set())
    signal.signal(signal.SIGUSR2, lambda *_: withhold.clear())
    serve(args.rpc, args.out, args.poll, stop, args.live, withhold, args.prefer_port)


if __name__ == "__main__":
    main()
