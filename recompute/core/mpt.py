"""Merkle-Patricia proof verification (Yellow Paper App. D; EIP-1186 proof lists).

A proof is the list of trie nodes on the path from the root to the key, root first, as
``eth_getProof`` returns them. :func:`verify` walks the key's nibbles through those nodes,
checking that every node hashes to the reference its parent holds, and returns the leaf
value (inclusion) or ``None`` (exclusion: the path ends in an empty branch slot or in a
leaf/extension whose path diverges from the key). Nodes whose RLP is shorter than 32
bytes are embedded in their parent and are not in the list. A list with anything else
(missing, extra, reordered or foreign nodes) is an invalid proof.

:class:`NodeCache` keeps the upper nodes of every proof by their hash, with the hex text they
were listed as: a key's walk meets its parent's reference, finds the node under it and only
compares the listed text with the kept one (a memory compare, no hashing); a node met for the
first time is hashed, checked against the reference, and decoded. Each distinct node is hashed
and decoded once, however many keys, answers, chunks or blocks share it: the upper levels of a
storage trie are in every proof.

The walks are functions of their arguments: a cache is one the caller passes (none given, the
walk keeps its nodes for this call only). The process's shared one is
:data:`recompute.core.caching.SHARED_NODES`, the only place a verified value is reused.
"""

from __future__ import annotations

import re
from binascii import unhexlify
from typing import TypeAlias

from recompute.core import rlpcodec
from recompute.core.errors import Unverifiable
from recompute.core.keccak import EMPTY_TRIE_ROOT, keccak256_state
from recompute.core.rlpcodec import Item

_MAX_NODE_BYTES = 1 << 16  # far above any real node (a full branch is 532 bytes)
_MAX_NODE_TEXT = 2 + 2 * _MAX_NODE_BYTES  # as 0x-hex text


class InvalidProof(Unverifiable):
    def __init__(self, detail: str):
        super().__init__("invalid-proof", detail)


class _Deferred:
    """A branch child that is neither a 32-byte hash nor empty: an embedded node, or invalid.
    Judged (by :func:`_child_ref`) only when a walk goes there."""

    __slots__ = ("child",)

    def __init__(self, child: Item):
        self.child = child


# Where a walk goes next: a hash (the next listed node), an embedded node, a deferred child,
# or None (the walk has ended).
Ref: TypeAlias = "bytes | list[Item] | _Deferred | None"
# A branch's children, child n (nibble n) at place n + 1 (:data:`_HEX_INDEX`): the match of
# :data:`_BRANCH` itself (group n + 1: no tuple is built for a node most keys meet once), or a
# tuple with None at place 0 for a branch the decoder read.
Children: TypeAlias = "tuple[Ref, ...] | re.Match[bytes]"
# A node as the walk uses it: (the hex text it was listed as, its children if it is a branch,
# else None; its items if it is a leaf or extension, else None).
Node: TypeAlias = "tuple[str, Children | None, list[Item] | None]"
# The first two levels of a walk under one root for keys of one first byte: the texts of the
# two branch nodes listed there, the hash reference the second holds on the keys' path, and 2
# (the level the walk goes on from).
Top: TypeAlias = "tuple[object, object, Ref, int]"


