"""The clock a verdict is judged by, and how old a block may be (docs/lightclient.md §Clock).

A proof says what a block holds; whether that block is *now* needs a clock. One
:class:`Clock` value is built from the command line (``--at``, ``--max-anchor-age``,
``--max-head-age``, ``--max-clock-drift``, ``--accept-old-checkpoint``) and passed down to
every anchor; nothing else reads the time of day, so a test or a replay sets the clock once.

``Clock()`` is the system clock; ``Clock(at=T)`` evaluates "as of" the Unix time T (recorded
data: the evidence then says ``"clock": "at"``). A block's age is the clock's time minus the
block's timestamp; the timestamp is part of what the block hash commits to (and under the
light client, of what the sync committee signed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from recompute.core.errors import Unverifiable, UsageError, literal

# --max-anchor-age: 40 minutes (200 mainnet slots, 6.25 epochs). A finalized block on mainnet
# is normally 2-3 epochs (12.8-19.2 min) behind the head (Casper FFG finalizes an epoch's
# checkpoint two epochs on); 40 minutes allows about three epochs of late finality beyond
# that before a `finalized` (or `latest`, `safe`) block is called stale.
DEFAULT_MAX_ANCHOR_AGE = 2400.0
# --max-head-age: 2 minutes (10 mainnet slots). The light client's optimistic header
# (--block latest) is normally the previous slot's block, signed in the next slot.
DEFAULT_MAX_HEAD_AGE = 120.0
# --max-clock-drift: how far a head's timestamp may be ahead of the clock (clock skew between
# the node and this machine); beyond it the head is not written about.
DEFAULT_MAX_CLOCK_DRIFT = 15.0
# A head from the future waits this long (by the clock) before it is future-head.
FUTURE_HEAD_PATIENCE = 60.0


@dataclass(frozen=True)
class Clock:
    """The time and the bounds the anchors judge ages by (see module doc)."""

    at: float | None = None  # None: the system clock
    max_anchor_age: float = DEFAULT_MAX_ANCHOR_AGE
    max_head_age: float = DEFAULT_MAX_HEAD_AGE
    max_clock_drift: float = DEFAULT_MAX_CLOCK_DRIFT
    accept_old_checkpoint: bool = False
    # follow mode: a child's timestamp must be strictly later than its parent's (every
    # post-merge chain: one block a slot, the payload's timestamp the slot's time); off by
    # default because anvil mines several blocks in one second
    strict_timestamps: bool = False

    @property
    def kind(self) -> str:
        """``system`` or ``at`` (what the evidence's ``clock`` says)."""
        return "system" if self.at is None else "at"

    def now(self) -> float:
        return time.time() if self.at is None else self.at

    def age(self, timestamp: int) -> int:
        """Seconds from ``timestamp`` to now (negative: a timestamp ahead of the clock)."""
        return int(self.now()) - timestamp

    def evidence(self, timestamp: int) -> dict[str, int | str]:
        """What the anchor's evidence records of a block's age."""
        now = int(self.now())
        return {"block_timestamp": timestamp, "clock": self.kind, "as_of": now,
                "age_s": now - timestamp}

    def is_future(self, timestamp: int) -> bool:
        """Is ``timestamp`` later than the clock plus --max-clock-drift?"""
        return timestamp > self.now() + self.max_clock_drift

    def check_not_future(self, timestamp: int, what: str, patience: float = 0.0,
                         options: tuple[str, ...] = ()) -> None:
        """``future-head`` when ``timestamp`` is later than the clock plus --max-clock-drift
        (plus ``patience``): no verdict is about a block the chain has not reached. ``what``
        is a template (recompute.core.errors.literal) that may name ``options``."""
        ahead = timestamp - self.now()
        if ahead > self.max_clock_drift + patience:
            raise Unverifiable("future-head", what + literal(
                f" has timestamp {timestamp}, {span(ahead)} ahead of the {self.kind} "
                f"clock ({when(self.now())}), more than ") + "{max_clock_drift} " + literal(
                f"{span(self.max_clock_drift)}: check this machine's clock, or the node "
                "fabricates blocks"), ("max_clock_drift", *options))

    def check_fresh(self, timestamp: int, bound: float, what: str, option: str,
                    options: tuple[str, ...] = ()) -> None:
        """``stale-anchor`` naming the lag when ``timestamp`` is older than ``bound`` seconds,
        the bound given by ``option`` (``max_anchor_age``, ``max_head_age``: data, worded by
        the caller, recompute.core.errors.Unverifiable). ``what`` is a template
        (recompute.core.errors.literal) that may name ``options``."""
        age = self.age(timestamp)
        if age > bound:
            raise Unverifiable("stale-anchor", stale_detail(self, what, timestamp, age, bound,
                                                            option), (option, "at", *options))


SYSTEM = Clock()


def stale_detail(clock: Clock, what: str, timestamp: int, age: float, bound: float,
                 option: str) -> str:
    """The detail's template: ``{option}`` and ``{at}`` name the options (Unverifiable)."""
    hint = ("the node or beacon node lags or withholds blocks" if clock.kind == "system"
            else "judged as of {at}")
    return (what + literal(f" is {span(age)} old by the {clock.kind} clock (timestamp "
                    f"{timestamp}, {when(clock.now())}), more than ") + "{" + option + "} "
            + literal(span(bound)) + f": {hint}; for recorded data give {{at}} TIME")


def span(seconds: float) -> str:
    """``2 h 5 min``, ``40 min``, ``12 s``, ``3 d 4 h``."""
    seconds = int(seconds)
    if seconds < 0:
        return "-" + span(-seconds)
    if seconds < 120:
        return f"{seconds} s"
    minutes, hours, days = seconds // 60 % 60, seconds // 3600 % 24, seconds // 86400
    if days:
        return f"{days} d {hours} h"
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def when(unix: float) -> str:
    return "now " + datetime.fromtimestamp(int(unix), UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str, option: str) -> float:
    """A time the user gives (``option`` names it): Unix seconds, or an ISO 8601 date-time
    with its zone (``2026-01-01T00:00:00Z``, ``…+02:00``); a time without a zone is refused
    (it would depend on this machine's)."""
    text = text.strip()
    if text.isascii() and text.isdigit() and len(text) <= 12:
        return float(int(text))
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UsageError(f"{option} {text[:40]!r}: expected Unix seconds or an ISO 8601 "
                         "date-time such as 2026-01-01T00:00:00Z") from None
    if parsed.tzinfo is None:
        raise UsageError(f"{option} {text[:40]!r}: give the time zone (Z or +HH:MM)")
    return parsed.timestamp()


def parse_seconds(value: float | None, option: str, default: float) -> float:
    if value is None:
        return default
    if not 0 <= value <= 10**10:
        raise UsageError(f"{option} {value:g}: expected seconds, 0 or more")
    return float(value)
