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

import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import click

from recompute.cli import cli
from recompute.cli.audit_files import ReportFiles, csv_option, html_option
from recompute.cli.report import say
from recompute.core.anchor import AnchoredBlock, anchor_block
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.jsontext import json_document
from recompute.core.verdict import EXIT_UNVERIFIABLE, Verdict
from recompute.watch.audit_page import AuditFacts
from recompute.watch.auditor import Summary
from recompute.watch.config import Check, read_config_text
from recompute.watch.coordinator import SegmentedAudit, in_process, line_from_json, summarise
from recompute.watch.evaluate import Line
from recompute.watch.linking import ties_from_top, without_lines
from recompute.watch.segment import config_hash
from recompute.watch.store import Store
from recompute.watch.store_records import CheckMeta, planned_segments

if TYPE_CHECKING:
    from recompute.sources.cache import SharedSource
    from recompute.watch.cluster import ClusterTarget
    from recompute.watch.sink import Sink


class Pins(TypedDict):
    """How the range's top block is pinned (the anchor options, parsed)."""

    block_hash: bytes | None
    checkpoint: bytes | None
    quorum: int | None


def _metas(checks: list[Check]) -> list[dict[str, Any]]:
    return [CheckMeta(c.name, c.healthy, c.since).to_json() for c in checks]


def run_segmented(*, checks: list[Check], config_path: str, rpcs: list[str],
                  sources: Sequence[SharedSource], first: int | None, last: int | None,
                  pins: Pins, confirmations: int,
                  processes: int | None, cluster: ClusterTarget | None,
                  store_path: str | None,
                  resume: bool, segment_blocks: int, threads: int, sink: Sink,
                  stop: threading.Event,
                  files: ReportFiles | None = None,
                  recipe_paths: tuple[str, ...] = (), reference: bool = False,
                  anchor_top: Callable[[], AnchoredBlock] | None = None) -> int:
    """A range audit in segments; the exit code (0/1/2, 130 interrupted). ``files``: the
    --html/--csv reports, made from the store once the audit is complete. ``recipe_paths``:
    the recipe modules the user named (resolved), the only ones a worker imports.
    ``anchor_top``:
    how the range's top block is anchored when the pins do not say (an L2 block pinned
    through L1: docs/l2.md §Watch)."""
    text = read_config_text(config_path)
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
        elif last is None:  # (the watch sends a follow mode without --resume elsewhere)
            raise UsageError("a range audit is --from N --to M")
        else:
            top = _start_range(store, checks, text, sources, first, last, pins, confirmations,
                               segment_blocks, anchor_top)
        executor = in_process
        where = "this process"
        dask = None
        if processes is not None or cluster is not None:
            from recompute.watch.cluster import segment_executor

            dask = segment_executor(cluster=cluster, processes=processes)
            executor, where = dask, dask.where
        try:
            audit = SegmentedAudit(store, sink, executor, where=where, threads=threads,
                                   stop=stop, recipe_paths=recipe_paths, reference=reference)
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
        if files is not None and files.wanted:
            for note in stored_report(store, files)[2]:
                sink.note(note)
        return summary.exit_code()
    finally:
        store.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _anchor(sources: Sequence[SharedSource], number: int, pins: Pins) -> AnchoredBlock:
    return anchor_block(sources, block=number, block_hash=pins.get("block_hash"),
                        quorum=pins.get("quorum"), checkpoint=pins.get("checkpoint"))


def _start_range(store: Store, checks: list[Check], text: str, sources: Sequence[SharedSource],
                 first: int | None, last: int, pins: Pins, confirmations: int,
                 segment_blocks: int,
                 anchor: Callable[[], AnchoredBlock] | None = None) -> AnchoredBlock:
    try:
        head = sources[0].block_number()
    except Unverifiable:
        head = None  # anchoring says what is wrong with the node
    top = _anchor(sources, last, pins) if anchor is None else anchor()
    store.put({"mode": "range", "config_hash": config_hash(text), "checks": _metas(checks),
               "first": first, "last": last, "pinned_hash": "0x" + top.hash.hex(),
               "anchor": top.anchor.to_json(), "head": head, "confirmations": confirmations,
               "segment_blocks": segment_blocks})
    return top


def _resume_range(store: Store, text: str, config_path: str, first: int | None,
                  last: int | None, pins: Pins,
                  sources: Sequence[SharedSource]) -> tuple[int, int, AnchoredBlock]:
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
    store.check_segments()  # before a node is asked
    pinned = params["pinned_hash"]
    pin = pins["block_hash"]
    if pin is not None and "0x" + pin.hex() != pinned:
        raise UsageError(f"{where}: --block-hash 0x{pin.hex()} is not the pin the audit "
                         f"was started with: it was pinned to {pinned}")
    if not any(pins.get(k) is not None for k in ("block_hash", "checkpoint", "quorum")):
        # the pin the audit started with
        pins = {"block_hash": bytes.fromhex(pinned[2:]), "checkpoint": None, "quorum": None}
    top = _anchor(sources, params["last"], pins)
    if "0x" + top.hash.hex() != pinned:
        raise UsageError(f"{where}: the anchor gives block {params['last']} 0x{top.hash.hex()}, "
                         f"but the audit was pinned to {pinned}")
    return params["first"], params["last"], top