class NodeCache:
    """Proof nodes that hashed to a reference their parent holds, by that hash (:data:`Node`).

    Sound to share by every answer of every block: an entry is made only after the listed
    bytes hashed to the reference (keccak256 binds the bytes), and a later proof's node is
    taken from here only when its text is the kept text, character for character; any other
    text (another case, a flipped digit) is hashed and checked afresh. Memory stays flat: only
    nodes in the first :attr:`depth` places of a proof are kept (at most 1 + 16 + 256 + 4,096
    nodes of a storage trie; deeper ones belong to one key or a few), and the whole cache is
    dropped when it holds :attr:`limit` nodes.
    """

    __slots__ = ("_nodes", "_tops", "hashed", "depth", "limit")

    def __init__(self, depth: int = 4, limit: int = 1 << 17) -> None:
        self._nodes: dict[bytes, Node] = {}
        self._tops: dict[bytes, list[Top | None]] = {}
        self.hashed = 0  # nodes hashed so far
        self.depth = depth
        self.limit = limit

    def load(self, ref: bytes, text: object, index: int) -> Node:
        """The node listed as ``text`` at place ``index`` of a proof, whose parent references
        it by the hash ``ref``: hashed, checked against ``ref``, decoded, kept if it is an
        upper one. InvalidProof if it is not 0x-hex (an even number of ASCII hex digits, no
        spaces), hashes to anything else, or is not the canonical RLP of a list (it is decoded
        only once its hash has linked). One frame for the usual node: it is met once a key."""
        if not isinstance(text, str) or len(text) & 1 or not 2 < len(text) <= _MAX_NODE_TEXT \
                or text[:2] != "0x":
            raise _text_error(text)
        try:
            raw = unhexlify(text[2:])
        except ValueError:  # binascii.Error, or a character beyond ASCII
            raise _text_error(text) from None
        self.hashed += 1
        if _hash(raw).digest() != ref:
            raise _unlinked(index)
        node = _node(text, raw)
        if index < self.depth:
            nodes = self._nodes
            if len(nodes) >= self.limit:
                nodes.clear()
            nodes[ref] = node
        return node

    def tops(self, root: bytes) -> list[Top | None]:
        """The walks of the first two listed nodes under ``root`` already made, by the key's
        first byte (:data:`Top`; see :func:`verify_many`). Kept for at most 256 roots."""
        tops = self._tops.get(root)
        if tops is None:
            if len(self._tops) >= 256:
                self._tops.clear()
            tops = self._tops[root] = [None] * 256
        return tops

    def clear(self) -> None:
        self._nodes.clear()
        self._tops.clear()

    def __len__(self) -> int:
        return len(self._nodes)


_hash = keccak256_state  # ``_hash(raw).digest()`` is keccak256(raw), one frame less


def _text_error(text: object) -> InvalidProof:
    """Why ``text`` is not a proof node's 0x-hex text."""
    if not isinstance(text, str) or not text.startswith("0x") or len(text) % 2:
        return InvalidProof(f"proof node is not 0x-hex: {str(text)[:40]!r}")
    if not 2 < len(text) <= _MAX_NODE_TEXT:
        return InvalidProof("proof node is empty or oversized")
    return InvalidProof(f"proof node is not hex: {text[:40]!r}")


# The usual branch node: 16 children, each a 32-byte hash (0xa0 + 32 bytes) or empty (0x80),
# and an empty value; matched whole by the regex engine in one call, its groups the children
# (group n + 1 is child n: the match is kept as the node's children).
_BRANCH = re.compile(rb"(?:\x80|\xa0(.{32}))" * 16 + rb"\x80", re.DOTALL)


def _node(text: str, raw: bytes) -> Node:
    """``raw`` decoded strictly (canonical RLP of a list). A branch of the usual form under a
    canonical list header (a two-byte length without a leading zero, a one-byte length of at
    least 56) is read by :data:`_BRANCH`, exactly as :func:`rlpcodec.decode` would read it;
    anything else goes through the decoder."""
    size = len(raw)
    if size > 2 and raw[0] == 0xF9 and raw[1]:
        match = _BRANCH.fullmatch(raw, 3) if ((raw[1] << 8) | raw[2]) + 3 == size else None
    elif size > 2 and raw[0] == 0xF8 and raw[1] >= 56:
        match = _BRANCH.fullmatch(raw, 2) if raw[1] + 2 == size else None
    else:
        match = None
    if match is not None:
        return text, match, None
    try:
        items = rlpcodec.decode(raw)
    except rlpcodec.RlpError as exc:
        raise InvalidProof(f"proof node is not canonical RLP ({exc}): 0x{raw[:20].hex()}..."
                           ) from None
    if not isinstance(items, list):
        raise InvalidProof("proof node is an RLP string, not a node")
    return _as_node(text, items)


def _as_node(text: str, items: list[Item]) -> Node:
    """A decoded (listed or embedded) node: its children if it is a branch."""
    if len(items) == 17:
        return text, (None, *map(_branch_child, items[:16])), None
    if len(items) == 2:
        return text, None, items
    raise InvalidProof(f"node with {len(items)} items is neither branch nor leaf")


def _branch_child(child: Item) -> Ref:
    if isinstance(child, bytes) and len(child) == 32:
        return child
    return None if child == b"" else _Deferred(child)


_HEX_INDEX = {c: i + 1 for i, c in enumerate("0123456789abcdef")}  # a nibble's place: Children


