"""The vector format (``recompute-vector/1``): names, serialisation, loading and shape checks.

A vector is outside data: everything here bounds it and refuses a wrong shape with one line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recompute.core.boundedjson import load_file
from recompute.core.errors import UsageError
from recompute.core.jsontext import json_document
from recompute.core.schema import ANY, Integer, ListOf, MapOf, OneOf, Record, Text, check

FORMAT = "recompute-vector/1"
SUITE_PROFILE = "recompute-vectors.v1"


def sha256_file(path: Path) -> str:
    """The sha256 of a pinned file, read in chunks (a huge file costs time, not memory)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def dumps(vector: dict[str, Any]) -> str:
    """The one serialisation of a vector: sorted keys, 1-space indent, trailing newline."""
    return json_document(vector, indent=1, sort_keys=True, ascii=False) + "\n"




@dataclass
class Result:
    name: str
    passed: bool
    detail: str = ""
    listed: bool | None = None  # False: a vector file no suite.json pins
    file: str | None = None  # the vector file replayed (None: a peer suite's entry)


class MalformedVector(UsageError):
    """A vector whose content does not have the shape of its kind."""




def load_json(path: Path) -> dict[str, Any]:
    """A vector or suite file: bounded in size and depth, one UsageError line if unusable."""
    data = load_file(path, str(path), UsageError)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a JSON object")
    return data


# ---- the shape of a vector (vectors/schema.json), every field checked before replay ----------

_HASH = Text(r"0x[0-9a-fA-F]{64}", "a 0x hash of 32 bytes")
_HEX = Text(r"0x(?:[0-9a-fA-F]{2})*", "0x hex bytes")
_ADDRESS = Text(r"0x[0-9a-fA-F]{40}", "a 0x address of 20 bytes")
_VERDICTS = ("VERIFIED-GOOD", "VERIFIED-BAD", "UNVERIFIABLE")
_COMMON = {"format": Text(choices=(FORMAT,)), "kind": Text(choices=("step", "proof", "pure")),
           # printed on the PASS/FAIL line: one line of text, so it cannot forge another
           "name": Text(r"[^\x00-\x1f\x7f]{1,200}", "a string"),
           "expected": Record({"verdict": Text(choices=_VERDICTS), "reason": Text()},
                              open=True)}  # the rest of expected is compared, value by value
_OPTIONAL = {"description": Text()}
_CHAIN = {"chain_id": Integer(0, 1 << 64), "pinned_block_hash": _HASH,
          "headers": MapOf(_HEX, key=_HASH),
          "proofs": ListOf(Record({"address": _ADDRESS, "slots": ListOf(_HASH),
                                   "block_hash": _HASH, "answer": ANY})),
          "receipts": MapOf(ListOf(ANY), key=_HASH)}
_FILE_NAME = Text(r"(?!\.\.?\Z)[A-Za-z0-9_.-]{1,100}", "a plain file name")
_PARAM = OneOf((Text(), Record({"file": _FILE_NAME, "content": Text()})),
               'a string or {"file", "content"}')
SHAPES = {
    "step": Record({"recipe": Text(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", "a recipe name (a/b)"),
                    "params": MapOf(_PARAM), "address": _ADDRESS,
                    "layout": Record({"name": Text(), "descriptor": Record(open=True),
                                      "sha256": Text(r"[0-9a-f]{64}", "a sha256 in hex")}),
                    **_CHAIN, **_COMMON},
                   {**_OPTIONAL, "expect": MapOf(Text())}),
    "proof": Record({"address": _ADDRESS, "slots": ListOf(_HASH), **_CHAIN, **_COMMON},
                    _OPTIONAL),
    "pure": Record({"function": Text(), "inputs": Record(open=True), **_COMMON},
                   {**_OPTIONAL, "headers": Record(), "proofs": ListOf(ANY, max_items=0),
                    "receipts": Record()}),  # a pure vector reads no chain: empty if there
}


def check_vector_shape(vector: dict[str, Any], path: Path | str) -> None:
    """The one validator of a vector: its kind's fields, each of its type, or one line
    ``vector PATH: field "…": expected …, got …`` (``vectors verify`` reports it as that
    vector's failure and goes on; ``vectors add`` refuses the file, exit 64)."""
    what = f"vector {path}"
    if not isinstance(vector, dict):
        raise MalformedVector(f"{what}: not a JSON object")
    if vector.get("format") != FORMAT:
        check(vector, Record({"format": _COMMON["format"]}, open=True),
              f"{what} (not a {FORMAT} vector)", MalformedVector)
    check(vector, Record({"kind": _COMMON["kind"]}, open=True), what, MalformedVector)
    shape = SHAPES[vector["kind"]]
    assert isinstance(shape, Record)
    missing = [key for key in shape.required if key not in vector]
    if missing:
        raise MalformedVector(f"{what}: the vector lacks {', '.join(missing)}")
    check(vector, shape, what, MalformedVector)
