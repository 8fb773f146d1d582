"""Tampered proofs and headers never verify (docs/design.md §Verdicts: a lying node causes
UNVERIFIABLE only).

Two corpora: the real go-ethereum proof of the fixtures, and storage tries built with py-trie
(an independent implementation) from hypothesis-drawn slots and values. Every tampering must
raise Unverifiable; an honest proof must give exactly py-trie's value.
"""

from __future__ import annotations

import copy
import json

import pytest
import rlp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trie import HexaryTrie

from recompute.core.anchor import anchor_block
from recompute.core.clock import Clock
from recompute.core.errors import Unverifiable
from recompute.core.keccak import keccak256
from recompute.core.mpt import InvalidProof, verify
from recompute.core.prover import prove_account_plainly, verify_account_proof
from recompute.sources.fixture_node import FixtureNode
from recompute.sources.live import LiveSource
from tests.core.fixturedata import CONTRACT, FIXTURES, exchanges

# the recorded chain (execution-apis fixtures) is judged as of its head block's time
# (block 54, timestamp 540): recorded data names its clock (docs/lightclient.md §Clock)
RECORDED = Clock(at=540)

FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def storage_trie(values: dict[int, int]) -> HexaryTrie:
    trie = HexaryTrie({})
    for slot, value in values.items():
        if value:
            trie[keccak256(slot.to_bytes(32, "big"))] = rlp.encode(value)
    return trie


def proof_of(trie: HexaryTrie, slot: int) -> list[str]:
    """EIP-1186 form: the hashed nodes on the path, root first, as 0x-hex."""
    nodes = [rlp.encode(node) for node in trie.get_proof(keccak256(slot.to_bytes(32, "big")))]
    return ["0x" + n.hex() for i, n in enumerate(nodes) if i == 0 or len(n) >= 32]


tries = st.dictionaries(
    st.integers(0, 2**256 - 1) | st.integers(0, 64),
    st.integers(1, 2**256 - 1),
    min_size=2,
    max_size=40,
)


@FAST
@given(values=tries, data=st.data())
def test_honest_proofs_give_py_tries_value(values, data):
    trie = storage_trie(values)
    slot = data.draw(st.sampled_from(sorted(values)) | st.integers(0, 2**256 - 1))
    raw = verify(trie.root_hash, keccak256(slot.to_bytes(32, "big")), proof_of(trie, slot))
    expected = values.get(slot, 0)
    assert (0 if raw is None else rlp.decode(raw, sedes=rlp.sedes.big_endian_int)) == expected


def _tamper(proof: list[str], data) -> list[str]:
    kind = data.draw(st.sampled_from(["flip", "drop", "swap", "dup", "append", "truncate"]))
    nodes = list(proof)
    i = data.draw(st.integers(0, len(nodes) - 1))
    if kind == "flip":
        raw = bytearray(bytes.fromhex(nodes[i][2:]))
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] ^= data.draw(st.integers(1, 255))
        nodes[i] = "0x" + raw.hex()
    elif kind == "drop":
        del nodes[i]
    elif kind == "swap" and len(set(nodes)) > 1:
        j = data.draw(st.sampled_from([j for j, n in enumerate(nodes) if n != nodes[i]]))
        nodes[i], nodes[j] = nodes[j], nodes[i]
    elif kind in ("dup", "swap"):
        nodes.insert(i, nodes[i])
    elif kind == "append":
        extra = data.draw(st.binary(min_size=1, max_size=64))
        nodes.append("0x" + rlp.encode([extra, b"x"]).hex())
    else:
        nodes = nodes[:i]
    return nodes


@FAST
@given(values=tries, data=st.data())
def test_tampered_storage_proofs_never_verify(values, data):
    trie = storage_trie(values)
    slot = data.draw(st.sampled_from(sorted(values)))
    proof = proof_of(trie, slot)
    tampered = _tamper(proof, data)
    if tampered == proof:
        return
    with pytest.raises(InvalidProof):
        verify(trie.root_hash, keccak256(slot.to_bytes(32, "big")), tampered)


@FAST
@given(values=tries, data=st.data())
def test_a_proof_for_another_present_key_never_verifies(values, data):
    trie = storage_trie(values)
    present = sorted(s for s, v in values.items() if v)
    mine, other = data.draw(st.permutations(present).map(lambda p: p[:2]))
    with pytest.raises(InvalidProof):
        verify(trie.root_hash, keccak256(mine.to_bytes(32, "big")), proof_of(trie, other))


# ---- the real geth answer: every tampering of the whole eth_getProof object -------------


@pytest.fixture(scope="module")
def real():
    """The recorded answer with a storage proof, and the block it roots in (anchored)."""
    with FixtureNode(FIXTURES) as node:
        block = anchor_block([LiveSource(node.url)], block="latest", clock=RECORDED)
    answer = next(
        r["result"] for n, _, r in exchanges("eth_getProof")
        if n == "get-account-proof-with-storage.io"
    )
    return block, answer


def _verify(block, answer):
    return verify_account_proof(block, bytes.fromhex(CONTRACT[2:]), [0], answer)


def test_the_untampered_answer_verifies(real):
    block, answer = real
    account = _verify(block, answer)
    assert account.storage[0] == 0x38 and account.balance == 0x76


