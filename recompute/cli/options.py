"""Options every chain-reading command shares, and parsers for user-given values.

A malformed value is a UsageError naming the option: one line, exit 64.
"""

from __future__ import annotations

import click

from recompute.cli.beacon_options import beacon_options, light_client_anchor, light_client_request
from recompute.core.anchor import AnchoredBlock, anchor_block
from recompute.core.errors import UsageError
from recompute.core.hexdata import parse_block, parse_hash
from recompute.sources.live import LiveSource


def chain_options(command):
    """--rpc (repeatable), --block, --block-hash, --quorum, --checkpoint, --json, and the
    light-client anchor's --beacon, --trusted-root, --network, --lc-store."""
    decorators = [
        click.option("--rpc", "rpcs", multiple=True, metavar="URL",
                     help="JSON-RPC endpoint (repeat for a quorum)."),
        click.option("--block", metavar="N|latest",
                     help="Block number, or latest (with --beacon also finalized, the default)."),
        click.option("--block-hash", metavar="H", help="Pin the block by your own trusted hash."),
        click.option("--quorum", type=int, metavar="K",
                     help="K of the --rpc endpoints must agree on the block hash."),
        click.option("--checkpoint", metavar="H",
                     help="Trusted hash at or above --block; parentHash links are walked down."),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return beacon_options(command)


def sources_from(rpcs: tuple[str, ...]) -> list[LiveSource]:
    if not rpcs:
        raise UsageError("give --rpc URL (a JSON-RPC endpoint, e.g. http://127.0.0.1:8545)")
    return [LiveSource(url) for url in rpcs]


def anchored_block(rpcs, block, block_hash, quorum, checkpoint) -> AnchoredBlock:
    """Parse the shared options (usage errors first), then anchor (may be UNVERIFIABLE)."""
    sources = sources_from(rpcs)
    light_client = light_client_request()
    if light_client is not None:
        if block_hash or checkpoint or quorum is not None or len(sources) > 1:
            raise UsageError("--beacon is an anchor of its own: give one --rpc (for the "
                             "proofs) and no --block-hash, --checkpoint or --quorum")
        return light_client_anchor(sources[0], light_client, block)
    number = parse_block(block)
    pinned = parse_hash(block_hash, "--block-hash") if block_hash else None
    check = parse_hash(checkpoint, "--checkpoint") if checkpoint else None
    if quorum is not None and quorum < 1:
        raise UsageError("--quorum must be at least 1")
    return anchor_block(sources, block=number, block_hash=pinned, quorum=quorum, checkpoint=check)
