"""``recompute watch``: assert invariants on every block (docs/watch.md).

Follow mode (no ``--to``) runs until SIGINT/SIGTERM (or ``--max-blocks``) and exits 0; range
mode (``--from N --to M``) exits 0 if every check was healthy at every block, 1 if any was
not (a verified verdict other than its healthy one), 2 if any was UNVERIFIABLE and none
unhealthy (docs/design.md §Verdicts). Usage errors, the config's included, exit 64 before any node
is asked. ``--processes``, ``--cluster``, ``--store`` and ``--resume`` hand the range to
:mod:`recompute.cli.audit_cmd` (segments, the evidence store; docs/watch.md §Audits that outgrow
one machine).
"""

from __future__ import annotations

import functools
import signal
import sys
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from recompute.cli import cli
from recompute.cli.audit_files import ReportFiles, ReportingSink, csv_option, html_option
from recompute.cli.beacon_options import (
    LightClientRequest,
    LightClientSession,
    beacon_options,
    parse_lc_block,
)
from recompute.cli.clock_options import current_clock
from recompute.cli.flags import flag
from recompute.cli.l2_options import l2_options
from recompute.cli.l2_watch import check_l2_watch, l2_follower, l2_top
from recompute.cli.options import Chain, connection_options
from recompute.cli.recipes_cmd import RECIPES_OPTION
from recompute.cli.sparse_blocks import check_below, sparse_blocks
from recompute.core.anchor import AnchoredBlock, anchor_block, confirm_by_quorum
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.hexdata import parse_block, parse_hash
from recompute.core.hops import reach
from recompute.core.verdict import EXIT_GOOD
from recompute.lightclient.anchored_header import (
    by_light_client,
    check_current,
    check_latest,
    payload_header,
)
from recompute.recipes.registry import named_recipe_paths
from recompute.sources.cache import SharedSource
from recompute.watch.alerts import AlertSender, Hooks
from recompute.watch.audit_page import AuditFacts
from recompute.watch.auditor import Auditor
from recompute.watch.config import Check, load_config, read_config_text
from recompute.watch.evaluate import BlockEvaluator
from recompute.watch.follower import Follower
from recompute.watch.hooks import OnBad
from recompute.watch.metrics import Metrics, metrics_address, metrics_url, serve
from recompute.watch.segment import config_hash
from recompute.watch.signed_heads import SignedHeads
from recompute.watch.sink import Sink
from recompute.watch.sparse import sparse_facts
from recompute.watch.webhook import Webhook, check_webhook_url

if TYPE_CHECKING:
    from recompute.core.anchor import PayloadHeader
    from recompute.core.clock import Clock
    from recompute.watch.cluster import ClusterTarget
    from recompute.watch.recording import RecordingSink
    from recompute.watch.store import Store

RPC_TIMEOUT = 10.0  # a hung node should not hold a monitoring bot for long
_TO_NEEDS_FROM = "--to M needs --from N (a range audit is --from N --to M)"


def _block_number(text: str | None, option: str) -> int | None:
    if text is None:
        return None
    try:
        number = parse_block(text)
    except UsageError:
        raise UsageError(f"{option} {text!r} is not a block number") from None
    if not isinstance(number, int):
        raise UsageError(f"{option} {text!r} is not a block number")
    return number


@cli.command("watch")
@connection_options
@click.option("--config", "config_path", required=True, metavar="FILE",
              help="checks.toml: the checks to evaluate at every block.")
@click.option("--from", "from_text", metavar="N",
              help="First block (default: the head). With --to: audit N..M.")
@click.option("--to", "to_text", metavar="M", help="Last block of a range audit.")
@click.option("--blocks", "blocks_texts", multiple=True, metavar="LIST",
              help="A sparse audit: only these blocks (comma-separated, repeatable), each "
                   "proven from the pinned block (--to M, else the pin) as --history says.")
@click.option("--every", type=int, metavar="N",
              help="A sparse audit of every N-th block of --from A --to M.")
@click.option("--confirmations", type=int, default=2, show_default=True, metavar="C",
              help="A block's lines are final once C blocks are verified on top of it.")
