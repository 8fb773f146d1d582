"""``recompute devnet up|down``: the embedded default chain."""

from __future__ import annotations

import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from recompute.cli import cli
from recompute.core.jsontext import json_document
from recompute.devnet.l2_lifecycle import check_resumable, extension
from recompute.devnet.lifecycle import (
    DEFAULT_PORT,
    DEFAULT_STATE_DIR,
    DevnetError,
    LiveOptions,
    down,
    up,
)
from recompute.devnet.started import known


@cli.group("devnet")
def devnet_group() -> None:
    """Start or stop the devnet: anvil with the reference registries and a scripted history."""


def _summary(manifest: dict[str, Any]) -> list[str]:
    lines = [f"rpc {manifest['rpc']} (chain {manifest['chain_id']})"]
    beacon = manifest.get("beacon")
    if beacon:
        lines += [f"beacon {beacon['url']} (network {beacon['network']}, --beacon)",
                  f"trusted root {beacon['trusted_root']} (--trusted-root; the devnet's own "
                  "keys from a public seed: a devnet pin proves nothing about a real chain)"]
    as_of = manifest.get("as_of")
    if as_of:
        iso = datetime.fromtimestamp(as_of["at"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        also = (", and --beacon also --accept-old-checkpoint (the trusted root is the genesis)"
                if beacon else "")
        lines.append(f"as of --at {as_of['at']} ({iso}, block {as_of['block']}, the head): the "
                     "devnet's history is dated and does not move, so tags (-b latest) and "
                     f"follow mode need --at{also}")
    lines.append("contracts:")
    lines += [f"  {name:<28} {address}" for name, address in sorted(manifest["contracts"].items())]
    lines.append(f"named moments: {len(manifest['moments'])}")
    for label, moment in manifest["moments"].items():
        lines.append(f"  {label:<28} block {moment['number']:>4} {moment['hash']}")
        about = moment.get("about")
        if about:
            lines.append(f"      {about['recipe']} -> {about['verdict']}: {about['text']}")
    lines += _l2_summary(manifest.get("l2"))
    live = manifest.get("live")
    if live:
        reorgs = f", a reorg every {live['reorg_every']} blocks" if live["reorg_every"] else ""
        lines.append(f"live: a block every {live['block_time']} s from block "
                     f"{live['first_block']}{reorgs} (producer pid {live['producer_pid']}, "
                     f"log {live['log']})")
        lines.append(f"  lie: {live['stream']['lie']}")
        lines.append(f"  beacon network: --network {manifest['beacon']['network_file']}")
        lines.append("  the chain is current: tags (-b latest) and follow mode need no --at; "
                     "--beacon needs --network (above) and --accept-old-checkpoint (the trusted "
                     "root is the genesis, dated 2025)")
    return lines


def _l2_summary(l2: dict[str, Any] | None) -> list[str]:
    """The L2's lines (``devnet up --l2``): its nodes, the L1 system, its games and moments."""
    if not l2:
        return []
    l1 = l2["l1"]
    lines = [f"l2 rpc {l2['rpc']} (chain {l2['chain_id']}, OP stack); lying L2 node "
             f"{l2['lying_rpc']}",
             f"  L1 system ({l1['package']}): portal {l1['contracts']['OptimismPortal2']} "
             f"(--l2-portal), factory {l1['contracts']['DisputeGameFactory']}, finality delay "
             f"{l1['dispute_game_finality_delay']} s",
             f"  games: {len(l2['games'])}; L2 moments: {len(l2['moments'])} (each with its "
             "command in the manifest: l2.moments.*.argv)"]
    for label, moment in l2["moments"].items():
        reason = f" {moment['reason']}" if moment.get("reason") else ""
        lines.append(f"    {label:<24} game {moment['game']:<16} L2 block {moment['l2_block']:>3}"
                     f" -> {moment['verdict']}{reason}")
    return lines


NEXT_MOMENT = "amm.overdue"  # a moment whose verdict is BAD: the first thing worth seeing
NEXT_L2_MOMENT = "l2.final-bad"  # its L2 twin, through L1


def _next_commands(manifest: dict[str, Any]) -> list[str]:
    """Commands to try next, filled in with this devnet's URLs, addresses and moments."""
    rpc = manifest["rpc"]
    registry = manifest["contracts"].get("AgentMeditationRegistry")
    lines = ["try next:"]
    at = f" --at {manifest['as_of']['at']}" if "as_of" in manifest else ""
    if registry:
        lines.append(f"  recompute read -r {rpc} -b latest{at} --layout amm-registry "
                     f"--address {registry} --all")
    moment = manifest["moments"].get(NEXT_MOMENT)
    about = (moment or {}).get("about")
    if about:
        params = " ".join(f"--param {k}={v}" for k, v in about["params"].items())
        lines.append(f"  recompute step {about['recipe']} -r {rpc} --block-hash {moment['hash']} "
                     f"--address {manifest['contracts'][about['contract']]} {params}")
    beacon = manifest.get("beacon")
    if beacon and registry:
        network = beacon.get("network_file", "devnet")  # a living devnet's has its clock
        lines.append(f"  recompute proof -r {rpc} --beacon {beacon['url']} --trusted-root "
                     f"{beacon['trusted_root']} --network {network}{at} --accept-old-checkpoint "
                     f"--address {registry} --slot 0")
    l2_moment = manifest.get("l2", {}).get("moments", {}).get(NEXT_L2_MOMENT)
    if l2_moment:  # an L2 block pinned through L1's dispute games (docs/l2.md)
        lines.append("  " + shlex.join(l2_moment["argv"]))
    last = max((m["number"] for m in manifest["moments"].values()), default=1)
    lines.append(f"  recompute watch -r {rpc} --config examples/devnet-watch.toml --from 1 "
                 f"--to {last}")
    if manifest.get("live"):  # the chain that moves: follow it, alerting once per lie
        lines.append(f"  recompute watch -r {rpc} --config examples/live-watch.toml --on-bad "
                     "'echo \"lie at block $RECOMPUTE_BLOCK\"'")
    folder = Path(manifest.get("state_dir", DEFAULT_STATE_DIR))
    named = "" if folder == DEFAULT_STATE_DIR.resolve() else f" --state-dir {_shown(folder)}"
    lines.append(f"  recompute devnet down{named}")
    return lines


def _shown(folder: Path) -> str:
    """A state folder as typed: relative to the working folder when inside it."""
    try:
        return str(folder.relative_to(Path.cwd()))
    except ValueError:
        return str(folder)


def _already_running(state_dir: Path, manifest: dict[str, Any], live: bool, l2: bool) -> None:
    stop = "recompute devnet down" + (
        "" if Path(state_dir) == DEFAULT_STATE_DIR else f" --state-dir {state_dir}")
    click.echo(f"a devnet is already running from {state_dir} at {manifest['rpc']}; "
               f"`{stop}` stops it", err=True)
    if live and not manifest.get("live"):
        click.echo(f"it is not a living devnet: `{stop}`, then `up --live`", err=True)
    if l2 and not manifest.get("l2"):
        click.echo(f"it has no L2: `{stop}`, then `up --l2 --fresh`", err=True)


@devnet_group.command("up")
@click.option("--port", type=click.IntRange(1, 65535),
              help=f"Port on 127.0.0.1 (default: {DEFAULT_PORT} when free, else a free one).")
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
@click.option("--l2", is_flag=True,
              help="Also an OP-stack L2 (a second anvil), its L1 contracts and dispute games "
                   "after the history, and a lying L2 node (docs/devnet.md).")
def devnet_up(port: int | None, state_dir: Path, fresh: bool, as_json: bool, live: bool,
              block_time: int, reorg_every: int | None, l2: bool) -> None:
    """Start anvil, deploy every reference contract, drive the scripted history."""
    if not live and (reorg_every is not None or block_time != 2):
        raise click.UsageError("--block-time and --reorg-every go with --live")
    if live and l2:
        raise click.UsageError("--l2 and --live do not go together: the L2's games are dated")
    try:
        if l2 and not fresh:
            check_resumable(state_dir)
        manifest, started = up(state_dir, port, fresh,
                               LiveOptions(block_time, reorg_every) if live else None,
                               preferred_port=DEFAULT_PORT, extension=extension(l2))
    except DevnetError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except OSError as exc:  # a state file that cannot be written (a link planted there)
        click.echo(f"error: {exc.filename or state_dir}: {exc.strerror or exc} (the devnet "
                   "writes its state folder's files itself, never through a link: remove it)",
                   err=True)
        sys.exit(2)
    if not started:
        _already_running(state_dir, manifest, live, l2)
    elif port is None and manifest.get("port") != DEFAULT_PORT:
        click.echo(f"note: the devnet listens on {manifest['rpc']}, not port {DEFAULT_PORT} "
                   f"({DEFAULT_PORT} was in use or the stopped devnet had this port): use that "
                   "URL in the commands", err=True)
    if as_json:
        click.echo(json_document(manifest, sort_keys=True))
    else:
        for line in _summary(manifest):
            click.echo(line)
        click.echo(f"manifest: {Path(state_dir) / 'manifest.json'} (every address, subject, key "
                   "and moment as JSON)")
        for line in _next_commands(manifest):
            click.echo(line)


@devnet_group.command("down")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path),
              help=f"Stop the devnet of this folder only (default: {DEFAULT_STATE_DIR} and "
                   "every folder `devnet up` started one in).")
def devnet_down(state_dir: Path | None) -> None:
    """Stop the devnets `up` started: every process of each (their state stays; `up`
    resumes it)."""
    folders = [state_dir] if state_dir is not None else _started_folders()
    stopped_any = False
    for folder in folders:
        stopped = down(folder)
        if stopped:
            stopped_any = True
            click.echo(f"stopped the devnet of {folder}: {', '.join(stopped)}")
    if not stopped_any:
        where = (f"from {state_dir}" if state_dir is not None else
                 f"from {DEFAULT_STATE_DIR} nor any folder `recompute devnet up` recorded")
        click.echo(f"no devnet is running {where}")


def _started_folders() -> list[Path]:
    """./.devnet, then each folder `up` recorded (recompute/devnet/started.py), once each."""
    out = [DEFAULT_STATE_DIR]
    for folder in known():
        if folder != DEFAULT_STATE_DIR.resolve():
            out.append(folder)
    return out
