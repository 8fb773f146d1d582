"""What the evidence store holds, record by record, each checked before use (docs/watch.md §The
evidence store). The store is the user's file, and may be one handed to them: every value read
back goes through one validator per record kind here (the audit's parameters, a check, the
anchor, a segment, a line), which checks its type and its range (block numbers within the
audit's own ``first..last``, a segment on the audit's own plan, a line's check among the
audit's checks, verdicts among the three, hashes 32-byte hex) and raises
:class:`StoreRecordError` with what is wrong; :class:`~recompute.watch.store.Store` turns that
into one line naming the file (exit 64). Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from recompute.core import boundedjson
from recompute.core.anchor import TRUSTS
from recompute.core.outside_text import visible
from recompute.core.verdict import Verdict
from recompute.watch.evaluate import JsonObject
from recompute.watch.segment import SegmentResult

# An L2 follower's retraction (recompute.watch.l2_follower): the lines of a game lost after
# they were written are written again UNVERIFIABLE with one of these reasons and healthy
# false (the hooks fire), and a follow store keeps them so until the blocks are evaluated
# again under a usable game.
RETRACTION_REASONS = ("game-blacklisted", "game-challenger-wins", "game-retired",
                      "game-type-not-respected")

SCHEMA = 1  # the store's layout version, kept in the audit table under "schema"

MAX_BLOCK = (1 << 63) - 1  # SQLite's integers; no chain is near it
MAX_VALUE_BYTES = 4 << 20  # an audit value: the checks of a 1 MiB checks.toml fit well under it
MAX_LINE_BYTES = 16 << 20  # a line as written to stdout (its derived values included)
MAX_TEXT_BYTES = 4096  # an endpoint, a failure's reason and detail
HASH_TEXT = 70  # '"0x…", ' in a JSON list of hashes

_HASH = re.compile(r"0x[0-9a-f]{64}\Z")
_DIGEST = re.compile(r"[0-9a-f]{64}\Z")
_TOP_METHODS = frozenset(TRUSTS) - {"parent-link", "light-client"}  # a range's pin (--store)
_VERDICTS = {v.value: v for v in Verdict}

_RANGE_KEYS = {"schema", "mode", "config_hash", "checks", "first", "last", "pinned_hash",
               "anchor", "head", "confirmations", "segment_blocks"}
# the journal of the writes to stdout (recompute/watch/recording.py), in both modes
_RANGE_OPTIONAL = {"emitted_through", "stdout_journal"}
_FOLLOW_KEYS = {"schema", "mode", "config_hash", "checks", "confirmations"}
_FOLLOW_OPTIONAL = {"last_final_block", "last_final_hash", "stdout_journal", "unfinal_written"}
_POSITION = ("dev", "ino", "offset")  # where stdout stood, when it is a regular file
AUDIT_KEYS = _RANGE_KEYS | _RANGE_OPTIONAL | _FOLLOW_KEYS | _FOLLOW_OPTIONAL
_LINE_KEYS = {"block", "hash", "check", "verdict", "reason", "final", "healthy", "derived",
              "evidence_digest"}
_LINE_OPTIONAL = {"anchor", "detail"}
_LINE_ANY = _LINE_KEYS | _LINE_OPTIONAL


class StoreRecordError(ValueError):
    """What is wrong with a stored record, in a few words (the store's path is added)."""


def parse(text: object, what: str, max_bytes: int) -> object:
    """A stored JSON text, bounded in size and depth before it is parsed."""
    if not isinstance(text, str):
        raise StoreRecordError(f"{what} is {_kind(text)}, not JSON text")
    return boundedjson.loads(text, what, StoreRecordError, max_bytes=max_bytes)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {int: "an integer", float: "a number", str: "a string", bytes: "bytes",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _int(value: object, what: str, low: int = 0, high: int = MAX_BLOCK) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise StoreRecordError(f"{what} is {_kind(value)}, not an integer")
    if not low <= value <= high:
        raise StoreRecordError(f"{what} {value} is outside {low}..{high}")
    return value


def _str(value: object, what: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    if not isinstance(value, str):
        raise StoreRecordError(f"{what} is {_kind(value)}, not a string")
    if len(value) > max_bytes:
        raise StoreRecordError(f"{what} is longer than {max_bytes} characters")
    return value


def _hash(value: object, what: str) -> str:
    if not isinstance(value, str) or not _HASH.match(value):
        shown = repr(value)[:80]
        raise StoreRecordError(f"{what} {shown} is not a 32-byte 0x hash")
    return value


# ---- the audit's parameters --------------------------------------------------------------


@dataclass(frozen=True)
class CheckMeta:
    """What the store keeps of a check: enough for the summary and for UNVERIFIABLE lines."""

    name: str
    healthy: Verdict
    since: int

    def to_json(self) -> JsonObject:
        return {"name": self.name, "healthy": self.healthy.value, "since": self.since}

    @classmethod
    def from_json(cls, value: object) -> CheckMeta:
        if not isinstance(value, dict) or set(value) != {"name", "healthy", "since"}:
            raise StoreRecordError("a stored check is not {name, healthy, since}")
        name = _str(value["name"], "a stored check's name", 1000)
        if value["healthy"] not in (Verdict.GOOD.value, Verdict.BAD.value):
            raise StoreRecordError(f"check {name!r}: healthy {value['healthy']!r} is not "
                                   f"{Verdict.GOOD.value} or {Verdict.BAD.value}")
        since = _int(value["since"], f"check {name!r}: since")
        return cls(name, Verdict(value["healthy"]), since)


def checks(value: object) -> list[CheckMeta]:
    if not isinstance(value, list) or not value:
        raise StoreRecordError(f"'checks' is {_kind(value)}, not a list of checks")
    out = [CheckMeta.from_json(c) for c in value]
    if len({c.name for c in out}) != len(out):
        raise StoreRecordError("'checks' names a check twice")
    return out


def anchor(value: object) -> JsonObject:
    """The range's pin as the anchor described it (method, what it trusts, its details); the
    keys a line's anchor copies are checked for type, the rest are only shown."""
    if not isinstance(value, dict):
        raise StoreRecordError(f"'anchor' is {_kind(value)}, not an object")
    if value.get("method") not in _TOP_METHODS:
        raise StoreRecordError(f"'anchor' method {str(value.get('method'))[:40]!r} is not one "
                               f"of {', '.join(sorted(_TOP_METHODS))}")
    _str(value.get("trusts"), "'anchor' trusts")
    for key, check in (("pinned_hash", _hash), ("root_anchor", _str),
                       ("root_number", _int), ("quorum", _int)):
        if key in value:
            check(value[key], f"'anchor' {key}")
    if "confirmed_by" in value:
        urls = value["confirmed_by"]
        if not isinstance(urls, list):
            raise StoreRecordError("'anchor' confirmed_by is not a list")
        for url in urls:
            _str(url, "'anchor' confirmed_by")
    return value


def audit_params(values: dict[str, object]) -> JsonObject:
    """The audit table (each value already parsed): every key the mode needs, of its type and
    range, and no other. A store with no mode yet holds only its schema."""
    mode = values.get("mode")
    if mode is None and "mode" not in values:
        extra = set(values) - {"schema"}
        if extra:
            raise StoreRecordError(f"holds {sorted(extra)[0]!r} but no audit mode")
        return dict(values)
    if mode == "range":
        required, optional = _RANGE_KEYS, _RANGE_OPTIONAL
    elif mode == "follow":
        required, optional = _FOLLOW_KEYS, _FOLLOW_OPTIONAL
    else:
        raise StoreRecordError(f"audit mode {str(mode)[:40]!r} is not range or follow")
    missing = sorted(required - set(values))
    if missing:
        raise StoreRecordError(f"the {mode} audit has no {missing[0]!r}")
    unknown = sorted(set(values) - required - optional)
    if unknown:
        raise StoreRecordError(f"a {mode} audit holds no {unknown[0]!r}")
    config_hash = values["config_hash"]
    if not isinstance(config_hash, str) or not _DIGEST.match(config_hash):
        raise StoreRecordError("'config_hash' is not a sha256 hex digest")
    checks(values["checks"])
    _int(values["confirmations"], "'confirmations'")
    if values.get("stdout_journal") is not None:
        _journal(values["stdout_journal"], mode)
    (_range_values if mode == "range" else _follow_values)(values)
    return dict(values)


def _range_values(values: dict[str, object]) -> None:
    first = _int(values["first"], "'first'")
    last = _int(values["last"], "'last'", first)
    _int(values["segment_blocks"], "'segment_blocks'", 1)
    pinned = _hash(values["pinned_hash"], "'pinned_hash'")
    if anchor(values["anchor"]).get("pinned_hash", pinned) != pinned:
        raise StoreRecordError("'anchor' pins another hash than 'pinned_hash'")
    if values["head"] is not None:
        _int(values["head"], "'head'")
    emitted = None
    if "emitted_through" in values:
        emitted = _int(values["emitted_through"], "'emitted_through'", first - 1, last)
    journal = values.get("stdout_journal")
    if isinstance(journal, dict):  # its blocks [lo, hi], lo <= hi, checked by _journal
        lo, hi = journal["blocks"]
        if emitted is None or not first <= lo <= hi <= emitted:
            written = "none" if emitted is None or emitted < first else f"{first}..{emitted}"
            raise StoreRecordError(f"'stdout_journal' names blocks {lo}..{hi}, not blocks whose "
                                   f"lines the audit wrote ({written})")


def _follow_values(values: dict[str, object]) -> None:
    if ("last_final_block" in values) != ("last_final_hash" in values):
        raise StoreRecordError("'last_final_block' and 'last_final_hash' go together")
    if "last_final_block" in values:
        _int(values["last_final_block"], "'last_final_block'")
        _hash(values["last_final_hash"], "'last_final_hash'")
    if "unfinal_written" in values:
        _unfinal(values["unfinal_written"])


def _journal(value: object, mode: object) -> None:
    """``stdout_journal``: the last write to stdout (follow mode: its text; a range audit: its
    blocks ``[lo, hi]``, whose stored lines it is) and, when stdout is a regular file, its
    device, inode and the offset the write started at; null after a clean stop."""
    if not isinstance(value, dict):
        raise StoreRecordError(f"'stdout_journal' is {_kind(value)}, not an object")
    what = "blocks" if mode == "range" else "text"
    unknown = sorted(set(value) - {what, *_POSITION})
    if unknown:
        raise StoreRecordError(f"'stdout_journal' holds no {unknown[0][:40]!r}")
    if what == "text":
        # outside text: a restart writes this text to stdout again; refused unless plain
        _plain_journal_text(_str(value.get("text"), "'stdout_journal' text", MAX_VALUE_BYTES))
    else:
        blocks = value.get("blocks")
        if not isinstance(blocks, list) or len(blocks) != 2:
            raise StoreRecordError("'stdout_journal' blocks are not [first, last]")
        _int(blocks[1], "'stdout_journal' last block", _int(blocks[0], "'stdout_journal' "
                                                            "first block"))
    present = [key for key in _POSITION if key in value]
    if present and len(present) != len(_POSITION):
        raise StoreRecordError("'stdout_journal' dev, ino and offset go together")
    for key in present:
        _int(value[key], f"'stdout_journal' {key}", 0, (1 << 64) - 1)


# what a watch writes to stdout: JSON lines in ASCII (the encoder escapes control and non-ASCII
# characters), so nothing but printable ASCII and line ends
_NOT_PLAIN = re.compile(r"[^\n\x20-\x7e]")


def _plain_journal_text(text: str) -> None:
    """A follow store's journal text is written to stdout again on a restart: any character
    a watch's JSON lines never hold (a C0 or C1 control, DEL, a bidi control, any non-ASCII
    character) means another writer, and is refused rather than written to a terminal."""
    found = _NOT_PLAIN.search(text)
    if found is not None:
        raise StoreRecordError(f"'stdout_journal' text holds U+{ord(found.group()):04X} at "
                               f"character {found.start()}, which a watch's lines never hold")


def _unfinal(value: object) -> None:
    """``unfinal_written``: block number (decimal text) to the hash of the block whose first
    lines stdout has."""
    if not isinstance(value, dict):
        raise StoreRecordError(f"'unfinal_written' is {_kind(value)}, not an object")
    for number, block_hash in value.items():
        if not re.fullmatch(r"(0|[1-9][0-9]{0,18})", number) or int(number) > MAX_BLOCK:
            raise StoreRecordError(f"'unfinal_written' key {number[:40]!r} is not a block "
                                   "number")
        _hash(block_hash, f"'unfinal_written' block {number}")


def planned_segments(params: JsonObject) -> int:
    """How many segments the range's plan has (recompute.watch.linking.plan_segments), without
    making the plan: a range may be far longer than the store's rows."""
    first, last, size = params["first"], params["last"], params["segment_blocks"]
    return int((last - first) // size + 1)


def progress(params: JsonObject, segments: int) -> None:
    """``emitted_through``, against the segments stored: lines are written (and the block of
    each write recorded) only once every segment of the plan is in
    (recompute.watch.coordinator.SegmentedAudit.run), and segments are never removed."""
    emitted = params.get("emitted_through", params["first"] - 1)
    planned = planned_segments(params)
    if emitted >= params["first"] and segments != planned:
        raise StoreRecordError(f"'emitted_through' {emitted} says lines were written, which "
                               f"needs all {planned} segment(s), yet {segments} are stored")


# ---- a segment ----------------------------------------------------------------------------


def segment(row: tuple[object, ...], params: JsonObject) -> SegmentResult:
    """A row of the segments table: a segment of the audit's own plan, its links as an
    evaluation leaves them (every hash, or a failure and none)."""
    lo, hi, parent, top, hashes_text, failure_text, endpoint, seconds = row
    first, last, size = params["first"], params["last"], params["segment_blocks"]
    lo = _int(lo, "a segment's first block", first, last)
    where = f"segment {lo}..{str(hi)[:20]}"
    if not isinstance(hi, int) or (lo - first) % size or hi != min(lo + size - 1, last):
        raise StoreRecordError(f"{where} is not a segment of blocks {first}..{last} in "
                               f"segments of {size}")
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) \
            or not math.isfinite(seconds) or seconds < 0:
        raise StoreRecordError(f"{where}: seconds {str(seconds)[:40]!r} is not a duration")
    count = hi - lo + 1
    hashes = parse(hashes_text, f"{where}: its hashes", count * HASH_TEXT + 2)
    if not isinstance(hashes, list):
        raise StoreRecordError(f"{where}: its hashes are {_kind(hashes)}, not a list")
    if failure_text is None:
        if len(hashes) != count:
            raise StoreRecordError(f"{where}: {len(hashes)} hashes for {count} blocks")
        for value in hashes:
            _hash(value, f"{where}: a block hash")
        result = SegmentResult(lo, hi, [], hashes, _hash(parent, f"{where}: parent_hash"),
                               _hash(top, f"{where}: top_hash"), None,
                               _str(endpoint, f"{where}: endpoint"), float(seconds))
        return result
    failure = parse(failure_text, f"{where}: its failure", 2 * MAX_TEXT_BYTES + 8)
    if not isinstance(failure, list) or len(failure) != 2:
        raise StoreRecordError(f"{where}: its failure is not [reason, detail]")
    reason = _str(failure[0], f"{where}: its failure's reason")
    detail = visible(_str(failure[1], f"{where}: its failure's detail"))
    if hashes or parent is not None or top is not None or endpoint is not None:
        raise StoreRecordError(f"{where} failed, yet holds hashes or an endpoint")
    return SegmentResult(lo, hi, [], [], None, None, (reason, detail), None, float(seconds))


# ---- a line ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineFrame:
    """What a stored line is checked against: the audit's checks; in a range audit its lines
    are the workers' (never final yet), in follow mode only final lines are kept."""

    checks: dict[str, CheckMeta]
    final: bool

    @classmethod
    def of(cls, params: JsonObject) -> LineFrame:
        if params.get("mode") is None:
            raise StoreRecordError("holds no audit")
        return cls({c.name: c for c in checks(params["checks"])}, params["mode"] == "follow")


def line(row: tuple[object, ...], frame: LineFrame) -> JsonObject:
    """A row of the lines table, ``(block, position, text)``: the JSON a watch wrote to stdout
    for one check at one block."""
    block, position, text = row
    block = _int(block, "a line's block")
    where = f"the line of block {block}"
    _int(position, f"{where}: its position", 0, len(frame.checks) - 1)
    value = parse(text, where, MAX_LINE_BYTES)
    if not isinstance(value, dict):
        raise StoreRecordError(f"{where} is {_kind(value)}, not an object")
    keys = value.keys()
    if not _LINE_KEYS <= keys or not keys <= _LINE_ANY:
        missing = sorted(_LINE_KEYS - keys)
        if missing:
            raise StoreRecordError(f"{where} has no {missing[0]!r}")
        raise StoreRecordError(f"{where} has an unknown field "
                               f"{sorted(keys - _LINE_ANY)[0][:40]!r}")
    if value["block"] != block or isinstance(value["block"], bool):
        raise StoreRecordError(f"{where} says block {str(value['block'])[:40]!r}")
    _hash(value["hash"], f"{where}: hash")
    _verdict_fields(value, frame, where)
    if not isinstance(value["derived"], dict):
        raise StoreRecordError(f"{where}: derived is {_kind(value['derived'])}, not an object")
    digest = value["evidence_digest"]
    if digest is not None and (not isinstance(digest, str) or not _DIGEST.match(digest)):
        raise StoreRecordError(f"{where}: evidence_digest is not a sha256 hex digest")
    if "detail" in value:  # a person reads it: only ever as text (a store is a file)
        value["detail"] = visible(_str(value["detail"], f"{where}: detail", MAX_LINE_BYTES))
    if "anchor" in value and not isinstance(value["anchor"], dict):
        raise StoreRecordError(f"{where}: anchor is {_kind(value['anchor'])}, not an object")
    return value


def _verdict_fields(value: JsonObject, frame: LineFrame, where: str) -> None:
    """check, verdict, reason, final, healthy: a check of the audit from its ``since`` on, one
    of the three verdicts, healthy as the check's healthy verdict says
    (recompute.watch.config.Check.is_healthy)."""
    name = value["check"]
    check = frame.checks.get(name) if isinstance(name, str) else None
    if check is None:
        raise StoreRecordError(f"{where} names {str(name)[:60]!r}, not a check of the audit")
    if value["block"] < check.since:
        raise StoreRecordError(f"{where}: check {name!r} starts at block {check.since}")
    verdict = _VERDICTS.get(value["verdict"]) if isinstance(value["verdict"], str) else None
    if verdict is None:
        raise StoreRecordError(f"{where}: verdict {str(value['verdict'])[:40]!r} is not one "
                               f"of {', '.join(_VERDICTS)}")
    _str(value["reason"], f"{where}: reason", MAX_LINE_BYTES)
    if value["final"] is not frame.final:
        raise StoreRecordError(f"{where}: final is {str(value['final'])[:10]}, a "
                               f"{'follow' if frame.final else 'range'} store keeps "
                               f"{'final' if frame.final else 'not yet final'} lines")
    healthy = None if verdict is Verdict.UNVERIFIABLE else verdict is check.healthy
    if healthy is None and value["reason"] in RETRACTION_REASONS and frame.final:
        healthy = False  # a retracted line (see RETRACTION_REASONS)
    if value["healthy"] is not healthy:
        raise StoreRecordError(f"{where}: healthy is {str(value['healthy'])[:10]} for "
                               f"{verdict.value} (the check's healthy verdict is "
                               f"{check.healthy.value})")
