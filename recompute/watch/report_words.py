"""The audit report's words (docs/report.md): times as ISO 8601 UTC, ages in words, the anchor
in sentences, derived values by their type. Pure functions of data the page was handed; they
return plain text, which the page escapes where it writes it (one escape point:
:func:`recompute.watch.audit_page.text`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from recompute.recipes.outputs import Output
from recompute.recipes.registry import bundled_recipes
from recompute.recipes.sai_registry import ROLE_NAMES

# The anchor's fields that are Unix seconds, and the one that is an age in seconds.
_TIMES = ("block_timestamp", "as_of")
_LABELS = {
    "pinned_hash": "pinned block hash", "block_timestamp": "block time",
    "as_of": "judged as of", "age_s": "age of the block at that time", "clock": "clock",
    "endpoint": "endpoint", "checkpoint_hash": "checkpoint hash",
    "checkpoint_number": "checkpoint block", "headers_walked": "headers walked by parent links",
    "trusted_root": "trusted beacon root", "finalized_beacon_slot": "finalized beacon slot",
    "finalized_beacon_root": "finalized beacon root", "sync_committee_period":
    "sync committee period", "participation": "sync committee signatures",
    "pinned_beacon_slot": "pinned beacon slot", "pinned_beacon_root": "pinned beacon root",
    "pinned_finalized": "pinned block finalized", "pinned_block_hash": "pinned block hash",
    "execution_header": "execution header", "tag": "block tag",
    "tag_decided_by": "tag decided by", "quorum": "quorum", "endpoints": "endpoints",
    "agreeing": "agreeing endpoints", "confirmed_by": "confirmed by",
}


def iso(seconds: int | float) -> str:
    """Unix seconds as ISO 8601 UTC (``2025-11-17T01:03:20Z``)."""
    try:
        return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return f"{int(seconds)} (Unix seconds, out of range)"


def duration(seconds: int) -> str:
    """A span in words, to the two largest units (``1 year 14 days``, ``12 min 5 s``)."""
    left = abs(int(seconds))
    parts: list[str] = []
    for size, one, many in ((31_536_000, "year", "years"), (86_400, "day", "days"),
                            (3_600, "h", "h"), (60, "min", "min"), (1, "s", "s")):
        count, left = divmod(left, size)
        if count:
            parts.append(f"{count} {one if count == 1 else many}")
    return " ".join(parts[:2]) or "0 s"


def age(seconds: int) -> str:
    """An age in words: ``12 min before the clock`` (negative: after it)."""
    return f"{duration(seconds)} {'before' if seconds >= 0 else 'after'} the clock"


def endpoint(value: object) -> object:
    """An endpoint URL as its scheme, host and port: a page is handed to others, and a node's
    path or query often holds an API key. Lists and tables element by element."""
    if isinstance(value, str) and value.startswith(("http://", "https://", "ws://", "wss://")):
        try:
            url = urlsplit(value)
            port = f":{url.port}" if url.port else ""
        except ValueError:
            return "(an endpoint URL)"
        hidden = "/…" if url.path.strip("/") or url.query else ""
        return f"{url.scheme}://{url.hostname}{port}{hidden}"
    if isinstance(value, list):
        return [endpoint(v) for v in value]
    if isinstance(value, dict):
        return {str(endpoint(k)): endpoint(v) for k, v in value.items()}
    return value


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.lstrip("-").isdigit() and len(value) < 80:
        return int(value)
    return None


def _table(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def anchor_sentences(anchor: Mapping[str, Any]) -> list[str]:
    """What the anchor pinned and what that trusts, in sentences."""
    method = str(anchor.get("method", "?"))
    said: list[str] = []
    if method == "block-hash":
        said.append(f"Pinned by the block hash you gave, {anchor.get('pinned_hash', '')}.")
    elif method == "checkpoint":
        said.append(f"Pinned by the checkpoint hash you gave ({anchor.get('checkpoint_hash')}, "
                    f"block {anchor.get('checkpoint_number')}), then "
                    f"{anchor.get('headers_walked')} header(s) walked down by parent links.")
    elif method == "light-client":
        slot = anchor.get("finalized_beacon_slot")
        said.append(f"Pinned by the beacon light client from the trusted root "
                    f"{anchor.get('trusted_root')} (network {anchor.get('network')}): its "
                    f"sync committees signed up to finalized beacon slot {slot}"
                    + (f", {anchor.get('participation')} signatures" if anchor.get(
                        "participation") else "") + ".")
    elif method == "single-rpc":
        said.append(f"Not pinned: the node itself ({endpoint(anchor.get('endpoint'))}) said "
                    "which block this is. Pin it with --block-hash, --checkpoint or a --quorum "
                    "of endpoints to not trust it.")
    elif method == "quorum":
        said.append(f"Confirmed by {anchor.get('quorum')} endpoints that returned the same "
                    "header; trusts that they are not all lying together.")
    elif method == "op-stack":
        game = _table(anchor.get("game"))
        l1_anchor = _table(_table(anchor.get("l1")).get("anchor"))
        said.append(f"An L2 block pinned through L1: the dispute game {game.get('address')} "
                    f"({game.get('status')}, tier {anchor.get('tier')}) claims the output root "
                    f"{anchor.get('output_root')} for L2 block {game.get('l2_block_number')}, "
                    f"proven in L1 state pinned by {l1_anchor.get('method', '?')}.")
    if "quorum" in anchor and method != "quorum":
        said.append(f"Confirmed by a quorum of {anchor.get('quorum')} endpoints.")
    if anchor.get("trusts") and method not in ("block-hash", "single-rpc"):
        said.append(f"It trusts {anchor['trusts']}.")
    if anchor.get("tag"):
        said.append(f"The block was named by the tag {anchor['tag']}, as the "
                    f"{anchor.get('tag_decided_by', 'node')} named it.")
    stamp, now, old = (_int(anchor.get(k)) for k in ("block_timestamp", "as_of", "age_s"))
    if stamp is not None:
        clock = ("the --at time you gave" if anchor.get("clock") == "at"
                 else "this machine's clock")
        when = f"The block's time is {iso(stamp)}"
        if now is not None and old is not None:
            when += f"; judged as of {iso(now)} ({clock}), {duration(old)} " + (
                "after the block." if old >= 0 else "before the block.")
        said.append(when if when.endswith(".") else when + ".")
    return said


def anchor_rows(anchor: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The anchor's detail as (label, value) rows: times as ISO 8601 UTC, the age in words,
    endpoint URLs without their path or query."""
    rows: list[tuple[str, str]] = []
    for key, value in anchor.items():
        if key in ("method", "trusts"):
            continue
        label = _LABELS.get(key, key.replace("_", " "))
        seconds = _int(value)
        if key in _TIMES and seconds is not None:
            shown = iso(seconds)
        elif key == "age_s" and seconds is not None:
            shown = age(seconds)
        elif key == "clock":
            shown = "the --at time given" if value == "at" else "this machine's clock"
        else:
            shown = plain(endpoint(value))
        rows.append((label, shown))
    return rows


