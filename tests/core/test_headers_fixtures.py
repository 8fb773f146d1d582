"""Header hashing on real go-ethereum data: every fork's field set from genesis to Prague."""

from __future__ import annotations

import pytest

from recompute.core.header import Header
from recompute.core.hexdata import parse_data
from recompute.sources.fixture_node import read_chain
from tests.core.fixturedata import FIXTURES, exchanges

BLOCKS = [
    (name, response["result"])
    for folder in ("eth_getBlockByNumber", "eth_getBlockByHash")
    for name, _, response in exchanges(folder)
    if response.get("result")
]


def test_the_recorded_blocks_cover_every_fork():
    forks = {Header.from_rpc(block).fork for _, block in BLOCKS}
    assert forks == {"frontier", "london", "shanghai", "cancun", "prague"}


@pytest.mark.parametrize("name,block", BLOCKS, ids=[name for name, _ in BLOCKS])
def test_recorded_block_rehashes_to_its_hash(name, block):
    header = Header.from_rpc(block)
    assert "0x" + header.hash.hex() == block["hash"]


def test_chain_rlp_rehashes_and_links_to_genesis():
    by_name = {name: response["result"] for name, _, response in exchanges("eth_getBlockByNumber")}
    genesis = Header.from_rpc(by_name["get-genesis.io"])
    headers = read_chain(FIXTURES / "chain.rlp")
    assert [h.number for h in headers] == list(range(1, 55))
    parent = genesis
    for header in headers:
        assert header.parent_hash == parent.hash
        parent = header
    # and the chain's head is the block the node reports as latest
    assert "0x" + headers[-1].hash.hex() == by_name["get-latest.io"]["hash"]


@pytest.mark.parametrize("name,request_,response", exchanges("debug_getRawHeader"))
def test_raw_header_rlp_matches_the_block(name, request_, response):
    if "result" not in response:  # the invalid-number exchange: geth refused it
        assert response["error"]["message"]
        return
    raw = parse_data(response["result"], "raw header", ValueError)
    header = Header.from_rlp(raw)
    assert header.encoded == raw  # canonical round trip
    number = int(request_["params"][0], 16)
    chain = {h.number: h for h in read_chain(FIXTURES / "chain.rlp")}
    if number in chain:
        assert header.hash == chain[number].hash
    else:
        assert number == 0


def test_every_field_change_changes_the_hash():
    header = Header.from_rpc(next(b for n, b in BLOCKS if n == "get-block-prague-fork.io"))
    for name in ("parent_hash", "state_root", "receipts_root", "timestamp", "number",
                 "base_fee_per_gas", "withdrawals_root", "requests_hash", "extra_data"):
        value = getattr(header, name)
        changed = value + 1 if isinstance(value, int) else (value[:-1] + bytes([value[-1] ^ 1])
                                                            if value else b"\x01")
        assert header.replace(**{name: changed}).hash != header.hash, name
