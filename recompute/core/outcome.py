"""A verdict with its reason and evidence (docs/design.md §Verdicts); printing lives in the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from recompute.core.anchor import AnchoredBlock
from recompute.core.errors import Unverifiable
from recompute.core.verdict import Verdict


@dataclass(frozen=True, init=False)
class Outcome:
    verdict: Verdict
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)
    detail: str = ""

    values: dict[str, Any] | None = None  # the derived values as JSON types (:attr:`derived`)

    def __init__(self, verdict: Verdict, reason: str, evidence: dict[str, Any] | None = None,
                 detail: str = "", values: dict[str, Any] | None = None) -> None:
        # the fields at once (a watch makes one per check per block; the generated __init__
        # of a frozen dataclass sets each through object.__setattr__); frozen after
        self.__dict__.update(verdict=verdict, reason=reason,
                             evidence={} if evidence is None else evidence, detail=detail,
                             values=values)

    @property
    def derived(self) -> dict[str, Any]:
        """What the recipe derived, each value as its JSON type: an integer as an ``int``, a
        boolean as a ``bool``, bytes as 0x text, lists and tables of them. The evidence
        (``evidence["derived"]``, what ``step --json`` prints and the evidence digest hashes)
        writes integers as decimal text instead, for JSON readers whose numbers are doubles
        (exact only to 2**53; a uint256 is not). An outcome with no derivation: the
        evidence's."""
        if self.values is not None:
            return self.values
        derived = self.evidence.get("derived", {})
        return derived if isinstance(derived, dict) else {}

    @classmethod
    def unverifiable(cls, error: Unverifiable,
                     evidence: dict[str, Any] | None = None) -> Outcome:
        return cls(Verdict.UNVERIFIABLE, error.reason, evidence or {}, error.detail)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict.value, "reason": self.reason}
        if self.detail:
            out["detail"] = self.detail
        out["evidence"] = self.evidence
        return out


def block_evidence(block: AnchoredBlock) -> dict[str, Any]:
    return {
        "chain_id": block.chain_id,
        # no proof covers the chain id: it is what the anchoring endpoint said
        "chain_id_from": "the node's eth_chainId (not proven)",
        "block": block.to_json(),
        "anchor": block.anchor.to_json(),
    }
