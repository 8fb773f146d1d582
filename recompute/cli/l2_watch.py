"""``recompute watch`` on an OP-stack L2 (``--l2-portal``/``--chain``; docs/l2.md §Watch): the
range audit's top block pinned through L1, and follow mode by dispute games
(:class:`recompute.watch.l2_follower.GameFollower`)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from recompute.cli.clock_options import current_clock
from recompute.cli.options import Chain, anchored_block, l1_chain_of, l2_request
from recompute.core.anchor import AnchoredBlock
from recompute.core.clock import Clock
from recompute.core.errors import UsageError
from recompute.l2.op_stack_anchor import L2Round
from recompute.sources.cache import SharedSource
from recompute.watch.evaluate import BlockEvaluator
from recompute.watch.l2_follower import GameFollower
from recompute.watch.recording import RecordingSink
from recompute.watch.sink import Sink


def check_l2_watch(chain: Chain, last: int | None) -> None:
    """What watch on an L2 cannot do: follow a pinned L1 block (nothing to check without
    --l2-portal)."""
    options = chain.l2_options
    if not options.given:
        return
    if last is None and (options.l1_block_hash or options.l1_checkpoint
                         or (options.l1_block not in (None, "latest", "finalized", "safe"))):
        raise UsageError("follow mode on an L2 anchors L1 afresh at each round: give "
                         "--l1-block latest|finalized (or --beacon), not a pinned L1 block")


def l2_top(chain: Chain, number: int | None) -> Callable[[], AnchoredBlock]:
    """A range audit's top block (``--to``), pinned through L1."""
    given = chain.with_(block=None if number is None else str(number))
    return lambda: anchored_block(given)


def l2_follower(chain: Chain, source: SharedSource, evaluator: BlockEvaluator, sink: Sink,
                first: int | None, *, poll: float, max_backoff: float, max_blocks: int | None,
                stop: threading.Event, start_timeout: float,
                clock: Clock | None = None,
                recording: RecordingSink | None = None) -> GameFollower:
    """Follow mode by games: each round anchors L1 afresh by the L1 options; with a follow
    store (``--store``: ``recording`` writes to it), going on after its last final block."""
    clock = clock or current_clock()
    request = l2_request(chain, None)
    l1_chain = l1_chain_of(chain)

    def look() -> L2Round:
        return L2Round(anchored_block(l1_chain), source, request, clock)

    follower = GameFollower(evaluator, sink, look, first, poll=poll, max_backoff=max_backoff,
                            max_blocks=max_blocks, stop=stop, start_timeout=start_timeout,
                            clock=clock, history=chain.history or "auto")
    if recording is not None:
        follower.resume(recording.store, recording.written_above_final())
    return follower
