"""Proven accounts and slots: one ``eth_getProof`` per account, verified against the
anchored header's ``stateRoot`` (EIP-1186).

:class:`ProvenAccount` is the only way verified state leaves this module; it can only be
built here. Every claim the node makes beside its proofs (``address``, ``nonce``,
``balance``, ``storageHash``, ``codeHash``, each slot's ``key`` and ``value``) must equal
what the proofs show, else ``rpc-inconsistent``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import repeat
from types import MappingProxyType
from typing import Any

from recompute.core import rlpcodec
from recompute.core.anchor import AnchoredBlock
from recompute.core.errors import Unverifiable, malformed_in
from recompute.core.hexdata import parse_data, parse_quantity
from recompute.core.keccak import EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, keccak256, keccak256_state
from recompute.core.mpt import (
    STRING_HEADER_HEX,
    InvalidProof,
    NodeCache,
    verify,
    verify_many,
)
from recompute.core.sealed import Sealed
from recompute.core.source import ProofSource

_SEAL = object()
_ZERO32 = bytes(32)

# The state trie's account leaf: (nonce, balance, storageRoot, codeHash).
AccountFields = tuple[int, int, bytes, bytes]


_malformed = malformed_in("eth_getProof")


def _inconsistent(message: str) -> Unverifiable:
    return Unverifiable("rpc-inconsistent", message)


class ProvenAccount(Sealed):
    """An account and some of its slots, proven at one anchored block (read-only)."""

    __slots__ = (
        "block", "address", "exists", "nonce", "balance", "storage_root", "code_hash", "storage"
    )
    block: AnchoredBlock
    address: bytes
    exists: bool
    nonce: int
    balance: int
    storage_root: bytes
    code_hash: bytes
    storage: Mapping[int, int]  # a read-only view (MappingProxyType)

    def __init__(self, seal: object, block: AnchoredBlock, address: bytes,
                 fields: AccountFields | None, storage: Mapping[int, int]):
        if seal is not _SEAL:
            raise TypeError("ProvenAccount is built by recompute.core.prover only")
        nonce, balance, storage_root, code_hash = fields or (0, 0, EMPTY_TRIE_ROOT, EMPTY_CODE_HASH)
        self._seal(block=block, address=address, exists=fields is not None, nonce=nonce,
                   balance=balance, storage_root=storage_root, code_hash=code_hash,
                   storage=MappingProxyType(dict(storage)))

    def to_json(self) -> dict[str, Any]:
        return {
            "address": "0x" + self.address.hex(),
            "exists": self.exists,
            "nonce": self.nonce,
            "balance": str(self.balance),
            "storage_root": "0x" + self.storage_root.hex(),
            "code_hash": "0x" + self.code_hash.hex(),
        }


@dataclass
class ProofStats:
    """What verification cost: for evidence and benchmarks."""

    requests: int = 0
    slots: int = 0
    nodes_hashed: int = 0


# Keys per eth_getProof: the request stays far below anvil's 2 MiB body limit (69 bytes a
# key) and the answer near 7 MiB (a storage proof is 5-8 nodes of up to 532 bytes, as hex).
# Chosen by measurement (benchmarks/bench_proofs.py, README §Speed): a node pays a fixed cost
# per request (anvil rebuilds the account's storage trie), so 2,048 beats 1,024; above ~2,500
# anvil slows down per key.
PROOF_CHUNK = 2048
# Requests in flight at once for one account, for a source that says it takes them
# (``max_in_flight``, e.g. LiveSource: one kept-alive connection per thread): anvil answers
# two at once on two cores. Memory is bounded by (in flight + 1) answers, whatever N.
PROOF_IN_FLIGHT = 2


def prove_account(
    block: AnchoredBlock,
    address: bytes,
    slots: Iterable[int] = (),
    source: ProofSource | None = None,
    stats: ProofStats | None = None,
    nodes: NodeCache | None = None,
) -> ProvenAccount:
    """Ask ``source`` (by default the endpoint that anchored ``block``) for proofs of
    ``address`` and every slot in ``slots``, and verify all of it. ``nodes``: the proof-node
    cache the walks may take nodes from (:class:`~recompute.core.mpt.NodeCache`; the fast
    path's is :data:`recompute.core.caching.SHARED_NODES`); none given, each answer's walks
    share a cache of their own, dropped after it.

    More than :data:`PROOF_CHUNK` slots are asked in chunks, each a complete eth_getProof
    answer verified on its own against the block's stateRoot; the next chunks are fetched
    (:data:`PROOF_IN_FLIGHT` helper threads, one unless the source takes more) while the
    current one is verified, and no answer is kept once verified, so memory is flat in the
    number of slots (only the proven values remain)."""
    wanted = list(dict.fromkeys(slots))  # unique, in the order asked
    for slot in wanted:
        if not 0 <= slot < 1 << 256:
            raise ValueError(f"slot {slot} is not a 256-bit unsigned integer")
    source = source or block.source
    if len(wanted) <= PROOF_CHUNK:
        answer = source.get_proof(address, wanted, block.hash)
        if stats is not None:
            stats.requests += 1
            stats.slots += len(wanted)
        return verify_account_proof(block, address, wanted, answer, stats, nodes)
    return _prove_chunked(block, address, wanted, source, stats, nodes)


def _prove_chunked(block: AnchoredBlock, address: bytes, wanted: list[int],
                   source: ProofSource, stats: ProofStats | None,
                   nodes: NodeCache | None) -> ProvenAccount:
    from concurrent.futures import Future, ThreadPoolExecutor

    chunks = [wanted[i : i + PROOF_CHUNK] for i in range(0, len(wanted), PROOF_CHUNK)]
    nodes = nodes if nodes is not None else NodeCache()  # the chunks share their upper nodes
    in_flight = max(1, min(PROOF_IN_FLIGHT, getattr(source, "max_in_flight", 1)))
    storage: dict[int, int] = {}
    first: ProvenAccount | None = None
    pool = ThreadPoolExecutor(in_flight, thread_name_prefix="recompute-prefetch")
    try:
        pending: list[Future[dict[str, Any]]] = [
            pool.submit(source.get_proof, address, chunk, block.hash)
            for chunk in chunks[:in_flight]
        ]
        for i, chunk in enumerate(chunks):
            answer = pending.pop(0).result()
            if i + in_flight < len(chunks):
                pending.append(pool.submit(source.get_proof, address, chunks[i + in_flight],
                                           block.hash))
            if stats is not None:
                stats.requests += 1
                stats.slots += len(chunk)
            account = verify_account_proof(block, address, chunk, answer, stats, nodes)
            del answer
            first = first or account
            # Every chunk's account proof is checked against the same stateRoot, so the
            # fields agree; checked anyway, as everything a node sends.
            if (account.exists, account.storage_root) != (first.exists, first.storage_root):
                raise _inconsistent("two chunks of one account proof disagree")
            storage.update(account.storage)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    assert first is not None  # more than PROOF_CHUNK slots: at least two chunks were verified
    fields = (first.nonce, first.balance, first.storage_root, first.code_hash)
    return ProvenAccount(_SEAL, block, address, fields if first.exists else None, storage)


def verify_account_proof(
    block: AnchoredBlock,
    address: bytes,
    slots: list[int],
    answer: object,
    stats: ProofStats | None = None,
    nodes: NodeCache | None = None,
) -> ProvenAccount:
    """Verify a raw ``eth_getProof`` answer (untrusted JSON, checked here to be an object) for
    ``address`` and ``slots`` at ``block`` (``nodes``: as :func:`prove_account`)."""
    cache = nodes if nodes is not None else NodeCache()
    hashed_before = cache.hashed
    account, entries = _account_of(block, address, slots, answer, cache)
    storage = _verify_slots(account, slots, entries, cache)
    if stats is not None:
        stats.nodes_hashed += cache.hashed - hashed_before
    return ProvenAccount(_SEAL, block, address, _fields(account), storage)


def _account_of(block: AnchoredBlock, address: bytes, slots: list[int], answer: object,
                cache: NodeCache) -> tuple[ProvenAccount, list[object]]:
    """The answer's account (no slot yet), proven against the block's stateRoot with its
    claims checked, and its storageProof entries (one per slot asked)."""
    if not isinstance(answer, dict):
        raise _malformed("the answer is not an object")
    claimed_address = parse_data(answer.get("address"), "address", _malformed, 20)
    if claimed_address != address:
        raise _inconsistent(
            f"asked for the account 0x{address.hex()}, the node answered for "
            f"0x{claimed_address.hex()}"
        )
    leaf = verify(block.state_root, keccak256(address), answer.get("accountProof"), cache)
    fields = None if leaf is None else _decode_account(leaf)
    account = ProvenAccount(_SEAL, block, address, fields, {})
    _check_account_claims(account, answer)
    entries = answer.get("storageProof")
    if not isinstance(entries, list):
        raise _malformed("storageProof is not a list")
    if len(entries) != len(slots):
        raise _inconsistent(
            f"asked for {len(slots)} slot(s), the node answered {len(entries)} storage proof(s)"
        )
    return account, entries


def _fields(account: ProvenAccount) -> AccountFields | None:
    if not account.exists:
        return None
    return account.nonce, account.balance, account.storage_root, account.code_hash


def _verify_slots(account: ProvenAccount, slots: list[int], entries: list[object],
                  cache: NodeCache) -> dict[int, int]:
    """Each storageProof entry checked against the slot asked, and all of the answer's proofs
    verified under the account's proven storageRoot (:func:`recompute.core.mpt.verify_many`):
    the proven values by slot. A claimed value written canonically is passed on as the leaf
    item it would be; where the proof's leaf is exactly that, the claim is proven. Every
    other entry's value is read from its proof and its claim compared with it."""
    if not set(map(type, entries)) <= {dict}:
        raise _malformed("a storageProof entry is not an object")
    answered: list[dict[str, object]] = entries  # type: ignore[assignment]  # checked above
    keys = [slot.to_bytes(32, "big") for slot in slots]
    asked = list(map(dict.get, answered, repeat("key")))
    if asked != ["0x" + key.hex() for key in keys]:  # nodes echo the 64 digits asked: as text
        for slot, text in zip(slots, asked, strict=True):
            _check_key(text, slot)
    proofs = list(map(dict.get, answered, repeat("proof")))
    if not account.exists:
        for slot, proof in zip(slots, proofs, strict=True):
            if proof not in ([], ["0x80"]):
                raise InvalidProof(f"slot {slot:#x}: a proof under an account proven absent")
    values = list(map(dict.get, answered, repeat("value")))
    canonical = _canonical_numbers(values)
    if canonical is not None:  # the usual answer: every value written as hex(value)
        numbers, texts = canonical
        claims = _claims_of_canonical(texts, numbers)
    else:  # each claim the proof's leaf holds (a canonical quantity: int() reads it as written)
        claims = _claimed_items(values)
        numbers = [0 if claim is None else int(value, 16)  # type: ignore[call-overload]
                   for value, claim in zip(values, claims, strict=True)]
    storage = dict(zip(slots, numbers, strict=True))
    hashed = [keccak256_state(key).digest() for key in keys]
    for i, raw in verify_many(account.storage_root, hashed, proofs, claims, cache).items():
        slot = slots[i]  # an entry whose value the proof shows otherwise than as claimed
        value = 0 if raw is None else _decode_slot_value(raw, slot)
        claimed = values[i]
        if claimed != hex(value):  # the canonical quantity; any other spelling is parsed
            _check_value(claimed, value, slot)
        storage[slot] = value
    return storage


def _check_key(text: object, slot: int) -> None:
    """The entry's ``key``, spelled otherwise than the 64 digits asked, still names ``slot``."""
    claimed = parse_quantity(text, "storageProof.key", _malformed)
    if claimed != slot:
        raise _inconsistent(f"storage proofs are not in the order asked (slot {slot:#x})")


# A slot value the node claims, written canonically (``hex(value)``): 1 <= value < 2**256. Such
# a claim is passed on as the text of its leaf's item; verify_many checks the leaf by its
# text and hash.
_CANONICAL_VALUE = re.compile(r"0x[1-9a-f][0-9a-f]{0,63}").fullmatch


def _claimed_items(values: list[object]) -> list[str | None]:
    """For each value a node claims, the text of the storage leaf's item that would hold it
    (the RLP string holding rlp(value), Yellow Paper App. D) if it is written canonically
    (:data:`_CANONICAL_VALUE`), else None (nothing to expect: the value is read from the
    proof)."""
    canonical = _CANONICAL_VALUE
    return _item_texts(values, [isinstance(value, str) and canonical(value) is not None
                                for value in values])


def _canonical_numbers(values: list[object]) -> tuple[list[int], list[str]] | None:
    """The values a node claims, as numbers and as text, if every one is written canonically,
    as ``hex(value)`` for 0 <= value < 2**256 (what :data:`_CANONICAL_VALUE` or ``0x0``
    matches), else None. Read and checked column-wise: int() reads each, hex() writes it back.
    """
    try:
        numbers = list(map(int, values, repeat(16)))  # type: ignore[arg-type]
    except (TypeError, ValueError):  # not a string, or not hex
        return None
    texts = list(map(hex, numbers))
    if texts != values or numbers and (min(numbers) < 0 or max(numbers) >> 256):
        return None  # "0x01", "0XA", "0x_1", " 0x1", "-0x1", 2**256: each judged alone
    return numbers, texts


def _claims_of_canonical(values: list[str], numbers: list[int]) -> list[str | None]:
    """:func:`_claimed_items` for values already known canonical (:func:`_canonical_numbers`):
    no claim for zero (an absent slot), else the text of the leaf's item holding the value."""
    return _item_texts(values, numbers)


def _item_texts(values: list[Any], wanted: list[Any]) -> list[str | None]:
    """The leaf item's text of each canonical value whose ``wanted`` is true, else None. One
    comprehension for the whole answer: no call a slot."""
    head = _ITEM_HEAD
    return [(("" if len(value) == 4 and value < "0x80" else head[len(value)]) + value[2:])
            if want else None for value, want in zip(values, wanted, strict=True)]


def _item_head(digits: int) -> str:
    """What precedes a canonical value's ``digits`` hex digits (``hex(value)`` without 0x, 2 or
    more digits, value at least 0x80; one digit: any) in its storage leaf's item, the RLP
    string holding rlp(value) (Yellow Paper App. D): both headers and the padding zero."""
    if digits == 1:
        return "0"  # rlp(value) is the one byte itself, below 0x80: its own RLP string
    size = (digits + 1) >> 1
    return STRING_HEADER_HEX[size + 1] + STRING_HEADER_HEX[size] + "0" * (digits & 1)


# by the length of ``hex(value)``: a two-digit value below 0x80 is its own item (no head)
_ITEM_HEAD = ("", "", "") + tuple(_item_head(n - 2) for n in range(3, 67))


def _check_value(text: object, value: int, slot: int) -> None:
    """The entry's ``value``, spelled otherwise than ``hex(value)``, still means ``value``."""
    claimed = parse_quantity(text, "storageProof.value", _malformed)
    if claimed != value:
        raise _inconsistent(
            f"slot {slot:#x}: the node says value {claimed:#x} but its proof shows {value:#x}"
        )


def _decode_account(leaf: bytes) -> AccountFields:
    """The state trie's leaf: rlp([nonce, balance, storageRoot, codeHash])."""
    try:
        items = rlpcodec.decode(leaf)
    except rlpcodec.RlpError:
        raise InvalidProof("the account leaf is not canonical RLP") from None
    shape = "the account leaf is not [nonce, balance, storageRoot, codeHash]"
    if not isinstance(items, list) or len(items) != 4:
        raise InvalidProof(shape)
    nonce, balance, storage_root, code_hash = items
    if not (isinstance(nonce, bytes) and isinstance(balance, bytes)
            and isinstance(storage_root, bytes) and isinstance(code_hash, bytes)):
        raise InvalidProof(shape)
    if nonce[:1] == b"\x00" or balance[:1] == b"\x00" or len(nonce) > 8 or len(balance) > 32:
        raise InvalidProof("the account leaf's nonce or balance is not a canonical integer")
    if len(storage_root) != 32 or len(code_hash) != 32:
        raise InvalidProof("the account leaf's storageRoot or codeHash is not 32 bytes")
    return int.from_bytes(nonce, "big"), int.from_bytes(balance, "big"), storage_root, code_hash


def _decode_slot_value(raw: bytes, slot: int) -> int:
    """A storage leaf holds rlp(value with leading zero bytes stripped).

    Consensus clients delete a slot set to zero; anvil keeps it as a leaf holding rlp(0) =
    0x80. That leaf is still hash-proven and means exactly one thing, zero, so it is read as
    zero rather than refused (refusing would make every anvil contract that clears a slot
    unverifiable). Any other non-canonical integer is refused.
    """
    if raw == b"\x80":
        return 0
    first = raw[0]
    if first < 0x80:
        if len(raw) == 1 and first:
            return first
    elif first <= 0xA0:
        body = raw[1:]
        if len(body) == first - 0x80 and len(body) >= 1 and body[0] and (
            len(body) > 1 or body[0] >= 0x80
        ):
            return int.from_bytes(body, "big")
    raise InvalidProof(
        f"slot {slot:#x}: the stored value is not a canonical RLP integer: 0x{raw.hex()[:80]}"
    )


def _check_account_claims(account: ProvenAccount, answer: dict[str, Any]) -> None:
    claims: dict[str, tuple[object, object]] = {
        "nonce": (parse_quantity(answer.get("nonce"), "nonce", _malformed, 64), account.nonce),
        "balance": (parse_quantity(answer.get("balance"), "balance", _malformed), account.balance),
    }
    storage_hash = parse_data(answer.get("storageHash"), "storageHash", _malformed, 32)
    code_hash = parse_data(answer.get("codeHash"), "codeHash", _malformed, 32)
    # For an absent account nodes differ on what to print (geth: zero hashes where anvil and
    # reth print the empty root / empty code hash); both say "nothing", and both are accepted.
    absent_ok = not account.exists and storage_hash in (_ZERO32, EMPTY_TRIE_ROOT)
    if not absent_ok:
        claims["storageHash"] = ("0x" + storage_hash.hex(), "0x" + account.storage_root.hex())
    if account.exists or code_hash not in (_ZERO32, EMPTY_CODE_HASH):
        claims["codeHash"] = ("0x" + code_hash.hex(), "0x" + account.code_hash.hex())
    for name, (claimed, proven) in claims.items():
        if claimed != proven:
            raise _inconsistent(
                f"account 0x{account.address.hex()}: the node says {name} {claimed} but its "
                f"proof shows {proven}"
            )


# ---- the reference path (docs/design.md §Soundness) ----------------------------------------


def prove_account_plainly(block: AnchoredBlock, address: bytes, slots: Iterable[int] = (),
                          source: ProofSource | None = None) -> ProvenAccount:
    """:func:`prove_account` the plain way, for the reference evaluator
    (recompute.evaluator.reference): one ``eth_getProof`` for the slots asked, every proof walked
    on its own by the general walk (:func:`recompute.core.mpt.verify`, no claim taken on its
    text) through a node cache of its own that keeps nothing (``depth=0``): no node, no kept
    top walk and no answer of another request stands in for anything. The node's claims are
    checked as :func:`verify_account_proof` checks them; the values are the proofs' own."""
    wanted = list(dict.fromkeys(slots))
    for slot in wanted:
        if not 0 <= slot < 1 << 256:
            raise ValueError(f"slot {slot} is not a 256-bit unsigned integer")
    answer = (source or block.source).get_proof(address, wanted, block.hash)
    account, entries = _account_of(block, address, wanted, answer, NodeCache(depth=0))
    storage: dict[int, int] = {}
    for slot, entry in zip(wanted, entries, strict=True):
        if not isinstance(entry, dict):
            raise _malformed("a storageProof entry is not an object")
        _check_key(entry.get("key"), slot)
        raw = verify(account.storage_root, keccak256(slot.to_bytes(32, "big")),
                     entry.get("proof"), NodeCache(depth=0))
        value = 0 if raw is None else _decode_slot_value(raw, slot)
        _check_value(entry.get("value"), value, slot)
        storage[slot] = value
    return ProvenAccount(_SEAL, block, address, _fields(account), storage)
