"""Standard OP-stack implementations identified by their address (docs/l2.md §Current
releases).

The superchain registry publishes, per L1 network, the implementation address of each proxied
contract of every ``op-contracts`` release (``validation/standard/standard-versions-*.toml``).
recompute keeps those addresses as data (``recompute/data/l2/standard-implementations.json``,
each network naming its file and commit, each address the releases listing it) with the
storage slots it reads of each contract's major version (from the contracts' storage-layout
snapshots, each named). A proxy whose proven EIP-1967 slot holds a listed address is that
release's contract, on the network the address was published for only; an address listed for
no network is no release, and a listed contract whose major version has no layout here is
refused by name, never read by a guessed layout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from recompute.data import data_path
from recompute.l2.versions import StorageVariable

TABLE = ("l2", "standard-implementations.json")
TABLE_FORMAT = "recompute-op-stack-releases/1"


class UnlistedRelease(ValueError):
    """A listed contract recompute has no storage layout for."""


@dataclass(frozen=True)
class Release:
    """One standard implementation: where it is listed and what it is."""

    network: str
    chain_id: int
    address: bytes
    role: str  # portal, registry, factory
    name: str
    version: str
    releases: tuple[str, ...]
    source: str

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    def to_json(self) -> dict[str, Any]:
        return {"implementation": self.label,
                "implementation_address": "0x" + self.address.hex(),
                "identified_by": (f"implementation address listed on {self.network} for "
                                  f"{', '.join(self.releases)} in {self.source}")}


@dataclass(frozen=True)
class Layout:
    """The slots read of one contract's major version, and the snapshot they came from."""

    name: str
    major: int
    source: str
    storage: dict[str, StorageVariable]

    def variable(self, name: str) -> StorageVariable:
        return self.storage[name]


@dataclass(frozen=True)
class Releases:
    networks: dict[str, int]  # network name -> L1 chain id
    listed: tuple[Release, ...]
    layouts: tuple[Layout, ...]

    def find(self, address: bytes, role: str) -> list[Release]:
        """Every network's listing of ``address`` as ``role`` (none: not a standard one)."""
        return [entry for entry in self.listed if entry.address == address
                and entry.role == role]

    def layout(self, release: Release) -> Layout:
        for layout in self.layouts:
            if layout.name == release.name and layout.major == release.major:
                return layout
        known = ", ".join(f"{layout.name} {layout.major}.x" for layout in self.layouts)
        raise UnlistedRelease(f"{release.label} (listed for {', '.join(release.releases)}) has "
                              f"no storage layout known to recompute (known: {known}); "
                              "refused rather than guessed")


def load_releases() -> Releases:
    """The bundled table (read on each call: nothing is kept)."""
    document = json.loads(data_path(*TABLE).read_text())
    if document.get("format") != TABLE_FORMAT:
        raise ValueError(f"{'/'.join(TABLE)}: not a {TABLE_FORMAT} table")
    listed = tuple(
        Release(network=network, chain_id=entry["chain_id"],
                address=bytes.fromhex(row["address"][2:]), role=row["role"], name=row["name"],
                version=row["version"], releases=tuple(row["releases"]),
                source=entry["source"])
        for network, entry in document["networks"].items()
        for row in entry["implementations"])
    layouts = tuple(
        Layout(layout["name"], layout["major"], layout["source"],
               {name: StorageVariable(v["slot"], v["offset"], v["bytes"])
                for name, v in layout["storage"].items()})
        for layout in document["layouts"])
    return Releases({network: entry["chain_id"] for network, entry
                     in document["networks"].items()}, listed, layouts)
