"""A sparse audit's report (``watch --blocks`` / ``--every``; docs/watch.md §Sparse audits):
its blocks as points on each check's timeline, and how each was tied to the pinned block."""

from __future__ import annotations

from dataclasses import replace

from recompute.watch.audit_page import AuditFacts


def sparse_facts(facts: AuditFacts, blocks: list[int], top: int, history: str) -> AuditFacts:
    """The report's facts of a sparse audit: its blocks as points on the timeline, and how
    each was tied to the pinned block."""
    said = f"{len(blocks)} block(s) from {blocks[0]} to {blocks[-1]}"
    return replace(
        facts, title=f"Audit of {said}, proven from block {top}", first=blocks[0],
        last=blocks[-1], points=list(blocks),
        notes=[f"{said}, each proven from the pinned block {top} (history {history}: hops "
               "through the history storage contract, or the header walk; each line's anchor "
               "names its path)"],
        retraction_note="Each block was proven from the pinned block before it was "
                        "evaluated: every line stands.")