def _path_hex(encoded: object) -> tuple[str, bool]:
    """Hex-prefix decoding (Yellow Paper App. C) to hex text, one character a nibble:
    ``(nibbles, is_leaf)``; the form :func:`verify` compares with the key's hex text."""
    if not isinstance(encoded, bytes) or not encoded:
        raise InvalidProof("node path is empty or not a string")
    text = encoded.hex()
    flag = text[0]
    if flag == "0" or flag == "2":
        if text[1] != "0":
            raise InvalidProof("node path has a non-zero padding nibble")
        return text[2:], flag == "2"
    if flag == "1" or flag == "3":
        return text[1:], flag == "3"
    raise InvalidProof("node path has an invalid hex-prefix flag")


def verify(root: bytes, key: bytes, proof: object, cache: NodeCache | None = None,
           claim: bytes | None = None) -> bytes | None:
    """The value stored at ``key`` (already hashed: keccak256(address) or keccak256(slot))
    in the trie with root ``root``, proven by ``proof``; ``None`` if proven absent.

    Raises :class:`InvalidProof` unless ``proof`` is exactly the path of nodes EIP-1186
    prescribes. The walk follows the key's hex text (one character a nibble: slices compare
    as fast as bytes); branch nodes and listed nodes are handled inline, as they are every
    step of every walk.

    ``claim`` (optional) is the leaf value the caller was told to expect. When the last listed
    node is, character for character, the canonical leaf holding ``claim`` at the rest of the
    key, only its hash is checked: decoding it would give back exactly that path and value.
    Any other node is decoded and walked as usual, and the value returned is what the proof
    shows, whatever was claimed.
    """
    if not isinstance(proof, list) or root == EMPTY_TRIE_ROOT:
        _check_unwalked(proof)
        return None
    cache = cache if cache is not None else NodeCache(depth=0)  # no cache given: keep nothing
    nibbles = key.hex()
    depth = len(nibbles)
    pos = 0
    used = 0
    count = len(proof)
    known = cache._nodes.get  # the hot path: one look-up by a 32-byte hash, one text compare
    ref: Ref = root
    value: bytes | None = None
    while ref is not None:  # None: the walk has ended (at the key's leaf, or excluded)
        if isinstance(ref, bytes):  # a hash reference: the next node of the list
            if used >= count:
                raise InvalidProof(f"proof ends after {used} nodes, before the key's path does")
            text = proof[used]
            node = known(ref)
            if node is None or node[0] != text:
                if claim is not None and used == count - 1 and _is_claimed_leaf(
                        cache, ref, text, nibbles[pos:], claim, used):
                    return claim
                node = cache.load(ref, text, used)
            used += 1
        else:  # an embedded node (RLP shorter than 32 bytes), or a child not yet judged
            node = _embedded(ref)
        children = node[1]
        if children is not None:  # a branch: one nibble down
            if pos >= depth:
                raise InvalidProof("branch node below the full key length")
            ref = children[_HEX_INDEX[nibbles[pos]]]
            pos += 1
        else:
            ref, pos, value = _short_node(node[2], nibbles, pos)  # type: ignore[arg-type]
    if used != count:
        raise InvalidProof(f"proof has {count - used} node(s) beyond the key's path")
    return value