@click.option("--metrics-port", type=int, metavar="P",
              help="Serve Prometheus text metrics on --metrics-addr:P (/metrics).")
@click.option("--metrics-addr", default="127.0.0.1", show_default=True, metavar="ADDR",
              help="The address --metrics-port binds (0.0.0.0 or :: for every interface).")
@click.option("--on-bad", "on_bad", metavar="CMD",
              help="Shell command run (JSON line on stdin) when a check turns unhealthy.")
@click.option("--on-bad-webhook", "webhook_url", metavar="URL",
              help="POST a JSON body to URL when a check turns unhealthy and when it turns "
                   "healthy again (docs/watch.md).")
@click.option("--webhook-format", type=click.Choice(["json", "slack"]), default="json",
              show_default=True, help="The webhook body: recompute's JSON, or Slack-compatible "
                                      "{\"text\": ...}.")
@click.option("--poll", type=float, default=1.0, show_default=True, metavar="SECONDS",
              help="Follow mode: how often to ask for a new head.")
@click.option("--max-backoff", type=float, default=30.0, show_default=True, metavar="SECONDS",
              help="Follow mode: longest wait between retries while the node is in trouble.")
@click.option("--max-blocks", type=int, metavar="N", help="Follow mode: stop after N blocks.")
@click.option("--start-timeout", type=float, default=60.0, show_default=True, metavar="SECONDS",
              help="Follow mode: how long to retry a node in trouble before the first block "
                   "is anchored; then exit 2.")
@click.option("--workers", type=int, default=4, show_default=True, metavar="T",
              help="Range mode: blocks evaluated at once (per process).")
@click.option("--processes", type=int, metavar="P",
              help="Range mode: segments on P local worker processes.")
@click.option("--cluster", metavar="URL",
              help="Range mode: segments on a running Dask scheduler: tls://HOST:PORT, or "
                   "tcp://127.0.0.1:PORT on this machine (docs/watch.md).")
@click.option("--cluster-ca", metavar="FILE",
              help="--cluster tls://: the CA certificate the scheduler's must chain to.")
@click.option("--cluster-cert", metavar="FILE",
              help="--cluster tls://: this client's certificate (PEM).")
@click.option("--cluster-key", metavar="FILE",
              help="--cluster tls://: this client's private key (PEM).")
@click.option("--insecure-cluster", is_flag=True,
              help="Allow --cluster tcp:// to another machine: unauthenticated pickle, for a "
                   "network you trust.")
@click.option("--store", "store_path", metavar="PATH",
              help="SQLite evidence store: every line, every segment's links, the parameters.")
@click.option("--resume", is_flag=True, help="Finish the audit of --store PATH after a crash.")
@click.option("--segment-blocks", type=int, default=64, show_default=True, metavar="B",
              help="Range mode with --processes/--cluster/--store: blocks per segment.")
@click.option("--reference", is_flag=True,
              help="Evaluate every check the plain way (fresh proofs of every read at every "
                   "block, nothing kept or shared): slower, to cross-check the fast path.")
