"""Audits that outgrow one machine (docs/watch.md §Audits that outgrow one machine):

- ``recompute watch --from N --to M … [--processes P | --cluster URL] [--store PATH]``: the
  range in segments on Dask workers (or in this process with only ``--store``), tied into one
  chain of parent links up to the pinned block M (:mod:`recompute.watch.coordinator`);
- ``recompute watch --resume --store PATH …``: finish an audit a crash interrupted (the same
  checks and the same pin, or refused in one line);
- ``recompute watch --store PATH`` in follow mode: final lines recorded, a restart continues
  after the last final block;
- ``recompute audit report --store PATH [--json]``: the summary of a stored audit, no node asked.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from recompute.cli import cli
from recompute.core.anchor import AnchoredBlock, anchor_block
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.verdict import EXIT_UNVERIFIABLE, Verdict
from recompute.watch.auditor import Summary
from recompute.watch.config import Check
from recompute.watch.coordinator import (
    CheckMeta,
    SegmentedAudit,
    in_process,
    line_from_json,
    summarise,
)
from recompute.watch.linking import plan_segments, without_lines
from recompute.watch.segment import config_hash
from recompute.watch.store import Store

if TYPE_CHECKING:
    from recompute.watch.cluster import ClusterTarget


def _metas(checks: list[Check]) -> list[dict]:
    return [CheckMeta(c.name, c.healthy, c.since).to_json() for c in checks]


def _config_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--config {path}: {exc.strerror or exc}") from None


def run_segmented(*, checks: list[Check], config_path: str, rpcs: list[str], sources,
                  first: int | None, last: int | None, pins: dict, confirmations: int,
                  processes: int | None, cluster: ClusterTarget | None,
                  store_path: str | None,
                  resume: bool, segment_blocks: int, threads: int, sink, stop) -> int:
    """A range audit in segments; the exit code (0/1/2, 130 interrupted)."""
    text = _config_text(config_path)
    scratch = None
    if store_path is None:
        scratch = tempfile.mkdtemp(prefix="recompute-audit-")
        store_path = str(Path(scratch) / "audit.sqlite")
    store = Store.existing(store_path) if resume else Store(store_path)
    if not resume and store.get("mode"):
        store.close()
        raise UsageError(f"--store {store_path} already holds an audit: add --resume to "
                         "finish it, or give a new file")
    try:
        if resume:
            first, last, top = _resume_range(store, text, config_path, first, last, pins,
                                             sources)
        else:
            top = _start_range(store, checks, text, sources, first, last, pins, confirmations,
                               segment_blocks)
        executor = in_process
        where = "this process"
        dask = None
        if processes is not None or cluster is not None:
            from recompute.watch.cluster import DaskExecutor

            dask = DaskExecutor(cluster=cluster, processes=processes)
            executor, where = dask, dask.where
        try:
            audit = SegmentedAudit(store, sink, executor, where=where, threads=threads,
                                   stop=stop)
            summary, _ = audit.run(top, text, str(Path(config_path).resolve()), rpcs)
        finally:
            if dask is not None:
                dask.close()
        if audit.interrupted:
            sink.note(f"interrupted: finish it with --resume --store {store_path}"
                      if scratch is None else "interrupted: blocks were not all audited")
            return 130
        for row in summary.table():
            sink.note(row)
        return summary.exit_code()
    finally:
        store.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _anchor(sources, number: int, pins: dict) -> AnchoredBlock:
    return anchor_block(sources, block=number, block_hash=pins.get("block_hash"),
                        quorum=pins.get("quorum"), checkpoint=pins.get("checkpoint"))


def _start_range(store: Store, checks, text, sources, first, last, pins, confirmations,
                 segment_blocks) -> AnchoredBlock:
    try:
        head = sources[0].block_number()
    except Unverifiable:
        head = None  # anchoring says what is wrong with the node
    top = _anchor(sources, last, pins)
    store.put({"mode": "range", "config_hash": config_hash(text), "checks": _metas(checks),
               "first": first, "last": last, "pinned_hash": "0x" + top.hash.hex(),
               "anchor": top.anchor.to_json(), "head": head, "confirmations": confirmations,
               "segment_blocks": segment_blocks})
    return top


def _resume_range(store: Store, text, config_path, first, last, pins, sources):
    params = store.params()
    where = f"--resume --store {store.path}"
    if params.get("mode") != "range":
        raise UsageError(f"{where}: the store holds no range audit to resume")
    if params.get("config_hash") != config_hash(text):
        raise UsageError(f"{where}: --config {config_path} is not the checks the audit was "
                         f"started with (sha256 {config_hash(text)[:16]}…, the store's "
                         f"{str(params.get('config_hash'))[:16]}…)")
    for option, given, stored in (("--from", first, params["first"]),
                                  ("--to", last, params["last"])):
        if given is not None and given != stored:
            raise UsageError(f"{where}: {option} {given} is not the audit's {stored}")
    pinned = params["pinned_hash"]
    given = pins.get("block_hash")
    if given is not None and "0x" + given.hex() != pinned:
        raise UsageError(f"{where}: --block-hash 0x{given.hex()} is not the pin the audit "
                         f"was started with: it was pinned to {pinned}")
    if not any(pins.get(k) is not None for k in ("block_hash", "checkpoint", "quorum")):
        pins = {"block_hash": bytes.fromhex(pinned[2:])}  # the pin the audit started with
    top = _anchor(sources, params["last"], pins)
    if "0x" + top.hash.hex() != pinned:
        raise UsageError(f"{where}: the anchor gives block {params['last']} 0x{top.hash.hex()}, "
                         f"but the audit was pinned to {pinned}")
    return params["first"], params["last"], top


def open_follow_store(store_path: str, checks: list[Check], config_path: str,
                      confirmations: int) -> tuple[Store, int | None, bytes | None]:
    """The store of a following bot: (store, last final block, its hash) when it continues."""
    text = _config_text(config_path)
    store = Store(store_path)
    params = store.params()
    if params.get("mode") not in (None, "follow"):
        store.close()
        raise UsageError(f"--store {store_path} holds a range audit: follow mode needs its own "
                         "store (finish the audit with --resume)")
    if params.get("mode") == "follow" and params.get("config_hash") != config_hash(text):
        store.close()
        raise UsageError(f"--store {store_path}: --config {config_path} is not the checks this "
                         f"bot followed with (sha256 {config_hash(text)[:16]}…, the store's "
                         f"{str(params.get('config_hash'))[:16]}…)")
    if params.get("mode") is None:
        store.put({"mode": "follow", "config_hash": config_hash(text),
                   "checks": _metas(checks), "confirmations": confirmations})
    number, block_hash = store.get("last_final_block"), store.get("last_final_hash")
    if isinstance(number, int) and isinstance(block_hash, str):
        return store, number, bytes.fromhex(block_hash[2:])
    return store, None, None


# ---- recompute audit report ------------------------------------------------------------------


@cli.group("audit")
def audit_group() -> None:
    """Stored audits (recompute watch --store PATH)."""


@audit_group.command("report")
@click.option("--store", "store_path", required=True, metavar="PATH",
              help="The evidence store of recompute watch --store.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of the table.")
def report_command(store_path: str, as_json: bool) -> None:
    """Print a stored audit's summary, without asking any node."""
    store = Store.existing(store_path)
    try:
        report, rows = _report(store)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        for row in rows:
            click.echo(row)
    sys.exit(report["exit_code"])


