"""The go-ethereum execution-apis fixtures (bundled: recompute/data/fixtures/README.md)."""

from __future__ import annotations

from recompute.data import FIXTURE_CHAIN
from recompute.sources.fixture_node import read_exchanges

FIXTURES = FIXTURE_CHAIN
LATEST = 0x36  # the fixtures' "latest" block, per their README
CONTRACT = "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df"  # the account eth_getProof/ proves


def exchanges(folder: str) -> list[tuple[str, dict, dict]]:
    """(file name, request, response) of every exchange in one method folder."""
    out = []
    for path in sorted((FIXTURES / folder).glob("*.io")):
        for request, response in read_exchanges(path):
            out.append((path.name, request, response))
    return out
