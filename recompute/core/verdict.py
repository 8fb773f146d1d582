"""Verdicts, exit codes and reason codes (docs/design.md §Verdicts; vocabulary of recompute-kit)."""

from __future__ import annotations

from enum import StrEnum

EXIT_GOOD = 0
EXIT_BAD = 1
EXIT_UNVERIFIABLE = 2
EXIT_USAGE = 64


class Verdict(StrEnum):
    GOOD = "VERIFIED-GOOD"
    BAD = "VERIFIED-BAD"
    UNVERIFIABLE = "UNVERIFIABLE"

    @property
    def exit_code(self) -> int:
        return {Verdict.GOOD: EXIT_GOOD, Verdict.BAD: EXIT_BAD}.get(self, EXIT_UNVERIFIABLE)


# Reason codes. GOOD/BAD carry a reason too ("ok", "predicate-failed"); UNVERIFIABLE always
# carries one of the others.
REASONS = {
    "ok": "every input proven to a pinned header and the predicate holds",
    "predicate-failed": "every input proven to a pinned header and the predicate fails",
    "rpc-unreachable": "the node could not be reached (connection refused, timeout)",
    "rpc-error": "the node answered with a JSON-RPC error",
    "rpc-malformed": "the node's answer is not well-formed (bad JSON, bad hex, missing fields)",
    "block-unknown": "the node does not know the requested block",
    "state-unavailable": "the node no longer has the state of that block (pruned history)",
    "invalid-proof": "a Merkle-Patricia proof does not root in the pinned header",
    "header-mismatch": "the header does not hash to the pinned hash",
    "anchor-disagreement": "the endpoints of a quorum returned different block hashes",
    "quorum-not-met": "fewer endpoints than the quorum answered",
    "rpc-inconsistent": "a value the node claims differs from what its own proof shows",
    "receipts-mismatch": "the receipts do not rebuild to the header's receiptsRoot",
    "invalid-consensus-proof": (
        "a beacon light-client proof (sync-committee signature, participation or Merkle branch)"
        " does not verify"
    ),
}
