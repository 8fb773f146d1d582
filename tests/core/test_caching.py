"""recompute.core.caching: the per-source LRU memos, and follow mode's window (keep_window): a
following watch keeps the entries of its last blocks, not memos sized for range audits that
would fill for hours. Expected contents are counted by hand from the puts and gets below."""

from __future__ import annotations

from recompute.core import caching as memo_module
from recompute.core.caching import SHARED_NODES, Memo, keep_window, memo_for


class Source:
    """A proof source stand-in: memos are kept per source object (weakly referenced)."""


def test_an_lru_memo_keeps_its_size_most_recent_entries():
    memo = Memo(3)
    for key in "abcd":
        memo.put(key, key.upper())
    assert memo.get("a") is None  # the least recently used went first
    assert memo.get("b") == "B"
    memo.put("e", "E")  # "c" is now the least recently used
    assert [memo.get(k) for k in "bcde"] == ["B", None, "D", "E"]


def test_without_follow_mode_entries_stay_however_many_blocks_pass():
    source = Source()
    memo = memo_for(source, "kind", 1000)
    assert memo is not None
    for block in range(300):
        memo.put(("scan", block), block)
    assert memo.get(("scan", 0)) == 0 and memo.window is None


def test_follow_mode_keeps_a_window_of_blocks():
    source = Source()
    memo = memo_for(source, "kind", 1000)
    assert memo is not None
    memo.put("before", 1)  # kept before follow mode began: counts as used at its start
    for block in range(10):
        memo.put(("scan", block), block)  # a block's entry, asked again by the next block only
        if block:
            assert memo.get(("scan", block - 1)) == block - 1
        memo.get("every block")  # absent: a miss changes nothing
        memo.put("asked always", block)  # used at every block: stays
        keep_window(source, window=3)
    # after 10 blocks with a window of 3, the entries used at blocks 7, 8 or 9 remain: the
    # scans of blocks 7, 8 and 9, that of block 6 (asked at block 7), "asked always"
    assert len(memo._items) == 5
    assert memo.get("before") is None
    assert [memo.get(("scan", b)) for b in range(10)] == [None] * 6 + [6, 7, 8, 9]
    assert memo.get("asked always") == 9


def test_a_memo_made_during_follow_mode_joins_the_window():
    source = Source()
    keep_window(source, window=2)  # no memo yet
    late = memo_for(source, "late", 100)
    assert late is not None
    late.put("x", 1)
    for _ in range(3):
        keep_window(source, window=2)
    assert late.get("x") is None


def test_follow_mode_bounds_one_source_only():
    followed, audited = Source(), Source()
    kept, other = memo_for(followed, "kind", 100), memo_for(audited, "kind", 100)
    assert kept is not None and other is not None
    kept.put("x", 1)
    other.put("x", 1)
    for _ in range(5):
        keep_window(followed, window=2)
    assert kept.get("x") is None and other.get("x") == 1


def test_the_proof_node_cache_starts_again_every_window_blocks():
    source = Source()
    ref = b"\x01" * 32
    for _ in range(3):  # whatever earlier follow mode in this process counted
        keep_window(source, window=3)
        if memo_module._nodes_followed == 0:
            break
    assert memo_module._nodes_followed == 0
    SHARED_NODES._nodes[ref] = ("0x", None, None)
    try:
        keep_window(source, window=3)
        keep_window(source, window=3)
        assert ref in SHARED_NODES._nodes  # not at every block: the cache serves the window
        keep_window(source, window=3)
        assert ref not in SHARED_NODES._nodes
    finally:
        SHARED_NODES._nodes.pop(ref, None)


def test_follow_mode_bounds_a_shared_sources_raw_headers_and_receipts():
    """The watch's shared source holds raw headers (8,192) and receipts (512) for range
    audits; in follow mode about a window of blocks' worth (plus one walk ahead)."""
    from recompute.sources.cache import SharedSource
    from recompute.sources.live import LiveSource

    followed = SharedSource(LiveSource("http://127.0.0.1:9"))  # never asked: no node needed
    audited = SharedSource(LiveSource("http://127.0.0.1:9"))
    keep_window(followed, window=3)
    for source in (followed, audited):
        for n in range(1000):
            source._headers.put(n.to_bytes(32, "big"), {"number": hex(n)})
            source._receipts.put(n.to_bytes(32, "big"), [])
    assert len(audited._headers) == 1000 and len(audited._receipts) == 512
    assert len(followed._headers) <= 256 + 3 and len(followed._receipts) == 3
    assert (999).to_bytes(32, "big") in followed._headers  # the newest stay
