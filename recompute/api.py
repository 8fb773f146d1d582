"""The public library API, for bots and notebooks (docs/design.md §Public API).

Import from ``recompute`` (``from recompute import anchor_block, step``); these names are kept
stable across releases, everything else is internal and may move. Each function is a thin,
typed entry to the trust flow: anchor a block, then prove, read, step or replay at it.

>>> from recompute import LiveSource, anchor_block, read, step, load_layout, get_recipe
>>> block = anchor_block([LiveSource(url)], block="latest", quorum=None)   # doctest: +SKIP
>>> read(block, address, load_layout("amm-registry"), ["heads[0x…].lastCheckpoint"])  # +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from recompute.core.anchor import Anchor, AnchoredBlock, anchor_block
from recompute.core.clock import Clock
from recompute.core.errors import RecomputeError, Unverifiable, UsageError
from recompute.core.outcome import Outcome
from recompute.core.prover import ProvenAccount, prove_account
from recompute.core.verdict import REASONS, Reason, Verdict
from recompute.layout import Layout, ReadResult, load_layout
from recompute.recipes.framework import Recipe, get_recipe, load_recipes
from recompute.recipes.runner import Job, prove_paths, step, step_many
from recompute.sources.live import LiveSource
from recompute.vectors import Result as VectorResult
from recompute.vectors import verify_file

__all__ = [
    "REASONS", "Anchor", "AnchoredBlock", "Clock", "Job", "Layout", "LiveSource", "Outcome",
    "ProvenAccount", "ReadResult", "Reason", "Recipe", "RecomputeError", "Unverifiable",
    "UsageError",
    "Verdict", "VectorResult", "anchor_block", "get_recipe", "load_layout", "load_recipes",
    "prove_account", "read", "step", "step_many", "verify_vector",
]


def read(block: AnchoredBlock, address: bytes, layout: Layout,
         paths: Sequence[str]) -> list[ReadResult]:
    """Prove and decode ``paths`` of the contract at ``address`` through ``layout``: one
    ``eth_getProof`` per round (``recompute read``). Raises :class:`Unverifiable` when the node
    cannot prove them and :class:`UsageError` for a path the layout does not have."""
    results, _known, _requests = prove_paths(block, address, layout, list(paths))
    return results


def verify_vector(path: str | Path) -> VectorResult:
    """Replay one conformance vector file offline; ``.passed`` and ``.detail`` say how it went."""
    return verify_file(Path(path))
