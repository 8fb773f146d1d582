"""The root of a Merkle-Patricia trie built from its whole contents (Yellow Paper, appendix D):
what a block's receiptsRoot commits to, ``{rlp(i): receipt_i}``.

Built here rather than by py-trie, whose import (eth_utils and its typing) costs about as much
CPU as the rest of a worker process's start: the receipts of the first block a log-reading
check proves would otherwise pay it in every process. The build is the definition, recursively:
one key left is a leaf; keys sharing a first nibble run are an extension above what they share;
otherwise a branch of 16 children and a value. A node whose RLP is shorter than 32 bytes is
embedded in its parent, any other is referred to by its keccak256; the root is always hashed.
"""

from __future__ import annotations

from recompute.core import rlpcodec
from recompute.core.keccak import EMPTY_TRIE_ROOT, keccak256
from recompute.core.rlpcodec import Encodable

# an RLP list: a leaf or extension [path, value or child], a branch of 17 items
Node = list[Encodable]


def trie_root(items: dict[bytes, bytes]) -> bytes:
    """The root hash of the trie holding ``items`` (key -> non-empty value)."""
    if not items:
        return EMPTY_TRIE_ROOT
    pairs = sorted((_nibbles(key), value) for key, value in items.items())
    for _, value in pairs:
        if not value:
            raise ValueError("a trie holds no empty value")
    return keccak256(rlpcodec.encode(_build(pairs, 0)))


def ordered_trie_root(values: list[bytes]) -> bytes:
    """The root of ``{rlp(i): values[i]}``: a block's transactions or receipts root."""
    return trie_root({rlpcodec.encode(i): value for i, value in enumerate(values)})


def _nibbles(key: bytes) -> bytes:
    return bytes(n for b in key for n in (b >> 4, b & 15))


def _hex_prefix(nibbles: bytes, leaf: bool) -> bytes:
    flag = 2 if leaf else 0
    if len(nibbles) % 2:
        head, rest = bytes([(flag + 1) << 4 | nibbles[0]]), nibbles[1:]
    else:
        head, rest = bytes([flag << 4]), nibbles
    return head + bytes(rest[i] << 4 | rest[i + 1] for i in range(0, len(rest), 2))


def _build(pairs: list[tuple[bytes, bytes]], depth: int) -> Node:
    """The node holding ``pairs`` (sorted by key, distinct keys) below ``depth`` nibbles."""
    if len(pairs) == 1:
        key, value = pairs[0]
        return [_hex_prefix(key[depth:], True), value]
    first, last = pairs[0][0], pairs[-1][0]  # sorted: their common prefix is everyone's
    shared = 0
    while (depth + shared < len(first) and depth + shared < len(last)
           and first[depth + shared] == last[depth + shared]):
        shared += 1
    if shared:
        return [_hex_prefix(first[depth:depth + shared], False),
                _reference(_build(pairs, depth + shared))]
    branch: Node = [b""] * 17
    start = 0
    if len(pairs[0][0]) == depth:  # a key that ends here: the branch's value
        branch[16] = pairs[0][1]
        start = 1
    while start < len(pairs):
        nibble = pairs[start][0][depth]
        end = start
        while end < len(pairs) and pairs[end][0][depth] == nibble:
            end += 1
        branch[nibble] = _reference(_build(pairs[start:end], depth + 1))
        start = end
    return branch


def _reference(node: Node) -> Encodable:
    """How a parent refers to ``node``: the node itself when its RLP is under 32 bytes."""
    encoded = rlpcodec.encode(node)
    return node if len(encoded) < 32 else keccak256(encoded)
