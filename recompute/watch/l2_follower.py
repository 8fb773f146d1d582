"""Follow mode on an OP-stack L2 (docs/l2.md §Watch): lines only for L2 blocks a usable
dispute game covers, each resting on that game, retracted if the game is later lost.

Each round anchors L1 afresh (the round's L1 block must be fresh: ``stale-anchor``
otherwise, node trouble) and then:

- every game that lines rest on is judged again at the new L1 block; one that is now
  blacklisted, CHALLENGER_WINS, retired or of a type no longer respected has its lines
  **retracted**: one ``{"event": "retraction", …}`` line naming the game, the reason and
  the blocks, then for every check and block a final UNVERIFIABLE line with that reason and
  ``healthy: false`` (so the hooks fire, as for a check turning unhealthy); those blocks are
  evaluated again under the next usable game that covers them. A game whose tier rose to
  ``final`` has its lines written again with ``final: true``;
- the newest usable game: when its L2 block is above the last block written, every block up
  to it is evaluated, reached from the game's block as ``--history`` says (hops through
  the L2's history contract, or re-hashed parentHash links); each line's
  ``anchor`` names the game, its tier and the L1 block. A line is final when its game is
  ``final``; with ``--l2-finality resolved|proposed`` it waits, labelled, until the game is.

The games watched for a retraction are the :data:`WATCHED_GAMES` newest that lines rest on;
lines resting on an older game are no longer judged again (said when one drops out).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from recompute.core.anchor import AnchoredBlock
from recompute.core.clock import SYSTEM, Clock
from recompute.core.errors import Unverifiable
from recompute.core.verdict import Verdict
from recompute.l2.op_stack_anchor import L2Round, below
from recompute.watch.collector import paused
from recompute.watch.coordinator import line_from_json
from recompute.watch.evaluate import NODE_TROUBLE, BlockEvaluator, Line, unverifiable_lines
from recompute.watch.follower import summary
from recompute.watch.sink import Sink
from recompute.watch.store import Store
from recompute.watch.store_records import RETRACTION_REASONS

WATCHED_GAMES = 32
# A game refused for one of these after lines rested on it: the lines are retracted.
LOST = RETRACTION_REASONS
RESUME_WINDOW = 1024  # blocks of a follow store read at once, newest first, on a restart
GAME_ADDRESS = re.compile(r"0x[0-9a-f]{40}")  # a stored line's anchor.game (a store is a file)


@dataclass
class Resting:
    """The lines that rest on one game, by block number, and whether they are final."""

    tier: str
    blocks: dict[int, list[Line]] = field(default_factory=dict)


class GameFollower:
    def __init__(self, evaluator: BlockEvaluator, sink: Sink, rounds: Callable[[], L2Round],
                 first_number: int | None = None, *, poll: float = 1.0,
                 max_backoff: float = 30.0, max_blocks: int | None = None,
                 stop: threading.Event | None = None, start_timeout: float = 60.0,
                 clock: Clock = SYSTEM, history: str = "auto"):
        self.evaluator, self.sink, self.rounds = evaluator, sink, rounds
        self.first_number = first_number
        self.poll, self.max_backoff, self.max_blocks = poll, max_backoff, max_blocks
        self.stop = stop or threading.Event()
        self.start_timeout, self.clock = start_timeout, clock
        self.history = history  # how a block below the game's is reached (core.hops)
        self.done: int | None = None  # the highest L2 block whose lines are written
        self.resting: dict[bytes, Resting] = {}  # game -> its lines (oldest game first)
        self.verified = 0
        self.failures = 0
        self.waiting = False  # said once: no usable game covers the next block yet
        # a restarted bot (--store): blocks above the last final one whose first (not final)
        # lines an earlier run wrote, by number: their hash; not written twice
        self.written: dict[int, str] = {}

    def run(self) -> None:
        started = time.monotonic()
        while not self.stop.is_set():
            try:
                moved = self._round()
            except Unverifiable as exc:
                self.sink.metrics.set("up", 0)
                if self.done is None and (exc.reason not in (*NODE_TROUBLE, "stale-anchor")
                                          or time.monotonic() - started > self.start_timeout):
                    raise  # the first block cannot be anchored (in time): exit 2
                self._trouble(exc)
                continue
            self.sink.metrics.set("up", 1)
            if self.failures:
                self.sink.note(f"the nodes answer again after {self.failures} failed "
                               "attempt(s)")
                self.failures = 0
            if self.max_blocks is not None and self.verified >= self.max_blocks:
                return
            if not moved:
                self.stop.wait(self.poll)

    def _round(self) -> bool:
        """One look at L1: judge the games lines rest on, then write the blocks the newest
        usable game covers. False when nothing new was written."""
        look = self.rounds()
        moved = self._judge_again(look)
        try:
            top = look.newest()
        except Unverifiable as exc:
            if exc.reason != "l2-block-unproposed" or self.done is None and \
                    self.first_number is None:
                raise
            if not self.waiting:
                self.sink.note(f"watch: waiting for a usable game: {self.sink.word(exc)}")
                self.waiting = True
            return moved
        start = self.first_number if self.done is None else self.done + 1
        if start is None:
            start = top.number
        if top.number < start:
            return moved
        self.waiting = False
        # the game lines rest on (a registry's starting root: the registry's own address)
        game = bytes.fromhex((top.anchor.detail["game"]["address"]
                              or top.anchor.detail["anchor_state_registry"]["address"])[2:])
        self.sink.metrics.set("l2_game_block", top.number, tier=top.anchor.detail["tier"])
        if self.done is None:
            self._announce(top)
        for number in range(start, top.number + 1):
            if self.stop.is_set() or (self.max_blocks is not None
                                      and self.verified >= self.max_blocks):
                break
            self._verify(below(top, number, self.history), game, top.anchor.detail["tier"])
        return True

    def _verify(self, block: AnchoredBlock, game: bytes, tier: str) -> None:
        with paused():
            started = time.monotonic()
            lines = self.evaluator.evaluate(block)
            if tier == "final":
                lines = [line.as_final() for line in lines]
            for other in self.resting.values():  # evaluated again: it rests on this game now
                other.blocks.pop(block.number, None)
            resting = self.resting.setdefault(game, Resting(tier))
            resting.blocks[block.number] = lines
            self._forget_old_games()
            self.done = block.number
            self.verified += 1
            self.sink.metrics.inc("blocks_total")
            self.sink.metrics.set("last_verified_block", block.number)
            again = tier != "final" and self.written.pop(block.number, None) == \
                "0x" + block.hash.hex()
            if not again:  # an earlier run wrote these first lines: they wait, unwritten
                self.sink.evaluated(lines)
            self.sink.note(summary(block, lines, time.monotonic() - started)
                           + f"; game 0x{game.hex()} ({tier})"
                           + ("; first lines written before the restart" if again else ""))

    def resume(self, store: Store, written: dict[int, str]) -> None:
        """A restarted bot (``--store``, docs/l2.md §Watch): go on after the store's last final
        block. The games its newest final lines rest on (:data:`WATCHED_GAMES`) are judged
        again from the next round, as if this run had written them; a block whose stored
        lines are a retraction is evaluated again; first lines an earlier run wrote above the
        last final block (``written``) are not written twice."""
        last = store.get("last_final_block")
        if not isinstance(last, int):
            self.written = dict(written)
            return
        self.written = {n: h for n, h in written.items() if n > last}
        self.done = last
        games: dict[bytes, Resting] = {}
        hi = last
        while hi >= 0 and len(games) <= WATCHED_GAMES:
            lo = max(0, hi - RESUME_WINDOW + 1)
            for raw in store.lines(lo, hi):
                line = line_from_json(raw, raw.get("anchor"))
                assert line.block is not None  # a stored line is a block's
                game = (line.anchor or {}).get("game")
                if line.reason in LOST and line.verdict is Verdict.UNVERIFIABLE:
                    self.done = min(self.done, line.block - 1)  # retracted: evaluated again
                elif isinstance(game, str) and GAME_ADDRESS.fullmatch(game):
                    resting = games.setdefault(bytes.fromhex(game[2:]), Resting("final"))
                    resting.blocks.setdefault(line.block, []).append(line)
            hi = lo - 1
        newest = sorted(games.items(), key=lambda item: min(item[1].blocks))[-WATCHED_GAMES:]
        self.resting = dict(newest)  # oldest game first, as written
        self.sink.note(f"watch: continuing after L2 block {self.done}, the last final block "
                       f"in {store.path}; {len(self.resting)} game(s) its lines rest on are "
                       "judged again")

    def _judge_again(self, look: L2Round) -> bool:
        """Every game lines rest on, judged at this round's L1 block: retract the lines of a
        lost one, finalize those of one now final. True when a line was written."""
        moved = False
        for game in list(self.resting):
            resting = self.resting[game]
            try:
                tier = look.judge(game).tier
            except Unverifiable as exc:
                if exc.reason not in LOST:
                    raise
                self._retract(game, resting, exc)
                moved = True
                continue
            if tier == "final" and resting.tier != "final":
                resting.tier = tier
                for number in sorted(resting.blocks):
                    final = [line.as_final() for line in resting.blocks[number]]
                    resting.blocks[number] = final
                    self.sink.finalized(final)
                    self.sink.metrics.set("last_final_block", number)
                moved = True
        return moved

    def _retract(self, game: bytes, resting: Resting, error: Unverifiable) -> None:
        del self.resting[game]
        numbers = sorted(resting.blocks)
        said = self.sink.word(error)
        hashes = [resting.blocks[n][0].hash for n in numbers if resting.blocks[n]]
        event = {"event": "retraction", "game": "0x" + game.hex(), "reason": error.reason,
                 "detail": said, "blocks": numbers, "retracted": hashes}
        if resting.tier == "final":
            event["final_retracted"] = hashes
        self.sink.event(event)
        self.sink.metrics.inc("l2_retractions_total", reason=error.reason)
        for number in numbers:
            lines = [Line(line.block, line.hash, line.check, Verdict.UNVERIFIABLE, error.reason,
                          True, False, detail=f"retracted: {said}", anchor=line.anchor)
                     for line in resting.blocks[number]]
            self.sink.evaluated(lines)
        if numbers and self.done is not None:
            self.done = min(self.done, numbers[0] - 1)  # evaluated again under a usable game
        self.sink.note(f"retraction: game 0x{game.hex()} is now {error.reason}; the lines of "
                       f"{len(numbers)} block(s) that rested on it are retracted ({said})")

    def _forget_old_games(self) -> None:
        while len(self.resting) > WATCHED_GAMES:
            game = next(iter(self.resting))
            blocks = self.resting.pop(game).blocks
            self.sink.note(f"watch: game 0x{game.hex()} is no longer judged again (lines of "
                           f"blocks {min(blocks)}..{max(blocks)} rest on it)")

    def _announce(self, top: AnchoredBlock) -> None:
        detail = top.anchor.detail
        self.sink.note(f"watch: L2 blocks pinned through L1 (op-stack): the newest usable game "
                       f"{detail['game']['address']} ({detail['tier']}) covers block "
                       f"{top.number}; each round anchors L1 afresh and judges again every game "
                       "lines rest on")

    def _trouble(self, error: Unverifiable) -> None:
        self.failures += 1
        self.sink.metrics.inc("rpc_errors_total", reason=error.reason)
        number = self.done + 1 if self.done is not None else self.first_number
        said = self.sink.word(error)
        self.sink.unverifiable(unverifiable_lines(self.evaluator.checks, number, None, error,
                                                  said))
        delay = min(max(self.poll, 0.05) * 2 ** (self.failures - 1), self.max_backoff)
        self.sink.note(f"trouble ({error.reason}): {said}; retry {self.failures} in "
                       f"{delay:.1f}s")
        self.stop.wait(delay)