def _report(store: Store) -> tuple[dict, list[str]]:
    params = store.params()
    mode = params.get("mode")
    try:
        checks = [CheckMeta.from_json(c) for c in params.get("checks", [])]
    except ValueError as exc:
        raise UsageError(f"--store {store.path}: {exc}") from None
    if mode not in ("range", "follow") or not checks:
        raise UsageError(f"--store {store.path}: holds no audit")
    out: dict = {"store": str(store.path), "mode": mode, "config_hash": params["config_hash"]}
    head: list[str] = []
    if mode == "range":
        plan = plan_segments(params["first"], params["last"], params["segment_blocks"])
        results = {r.lo: without_lines(r) for r in store.segments()}
        complete = len(results) == len(plan)
        out.update({"first": params["first"], "last": params["last"],
                    "pinned_hash": params["pinned_hash"], "anchor": params["anchor"],
                    "complete": complete,
                    "segments": {"planned": len(plan), "evaluated": len(results)}})
        head.append(f"audit: blocks {params['first']}..{params['last']}, pinned "
                    f"{params['pinned_hash']} ({params['anchor'].get('method')}); "
                    f"{len(results)} of {len(plan)} segment(s) evaluated")
        if complete:
            summary, ties = summarise(params, checks, results, store.lines)
            loose = [{"from": t.lo, "to": t.hi, "reason": t.reason, "detail": t.detail}
                     for t in ties if not t.linked]
            out["segments"]["not_merged"] = loose
            head += [f"segment {x['from']}..{x['to']} not merged ({x['reason']}): "
                     f"{x['detail']}" for x in loose]
        else:
            summary = _unlinked_summary(checks, store)
            head.append(f"incomplete: segments are not yet tied to the pin; finish with "
                        f"recompute watch --resume --store {store.path} …")
    else:
        summary = _unlinked_summary(checks, store)
        complete = True
        out["last_final_block"] = params.get("last_final_block")
        out["last_final_hash"] = params.get("last_final_hash")
        head.append(f"follow: final lines through block {params.get('last_final_block')}")
    out["blocks"] = summary.blocks
    out["checks"] = {name: {"healthy": t.healthy.value,
                            **{v.value: t.counts[v] for v in Verdict},
                            "first_bad": t.first_bad, "first_unhealthy": t.first_unhealthy}
                     for name, t in summary.tallies.items()}
    out["exit_code"] = summary.exit_code() if complete else EXIT_UNVERIFIABLE
    return out, [*head, *summary.table()]


def _unlinked_summary(checks: list[CheckMeta], store: Store) -> Summary:
    summary = Summary(checks)  # type: ignore[arg-type]
    by_block: dict[int, list] = {}
    for value in store.all_lines():
        try:
            line = line_from_json(value)
        except (KeyError, ValueError, TypeError):
            raise UsageError(f"--store {store.path}: a stored line is malformed") from None
        by_block.setdefault(line.block, []).append(line)
    for _, lines in sorted(by_block.items()):
        try:
            summary.add(lines)
        except KeyError:
            raise UsageError(f"--store {store.path}: a stored line names an unknown check"
                             ) from None
    return summary