def _mutations(answer: dict):
    """Named mutations of the answer's claims and proofs."""
    def change(path, value):
        def apply(a):
            target = a
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value(target[path[-1]]) if callable(value) else value
        return apply

    def flip_hex(text):
        digit = "1" if text[-1] != "1" else "2"
        return text[:-1] + digit

    yield "forged storageHash", change(["storageHash"], flip_hex)
    yield "changed balance", change(["balance"], "0x77")
    yield "changed nonce", change(["nonce"], "0x1")
    yield "changed codeHash", change(["codeHash"], flip_hex)
    yield "changed slot value", change(["storageProof", 0, "value"], "0x39")
    yield "another slot's key", change(["storageProof", 0, "key"], "0x1")
    yield "other address", change(["address"], "0x" + "11" * 20)
    yield "no storage proof", change(["storageProof"], [])
    yield "storage proof not a list", change(["storageProof"], "0x")
    yield "account proof dropped", change(["accountProof"], [])
    yield "non-hex node", change(["accountProof", 0], "0xzz")
    for i in range(len(answer["accountProof"])):
        yield f"account node {i} flipped", change(["accountProof", i], flip_hex)
    for i in range(len(answer["storageProof"][0]["proof"])):
        yield f"storage node {i} flipped", change(["storageProof", 0, "proof", i], flip_hex)


MUTATIONS = list(_mutations(next(
    r["result"] for n, _, r in exchanges("eth_getProof") if n == "get-account-proof-with-storage.io"
)))


@pytest.mark.parametrize("name,mutate", MUTATIONS, ids=[n for n, _ in MUTATIONS])
def test_every_mutation_of_the_real_answer_is_unverifiable(real, name, mutate):
    block, answer = real
    tampered = copy.deepcopy(answer)
    mutate(tampered)
    with pytest.raises(Unverifiable) as caught:
        _verify(block, tampered)
    assert caught.value.reason in {"invalid-proof", "rpc-inconsistent", "rpc-malformed"}


class _Answers:
    """A source that answers every eth_getProof with one given answer."""

    def __init__(self, answer: dict):
        self.answer = answer

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict:
        return self.answer


def test_the_reference_prover_reads_the_untampered_answer(real):
    block, answer = real
    account = prove_account_plainly(block, bytes.fromhex(CONTRACT[2:]), [0], _Answers(answer))
    assert account.storage[0] == 0x38 and account.balance == 0x76


@pytest.mark.parametrize("name,mutate", MUTATIONS, ids=[n for n, _ in MUTATIONS])
def test_the_reference_prover_refuses_every_mutation_too(real, name, mutate):
    """The plain prover (recompute.evaluator.reference's) walks every proof on its own: it
    refuses what the fast one refuses."""
    block, answer = real
    tampered = copy.deepcopy(answer)
    mutate(tampered)
    with pytest.raises(Unverifiable) as caught:
        prove_account_plainly(block, bytes.fromhex(CONTRACT[2:]), [0], _Answers(tampered))
    assert caught.value.reason in {"invalid-proof", "rpc-inconsistent", "rpc-malformed"}


@FAST
@given(data=st.data())
def test_random_byte_flips_in_the_real_answer_never_verify(real, data):
    block, answer = real
    nodes = [("accountProof", i) for i in range(len(answer["accountProof"]))] + [
        ("storageProof", i) for i in range(len(answer["storageProof"][0]["proof"]))
    ]
    where, i = data.draw(st.sampled_from(nodes))
    tampered = json.loads(json.dumps(answer))
    proof = tampered["accountProof"] if where == "accountProof" else tampered["storageProof"][0][
        "proof"]
    proof[:] = _tamper(proof, data)
    if proof == (answer["accountProof"] if where == "accountProof"
                 else answer["storageProof"][0]["proof"]):
        return
    with pytest.raises(Unverifiable):
        _verify(block, tampered)


class LyingHeaderSource(LiveSource):
    """A real replay node whose headers come back with one field changed."""

    def __init__(self, url, field, fix_hash):
        super().__init__(url)
        self.field, self.fix_hash = field, fix_hash

    def _block(self, method, ref):
        block = super()._block(method, ref)
        if block is not None:
            value = block[self.field]
            block[self.field] = value[:-1] + ("1" if value[-1] != "1" else "2")
            if self.fix_hash:  # a careful liar also recomputes the hash field
                from recompute.core.header import Header

                block["hash"] = "0x" + Header.from_rpc(
                    {k: v for k, v in block.items() if k != "hash"}).hash.hex()
        return block


@pytest.mark.parametrize("field", ["stateRoot", "timestamp", "receiptsRoot", "parentHash",
                                   "requestsHash", "baseFeePerGas"])
@pytest.mark.parametrize("fix_hash", [False, True])
def test_a_changed_header_field_never_anchors_to_the_pinned_hash(field, fix_hash):
    with FixtureNode(FIXTURES) as node:
        pinned = anchor_block([LiveSource(node.url)], block="latest", clock=RECORDED).hash
        liar = LyingHeaderSource(node.url, field, fix_hash)
        with pytest.raises(Unverifiable) as caught:
            anchor_block([liar], block_hash=pinned)
        with pytest.raises(Unverifiable):
            anchor_block([liar], checkpoint=pinned, block=50)
    expected = "header-mismatch" if fix_hash else "rpc-inconsistent"
    assert caught.value.reason == expected
