"""The vector format (``recompute-vector/1``): names, serialisation, loading and shape checks.

A vector is outside data: everything here bounds it and refuses a wrong shape with one line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from recompute.core.boundedjson import load_file
from recompute.core.errors import UsageError

FORMAT = "recompute-vector/1"
SUITE_PROFILE = "recompute-vectors.v1"


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def dumps(vector: dict) -> str:
    """The one serialisation of a vector: sorted keys, 1-space indent, trailing newline."""
    return json.dumps(vector, indent=1, sort_keys=True, ensure_ascii=False) + "\n"




@dataclass
class Result:
    name: str
    passed: bool
    detail: str = ""
    listed: bool | None = None  # False: a vector file no suite.json pins
    file: str | None = None  # the vector file replayed (None: a peer suite's entry)


class MalformedVector(UsageError):
    """A vector whose content does not have the shape of its kind."""




def load_json(path: Path) -> dict:
    """A vector or suite file: bounded in size and depth, one UsageError line if unusable."""
    data = load_file(path, str(path), UsageError)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a JSON object")
    return data


def check_vector_shape(vector: dict, path: Path) -> None:
    if vector.get("format") != FORMAT:
        raise UsageError(f"{path}: not a {FORMAT} vector (format {vector.get('format')!r})")
    required = {"step": ("recipe", "params", "address", "layout", "pinned_block_hash", "headers",
                         "proofs", "receipts", "chain_id", "expected"),
                "proof": ("address", "slots", "pinned_block_hash", "headers", "proofs",
                          "chain_id", "expected"),
                "pure": ("function", "inputs", "expected")}.get(vector.get("kind"))
    if required is None:
        raise UsageError(f"{path}: unknown vector kind {vector.get('kind')!r}")
    missing = [key for key in required if key not in vector]
    if missing:
        raise UsageError(f"{path}: the vector lacks {', '.join(missing)}")
    chain_id = vector.get("chain_id")
    if "chain_id" in required and (isinstance(chain_id, bool) or not isinstance(chain_id, int)
                                   or not 0 <= chain_id < 1 << 64):
        raise UsageError(f"{path}: chain_id must be an integer, got {chain_id!r}")
    expected = vector["expected"]
    if not isinstance(expected, dict) or expected.get("verdict") not in (
            "VERIFIED-GOOD", "VERIFIED-BAD", "UNVERIFIABLE"):
        raise UsageError(f"{path}: 'expected' must be an object with a verdict of "
                         "VERIFIED-GOOD, VERIFIED-BAD or UNVERIFIABLE")
