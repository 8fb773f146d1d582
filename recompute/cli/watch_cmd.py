"""``recompute watch``: assert invariants on every block (docs/watch.md).

Follow mode (no ``--to``) runs until SIGINT/SIGTERM (or ``--max-blocks``) and exits 0; range
mode (``--from N --to M``) exits 0 if every check was healthy at every block, 1 if any was
not (a verified verdict other than its healthy one), 2 if any was UNVERIFIABLE and none
unhealthy (docs/design.md §Verdicts). Usage errors, the config's included, exit 64 before any node
is asked.
"""

from __future__ import annotations

import signal
import sys
import threading

import click

from recompute.cli import cli
from recompute.core.anchor import AnchoredBlock, anchor_block, confirm_by_quorum
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.hexdata import parse_block, parse_hash
from recompute.core.verdict import EXIT_GOOD
from recompute.sources.cache import SharedSource
from recompute.sources.live import LiveSource
from recompute.watch.auditor import Auditor
from recompute.watch.config import load_config
from recompute.watch.evaluate import BlockEvaluator
from recompute.watch.follower import Follower
from recompute.watch.hooks import OnBad
from recompute.watch.metrics import Metrics, serve
from recompute.watch.sink import Sink

RPC_TIMEOUT = 10.0  # a hung node should not hold a monitoring bot for long


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
@click.option("--rpc", "rpcs", multiple=True, metavar="URL",
              help="JSON-RPC endpoint (repeat for a quorum on the first block).")
@click.option("--config", "config_path", required=True, metavar="FILE",
              help="checks.toml: the checks to evaluate at every block.")
@click.option("--from", "from_text", metavar="N",
              help="First block (default: the head). With --to: audit N..M.")
@click.option("--to", "to_text", metavar="M", help="Last block of a range audit.")
@click.option("--confirmations", type=int, default=2, show_default=True, metavar="C",
              help="A block's lines are final once C blocks are verified on top of it.")
@click.option("--metrics-port", type=int, metavar="P",
              help="Serve Prometheus text metrics on 127.0.0.1:P (/metrics).")
@click.option("--on-bad", "on_bad", metavar="CMD",
              help="Shell command run (JSON line on stdin) when a check turns unhealthy.")
@click.option("--block-hash", metavar="H",
              help="Pin the first block (follow) or --to block (range) by your own hash.")
@click.option("--checkpoint", metavar="H",
              help="Trusted hash at or above the anchored block; parentHash links walked down.")
@click.option("--quorum", type=int, metavar="K",
              help="K of the --rpc endpoints must agree on the anchored block's hash.")
@click.option("--poll", type=float, default=1.0, show_default=True, metavar="SECONDS",
              help="Follow mode: how often to ask for a new head.")
@click.option("--max-backoff", type=float, default=30.0, show_default=True, metavar="SECONDS",
              help="Follow mode: longest wait between retries while the node is in trouble.")
@click.option("--max-blocks", type=int, metavar="N", help="Follow mode: stop after N blocks.")
@click.option("--start-timeout", type=float, default=60.0, show_default=True, metavar="SECONDS",
              help="Follow mode: how long to retry a node in trouble before the first block "
                   "is anchored; then exit 2.")
@click.option("--workers", type=int, default=4, show_default=True, metavar="T",
              help="Range mode: blocks evaluated at once.")
def watch_command(rpcs, config_path, from_text, to_text, confirmations, metrics_port, on_bad,
                  block_hash, checkpoint, quorum, poll, max_backoff, max_blocks, start_timeout,
                  workers):
    """Evaluate checks at every block: follow the head, or audit --from N --to M."""
    checks = load_config(config_path)
    first, last = _block_number(from_text, "--from"), _block_number(to_text, "--to")
    if last is not None and first is None:
        raise UsageError("--to M needs --from N (a range audit is --from N --to M)")
    if last is not None and first > last:
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
    if not rpcs:
        raise UsageError("give --rpc URL (a JSON-RPC endpoint, e.g. http://127.0.0.1:8545)")
    pinned = parse_hash(block_hash, "--block-hash") if block_hash else None
    check = parse_hash(checkpoint, "--checkpoint") if checkpoint else None
    anchored_number = last if last is not None else first
    if check is not None and anchored_number is None:
        raise UsageError("--checkpoint needs --from N (the block to walk down to)")
    sources = [SharedSource(LiveSource(url, timeout=RPC_TIMEOUT)) for url in rpcs]

    metrics = Metrics()
    sink = Sink(metrics)
    server = None
    if metrics_port is not None:
        server = serve(metrics, metrics_port)
        sink.note(f"metrics: http://127.0.0.1:{server.server_address[1]}/metrics")
    hook = OnBad(on_bad, sink.note) if on_bad else None
    sink.hook = hook
    stop = threading.Event()
    _on_signals(stop)
    evaluator = BlockEvaluator(checks)

    def anchor() -> AnchoredBlock:
        return anchor_block(sources, block="latest" if anchored_number is None
                            else anchored_number, block_hash=pinned, quorum=quorum,
                            checkpoint=check)

    needed = quorum if quorum is not None else len(sources)

    def confirm(block: AnchoredBlock) -> AnchoredBlock | None:
        """Several --rpc: each new head confirmed by the quorum before its lines (issue #11)."""
        return confirm_by_quorum(block, [s for s in sources if s is not block.source], needed)

    try:
        if last is None:
            Follower(evaluator, sink, anchor, first, confirmations=confirmations, poll=poll,
                     max_backoff=max_backoff, max_blocks=max_blocks, stop=stop,
                     confirm=confirm if needed > 1 else None,
                     start_timeout=start_timeout).run()
            code = EXIT_GOOD
        else:
            code = _audit(evaluator, sink, anchor, sources[0], first, confirmations, workers,
                          stop)
    finally:
        if hook is not None:
            hook.close()
        if server is not None:
            server.shutdown()
    sys.exit(code)


def _audit(evaluator, sink, anchor, source, first, confirmations, workers, stop) -> int:
    try:
        head = source.block_number()
    except Unverifiable:
        head = None  # anchoring says what is wrong with the node
    top = anchor()
    auditor = Auditor(evaluator, sink, workers=workers, confirmations=confirmations, stop=stop)
    summary = auditor.run(top, first, head)
    for row in summary.table():
        sink.note(row)
    if auditor.interrupted_at is not None:
        sink.note(f"interrupted: blocks from {auditor.interrupted_at} on were not audited")
        return 130
    return summary.exit_code()


def _on_signals(stop: threading.Event) -> None:
    """SIGINT/SIGTERM: finish the block in hand, then stop (a second SIGINT interrupts)."""

    def handler(signum, frame):
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