@RECIPES_OPTION
@html_option
@csv_option
@beacon_options
@l2_options
def watch_command(chain: Chain, config_path: str, from_text: str | None, to_text: str | None,
                  blocks_texts: tuple[str, ...], every: int | None, confirmations: int,
                  metrics_port: int | None, metrics_addr: str, on_bad: str | None,
                  webhook_url: str | None, webhook_format: str, poll: float, max_backoff: float,
                  max_blocks: int | None, start_timeout: float, workers: int,
                  processes: int | None, cluster: str | None, cluster_ca: str | None,
                  cluster_cert: str | None, cluster_key: str | None, insecure_cluster: bool,
                  store_path: str | None, resume: bool, segment_blocks: int, reference: bool,
                  recipe_paths: tuple[str, ...], html_path: str | None,
                  csv_path: str | None) -> None:
    """Evaluate checks at every block: follow the head, or audit --from N --to M."""
    target = _cluster_target(cluster, insecure_cluster, cluster_ca, cluster_cert, cluster_key)
    checks = load_config(config_path, list(recipe_paths))
    first, last = _block_number(from_text, "--from"), _block_number(to_text, "--to")
    sparse = sparse_blocks(blocks_texts, every, first, last, processes, cluster, store_path)
    _check_options(first if sparse is None else sparse[0], last, confirmations, poll,
                   max_backoff, start_timeout, max_blocks, workers, chain.quorum)
    quorum = chain.quorum
    stored_follow = _check_distributed(processes, cluster, store_path, resume, segment_blocks,
                                       last)
    files = _report_files(html_path, csv_path, (last is None and not resume and sparse is None)
                          or stored_follow)
    pinned = parse_hash(chain.block_hash, "--block-hash") if chain.block_hash else None
    check = parse_hash(chain.checkpoint, "--checkpoint") if chain.checkpoint else None
    anchored_number = last if last is not None else first
    if check is not None and anchored_number is None:
        raise UsageError("--checkpoint needs --from N (the block to walk down to)")
    l2 = chain.l2_options.given  # an OP-stack L2 pinned through L1 (docs/l2.md §Watch)
    check_l2_watch(chain, last)
    light_client = chain.light_client() if not l2 else None  # with an L2: the L1's anchor
    if light_client is not None:
        _check_light_client(chain, pinned, check, quorum, processes, cluster, store_path)
    sources = [SharedSource(source) for source in chain.sources(RPC_TIMEOUT)]
    clock = current_clock()
    session = LightClientSession(light_client, clock) if light_client is not None else None
    if webhook_url:
        check_webhook_url(webhook_url)
    metrics_addr = metrics_address(metrics_addr)

    segmented = processes is not None or cluster is not None or store_path is not None
    sink, hook, server = _outputs((metrics_addr, metrics_port), on_bad, webhook_url,
                                  webhook_format, files if files.wanted and not segmented else None)
    for source in sources:
        source.tell_batches_refused(sink.note)
    stop = threading.Event()
    _on_signals(stop)
    evaluator = BlockEvaluator(checks, reference)
    anchor = l2_top(chain, anchored_number) if l2 else _anchor(
        sources, session, light_client, anchored_number, pinned, quorum, check, clock,
        "latest" if sparse is None else "finalized", chain.history or "auto")
    heads = _signed_heads(session, clock)
    needed = quorum if quorum is not None else len(sources)

    store: Store | None = None
    recording: RecordingSink | None = None
    try:
        if stored_follow and store_path is not None:
            store, sink = _follow_store(store_path, checks, config_path, confirmations, sink)
            recording = sink
        if sparse is not None:
            code = _audit(evaluator, sink, anchor, sources[0], sparse[0], confirmations,
                          workers, stop, files, config_path, sparse, chain.history or "auto")
        elif last is None and not (resume and not stored_follow):
            if l2:
                l2_follower(chain, sources[0], evaluator, sink, first, poll=poll,
                            max_backoff=max_backoff, max_blocks=max_blocks, stop=stop,
                            start_timeout=start_timeout, clock=clock, recording=recording).run()
            else:
                _follow(Follower(evaluator, sink, anchor, first, confirmations=confirmations,
                                 poll=poll, max_backoff=max_backoff, max_blocks=max_blocks,
                                 stop=stop, heads=heads,
                                 confirm=_confirm(sources, needed) if needed > 1 else None,
                                 start_timeout=start_timeout, clock=clock),
                        store, recording, sources, clock)
            code = EXIT_GOOD
        elif segmented:
            from recompute.cli.audit_cmd import run_segmented

            code = run_segmented(
                checks=checks, config_path=config_path, rpcs=list(chain.urls()), sources=sources,
                first=first, last=last, confirmations=confirmations, processes=processes,
                pins={"block_hash": pinned, "checkpoint": check, "quorum": quorum},
                cluster=target, store_path=store_path, resume=resume,
                segment_blocks=segment_blocks, threads=workers, sink=sink, stop=stop,
                files=files, recipe_paths=tuple(named_recipe_paths(list(recipe_paths))),
                reference=reference, anchor_top=anchor if l2 else None)
        elif first is not None:  # a range audit in this process (--to needs --from: above)
            code = _audit(evaluator, sink, anchor, sources[0], first, confirmations, workers,
                          stop, files, config_path)
        else:
            raise UsageError(_TO_NEEDS_FROM)
    finally:
        if recording is not None:
            recording.close()
        files.discard()
        _close(store, session, hook, server)
    sys.exit(code)