def verify_many(root: bytes, keys: list[bytes], proofs: list[object], claims: list[str | None],
                cache: NodeCache | None = None) -> dict[int, bytes | None]:
    """Every ``proofs[i]`` of one answer walked for ``keys[i]`` (32 bytes, already hashed)
    under ``root`` in one loop, its look-ups held in locals. ``claims[i]`` is the leaf value
    the caller was told to expect, as the hex text the leaf lists it in (the RLP string
    holding it: ``prover._claimed_items``), or None.

    The loop takes only the usual shape: listed branch nodes, each taken from the cache only
    when its text is the kept text and else loaded (hashed, checked, strictly decoded) as
    :func:`verify` loads it, down to a last node whose text is exactly the canonical leaf
    holding ``claims[i]`` at the rest of the key (:func:`_leaf_text`) and which hashes to the
    reference (InvalidProof if it does not). Such an entry is proven to hold its claim and is
    not in the result. Any other entry (no claim, an extension, an embedded or empty child, a
    last node of any other text) is handed whole to :func:`verify` with its claim, whose
    value (or InvalidProof) it gets: an entry whose proven value is the claim is not in the
    result either; the result maps every other entry's place to its proven value."""
    cache = cache if cache is not None else NodeCache()  # this answer's nodes alone
    walked: dict[int, bytes | None] = {}
    known = cache._nodes.get
    load = cache.load
    index = _HEX_INDEX
    path_head = _LEAF_PATH_HEAD
    path_size = _LEAF_PATH_SIZE
    leaf_start = _LEAF_START
    hash_ = _hash
    leaves = 0  # claimed leaves hashed
    walkable = root != EMPTY_TRIE_ROOT and all(len(key) == 32 for key in keys)
    tops = cache.tops(root)
    for i, (key, proof, claim) in enumerate(zip(keys, proofs, claims, strict=True)):
        if claim is not None and walkable and isinstance(proof, list) and 0 < len(proof) <= 65:
            nibbles = key.hex()
            last = len(proof) - 1  # a list: checked
            ref: Ref = root
            start = 0
            if last > 1:  # the first two levels as the last key of this first byte walked them
                top = tops[key[0]]
                if top is None or proof[0] != top[0] or proof[1] != top[1]:
                    top = _top(cache, tops, root, key[0], nibbles, proof)
                ref, start = top[2], top[3]
            for pos in range(start, last):  # a branch per listed node: its place is its nibble
                text = proof[pos]
                node = known(ref)  # type: ignore[arg-type]  # bytes: checked below
                if node is None or node[0] != text:
                    node = load(ref, text, pos)  # type: ignore[arg-type]
                children = node[1]
                if children is None:
                    break
                ref = children[index[nibbles[pos]]]
                if not isinstance(ref, bytes):
                    break
            else:
                text = proof[last]
                rest = 64 - last  # the leaf's path: the key's last ``rest`` nibbles
                if text == (f"{leaf_start[path_size[rest] + (len(claim) >> 1)]}"
                            f"{path_head[rest]}{nibbles[last:]}{claim}"):
                    leaves += 1
                    if hash_(unhexlify(text[2:])).digest() != ref:
                        cache.hashed += leaves
                        raise _unlinked(last)
                    continue
        expected = None if claim is None else _item_value(claim)
        value = verify(root, key, proof, cache, expected)
        if value is None or value != expected:
            walked[i] = value
    cache.hashed += leaves
    return walked


def _top(cache: NodeCache, tops: list[Top | None], root: bytes, first: int, nibbles: str,
         proof: list[object]) -> Top:
    """The first two listed nodes of ``proof`` walked for the key ``nibbles`` (whose first byte
    is ``first``) under ``root`` as :func:`verify_many` walks every level: each taken from the
    cache only when its text is the kept text, else loaded (hashed, checked, decoded). When
    both are branches holding hash references on the key's path, the walk is kept in ``tops``
    for the next key of that first byte, and returned; else ``(_, _, root, 0)``: the caller
    walks from the root. A kept walk is a proven fact: the node under a hash is unique, so a
    later proof listing the same two texts under the same root walks the same way for the
    same byte."""
    ref: Ref = root
    for pos in (0, 1):
        text = proof[pos]
        node = cache._nodes.get(ref)  # type: ignore[arg-type]  # bytes: checked below
        if node is None or node[0] != text:
            node = cache.load(ref, text, pos)  # type: ignore[arg-type]
        children = node[1]
        if children is None:
            return None, None, root, 0
        ref = children[_HEX_INDEX[nibbles[pos]]]
        if not isinstance(ref, bytes):
            return None, None, root, 0
    top = tops[first] = (proof[0], proof[1], ref, 2)
    return top


def _item_value(item: str) -> bytes:
    """The value a leaf's item holds (the RLP string's payload), from the item's hex text."""
    raw = bytes.fromhex(item)
    return raw if len(raw) == 1 else raw[1:]


# RLP headers as hex text: a string of 0..55 bytes, a list whose payload is 0..255 bytes.
STRING_HEADER_HEX = tuple(f"{0x80 + n:02x}" for n in range(56))
_LIST_HEADER = tuple(f"{0xC0 + n:02x}" if n < 56 else f"f8{n:02x}" for n in range(256))
_LEAF_START = tuple("0x" + header for header in _LIST_HEADER)  # a listed leaf's text begins so


def _leaf_path_head(rest: int) -> str:
    """A leaf's hex-prefix path for ``rest`` nibbles (Yellow Paper App. C) as RLP, as text, up
    to the nibbles themselves: the string header (none for one byte, below 0x80) and flag."""
    flag = "3" if rest & 1 else "20"
    return (STRING_HEADER_HEX[(rest >> 1) + 1] if rest > 1 else "") + flag


