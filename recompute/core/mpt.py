"""Merkle-Patricia proof verification (Yellow Paper App. D; EIP-1186 proof lists).

A proof is the list of trie nodes on the path from the root to the key, root first, as
``eth_getProof`` returns them. :func:`verify` walks the key's nibbles through those nodes,
checking that every node hashes to the reference its parent holds, and returns the leaf
value (inclusion) or ``None`` (exclusion: the path ends in an empty branch slot or in a
leaf/extension whose path diverges from the key). Nodes whose RLP is shorter than 32
bytes are embedded in their parent and are not in the list. A list with anything else
(missing, extra, reordered or foreign nodes) is an invalid proof.

:class:`NodeCache` decodes and hashes each distinct node once, however many keys of one
``eth_getProof`` answer, chunk or block share it: the upper levels of a storage trie are in
every proof.
"""

from __future__ import annotations

from recompute.core import rlpcodec
from recompute.core.errors import Unverifiable
from recompute.core.keccak import EMPTY_TRIE_ROOT, keccak256
from recompute.core.rlpcodec import Item

_MAX_NODE_BYTES = 1 << 16  # far above any real node (a full branch is 532 bytes)


class InvalidProof(Unverifiable):
    def __init__(self, detail: str):
        super().__init__("invalid-proof", detail)


class NodeCache:
    """Proof nodes by their hex text: ``(keccak256(node), decoded items)``, computed once.

    The value is a pure function of the key (the node's own bytes), so one cache can serve
    every answer of every block: a node whose bytes repeat (the upper levels of a storage
    trie, in every key's proof and in every chunk; unchanged subtrees from block to block) is
    hashed and decoded once. Memory stays flat: only nodes in the first :attr:`depth` places
    of a proof are kept (at most 1 + 16 + 256 + 4,096 nodes of a storage trie; deeper ones
    belong to one key or a few), and the whole cache is dropped when it holds :attr:`limit`
    nodes.
    """

    __slots__ = ("_nodes", "hashed", "depth", "limit")

    def __init__(self, depth: int = 4, limit: int = 1 << 17) -> None:
        self._nodes: dict[str, tuple[bytes, list[Item]]] = {}
        self.hashed = 0  # nodes hashed and decoded so far
        self.depth = depth
        self.limit = limit

    def get(self, text: str, index: int = 0) -> tuple[bytes, list[Item]]:
        if not isinstance(text, str):  # a list or object is unhashable: refuse it first
            raise InvalidProof(f"proof node is not a 0x-hex string: {str(text)[:40]!r}")
        entry = self._nodes.get(text)
        return entry if entry is not None else self.load(text, index)

    def load(self, text: str, index: int) -> tuple[bytes, list[Item]]:
        """Hash and decode a node not in the cache (keep it if it is an upper one)."""
        entry = _load_node(text)
        self.hashed += 1
        if index < self.depth:
            if len(self._nodes) >= self.limit:
                self._nodes.clear()
            self._nodes[text] = entry
        return entry

    def clear(self) -> None:
        self._nodes.clear()

    def __len__(self) -> int:
        return len(self._nodes)


# One cache for the process (see NodeCache): sound to share, since a node's hash and items
# depend on its bytes only; the proof walk still checks every hash link of every proof.
SHARED_NODES = NodeCache()


def _load_node(text: object) -> tuple[bytes, list[Item]]:
    if not isinstance(text, str) or not text.startswith("0x") or len(text) % 2:
        raise InvalidProof(f"proof node is not 0x-hex: {str(text)[:40]!r}")
    try:
        raw = bytes.fromhex(text[2:])
    except ValueError:
        raise InvalidProof(f"proof node is not hex: {text[:40]!r}") from None
    if not raw or len(raw) > _MAX_NODE_BYTES:
        raise InvalidProof("proof node is empty or oversized")
    try:
        items = rlpcodec.decode(raw)
    except rlpcodec.RlpError:
        raise InvalidProof(f"proof node is not canonical RLP: {text[:40]}...") from None
    if not isinstance(items, list):
        raise InvalidProof("proof node is an RLP string, not a node")
    return keccak256(raw), items


_HEX_INDEX = {c: i for i, c in enumerate("0123456789abcdef")}


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


def verify(root: bytes, key: bytes, proof: object, cache: NodeCache | None = None) -> bytes | None:
    """The value stored at ``key`` (already hashed: keccak256(address) or keccak256(slot))
    in the trie with root ``root``, proven by ``proof``; ``None`` if proven absent.

    Raises :class:`InvalidProof` unless ``proof`` is exactly the path of nodes EIP-1186
    prescribes. The walk follows the key's hex text (one character a nibble: slices compare
    as fast as bytes); branch nodes and listed nodes are handled inline, as they are every
    step of every walk.
    """
    if not isinstance(proof, list) or root == EMPTY_TRIE_ROOT:
        _check_unwalked(proof)
        return None
    cache = cache if cache is not None else SHARED_NODES
    nibbles = key.hex()
    depth = len(nibbles)
    pos = 0
    used = 0
    count = len(proof)
    cached = cache._nodes.get  # the hot path: one dict look-up a node
    ref: bytes | list[Item] | None = root
    value: bytes | None = None
    while ref is not None:  # None: the walk has ended (at the key's leaf, or excluded)
        if type(ref) is list:  # embedded node (RLP shorter than 32 bytes)
            items = ref
        else:  # a hash reference (bytes): the next node of the list
            text = proof[used] if used < count else None
            if type(text) is not str:
                raise _unlisted(proof, used)
            node_hash, items = cached(text) or cache.load(text, used)
            if node_hash != ref:
                raise _unlinked(used)
            used += 1
        size = len(items)
        if size == 17:
            if pos >= depth:
                raise InvalidProof("branch node below the full key length")
            child = items[_HEX_INDEX[nibbles[pos]]]
            pos += 1
            if child.__class__ is bytes and len(child) == 32:
                ref = child
            elif child == b"":
                ref = None  # exclusion: empty slot on the key's path
            else:
                ref = _child_ref(child)
        elif size == 2:
            ref, pos, value = _short_node(items, nibbles, pos)
        else:
            raise InvalidProof(f"node with {size} items is neither branch nor leaf")
    if used != len(proof):
        raise InvalidProof(f"proof has {len(proof) - used} node(s) beyond the key's path")
    return value


def _check_unwalked(proof: object) -> None:
    """A proof that is not a list, or one for the empty trie: nothing to walk. The empty trie
    accepts no node, or the empty node itself."""
    if not isinstance(proof, list):
        raise InvalidProof("proof is not a list of nodes")
    if proof and not (len(proof) == 1 and proof[0] == "0x80"):
        raise InvalidProof("proof for an empty trie must be empty")


def _unlisted(proof: list[object], used: int) -> InvalidProof:
    """Why the walk found no listed node where it needs one."""
    if used >= len(proof):
        return InvalidProof(f"proof ends after {used} nodes, before the key's path does")
    return InvalidProof(f"proof node is not 0x-hex: {str(proof[used])[:40]!r}")


def _unlinked(used: int) -> InvalidProof:
    return InvalidProof(
        f"proof node {used} does not hash to the reference its parent holds"
        if used
        else "the first proof node does not hash to the root"
    )


def _short_node(items: list[Item], nibbles: str,
                pos: int) -> tuple[bytes | list[Item] | None, int, bytes | None]:
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