def _follow(follower: Follower, store: Store | None, recording: RecordingSink | None,
            sources: list[SharedSource], clock: Clock) -> None:
    """Follow the head (continuing a followed store's last final block, with --store)."""
    if store is not None and recording is not None:
        _continue_after_final(follower, store, sources, recording, clock)
    follower.run()


def _check_options(first: int | None, last: int | None, confirmations: int, poll: float,
                   max_backoff: float, start_timeout: float, max_blocks: int | None,
                   workers: int, quorum: int | None) -> None:
    """The range, pacing and quorum options: a usage error (exit 64) before any node is asked."""
    if last is not None and first is None:
        raise UsageError(_TO_NEEDS_FROM)
    if last is not None and first is not None and first > last:
        raise UsageError(f"--from {first} is above --to {last}")
    if confirmations < 0:
        raise UsageError("--confirmations must be 0 or more")
    if poll <= 0 or max_backoff <= 0 or start_timeout < 0:
        raise UsageError("--poll and --max-backoff must be more than 0 seconds (--start-timeout "
                         "0 or more)")
    if max_blocks is not None and max_blocks < 1:
        raise UsageError("--max-blocks must be at least 1")
    if workers < 1:
        raise UsageError("--workers must be at least 1")
    if quorum is not None and quorum < 1:
        raise UsageError("--quorum must be at least 1")


def _report_files(html_path: str | None, csv_path: str | None, following: bool) -> ReportFiles:
    if (html_path or csv_path) and following:
        raise UsageError("--html and --csv are for range audits (--from N --to M); a followed "
                         "store's report: recompute audit report --store PATH --html FILE")
    return ReportFiles(html_path, csv_path)


def _check_light_client(chain: Chain, pinned: bytes | None, check: bytes | None,
                        quorum: int | None, processes: int | None, cluster: str | None,
                        store_path: str | None) -> None:
    """--beacon is an anchor of its own: no other pin, one --rpc, one process."""
    if pinned or check or quorum is not None or len(chain.urls()) > 1:
        raise UsageError("--beacon is an anchor of its own: give one --rpc and no "
                         "--block-hash, --checkpoint or --quorum")
    if processes or cluster or store_path:
        raise UsageError("--beacon does not combine with --processes, --cluster or --store yet: "
                         "audit with one process, or pin the range with --block-hash")


def _outputs(metrics_at: tuple[str, int | None], on_bad: str | None, webhook_url: str | None,
             webhook_format: str, files: ReportFiles | None = None
             ) -> tuple[Sink, Hooks | None, ThreadingHTTPServer | None]:
    """The sink of lines (also handing them to the report ``files`` of a one-process range
    audit), the hooks run when a check turns unhealthy, the metrics server."""
    metrics = Metrics()
    sink = Sink(metrics) if files is None else ReportingSink(metrics, files=files)
    sink.spell = flag  # lines and notes name the options as this command's flags
    server = None
    addr, port = metrics_at
    if port is not None:
        server = serve(metrics, port, addr)
        sink.note(f"metrics: {metrics_url(server)}")
    hooks: list[AlertSender[Any]] = [OnBad(on_bad, sink.note, metrics)] if on_bad else []
    if webhook_url:
        hooks.append(Webhook(webhook_url, sink.note, webhook_format, metrics=metrics))
    hook = Hooks(hooks) if hooks else None
    sink.hook = hook
    return sink, hook, server


