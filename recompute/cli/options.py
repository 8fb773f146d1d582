"""Options every chain-reading command shares, and parsers for user-given values.

A malformed value is a UsageError naming the option: one line, exit 64.
"""

from __future__ import annotations

import re

import click

from recompute.anchor import AnchoredBlock, anchor_block
from recompute.errors import UsageError
from recompute.source import LiveSource

_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")


def parse_address(text: str, what: str = "--address") -> bytes:
    if not isinstance(text, str) or not re.fullmatch(r"0x[0-9a-fA-F]{40}", text):
        raise UsageError(f"{what} {text!r} is not an address (0x followed by 40 hex digits)")
    return bytes.fromhex(text[2:])


def parse_hash(text: str, what: str) -> bytes:
    if not re.fullmatch(r"0x[0-9a-fA-F]{64}", text or ""):
        raise UsageError(f"{what} {text!r} is not a 32-byte hash (0x followed by 64 hex digits)")
    return bytes.fromhex(text[2:])


def parse_uint256(text: str, what: str) -> int:
    """A 256-bit unsigned integer written in decimal or 0x-hex."""
    text = (text or "").strip()
    if _HEX.match(text):
        value = int(text, 16)
    elif text.isdigit():
        value = int(text)
    else:
        raise UsageError(f"{what} {text!r} is not a number (decimal or 0x-hex)")
    if value >= 1 << 256:
        raise UsageError(f"{what} {text!r} does not fit in 256 bits")
    return value


def parse_block(text: str | None) -> int | str | None:
    if text is None:
        return None
    if text == "latest":
        return "latest"
    value = parse_uint256(text, "--block")
    if value >= 1 << 64:
        raise UsageError(f"--block {text!r} is not a block number")
    return value


def chain_options(command):
    """--rpc (repeatable), --block, --block-hash, --quorum, --checkpoint, --json."""
    decorators = [
        click.option("--rpc", "rpcs", multiple=True, metavar="URL",
                     help="JSON-RPC endpoint (repeat for a quorum)."),
        click.option("--block", metavar="N|latest", help="Block number, or latest."),
        click.option("--block-hash", metavar="H", help="Pin the block by your own trusted hash."),
        click.option("--quorum", type=int, metavar="K",
                     help="K of the --rpc endpoints must agree on the block hash."),
        click.option("--checkpoint", metavar="H",
                     help="Trusted hash at or above --block; parentHash links are walked down."),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def sources_from(rpcs: tuple[str, ...]) -> list[LiveSource]:
    if not rpcs:
        raise UsageError("give --rpc URL (a JSON-RPC endpoint, e.g. http://127.0.0.1:8545)")
    return [LiveSource(url) for url in rpcs]


def anchored_block(rpcs, block, block_hash, quorum, checkpoint) -> AnchoredBlock:
    """Parse the shared options (usage errors first), then anchor (may be UNVERIFIABLE)."""
    sources = sources_from(rpcs)
    number = parse_block(block)
    pinned = parse_hash(block_hash, "--block-hash") if block_hash else None
    check = parse_hash(checkpoint, "--checkpoint") if checkpoint else None
    if quorum is not None and quorum < 1:
        raise UsageError("--quorum must be at least 1")
    return anchor_block(sources, block=number, block_hash=pinned, quorum=quorum, checkpoint=check)