def plain(value: object) -> str:
    """A JSON value as a reader reads it: text as itself, true/false, lists and tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, list):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {plain(v)}" for k, v in value.items()) + "}"
    return str(value)


def _output_kinds() -> dict[str, str]:
    """Each derived value's name and how to show it, from the bundled recipes' declared
    outputs: a name two recipes declare differently gets no kind."""
    kinds: dict[str, str] = {}
    clash: set[str] = set()
    for recipe in bundled_recipes().values():
        for name, output in recipe.outputs.items():
            kind = _kind_of(output)
            if kinds.setdefault(name, kind) != kind:
                clash.add(name)
    return {name: kind for name, kind in kinds.items() if name not in clash}


def _kind_of(output: Output) -> str:
    return output.unit or output.kind


_KINDS: dict[str, str] | None = None


def derived_value(name: str, value: object) -> str:
    """One derived value by its type: a time as ISO 8601 UTC, an amount in digit groups with
    its unit, a role by its name (the recipe's reserved roles), a table's role keys too."""
    global _KINDS
    if _KINDS is None:
        _KINDS = _output_kinds()
    kind = _KINDS.get(name, "")
    number = _int(value)
    if kind == "time" and number is not None:
        return "none (0)" if number == 0 else iso(number)
    if kind == "amount" and number is not None:
        return f"{number:,} units"
    if isinstance(value, str) and value.lower() in ROLE_NAMES:
        return f"{ROLE_NAMES[value.lower()]} ({value[:10]}…)"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{ROLE_NAMES.get(str(k).lower(), k)}: {plain(v)}"
                               for k, v in value.items()) + "}"
    return plain(value)