def _anchor(sources: list[SharedSource], session: LightClientSession | None,
            light_client: LightClientRequest | None, anchored_number: int | None,
            pinned: bytes | None, quorum: int | None, check: bytes | None,
            clock: Clock, tag: str = "latest",
            history: str = "auto") -> Callable[[], AnchoredBlock]:
    """The first (or --to) block's anchor: the light client, or the hash, checkpoint or quorum
    pins (docs/design.md §Anchors), its age by ``clock``; without a number, the light client's
    block ``tag`` (a sparse audit: the finalized one) or the node's latest; a block below the
    light client's or the checkpoint's reached as ``history`` says."""

    def anchor() -> AnchoredBlock:
        if session is not None and light_client is not None:  # the light client pins it
            block = parse_lc_block(tag if anchored_number is None else str(anchored_number))
            return by_light_client(sources[0], session.sync(), light_client.trusted_root, block,
                                   clock, history)
        try:
            return anchor_block(sources, block="latest" if anchored_number is None
                                else anchored_number, block_hash=pinned, quorum=quorum,
                                checkpoint=check, clock=clock,
                                reach=functools.partial(reach, mode=history))
        except Unverifiable as exc:
            if anchored_number is None and "block" in exc.options:
                raise _followed(exc) from None  # watch has no --block: it follows the head
            raise

    return anchor


def _followed(error: Unverifiable) -> Unverifiable:
    """``error`` about the block follow mode starts from (the node's ``latest``), which no
    option of watch names: ``block 226 (the head, latest, as the node named it)``."""
    return Unverifiable(error.reason, error.template.replace("{block} ", "the head, "),
                        tuple(o for o in error.options if o != "block"), **error.values)


def _signed_heads(session: LightClientSession | None, clock: Clock) -> SignedHeads | None:
    """With --beacon: the heads the sync committee signed (optimistic, finalized). A light
    client behind the clock (a beacon node withholding updates) is ``stale-anchor``: the
    follower writes no line about a new block and says ``up`` 0 until it catches up. The
    optimistic header is judged by --max-head-age and must be newer than the finalized one
    (:func:`~recompute.lightclient.anchored_header.check_latest`), whatever the beacon node sent."""
    if session is None:
        return None

    def signed() -> tuple[PayloadHeader, PayloadHeader]:
        store = session.sync()
        finalized = store.finalized_execution()
        check_current(store, finalized, clock)
        optimistic = check_latest(store, clock)
        return payload_header(optimistic), payload_header(finalized)

    return SignedHeads(signed)


def _confirm(sources: list[SharedSource],
             needed: int) -> Callable[[AnchoredBlock], AnchoredBlock | None]:
    """The check of each new head against the other --rpc."""

    def confirm(block: AnchoredBlock) -> AnchoredBlock | None:
        """Several --rpc: each new head confirmed by the quorum before its lines."""
        return confirm_by_quorum(block, [s for s in sources if s is not block.source], needed)

    return confirm


def _close(store: Store | None, session: LightClientSession | None, hook: Hooks | None,
           server: ThreadingHTTPServer | None) -> None:
    """Whatever the run opened, closed however it ended."""
    if store is not None:
        store.close()
    if session is not None:
        session.close()
    if hook is not None:
        hook.close()
    if server is not None:
        server.shutdown()


def _audit(evaluator: BlockEvaluator, sink: Sink, anchor: Callable[[], AnchoredBlock],
           source: SharedSource, first: int, confirmations: int, workers: int,
           stop: threading.Event, files: ReportFiles, config_path: str,
           sparse: list[int] | None = None, history: str = "auto") -> int:
    try:
        head = source.block_number()
    except Unverifiable:
        head = None  # anchoring says what is wrong with the node
    top = anchor()
    if sparse is not None:
        check_below(sparse, top.number)
    auditor = Auditor(evaluator, sink, workers=workers, confirmations=confirmations, stop=stop)
    if files.wanted:
        checks_hash = config_hash(read_config_text(config_path))
        files.start((c.name, c.healthy) for c in evaluator.checks)
    summary = auditor.run(top, first, head, sparse, history)
    for row in summary.table():
        sink.note(row)
    if auditor.interrupted_at is not None:
        sink.note(f"interrupted: blocks from {auditor.interrupted_at} on were not audited")
        return 130
    if files.wanted:
        facts = AuditFacts(
            title=f"Audit of blocks {first}..{top.number}", config_hash=checks_hash,
            anchor=top.anchor.to_json(), exit_code=summary.exit_code(), first=first,
            last=top.number, pinned_hash="0x" + top.hash.hex(),
            notes=[f"every block below {top.number} is tied to it by parentHash links"],
            retraction_note="The blocks were tied to the pinned block by parent links before "
                            "they were evaluated: every line stands.")
        if sparse is not None:
            facts = sparse_facts(facts, sparse, top.number, history)
        for note in files.finish(facts, summary):
            sink.note(note)
    return summary.exit_code()


