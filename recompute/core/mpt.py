"""Merkle-Patricia proof verification (Yellow Paper App. D; EIP-1186 proof lists).

A proof is the list of trie nodes on the path from the root to the key, root first, as
``eth_getProof`` returns them. :func:`verify` walks the key's nibbles through those nodes,
checking that every node hashes to the reference its parent holds, and returns the leaf
value (inclusion) or ``None`` (exclusion: the path ends in an empty branch slot or in a
leaf/extension whose path diverges from the key). Nodes whose RLP is shorter than 32
bytes are embedded in their parent and are not in the list. A list with anything else
(missing, extra, reordered or foreign nodes) is an invalid proof.

:class:`NodeCache` decodes and hashes each distinct node once, however many keys of one
``eth_getProof`` answer share it: the upper levels of a storage trie are in every proof.
"""

from __future__ import annotations

import rlp

from recompute.core.errors import Unverifiable
from recompute.core.keccak import EMPTY_TRIE_ROOT, keccak256

_MAX_NODE_BYTES = 1 << 16  # far above any real node (a full branch is 532 bytes)


class InvalidProof(Unverifiable):
    def __init__(self, detail: str):
        super().__init__("invalid-proof", detail)


class NodeCache:
    """Proof nodes by their hex text: ``(keccak256(node), decoded items)``, computed once."""

    __slots__ = ("_nodes", "hashed")

    def __init__(self) -> None:
        self._nodes: dict[str, tuple[bytes, list]] = {}
        self.hashed = 0  # distinct nodes hashed and decoded so far

    def get(self, text: str) -> tuple[bytes, list]:
        if not isinstance(text, str):  # a list or object is unhashable: refuse it first
            raise InvalidProof(f"proof node is not a 0x-hex string: {str(text)[:40]!r}")
        entry = self._nodes.get(text)
        if entry is None:
            entry = self._nodes[text] = _load_node(text)
            self.hashed += 1
        return entry


def _load_node(text: object) -> tuple[bytes, list]:
    if not isinstance(text, str) or not text.startswith("0x") or len(text) % 2:
        raise InvalidProof(f"proof node is not 0x-hex: {str(text)[:40]!r}")
    try:
        raw = bytes.fromhex(text[2:])
    except ValueError:
        raise InvalidProof(f"proof node is not hex: {text[:40]!r}") from None
    if not raw or len(raw) > _MAX_NODE_BYTES:
        raise InvalidProof("proof node is empty or oversized")
    try:
        items = rlp.decode(raw, strict=True)
    except rlp.exceptions.DecodingError:
        raise InvalidProof(f"proof node is not canonical RLP: {text[:40]}...") from None
    if not isinstance(items, list):
        raise InvalidProof("proof node is an RLP string, not a node")
    return keccak256(raw), items


def key_nibbles(key: bytes) -> bytes:
    """The 2·len(key) nibbles of a key, one per byte (values 0..15)."""
    return bytes.fromhex(key.hex().translate(_NIBBLE_TABLE))


# hex digit -> a byte whose hex is that digit preceded by 0, via a translation of the
# hex string: "a3" -> "0a03" -> b"\x0a\x03".
_NIBBLE_TABLE = {ord(c): "0" + c for c in "0123456789abcdef"}


def _decode_path(encoded: object) -> tuple[bytes, bool]:
    """Hex-prefix decoding (Yellow Paper App. C): ``(nibbles, is_leaf)``."""
    if not isinstance(encoded, bytes) or not encoded:
        raise InvalidProof("node path is empty or not a string")
    flag = encoded[0] >> 4
    if flag > 3:
        raise InvalidProof("node path has an invalid hex-prefix flag")
    nibbles = key_nibbles(encoded[1:])
    if flag & 1:
        nibbles = bytes([encoded[0] & 0x0F]) + nibbles
    elif encoded[0] & 0x0F:
        raise InvalidProof("node path has a non-zero padding nibble")
    return nibbles, bool(flag & 2)


def verify(root: bytes, key: bytes, proof: object, cache: NodeCache | None = None) -> bytes | None:
    """The value stored at ``key`` (already hashed: keccak256(address) or keccak256(slot))
    in the trie with root ``root``, proven by ``proof``; ``None`` if proven absent.

    Raises :class:`InvalidProof` unless ``proof`` is exactly the path of nodes EIP-1186
    prescribes.
    """
    if not isinstance(proof, list):
        raise InvalidProof("proof is not a list of nodes")
    if root == EMPTY_TRIE_ROOT:
        # The empty trie: nothing to walk. Accept no node, or the empty node itself.
        if proof and not (len(proof) == 1 and proof[0] == "0x80"):
            raise InvalidProof("proof for an empty trie must be empty")
        return None
    cache = cache if cache is not None else NodeCache()
    nibbles = key_nibbles(key)
    depth = len(nibbles)
    pos = 0
    used = 0
    ref: bytes | list = root
    value: bytes | None = None
    while True:
        if isinstance(ref, bytes):  # a hash reference: the next node of the list
            if used >= len(proof):
                raise InvalidProof(f"proof ends after {used} nodes, before the key's path does")
            node_hash, items = cache.get(proof[used])
            if node_hash != ref:
                raise InvalidProof(
                    f"proof node {used} does not hash to the reference its parent holds"
                    if used
                    else "the first proof node does not hash to the root"
                )
            used += 1
        else:  # embedded node (RLP shorter than 32 bytes)
            items = ref
        if len(items) == 17:
            if pos >= depth:
                raise InvalidProof("branch node below the full key length")
            child = items[nibbles[pos]]
            pos += 1
            if child == b"":
                break  # exclusion: empty slot on the key's path
            ref = _child_ref(child)
        elif len(items) == 2:
            path, is_leaf = _decode_path(items[0])
            end = pos + len(path)
            if nibbles[pos:end] != path:
                break  # exclusion: the node's path diverges from the key
            if is_leaf:
                if end != depth:
                    break  # a leaf for a shorter key: not ours (exclusion)
                if not isinstance(items[1], bytes) or not items[1]:
                    raise InvalidProof("leaf value is empty or a list")
                value = items[1]
                break
            if not path:
                raise InvalidProof("extension node with an empty path")
            pos = end
            ref = _child_ref(items[1])
        else:
            raise InvalidProof(f"node with {len(items)} items is neither branch nor leaf")
    if used != len(proof):
        raise InvalidProof(f"proof has {len(proof) - used} node(s) beyond the key's path")
    return value


def _child_ref(child: object) -> bytes | list:
    if isinstance(child, list):
        if len(rlp.encode(child)) >= 32:
            raise InvalidProof("an embedded node is 32 bytes or longer")
        return child
    if isinstance(child, bytes) and len(child) == 32:
        return child
    raise InvalidProof("a child reference is neither a 32-byte hash nor an embedded node")
