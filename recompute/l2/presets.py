"""OP-stack chains by name (``--chain base-sepolia``): the portal address to start from, kept
as data with the public source each address was copied from, the L1 network the chain
settles on and, for a chain on a standard release, its ``AnchorStateRegistry`` proxy
(``recompute/data/l2/presets.json``: the superchain registry's chain files)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from recompute.data import data_path

PRESETS = ("l2", "presets.json")
PRESETS_FORMAT = "recompute-op-stack-presets/1"


@dataclass(frozen=True)
class Preset:
    key: str
    name: str
    l1: str  # the L1 network's name (mainnet, sepolia)
    l2_chain_id: int
    portal: bytes
    source: str
    anchor_state_registry: bytes | None = None  # a standard release's registry proxy


def load_presets() -> dict[str, Preset]:
    """Every bundled preset by its key (read on each call: nothing is kept)."""
    document = json.loads(data_path(*PRESETS).read_text())
    if document.get("format") != PRESETS_FORMAT:
        raise ValueError(f"{'/'.join(PRESETS)}: not a {PRESETS_FORMAT} file")
    return {key: Preset(key, entry["name"], entry["l1"], entry["l2_chain_id"],
                        bytes.fromhex(entry["portal"][2:]), entry["source"],
                        bytes.fromhex(entry["anchor_state_registry"][2:])
                        if entry.get("anchor_state_registry") else None)
            for key, entry in document["chains"].items()}
