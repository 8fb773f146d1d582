"""The proof walk (recompute.core.mpt.verify: node cache by hash, branch nodes read by one
regex, claimed leaves checked by their hash) against py-trie's HexaryTrie.get_from_proof, an
independent implementation, on random tries: the same value on every honest proof, and no
tampered proof accepted that py-trie refuses or with another value, whatever is claimed."""

from __future__ import annotations

import rlp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trie import HexaryTrie

from recompute.core import mpt, rlpcodec
from recompute.core.keccak import keccak256
from recompute.core.mpt import InvalidProof, NodeCache, verify
from tests.core.test_adversarial import _tamper

CHECKS = settings(max_examples=300, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Storage tries (32-byte hashed keys) and tries of short keys, whose small leaves and
# branches are embedded in their parents (RLP under 32 bytes).
storage = st.dictionaries(st.integers(0, 2**256 - 1).map(
    lambda s: keccak256(s.to_bytes(32, "big"))), st.integers(1, 2**256 - 1), min_size=1,
    max_size=60)
short = st.integers(1, 3).flatmap(lambda n: st.dictionaries(
    st.binary(min_size=n, max_size=n), st.integers(1, 300), min_size=1, max_size=40))


def build(values: dict[bytes, int]) -> HexaryTrie:
    trie = HexaryTrie({})
    for key, value in values.items():
        trie[key] = rlp.encode(value)
    return trie


def listed(trie: HexaryTrie, key: bytes) -> list[str]:
    """EIP-1186 form: the nodes on the path that are referenced by hash, root first."""
    nodes = [rlp.encode(node) for node in trie.get_proof(key)]
    return ["0x" + n.hex() for i, n in enumerate(nodes) if i == 0 or len(n) >= 32]


def theirs(root: bytes, key: bytes, proof: list[str]):
    """py-trie's answer: the value (None if absent), or "refused"."""
    try:
        nodes = [rlp.decode(bytes.fromhex(text[2:])) for text in proof]
        raw = HexaryTrie.get_from_proof(root, key, nodes)
    except Exception:  # noqa: BLE001 - any refusal by py-trie counts as a refusal
        return "refused"
    return raw or None


def ours(root: bytes, key: bytes, proof: list[str], claim: bytes | None, cache: NodeCache):
    try:
        return verify(root, key, proof, cache, claim)
    except InvalidProof:
        return "refused"


def key_to_ask(values, data) -> bytes:
    keys = sorted(values)
    width = len(keys[0])
    return data.draw(st.sampled_from(keys) | st.binary(min_size=width, max_size=width))


@CHECKS
@given(values=storage | short, data=st.data())
def test_honest_proofs_agree_with_py_trie(values, data):
    trie = build(values)
    key = key_to_ask(values, data)
    proof = listed(trie, key)
    expected = rlp.encode(values[key]) if key in values else None
    assert theirs(trie.root_hash, key, proof) == expected
    cache = NodeCache()
    for claim in (None, expected, rlp.encode(data.draw(st.integers(1, 2**256 - 1)))):
        assert ours(trie.root_hash, key, proof, claim, cache) == expected  # cold, then warm


@CHECKS
@given(values=storage | short, data=st.data())
def test_tampered_proofs_are_never_accepted_beyond_py_trie(values, data):
    trie = build(values)
    key = key_to_ask(values, data)
    honest = listed(trie, key)
    cache = NodeCache()
    ours(trie.root_hash, key, honest, None, cache)  # the honest nodes are in the cache
    tampered = _tamper(honest, data)
    claim = data.draw(st.none() | st.integers(1, 2**256 - 1).map(rlp.encode) | st.just(
        rlp.encode(values.get(key, 1))))
    mine = ours(trie.root_hash, key, tampered, claim, cache)
    if mine != "refused":
        assert theirs(trie.root_hash, key, tampered) == mine


# ---- the branch fast path reads exactly what the strict decoder reads -------------------

def _shape(node):
    text, children, items = node  # child n at place n + 1 (mpt.Children)
    return (text, None if children is None else tuple(
        ("deferred", c.child) if isinstance(c, mpt._Deferred) else c
        for c in (children[n] for n in range(1, 17))), items)


def _both(raw: bytes):
    def run(read):
        try:
            return _shape(read())
        except InvalidProof:
            return "refused"
    fast = run(lambda: mpt._node("t", raw))

    def slow():
        try:
            items = rlpcodec.decode(raw)
        except rlpcodec.RlpError:
            raise InvalidProof("not canonical") from None
        if not isinstance(items, list):
            raise InvalidProof("a string")
        return mpt._as_node("t", items)
    return fast, run(slow)


child = st.just(b"") | st.binary(min_size=32, max_size=32) | st.binary(max_size=40)
branches = st.tuples(st.lists(child, min_size=16, max_size=16), st.just(b"") | st.binary(
    max_size=4)).map(lambda t: rlp.encode(t[0] + [t[1]]))


@settings(max_examples=500, deadline=None)
@given(raw=branches, data=st.data())
def test_branch_nodes_read_as_the_strict_decoder_reads_them(raw, data):
    fast, slow = _both(raw)
    assert fast == slow
    mutated = bytearray(raw)
    where = data.draw(st.integers(0, len(raw) - 1))
    mutated[where] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, 2))
    fast, slow = _both(bytes(mutated[: len(mutated) - cut]))
    assert fast == slow


_BODY = b"\xa0" + bytes(range(32)) + b"\x80" * 16  # one hash child, 15 empties, empty value
_BIG = (b"\xa0" + bytes(range(32))) * 16 + b"\x80"


def _long(body: bytes) -> bytes:
    return b"\xf8" + bytes([len(body)]) + body


def test_non_canonical_branch_headers_are_refused():
    assert _both(b"\xf1" + _BODY)[0] != "refused"  # canonical: a short list header
    assert _both(b"\xf9" + len(_BIG).to_bytes(2, "big") + _BIG)[0] != "refused"
    for raw in (_long(_BODY),  # a long-form length for a 49-byte payload
                b"\xfa\x00" + len(_BIG).to_bytes(2, "big") + _BIG,  # a length with a zero byte
                b"\xf9\x00" + bytes([len(_BODY)]) + _BODY,
                b"\xf9" + len(_BIG).to_bytes(2, "big") + _BIG + b"\x80",  # trailing byte
                b"\xf9" + (len(_BIG) + 1).to_bytes(2, "big") + _BIG):  # runs past the input
        assert _both(raw) == ("refused", "refused"), raw[:4].hex()


@CHECKS
@given(values=storage, data=st.data())
def test_a_forged_leaf_holding_the_claim_is_refused(values, data):
    """The liar replaces the key's leaf by the canonical leaf of the value it claims: the leaf
    the fast path would build; only its hash (not the parent's reference) gives it away."""
    trie = build(values)
    key = data.draw(st.sampled_from(sorted(values)))
    proof = listed(trie, key)
    path, _ = rlp.decode(bytes.fromhex(proof[-1][2:]))
    lie = data.draw(st.integers(1, 2**256 - 1).filter(lambda v: v != values[key]))
    claim = rlp.encode(lie)
    forged = proof[:-1] + ["0x" + rlp.encode([path, claim]).hex()]
    assert theirs(trie.root_hash, key, forged) == "refused"
    for cache in (NodeCache(), NodeCache(depth=0)):
        assert ours(trie.root_hash, key, forged, claim, cache) == "refused"
        assert ours(trie.root_hash, key, forged, None, cache) == "refused"
