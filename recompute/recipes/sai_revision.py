"""ERC-8447 §5.4 revision log: every state-changing call increments the swarm's revision and
emits ``Changed``; the recipe ``sai/revision`` (the ERC-8447 specification)."""

from __future__ import annotations

from typing import Any

from recompute.core.keccak import keccak256
from recompute.core.receipts import ProvenLog
from recompute.recipes.base import Recipe
from recompute.recipes.outputs import BOOL, INT, TABLE
from recompute.recipes.params import Param
from recompute.recipes.plan import (
    BlockClock,
    Derivation,
    Logs,
    Params,
    Plan,
    Reads,
    Struct,
    ViewCheck,
)
from recompute.recipes.registry import register
from recompute.recipes.sai_registry import (
    LAYOUT,
    REVISION_AT,
    SWARM,
    SWARM_TUPLE,
    from_block,
    swarm_base,
    swarm_topic,
)

# §12 the event each change emits (topic0 = keccak256 of the signature)
CHANGED = keccak256(b"Changed(bytes32,uint64,bytes4,address)")


def revision_check(revision: int, revisions_seen: list[int],
                   revision_at_from: int | None = None) -> dict[str, Any]:
    """§5.4: every state-changing call increments ``revision`` and emits
    ``Changed(swarmId, revision, …)``; revisions are strictly increasing per swarm.

    ``revisions_seen`` are the revision numbers of the receipt-proven Changed events after the
    from block, in chain order; ``revision_at_from`` is the revision proven from storage at the
    from block. Without it (a caller with no proof at that block), it is derived from the
    events: the first event after the from block carries ``r_from + 1`` (each call increments
    by one and emits its new revision), and with no event ``r_from`` is the current revision.
    Consistent iff the events carry exactly ``r_from + 1 … r_from + n`` and the proven
    ``revision`` is ``r_from + n``: a gap, a repeat, or a stored counter that ran ahead of (or
    behind) its events is a finding.
    """
    n = len(revisions_seen)
    if revision_at_from is not None:
        r_from = revision_at_from
    else:
        r_from = revisions_seen[0] - 1 if n else revision
    findings: list[dict[str, Any]] = []
    for i, seen in enumerate(revisions_seen, start=1):
        if seen != r_from + i:
            findings.append({"finding": "revision-sequence", "event": i, "expected": r_from + i,
                             "carried": seen})
    if revision != r_from + n:
        findings.append({"finding": "revision-count", "stored": revision,
                         "expected": r_from + n})
    return {
        "revision": revision,
        "changed_events": n,
        "revision_at_from": r_from,
        "increased": revision > r_from,
        "consistent": not findings,
        "findings": findings,
    }


@register
class Revision(Recipe):
    """§5.4: the revision equals its value at ``from_block`` (proven from storage at that
    block, tied to the pinned one by parentHash links) plus the number of receipt-proven
    Changed events of the swarm after that block, carried in sequence; ``increased`` says
    whether it moved (reported, not judged)."""

    name = "sai/revision"
    outputs = {
        "revision": INT,
        "changed_events": INT,
        "revision_at_from": INT,
        "increased": BOOL,
        "consistent": BOOL,
        "findings": TABLE,
        "first_event_block": INT,
    }
    help = "revision since from_block moved by exactly the proven Changed events (§5.4)."
    section = "ERC-8447 §5.4"
    params = (SWARM, Param("from_block", "uint", "the block to count changes from (its own "
                           "transactions are before it)"))
    layout = LAYOUT

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        base = swarm_base(p)
        start = from_block(p, clock)
        rec = f"{base}.record.revision"
        revision: int = (yield Reads([rec]))[rec]
        at_from: int = (yield Reads([rec], block=start))[rec]
        events: list[ProvenLog] = yield Logs(CHANGED, start + 1, (swarm_topic(p),))
        seen = [int.from_bytes(log.topics[2], "big") for log in events]
        result = revision_check(revision, seen, at_from)
        result["increased"], result["consistent"] = self.judge(result)
        findings = result.pop("findings")
        result["first_event_block"] = events[0].block_number if events else None
        # §5.4 "Every state-changing call MUST increment the swarm's revision and emit
        # Changed": the count and the sequence decide. Whether anything changed since the
        # from block is reported (``increased``), never judged: a quiet swarm breaks no rule
        # (docs/design.md §Verdicts follow the normative text).
        return Derivation(
            holds=result["consistent"],
            derived=result,
            predicate="revision == revision at from_block + number of proven Changed events, "
                      "carried in sequence (§5.4)",
            findings=findings,
        )

    def judge(self, result: Struct) -> tuple[bool, bool]:
        return result["increased"], result["consistent"]

    def views(self, p: Params) -> list[ViewCheck]:
        return [ViewCheck("getSwarm(bytes32)", (swarm_topic(p),), ("bytes32",), (SWARM_TUPLE,),
                          lambda r, d: {"revision": (r[0][REVISION_AT], d["revision"])})]
