"""The logs bloom of a block header (Yellow Paper §4.3.1, M3:2048).

A header's ``logsBloom`` is authenticated with the header; a bloom has no false negatives, so a
block whose bloom lacks an address or a topic holds no log of it, and a scan may skip its
receipts (docs/design.md §Soundness: the bloom rule, the same in the fast path and the
reference evaluator).
"""

from __future__ import annotations

from recompute.core.keccak import keccak256

Bits = tuple[tuple[int, int], ...]  # (byte index, mask) pairs


def bloom_bits(item: bytes) -> Bits:
    """The three (byte, mask) pairs keccak256(item) sets (Yellow Paper §4.3.1 M3:2048)."""
    digest = keccak256(item)
    out = []
    for i in (0, 2, 4):
        bit = int.from_bytes(digest[i : i + 2], "big") & 2047
        out.append((255 - bit // 8, 1 << (bit % 8)))
    return tuple(out)


def bloom_has(bloom: bytes, bits: Bits) -> bool:
    """Whether every bit of ``bits`` is set in ``bloom`` (the item may be there; if not, it is
    certainly absent)."""
    return all(bloom[byte] & mask for byte, mask in bits)