_LEAF_PATH_HEAD = tuple(_leaf_path_head(rest) for rest in range(65))
# The bytes that path takes in the leaf's RLP, header included.
_LEAF_PATH_SIZE = tuple((len(_LEAF_PATH_HEAD[rest]) + rest) >> 1 for rest in range(65))


def _leaf_text(rest: str, item: str) -> str:
    """The canonical leaf ``[hex-prefix(rest, leaf), value]`` (Yellow Paper App. C, D) as the
    0x-hex text a proof lists it in, built as text from ``rest`` (the key's remaining nibbles,
    at most 64 hex digits) and ``item`` (the hex text of the value's RLP string)."""
    size = len(rest)
    head = _LEAF_START[_LEAF_PATH_SIZE[size] + (len(item) >> 1)] + _LEAF_PATH_HEAD[size]
    return head + rest + item


def _embedded(ref: Ref) -> Node:
    """The node a walk meets inline: an embedded node (from an extension), or a branch child
    that is neither a hash nor empty (an embedded node, or invalid)."""
    child = ref.child if isinstance(ref, _Deferred) else ref
    return _as_node("", _child_ref(child))  # type: ignore[arg-type]  # a list: _child_ref


def _is_claimed_leaf(cache: NodeCache, ref: bytes, text: object, rest: str, claim: bytes,
                     used: int) -> bool:
    """Whether ``text`` is the canonical leaf ``[hex-prefix(rest, leaf), claim]`` (Yellow Paper
    App. C, D) and hashes to ``ref``: then it is proven, and decoding it would give ``claim``
    back. False when the text is anything else (the caller decodes it); InvalidProof when it
    is that leaf but its hash is not ``ref`` (as decoding would find)."""
    size = len(claim)
    if not 0 < size < 56 or len(rest) > 64:
        return False
    item = claim.hex()
    if size > 1 or claim[0] >= 0x80:  # the leaf holds ``claim`` as an RLP string
        item = STRING_HEADER_HEX[size] + item
    if text != _leaf_text(rest, item):
        return False
    leaf = unhexlify(text[2:])  # a str: it is the leaf's text
    cache.hashed += 1
    if _hash(leaf).digest() != ref:
        raise _unlinked(used)
    return True


def _check_unwalked(proof: object) -> None:
    """A proof that is not a list, or one for the empty trie: nothing to walk. The empty trie
    accepts no node, or the empty node itself."""
    if not isinstance(proof, list):
        raise InvalidProof("proof is not a list of nodes")
    if proof and not (len(proof) == 1 and proof[0] == "0x80"):
        raise InvalidProof("proof for an empty trie must be empty")


def _unlinked(used: int) -> InvalidProof:
    return InvalidProof(
        f"proof node {used} does not hash to the reference its parent holds"
        if used
        else "the first proof node does not hash to the root"
    )


def _short_node(items: list[Item], nibbles: str, pos: int) -> tuple[Ref, int, bytes | None]:
    """A leaf or extension node met at nibble ``pos``: ``(child, position below, None)`` for
    an extension on the key's path, ``(None, _, value)`` where the walk ends: at the key's
    leaf (its value), or at a node whose path diverges from the key or a leaf for a shorter
    key (``None``: exclusion)."""
    path, is_leaf = _path_hex(items[0])
    end = pos + len(path)
    if nibbles[pos:end] != path:
        return None, end, None  # exclusion: the node's path diverges from the key
    if is_leaf:
        if end != len(nibbles):
            return None, end, None  # a leaf for a shorter key: not ours (exclusion)
        value = items[1]
        if not isinstance(value, bytes) or not value:
            raise InvalidProof("leaf value is empty or a list")
        return None, end, value
    if not path:
        raise InvalidProof("extension node with an empty path")
    return _child_ref(items[1]), end, None


def _child_ref(child: object) -> bytes | list[Item]:
    if isinstance(child, list):
        if len(rlpcodec.encode(child)) >= 32:
            raise InvalidProof("an embedded node is 32 bytes or longer")
        return child
    if isinstance(child, bytes) and len(child) == 32:
        return child
    raise InvalidProof("a child reference is neither a 32-byte hash nor an embedded node")
