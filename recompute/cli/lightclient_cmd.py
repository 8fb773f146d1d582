"""``recompute lightclient sync``: the light client alone, showing what it authenticated.

Exit 0 when synced (the finalized and optimistic execution headers are printed), 2 with the
reason when not (docs/lightclient.md), 64 for a usage error.
"""

from __future__ import annotations

import sys

import click

from recompute.cli import cli
from recompute.cli.beacon_options import LightClientSession, beacon_options, light_client_request
from recompute.cli.clock_options import clock_options, current_clock
from recompute.cli.flags import cli_detail
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.jsontext import json_document
from recompute.core.verdict import EXIT_GOOD, EXIT_UNVERIFIABLE
from recompute.lightclient import ExecutionHeader


@cli.group("lightclient")
def lightclient_group() -> None:
    """The consensus light client behind the light-client anchor (--beacon)."""


def _header_json(header: ExecutionHeader) -> dict[str, object]:
    return {
        "block_number": header.block_number,
        "block_hash": "0x" + header.block_hash.hex(),
        "parent_hash": "0x" + header.parent_hash.hex(),
        "state_root": "0x" + header.state_root.hex(),
        "receipts_root": "0x" + header.receipts_root.hex(),
        "timestamp": header.timestamp,
        "beacon_slot": header.beacon_slot,
        "beacon_root": "0x" + header.beacon_root.hex(),
        "finalized": header.finalized,
    }


@lightclient_group.command("sync")
@beacon_options
@clock_options
@click.option("--rpc-timeout", type=float, metavar="SECONDS",
              help="How long to wait for one answer of the beacon node (default 30).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def sync_command(rpc_timeout: float | None, as_json: bool) -> None:
    """Sync from --trusted-root and print the authenticated execution headers.

    SYNCED (exit 0) only when the finalized header is within --max-anchor-age of the clock
    and the optimistic one is newer than it and within --max-head-age; otherwise NOT SYNCED
    (stale-anchor, exit 2) naming the lag, with the headers the beacon node brought the store
    to."""
    from recompute.lightclient.anchored_header import check_current, check_latest

    request = light_client_request()
    if request is None:
        raise UsageError("give --beacon URL --trusted-root 0x… (the beacon node and your "
                         "checkpoint)")
    clock = current_clock()
    session = LightClientSession(request, clock)
    try:
        store = session.sync()
        finalized, optimistic = store.finalized_execution(), store.optimistic_execution()
    except Unverifiable as exc:
        if as_json:
            click.echo(json_document({"synced": False, "reason": exc.reason,
                                      "detail": cli_detail(exc)}))
        else:
            click.echo(f"UNVERIFIABLE ({exc.reason}): {cli_detail(exc)}")
        sys.exit(EXIT_UNVERIFIABLE)
    finally:
        session.close()
    stale = None
    try:
        check_current(store, finalized, clock)
        check_latest(store, clock)  # by --max-head-age, and newer than the finalized one
    except Unverifiable as exc:
        stale = exc
    signers, size = store.last_participation or (None, None)
    summary = {
        "synced": stale is None,
        "network": store.network.name,
        "trusted_root": "0x" + request.trusted_root.hex(),
        "sync_committee_period": store.sync_period,
        "participation": None if signers is None else f"{signers}/{size}",
        "clock": clock.kind,
        "as_of": int(clock.now()),
        "finalized": {**_header_json(finalized), "age_s": clock.age(finalized.timestamp)},
        "optimistic": {**_header_json(optimistic), "age_s": clock.age(optimistic.timestamp)},
    }
    if stale is not None:
        summary.update(reason=stale.reason, detail=cli_detail(stale))
    if as_json:
        click.echo(json_document(summary))
    else:
        if stale is not None:
            click.echo(f"NOT SYNCED ({stale.reason}): {cli_detail(stale)}")
        else:
            click.echo(f"SYNCED {store.network.name} from trusted root "
                       f"{summary['trusted_root']}: sync-committee period {store.sync_period}, "
                       f"participation {summary['participation']}")
        for name, header in (("finalized", finalized), ("optimistic", optimistic)):
            click.echo(f"{name:<10} block {header.block_number} 0x{header.block_hash.hex()} "
                       f"(beacon slot {header.beacon_slot} 0x{header.beacon_root.hex()})")
            click.echo(f"{'':<10} state root 0x{header.state_root.hex()}, timestamp "
                       f"{header.timestamp} ({clock.age(header.timestamp)} s old by the "
                       f"{clock.kind} clock)")
    sys.exit(EXIT_GOOD if stale is None else EXIT_UNVERIFIABLE)
