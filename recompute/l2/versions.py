"""Which deployed implementation a contract's code is (docs/l2.md §Versions).

A version is never taken from a ``version()`` call: the code itself decides. The caller
hands in runtime code whose keccak256 equals the account's proven code hash; this module zeroes
the spans where a known implementation keeps its immutables (constructor arguments written
into the code) and compares the rest, byte for byte by hash, with that implementation's
compiled runtime code (the bundled table ``recompute/data/l2/op-stack-versions.json``, built
from the contracts-bedrock package's forge artifacts and naming them). A match gives the
implementation's storage layout (the slots of the variables read) and its immutables, read
from the code. Code that matches nothing is refused by name, never guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from recompute.core.keccak import keccak256
from recompute.data import data_path

TABLE = ("l2", "op-stack-versions.json")
TABLE_FORMAT = "recompute-op-stack-versions/1"


class UnknownVersion(ValueError):
    """Code that is none of the known implementations of its role."""


@dataclass(frozen=True)
class StorageVariable:
    slot: int
    offset: int
    size: int

    def value(self, word: int) -> int:
        """This variable's value out of its slot's 256-bit word."""
        return (word >> (8 * self.offset)) & ((1 << (8 * self.size)) - 1)


@dataclass(frozen=True)
class Implementation:
    """One known compiled implementation: its name, version and role (``proxy``, ``portal``,
    ``factory``, ``game``), where it came from, its storage variables and immutable spans."""

    name: str
    version: str
    role: str
    source: str
    code_size: int
    masked_code_hash: bytes
    immutables: dict[str, tuple[tuple[int, int], ...]]
    spans: tuple[tuple[int, int], ...]
    storage: dict[str, StorageVariable]

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def variable(self, name: str) -> StorageVariable:
        return self.storage[name]


@dataclass(frozen=True)
class Identified:
    """Code recognised as ``implementation``, with the immutables it carries."""

    implementation: Implementation
    immutables: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"implementation": self.implementation.label,
                "identified_by": "runtime code (immutables zeroed) equal to "
                                 + self.implementation.source,
                "immutables": dict(self.immutables)}


def load_table() -> list[Implementation]:
    """The bundled table of known implementations (read on each call: nothing is kept)."""
    document = json.loads(data_path(*TABLE).read_text())
    if document.get("format") != TABLE_FORMAT:
        raise ValueError(f"{'/'.join(TABLE)}: not a {TABLE_FORMAT} table")
    source = f"{document['package']} {document['package_version']}"
    return [Implementation(
        name=entry["name"], version=entry["version"], role=entry["role"],
        source=f"{source} {entry['artifact']}", code_size=entry["code_size"],
        masked_code_hash=bytes.fromhex(entry["masked_code_hash"][2:]),
        immutables={name: tuple((s, n) for s, n in spans)
                    for name, spans in entry["immutables"].items()},
        spans=tuple((s, n) for s, n in entry["immutable_spans"]),
        storage={name: StorageVariable(v["slot"], v["offset"], v["bytes"])
                 for name, v in entry["storage"].items()},
    ) for entry in document["implementations"]]


def _masked(code: bytes, spans: tuple[tuple[int, int], ...]) -> bytes:
    out = bytearray(code)
    for start, length in spans:
        out[start:start + length] = bytes(length)
    return bytes(out)


def identify(code: bytes, role: str, table: list[Implementation]) -> Identified:
    """The known implementation of ``role`` that ``code`` is, with its immutables
    (UnknownVersion naming the candidates otherwise). Each immutable must hold one value at
    every place the code keeps it."""
    candidates = [entry for entry in table if entry.role == role]
    for entry in candidates:
        if len(code) != entry.code_size:
            continue
        if keccak256(_masked(code, entry.spans)) != entry.masked_code_hash:
            continue
        values: dict[str, int] = {}
        for name, spans in entry.immutables.items():
            seen = {code[start:start + length] for start, length in spans}
            if len(seen) != 1:
                raise UnknownVersion(f"{entry.label}: immutable {name} holds different values "
                                     "at its places in the code")
            values[name] = int.from_bytes(seen.pop(), "big")
        return Identified(entry, values)
    known = ", ".join(entry.label for entry in candidates) or "none"
    raise UnknownVersion(f"its code (0x{keccak256(code).hex()}, {len(code)} bytes) is no known "
                         f"{role} implementation (known: {known}); refused rather than guessed")