def _cluster_target(cluster: str | None, insecure: bool, ca: str | None, cert: str | None,
                    key: str | None) -> ClusterTarget | None:
    """--cluster and its security options, checked before anything is asked of anyone."""
    if cluster is None:
        named = [name for name, value in (("--cluster-ca", ca), ("--cluster-cert", cert),
                                          ("--cluster-key", key),
                                          ("--insecure-cluster", insecure or None))
                 if value is not None]
        if named:
            raise UsageError(f"{named[0]} goes with --cluster URL")
        return None
    from recompute.watch.cluster import cluster_target

    return cluster_target(cluster, insecure=insecure, ca=ca, cert=cert, key=key)


def _check_distributed(processes: int | None, cluster: str | None, store_path: str | None,
                       resume: bool, segment_blocks: int, last: int | None) -> bool:
    """The options of audits that outgrow one machine (docs/watch.md); True when a follow mode
    writes to --store (a --resume of a stored follow included)."""
    if processes is not None and cluster is not None:
        raise UsageError("--processes starts a local cluster, --cluster names one: give one")
    if processes is not None and processes < 1:
        raise UsageError("--processes must be at least 1")
    if segment_blocks < 1:
        raise UsageError("--segment-blocks must be at least 1")
    if resume and store_path is None:
        raise UsageError("--resume needs --store PATH (the audit to finish)")
    if last is None and not resume and (processes is not None or cluster is not None):
        raise UsageError("--processes and --cluster are for range audits (--from N --to M)")
    if store_path is None or last is not None:
        return False
    if not resume:
        return True
    from recompute.watch.store import Store

    store = Store.existing(store_path)
    try:
        return bool(store.get("mode") == "follow")
    finally:
        store.close()


def _follow_store(store_path: str, checks: list[Check], config_path: str, confirmations: int,
                  sink: Sink) -> tuple[Store, RecordingSink]:
    from recompute.cli.audit_cmd import open_follow_store
    from recompute.watch.recording import RecordingSink

    store, _, _ = open_follow_store(store_path, checks, config_path, confirmations)
    recording = RecordingSink.instead_of(sink, store=store)
    recording.recover()  # what stdout lacks of the last write before a restart
    return store, recording


def _continue_after_final(follower: Follower, store: Store, sources: list[SharedSource],
                          sink: RecordingSink, clock: Clock) -> None:
    """A restarted bot: the last final block of its store, pinned by the hash the store
    recorded, is the tip; the follower goes on from its child by parent links."""
    number, block_hash = store.get("last_final_block"), store.get("last_final_hash")
    follower.written = sink.written_above_final()  # first lines an earlier run wrote
    if not isinstance(number, int) or not isinstance(block_hash, str):
        return
    follower.written = {n: h for n, h in follower.written.items() if n > number}
    tip = anchor_block(sources, block=number, block_hash=parse_hash(block_hash, "the store"),
                       clock=clock)
    follower.tip = tip
    follower.chain[tip.number] = tip
    sink.note(f"watch: continuing after block {number} {block_hash}, the last final block in "
              f"{store.path} (pinned by the hash the store recorded)")


def _on_signals(stop: threading.Event) -> None:
    """SIGINT/SIGTERM: finish the block in hand, then stop (a second SIGINT interrupts)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
