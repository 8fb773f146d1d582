"""Capturing a vector: run a step or a proof live at a pinned block and record every answer."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from recompute.core.anchor import anchor_block
from recompute.core.errors import Unverifiable
from recompute.core.hexdata import parse_address
from recompute.core.prover import prove_account
from recompute.evaluator.job import step
from recompute.layout import load_layout
from recompute.recipes.base import Recipe
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource
from recompute.sources.replay import CaptureSource
from recompute.vectors.format import (
    FORMAT,
)

# ---- capture ----------------------------------------------------------------------------------


def capture_step(recipe_name: str, params: dict[str, str], address: str, layout_name: str | None,
                 rpc: str, block_hash: bytes, expect: dict[str, str], name: str,
                 description: str = "", recipe_paths: list[str] | None = None,
                 timeout: float = 30.0) -> dict[str, Any]:
    """Run a step live against ``rpc`` at the pinned ``block_hash`` and record it."""

    recipe = get_recipe(recipe_name, recipe_paths)
    layout = load_layout(layout_name or recipe.layout)
    parsed = recipe.parse_params(params)
    source = CaptureSource(LiveSource(rpc, timeout=timeout))
    vector: dict[str, Any] = {
        "format": FORMAT,
        "kind": "step",
        "name": name,
        "description": description,
        "recipe": recipe.name,
        "params": _embed_params(recipe, params),
        "address": address.lower(),
        "layout": {"name": layout.name, "sha256": hashlib.sha256(layout.dumps().encode())
                   .hexdigest(), "descriptor": json.loads(layout.dumps())},
        "expect": dict(expect),
        "pinned_block_hash": "0x" + block_hash.hex(),
    }
    try:
        block = anchor_block([source], block_hash=block_hash)
        outcome = step(recipe, parsed, block, parse_address(address, "address"), layout, expect)
        expected = {"verdict": outcome.verdict.value, "reason": outcome.reason,
                    "derived": outcome.evidence["derived"]}
    except Unverifiable as exc:
        expected = {"verdict": "UNVERIFIABLE", "reason": exc.reason}
    vector.update(_record(source))
    vector["expected"] = expected
    return vector


def capture_proof(address: str, slots: list[int], rpc: str, block_hash: bytes, name: str,
                  description: str = "") -> dict[str, Any]:
    """Record a ``recompute proof`` (account + slots) live."""
    source = CaptureSource(LiveSource(rpc))
    vector: dict[str, Any] = {"format": FORMAT, "kind": "proof", "name": name,
                              "description": description, "address": address.lower(),
                              "slots": [f"0x{s:064x}" for s in slots],
                              "pinned_block_hash": "0x" + block_hash.hex()}
    try:
        block = anchor_block([source], block_hash=block_hash)
        account = prove_account(block, bytes.fromhex(address[2:]), slots)
        expected = {"verdict": "VERIFIED-GOOD", "reason": "ok", "account": account.to_json(),
                    "values": {f"0x{s:064x}": f"0x{v:064x}" for s, v in account.storage.items()}}
    except Unverifiable as exc:
        expected = {"verdict": "UNVERIFIABLE", "reason": exc.reason}
    vector.update(_record(source))
    vector["expected"] = expected
    return vector


def _record(source: CaptureSource) -> dict[str, Any]:
    return {"chain_id": source.chain_id(), "headers": dict(sorted(source.headers.items())),
            "proofs": source.proofs, "receipts": dict(sorted(source.receipts.items()))}


def _embed_params(recipe: Recipe, params: dict[str, str]) -> dict[str, Any]:
    kinds = {p.name: p.kind for p in recipe.params}
    out: dict[str, Any] = {}
    for key, text in sorted(params.items()):
        if kinds.get(key) == "file":
            path = Path(text)
            out[key] = {"file": path.name, "content": path.read_text()}
        else:
            out[key] = text
    return out
