"""The clock's options (docs/lightclient.md §Clock): ``--at TIME``, ``--max-anchor-age``,
``--max-head-age``, ``--accept-old-checkpoint`` on every command that anchors, and
``--max-clock-drift``, ``--strict-timestamps`` on ``watch``. Kept in the click context
(``ctx.meta``) as the beacon options are, so a command's signature does not change;
:func:`current_clock` builds the one :class:`~recompute.core.clock.Clock` the anchors are
given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

import click

from recompute.core.clock import (
    DEFAULT_MAX_ANCHOR_AGE,
    DEFAULT_MAX_CLOCK_DRIFT,
    DEFAULT_MAX_HEAD_AGE,
    Clock,
    parse_seconds,
    parse_time,
)

_META = "recompute.clock"

F = TypeVar("F", bound=Callable[..., Any])


def _keep(ctx: click.Context, param: click.Parameter, value: object) -> object:
    ctx.meta.setdefault(_META, {})[param.name] = value
    return value


@overload
def clock_options(command: F, *, follow: bool = False) -> F: ...
@overload
def clock_options(command: None = None, *, follow: bool = False) -> Callable[[F], F]: ...
def clock_options(command: F | None = None, *,
                  follow: bool = False) -> F | Callable[[F], F]:
    """--at, --max-anchor-age, --max-head-age, --accept-old-checkpoint (and, for follow mode,
    --max-clock-drift), kept in the click context."""
    def apply(command: F) -> F:
        decorators = [
            click.option("--at", "clock_at", metavar="TIME", expose_value=False, callback=_keep,
                         help="Judge as of TIME (Unix seconds or ISO 8601 with zone) instead "
                              "of the system clock: for recorded data."),
            click.option("--max-anchor-age", type=float, metavar="SECONDS", expose_value=False,
                         callback=_keep,
                         help="A block reached by a tag or the light client's finalized header "
                              f"older than this is stale-anchor [default: "
                              f"{DEFAULT_MAX_ANCHOR_AGE:g}]."),
            click.option("--max-head-age", type=float, metavar="SECONDS", expose_value=False,
                         callback=_keep,
                         help="With --beacon: the optimistic header (--block latest) older "
                              f"than this is stale-anchor [default: {DEFAULT_MAX_HEAD_AGE:g}]."),
            click.option("--accept-old-checkpoint", is_flag=True, default=None,
                         expose_value=False, callback=_keep,
                         help="With --beacon: accept a trusted root older than the "
                              "weak-subjectivity period."),
        ]
        if follow:
            decorators += [
                click.option("--max-clock-drift", type=float, metavar="SECONDS",
                             expose_value=False, callback=_keep,
                             help="Follow mode: a head whose timestamp is later than the clock "
                                  "plus this is not written about [default: "
                                  f"{DEFAULT_MAX_CLOCK_DRIFT:g}]."),
                click.option("--strict-timestamps", is_flag=True, default=None,
                             expose_value=False, callback=_keep,
                             help="Follow mode: a child's timestamp must be later than its "
                                  "parent's (a real chain; anvil mines equal timestamps)."),
            ]
        for decorator in reversed(decorators):
            command = decorator(command)
        return command

    return apply(command) if command is not None else apply


def current_clock() -> Clock:
    """The clock the running command's options describe (the system clock by default)."""
    ctx = click.get_current_context(silent=True)
    given = ctx.meta.get(_META, {}) if ctx is not None else {}
    at = given.get("clock_at")
    return Clock(
        at=parse_time(at, "--at") if at is not None else None,
        max_anchor_age=parse_seconds(given.get("max_anchor_age"), "--max-anchor-age",
                                     DEFAULT_MAX_ANCHOR_AGE),
        max_head_age=parse_seconds(given.get("max_head_age"), "--max-head-age",
                                   DEFAULT_MAX_HEAD_AGE),
        max_clock_drift=parse_seconds(given.get("max_clock_drift"), "--max-clock-drift",
                                      DEFAULT_MAX_CLOCK_DRIFT),
        accept_old_checkpoint=bool(given.get("accept_old_checkpoint")),
        strict_timestamps=bool(given.get("strict_timestamps")),
    )
