"""The per-answer walk (recompute.core.mpt.verify_many) and the claimed leaf built as text.

Expected values come from outside the code under test: pyrlp's encoder and a hand-written
hex-prefix encoding for the leaf text, py-trie's proofs for the tries, and verify() (the
general walk, itself checked against py-trie in test_mpt_pytrie.py) for the differential
test: verify_many must give the same value or the same refusal for every entry, honest or
tampered, whatever is claimed, with a cold or a warm node cache.
"""

from __future__ import annotations

import pytest
import rlp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trie import HexaryTrie

from recompute.core import mpt
from recompute.core.keccak import keccak256
from recompute.core.mpt import InvalidProof, NodeCache, verify, verify_many
from recompute.core.prover import _canonical_numbers, _claimed_items, _claims_of_canonical
from tests.core.test_adversarial import _tamper

CHECKS = settings(max_examples=300, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

values_ = st.integers(1, 2**256 - 1)
nibbles = st.text("0123456789abcdef", max_size=64)


def hex_prefix_leaf(rest: str) -> bytes:
    """Yellow Paper App. C, by hand: flag 2 (leaf, even) + a zero nibble, or 3 (leaf, odd)."""
    return bytes.fromhex(("3" + rest) if len(rest) % 2 else ("20" + rest))


def slot_rlp(value: int) -> bytes:
    return rlp.encode(value)  # pyrlp: the big-endian integer without leading zeros


@CHECKS
@given(rest=nibbles, value=values_)
def test_the_text_built_leaf_is_the_encoders_leaf(rest, value):
    [item] = _claimed_items([hex(value)])
    assert item == rlp.encode(slot_rlp(value)).hex()
    assert mpt._leaf_text(rest, item) == "0x" + rlp.encode(
        [hex_prefix_leaf(rest), slot_rlp(value)]).hex()


@pytest.mark.parametrize("text", [
    "0x0", "0x00", "0x01", "0x0a1", "0xAB", "0XAB", "ab", "0x", "", " 0x1", "0x1 ", "0x1_0",
    "0x1" + "0" * 64, 5, None, b"0x1", "0x-1", "+0x1",
])
def test_only_a_canonical_claim_is_expected_in_a_leaf(text):
    assert _claimed_items([text]) == [None]


NOT_CANONICAL = ["0x00", "0x01", "0x0a1", "0xAB", "0XAB", "ab", "0x", "", " 0x1", "0x1 ",
                 "0x1_0", "0x1" + "0" * 64, 5, None, b"0x1", "0x-1", "+0x1", "-0x1", "0x\u0661",
                 True, 1.0]


@pytest.mark.parametrize("text", NOT_CANONICAL)
def test_one_value_spelled_otherwise_sends_the_answer_to_the_slow_path(text):
    """The column-wise reading of an answer's values (prover._canonical_numbers) takes only
    answers whose every value is hex(value) below 2**256: one other spelling anywhere, and
    each value is judged alone (_claimed_items, the regex)."""
    assert _canonical_numbers(["0x5", text, "0x80"]) is None


@CHECKS
@given(st.lists(st.integers(0, 2**256 - 1), max_size=20))
def test_canonical_values_read_column_wise_are_the_leaf_items_the_encoder_makes(numbers):
    texts = [hex(n) for n in numbers]
    assert _canonical_numbers(texts) == (numbers, texts)
    expected = [None if n == 0 else rlp.encode(slot_rlp(n)).hex() for n in numbers]  # pyrlp
    assert _claims_of_canonical(texts, numbers) == expected == _claimed_items(texts)


def storage(values: dict[int, int]) -> HexaryTrie:
    trie = HexaryTrie({})
    for key, value in values.items():
        trie[keccak256(key.to_bytes(32, "big"))] = slot_rlp(value)
    return trie


def listed(trie: HexaryTrie, key: bytes) -> list[str]:
    nodes = [rlp.encode(node) for node in trie.get_proof(key)]
    return ["0x" + n.hex() for i, n in enumerate(nodes) if i == 0 or len(n) >= 32]


def general(root, keys, proofs, claims, cache):
    """What verify() says of every entry in order: its value, or the refusal of the first."""
    out = []
    for key, proof, claim in zip(keys, proofs, claims, strict=True):
        expected = None if claim is None else mpt._item_value(claim)
        out.append(verify(root, key, proof, cache, expected))
    return out


def batched(root, keys, proofs, claims, cache):
    walked = verify_many(root, keys, proofs, claims, cache)
    return [walked[i] if i in walked else mpt._item_value(claims[i]) for i in range(len(keys))]


def outcome(run, *args):
    try:
        return run(*args)
    except InvalidProof:
        return "refused"


tries = st.dictionaries(st.integers(0, 2**256 - 1) | st.integers(0, 300), values_,
                        min_size=1, max_size=80)


@CHECKS
@given(values=tries, data=st.data())
def test_verify_many_is_verify_on_every_entry(values, data):
    trie = storage(values)
    asked = data.draw(st.lists(st.sampled_from(sorted(values)) | st.integers(0, 2**256 - 1),
                               min_size=1, max_size=12))
    keys = [keccak256(slot.to_bytes(32, "big")) for slot in asked]
    proofs = [listed(trie, key) for key in keys]
    claims = [data.draw(st.sampled_from([values.get(slot, 1), 1, 0x80, 2**256 - 1])
                        .map(lambda v: _claimed_items([hex(v)])[0]) | st.none())
              for slot in asked]
    warm = data.draw(st.booleans())
    if data.draw(st.booleans()):  # tamper with one entry (the others stay honest)
        i = data.draw(st.integers(0, len(proofs) - 1))
        proofs[i] = _tamper(proofs[i], data)
    ours_cache = NodeCache()
    theirs_cache = NodeCache()
    if warm:  # the honest upper nodes already kept (and, in ours, the walks of the first
        # two levels: verify_many's tops) by an honest batch of every slot of the trie
        every = [keccak256(slot.to_bytes(32, "big")) for slot in values]
        honest = [_claimed_items([hex(value)])[0] for value in values.values()]
        assert verify_many(trie.root_hash, every, [listed(trie, key) for key in every],
                           honest, ours_cache) == {}
        for key in every:
            verify(trie.root_hash, key, listed(trie, key), theirs_cache)
    expected = outcome(general, trie.root_hash, keys, proofs, claims, theirs_cache)
    assert outcome(batched, trie.root_hash, keys, proofs, claims, ours_cache) == expected


def _proven_once(values, data):
    """A trie of ``values``, one of its slots drawn, and its proof walked once by verify_many
    with the honest claim (proven as claimed, {}), leaving its nodes in the returned cache."""
    trie = storage(values)
    slot = data.draw(st.sampled_from(sorted(values)))
    key = keccak256(slot.to_bytes(32, "big"))
    proof = listed(trie, key)
    [claim] = _claimed_items([hex(values[slot])])
    cache = NodeCache()
    assert verify_many(trie.root_hash, [key], [proof], [claim], cache) == {}
    return trie, key, proof, claim, cache


def _one_digit_changed(text: str, data) -> str:
    """``text`` with one hex digit after the 0x replaced by another."""
    at = data.draw(st.integers(2, len(text) - 1))
    other = data.draw(st.sampled_from([c for c in "0123456789abcdef" if c != text[at]]))
    return text[:at] + other + text[at + 1:]


@CHECKS
@given(values=tries, data=st.data())
def test_a_one_character_change_to_a_claimed_leaf_is_refused(values, data):
    trie, key, proof, claim, cache = _proven_once(values, data)
    leaf = proof[-1]
    changed = proof[:-1] + [_one_digit_changed(leaf, data)]
    with pytest.raises(InvalidProof):
        verify_many(trie.root_hash, [key], [changed], [claim], cache)
    # the same bytes spelled in capitals are the same node: the claim is still what it holds
    upper = proof[:-1] + ["0x" + leaf[2:].upper()]
    walked = verify_many(trie.root_hash, [key], [upper], [claim], cache)
    assert walked == {} or walked == {0: mpt._item_value(claim)}


def test_a_leaf_that_is_the_claim_but_hashes_elsewhere_is_refused():
    """A one-slot trie is its leaf: the listed leaf is exactly the canonical leaf holding the
    claim, so only its hash (against another root) can refuse it."""
    key = keccak256((1).to_bytes(32, "big"))
    proof = listed(storage({1: 5}), key)
    assert len(proof) == 1
    [claim] = _claimed_items(["0x5"])
    assert verify_many(storage({1: 5}).root_hash, [key], [proof], [claim], NodeCache()) == {}
    with pytest.raises(InvalidProof, match="the first proof node does not hash to the root"):
        verify_many(storage({1: 6}).root_hash, [key], [proof], [claim], NodeCache())


@CHECKS
@given(values=st.dictionaries(st.integers(0, 2**256 - 1), values_, min_size=20, max_size=80),
       data=st.data())
def test_a_changed_upper_node_is_hashed_even_when_its_hash_is_kept(values, data):
    """The upper nodes are kept by hash after an honest walk; a proof listing other text
    under that hash (one digit changed, anywhere) is hashed afresh and refused."""
    trie, key, proof, claim, cache = _proven_once(values, data)
    i = data.draw(st.integers(0, len(proof) - 2))
    changed = list(proof)
    changed[i] = _one_digit_changed(proof[i], data)
    with pytest.raises(InvalidProof):
        verify_many(trie.root_hash, [key], [changed], [claim], cache)


# ---- the walks of the first two levels kept by root and first byte (NodeCache.tops) ------

@pytest.fixture(scope="module")
def deep():
    """1,500 slots: three levels of branches above most leaves, and every first byte met by
    several keys (the first two levels of their walks are kept after the first)."""
    values = {slot: slot * 7 + 1 for slot in range(1500)}
    trie = storage(values)
    keys = [keccak256(slot.to_bytes(32, "big")) for slot in values]
    proofs = [listed(trie, key) for key in keys]
    claims = [_claimed_items([hex(value)])[0] for value in values.values()]
    return trie, keys, proofs, claims


def test_every_slot_of_a_deep_trie_is_proven_as_claimed_with_the_top_walks_kept(deep):
    trie, keys, proofs, claims = deep
    assert min(map(len, proofs)) >= 3  # every proof walks the two kept levels
    cache = NodeCache()
    assert verify_many(trie.root_hash, keys, proofs, claims, cache) == {}
    kept = [first for first, top in enumerate(cache.tops(trie.root_hash)) if top is not None]
    assert kept == sorted({key[0] for key in keys})  # one walk kept per first byte met
    # and again, every first byte's walk now taken from what was kept
    assert verify_many(trie.root_hash, keys, proofs, claims, cache) == {}
    # a claim the leaf does not hold is read from the proof (py-trie's encoding of the value)
    wrong = list(claims)
    wrong[7] = _claimed_items(["0x5"])[0]
    assert verify_many(trie.root_hash, keys, proofs, wrong, cache) == {
        7: rlp.encode(7 * 7 + 1)}


def test_a_proof_listing_another_keys_upper_nodes_is_refused_after_the_kept_walk(deep):
    """The kept walk for a first byte is taken only for a proof listing the same two texts;
    a proof for key k that lists key j's second node (another first byte: another branch)
    is walked afresh, and refused as verify() refuses it."""
    trie, keys, proofs, claims = deep
    cache = NodeCache()
    assert verify_many(trie.root_hash, keys, proofs, claims, cache) == {}
    k = 0
    j = next(i for i, key in enumerate(keys) if key[0] >> 4 != keys[k][0] >> 4)
    forged = proofs[j][:2] + proofs[k][2:]
    assert forged[0] == proofs[k][0] and forged[1] != proofs[k][1]
    with pytest.raises(InvalidProof, match="does not hash"):
        verify(trie.root_hash, keys[k], forged, NodeCache(), mpt._item_value(claims[k]))
    with pytest.raises(InvalidProof, match="does not hash"):
        verify_many(trie.root_hash, [keys[k]], [forged], [claims[k]], cache)


def test_the_same_upper_nodes_spelled_in_capitals_are_walked_afresh_and_proven(deep):
    """Capitals are the same bytes (so the same node under the same hash): the first two
    levels are walked afresh (their text is not the kept one), hashed, and the slot proven;
    the lower-case proof is proven after it too."""
    trie, keys, proofs, claims = deep
    cache = NodeCache()
    assert verify_many(trie.root_hash, keys[:50], proofs[:50], claims[:50], cache) == {}
    upper = ["0x" + node[2:].upper() for node in proofs[3][:2]] + proofs[3][2:]
    hashed = cache.hashed
    assert verify_many(trie.root_hash, [keys[3]], [upper], [claims[3]], cache) == {}
    assert cache.hashed >= hashed + 2  # the two capitalised nodes were hashed
    assert verify_many(trie.root_hash, keys[:50], proofs[:50], claims[:50], cache) == {}
