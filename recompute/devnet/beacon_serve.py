"""The devnet's beacon side as a process of its own (``recompute devnet up`` starts it
detached, ``down`` stops it): a :class:`~recompute.devnet.beacon.DevnetBeaconServer` over the
anvil chain's blocks, extended as anvil mines new ones (polled every ``--poll`` seconds).

Its sync committee keys are the devnet's, derived from a fixed public seed
(recompute/devnet/beacon.py): anyone can sign anything for the devnet, so a devnet pin shows
the light-client anchor end to end and proves nothing about any real chain.

    python -m recompute.devnet.beacon_serve --rpc URL --out beacon.json [--poll 0.5]
                                            [--prefer-port 5052]

``--out`` receives ``{"url", "trusted_root", "network", "pid"}`` once the server listens.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
from pathlib import Path

from recompute.devnet.anvil import rpc_call
from recompute.devnet.beacon import DevnetBeaconServer


def _block(rpc: str, number: int) -> dict:
    return rpc_call(rpc, "eth_getBlockByNumber", [hex(number), False])


def serve(rpc: str, out: Path, poll: float = 0.5, stop: threading.Event | None = None,
          prefer_port: int = 0) -> None:
    stop = stop or threading.Event()
    head = int(rpc_call(rpc, "eth_blockNumber"), 16)
    blocks = [_block(rpc, number) for number in range(head + 1)]
    if len(blocks) < 2:
        rpc_call(rpc, "evm_mine")
        blocks.append(_block(rpc, 1))
    server = DevnetBeaconServer(blocks)
    try:
        server.start(prefer_port)
    except OSError:  # taken: any free port (the manifest and the summary say which)
        server.start()
    temporary = out.with_name(out.name + ".tmp")
    temporary.write_text(json.dumps({"url": server.url,
                                     "trusted_root": "0x" + server.trusted_block_root.hex(),
                                     "network": "devnet", "pid": os.getpid()}))
    os.replace(temporary, out)
    try:
        while not stop.wait(poll):
            try:
                latest = int(rpc_call(rpc, "eth_blockNumber"), 16)
                have = len(server.blocks)
                if latest >= have:
                    server.add_blocks([_block(rpc, n) for n in range(have, latest + 1)])
            except (OSError, RuntimeError, ValueError):
                continue  # anvil restarting or gone: `devnet down` stops us too
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m recompute.devnet.beacon_serve")
    parser.add_argument("--rpc", required=True)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--poll", type=float, default=0.5)
    parser.add_argument("--prefer-port", type=int, default=0,
                        help="serve on this port when it is free (default: any free port)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    serve(args.rpc, args.out, args.poll, stop, args.prefer_port)


if __name__ == "__main__":
    main()
