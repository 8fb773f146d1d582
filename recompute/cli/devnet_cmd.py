"""``recompute devnet up|down``: the embedded default chain."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from recompute.cli import cli
from recompute.devnet.lifecycle import DEFAULT_STATE_DIR, DevnetError, LiveOptions, down, up


@cli.group("devnet")
def devnet_group():
    """Start or stop the devnet: anvil with the reference registries and a scripted history."""


def _summary(manifest: dict) -> list[str]:
    lines = [f"rpc {manifest['rpc']} (chain {manifest['chain_id']})", "contracts:"]
    lines += [f"  {name:<28} {address}" for name, address in sorted(manifest["contracts"].items())]
    lines.append(f"named moments: {len(manifest['moments'])}")
    for label, moment in manifest["moments"].items():
        lines.append(f"  {label:<28} block {moment['number']:>4} {moment['hash']}")
        about = moment.get("about")
        if about:
            lines.append(f"      {about['recipe']} -> {about['verdict']}: {about['text']}")
    live = manifest.get("live")
    if live:
        reorgs = f", a reorg every {live['reorg_every']} blocks" if live["reorg_every"] else ""
        lines.append(f"live: a block every {live['block_time']} s from block "
                     f"{live['first_block']}{reorgs} (producer pid {live['producer_pid']}, "
                     f"log {live['log']})")
        lines.append(f"  lie: {live['stream']['lie']}")
        lines.append(f"  beacon network: --network {manifest['beacon']['network_file']}")
    return lines


@devnet_group.command("up")
@click.option("--port", type=click.IntRange(1, 65535), help="Port on 127.0.0.1 (default: free).")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path),
              default=DEFAULT_STATE_DIR, show_default=True, help="Where the devnet keeps state.")
@click.option("--fresh", is_flag=True, help="Discard a stopped devnet's state and rebuild.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
@click.option("--live", is_flag=True,
              help="After the history, mine a block every --block-time seconds at the wall "
                   "clock, playing a scripted stream with a lie every minute (docs/devnet.md).")
@click.option("--block-time", type=click.IntRange(1, 60), default=2, show_default=True,
              metavar="S", help="--live: seconds between blocks (and a beacon slot).")
@click.option("--reorg-every", type=click.IntRange(4, None), metavar="K",
              help="--live: a reorg of depth 1 to 3 every K blocks.")
def devnet_up(port, state_dir, fresh, as_json, live, block_time, reorg_every):
    """Start anvil, deploy every reference contract, drive the scripted history."""
    if not live and (reorg_every is not None or block_time != 2):
        raise click.UsageError("--block-time and --reorg-every go with --live")
    try:
        manifest, started = up(state_dir, port, fresh,
                               LiveOptions(block_time, reorg_every) if live else None)
    except DevnetError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if not started:
        click.echo(f"a devnet is already running from {state_dir} at {manifest['rpc']}; "
                   "`recompute devnet down` stops it", err=True)
        if live and not manifest.get("live"):
            click.echo("it is not a living devnet: `recompute devnet down`, then `up --live`",
                       err=True)
    if as_json:
        click.echo(json.dumps(manifest, indent=2, sort_keys=True))
    else:
        for line in _summary(manifest):
            click.echo(line)
        click.echo(f"manifest: {Path(state_dir) / 'manifest.json'}")


@devnet_group.command("down")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path),
              default=DEFAULT_STATE_DIR, show_default=True)
def devnet_down(state_dir):
    """Stop the devnet (its state stays in the state dir; `up` resumes it)."""
    if down(state_dir):
        click.echo(f"stopped the devnet of {state_dir}")
    else:
        click.echo(f"no devnet is running from {state_dir}")
