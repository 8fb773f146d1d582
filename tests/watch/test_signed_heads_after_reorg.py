"""``watch --beacon``: after a reorg moves the watch's tip below the lowest block of the light
client's last walk, the next block on the signed chain is admitted again (found by
benchmarks/soak_watch.py: the --beacon watch stayed at its reorged tip for the rest of the run).
On a real anvil: a chain, a rollback and a new branch; the signed heads are the node's own
headers of the new branch (re-hashed by the walk), the light client stubbed by them."""

from __future__ import annotations

from types import SimpleNamespace

from recompute.core.anchor import PayloadHeader
from recompute.core.header import Header
from recompute.sources.live import LiveSource
from recompute.watch.signed_heads import SignedHeads


def _header(node, number: int) -> Header:
    return Header.from_rpc(node.rpc("eth_getBlockByNumber", hex(number), False))


def _payload(header: Header) -> PayloadHeader:
    return PayloadHeader(header.hash, header.parent_hash, header.state_root,
                         header.receipts_root, header.logs_bloom, header.number,
                         header.timestamp)


def _tip(header: Header):
    return SimpleNamespace(number=header.number, hash=header.hash)


def test_a_tip_moved_down_by_a_reorg_is_followed_again(anvil):
    for _ in range(10):
        anvil.rpc("evm_mine")
    old_tip = _header(anvil, 9)
    anvil.rpc("anvil_rollback", 3)  # blocks 8, 9, 10 orphaned
    anvil.rpc("evm_setNextBlockTimestamp", _header(anvil, 7).timestamp + 100)
    for _ in range(3):
        anvil.rpc("evm_mine")  # 8', 9', 10'
    signed = {"optimistic": _payload(_header(anvil, 10)), "finalized": _payload(_header(anvil, 2))}
    heads = SignedHeads(lambda: (signed["optimistic"], signed["finalized"]))
    source = LiveSource(anvil.url)
    # the light client signs 10' while the watch's tip is still the orphaned 9: the walk ends
    # at number 9
    heads.refresh(source, _tip(old_tip))
    assert not heads.holds(_tip(old_tip))
    # the watch finds the fork point: its tip is 7 now; 8' (child of 7) is on the signed chain
    tip = _tip(_header(anvil, 7))
    assert heads.admits(source, tip, _header(anvil, 8))
    # and once the light client moves on, the chain above is admitted block by block
    anvil.rpc("evm_mine")
    signed["optimistic"] = _payload(_header(anvil, 11))
    assert heads.admits(source, _tip(_header(anvil, 8)), _header(anvil, 9))