def open_follow_store(store_path: str, checks: list[Check], config_path: str,
                      confirmations: int) -> tuple[Store, int | None, bytes | None]:
    """The store of a following bot: (store, last final block, its hash) when it continues."""
    text = read_config_text(config_path)
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
@html_option
@csv_option
def report_command(store_path: str, as_json: bool, html_path: str | None,
                   csv_path: str | None) -> None:
    """Print a stored audit's summary, without asking any node (and write --html, --csv)."""
    files = ReportFiles(html_path, csv_path)
    store = Store.existing(store_path)
    try:
        report, rows, notes = stored_report(store, files)
    finally:
        store.close()
    if as_json:
        click.echo(json_document(report))
    else:
        for row in rows:
            say(row)
    for note in notes:
        say(note, err=True)
    sys.exit(report["exit_code"])


def stored_report(store: Store,
                  files: ReportFiles) -> tuple[dict[str, Any], list[str], list[str]]:
    """The summary of a stored audit (JSON and rows) and, when asked, its report files (the
    notes saying where they are). The store is read in one snapshot."""
    try:
        with store.snapshot():
            report, rows, summary = _report(store, files)
            params = store.params()
    except BaseException:
        files.discard()
        raise
    if not files.wanted:
        return report, rows, []
    facts = AuditFacts(
        title=(f"Audit of blocks {report['first']}..{report['last']}" if report["mode"] ==
               "range" else "Followed blocks"),
        config_hash=str(report["config_hash"]), anchor=_anchor_facts(params),
        exit_code=report["exit_code"], first=report.get("first"), last=report.get("last"),
        pinned_hash=report.get("pinned_hash"), complete=report.get("complete", True),
        notes=rows[:len(rows) - len(summary.table())],  # the head of the text report
        retractions=report.get("segments", {}).get("not_merged", []),
        retraction_note=_NO_RETRACTION[report["mode"]])
    return report, rows, files.finish(facts, summary)


_NO_RETRACTION = {
    "range": "Every segment of the range ties to the pinned block by parent links: every line "
             "stands.",
    "follow": "A followed store keeps final lines only (a reorg no deeper than the "
              "confirmations is settled before a line is final).",
}


def _anchor_facts(params: dict[str, Any]) -> dict[str, Any]:
    anchor = params.get("anchor")
    if isinstance(anchor, dict):
        return anchor
    return {"method": "parent-link", "trusts": "each followed block is tied to the one "
            "before it by parent links from the first block the watch anchored"}


def _report(store: Store, files: ReportFiles | None = None
            ) -> tuple[dict[str, Any], list[str], Summary]:
    """The summary of a stored audit, read one segment (or block) at a time: memory does not
    grow with the range, and a range far larger than the store's rows is only counted. The
    store's values are checked as they are read (recompute.watch.store_records)."""
    params = store.params()
    mode = params.get("mode")
    if mode is None:
        raise UsageError(f"store {store.path}: holds no audit")
    checks = [CheckMeta.from_json(c) for c in params["checks"]]
    each = files.add if files is not None else None
    if files is not None:
        files.start((c.name, c.healthy) for c in checks)
    out: dict[str, Any] = {"store": str(store.path), "mode": mode,
                           "config_hash": params["config_hash"]}
    head: list[str] = []
    if mode == "range":
        planned, evaluated = planned_segments(params), store.segment_count()
        complete = evaluated == planned
        out.update({"first": params["first"], "last": params["last"],
                    "pinned_hash": params["pinned_hash"], "anchor": params["anchor"],
                    "complete": complete,
                    "segments": {"planned": planned, "evaluated": evaluated}})
        head.append(f"audit: blocks {params['first']}..{params['last']}, pinned "
                    f"{params['pinned_hash']} ({params['anchor']['method']}); "
                    f"{evaluated} of {planned} segment(s) evaluated")
        if complete:
            ties = list(ties_from_top(params["last"], params["pinned_hash"],
                                      ((r.lo, r.hi, without_lines(r))
                                       for r in store.segments(descending=True))))
            ties.reverse()
            summary = summarise(params, checks, ties, store.lines, each)
            loose = [{"from": t.lo, "to": t.hi, "reason": t.reason, "detail": t.detail}
                     for t in ties if not t.linked]
            out["segments"]["not_merged"] = loose
            head += [f"segment {x['from']}..{x['to']} not merged ({x['reason']}): "
                     f"{x['detail']}" for x in loose]
        else:
            summary = _summary_of(checks, (line for result in store.segments()
                                           for line in result.lines), each)
            head.append(f"incomplete: segments are not yet tied to the pin; finish with "
                        f"recompute watch --resume --store {store.path} …")
    else:
        summary = _summary_of(checks, store.final_lines(), each)
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
    return out, [*head, *summary.table()], summary


def _summary_of(checks: list[CheckMeta], lines: Iterable[dict[str, Any]],
                each: Callable[[list[Line]], None] | None = None) -> Summary:
    """Stored lines (checked, in block order) summed block by block, as they come; ``each`` is
    handed every block's lines (the report files)."""
    summary = Summary(checks)
    for _, group in groupby(lines, key=lambda value: value["block"]):
        block = [line_from_json(value) for value in group]
        summary.add(block)
        if each is not None:
            each(block)
    return summary
