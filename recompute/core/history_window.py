"""The history storage contract (EIP-2935): which block hashes a state proves, as pure
functions (docs/trust.md §Old blocks proven from a pinned state).

Since Prague, the start of every block N calls the contract at
``0x0000F90827F1C53a10cb7A02335B175320002935`` with block N-1's hash, which it stores at
slot ``(N-1) % 8191``. So the state *after* block S (what ``eth_getProof`` at S proves)
holds the hash of every block n with ``S - 8191 <= n < S`` at slot ``n % 8191`` (EIP-2935
§Specification: "the contract serves ``block.number - HISTORY_SERVE_WINDOW <= n <
block.number``"), for n at or after the block before the fork; a slot outside that window
may hold a newer block's hash once the ring has wrapped, or nothing.

Nothing here asks anyone or keeps anything: the caller hands in what it proved (the
contract's ``codeHash`` and one slot's value under a pinned state) and the header a node
served for the hash; these functions return the proven hash and header, or refuse.
"""

from __future__ import annotations

from recompute.core.errors import Unverifiable
from recompute.core.header import Header
from recompute.core.keccak import EMPTY_CODE_HASH

HISTORY_STORAGE_ADDRESS = bytes.fromhex("0000f90827f1c53a10cb7a02335b175320002935")
# EIP-2935 §Deployment: the contract's runtime code, as the EIP publishes it.
HISTORY_STORAGE_CODE = bytes.fromhex(
    "3373fffffffffffffffffffffffffffffffffffffffe14604657602036036042575f3560014303811160425761"
    "1fff81430311604257611fff9006545f5260205ff35b5f5ffd5b5f35611fff60014303065500")
# keccak256(HISTORY_STORAGE_CODE): the codeHash a proven account must carry (a test re-hashes it)
HISTORY_CODE_HASH = bytes.fromhex(
    "6e49e66782037c0555897870e29fa5e552daf4719552131a0abce779daec0a5d")
HISTORY_SERVE_WINDOW = 8191


class HistoryUnreachable(Unverifiable):
    """The history contract cannot prove this block: absent from the state (a chain or block
    before Prague), or the slot empty (the block is older than the contract's first hash).
    Not a lie: the caller may walk headers instead, and must say so."""

    def __init__(self, detail: str):
        super().__init__("history-unreachable", detail)


def history_slot(number: int) -> int:
    """The storage slot that holds block ``number``'s hash."""
    return number % HISTORY_SERVE_WINDOW


def serves(state_number: int, number: int) -> bool:
    """Does the state after block ``state_number`` hold block ``number``'s hash?"""
    return state_number - HISTORY_SERVE_WINDOW <= number < state_number


def hop_blocks(top: int, target: int) -> list[int]:
    """The blocks whose hashes a path from the state of ``top`` down to ``target`` proves, in
    order: each hop lands as far down as the window allows (``S - 8191``), the last on
    ``target``. Empty when ``target`` is ``top``."""
    if not 0 <= target <= top:
        raise ValueError(f"block {target} is not at or below block {top}")
    path: list[int] = []
    at = top
    while at != target:
        at = max(target, at - HISTORY_SERVE_WINDOW)
        path.append(at)
    return path


def proven_hash(state_number: int, number: int, code_hash: bytes | None,
                slot_value: int) -> bytes:
    """Block ``number``'s hash from the history contract's proven ``code_hash`` (None: no
    account) and its proven slot ``history_slot(number)`` under the state after block
    ``state_number``.

    Refuses (``history-contract-mismatch``) a contract whose code is not the EIP's: its storage
    means nothing. :class:`HistoryUnreachable` when there is no contract code or the slot is
    empty."""
    if not serves(state_number, number):
        raise ValueError(f"the state of block {state_number} does not serve block {number}")
    if not 0 <= slot_value < 1 << 256:
        raise ValueError("a storage value is a 256-bit unsigned integer")
    if code_hash is None or code_hash == EMPTY_CODE_HASH:
        raise HistoryUnreachable(
            f"the state of block {state_number} has no history storage contract (EIP-2935) at "
            f"0x{HISTORY_STORAGE_ADDRESS.hex()}: a chain or block before Prague")
    if code_hash != HISTORY_CODE_HASH:
        raise Unverifiable(
            "history-contract-mismatch",
            f"the account at 0x{HISTORY_STORAGE_ADDRESS.hex()} in the state of block "
            f"{state_number} has codeHash 0x{code_hash.hex()}, not the history storage "
            f"contract's 0x{HISTORY_CODE_HASH.hex()} (EIP-2935): its storage proves no block "
            "hash")
    if slot_value == 0:
        raise HistoryUnreachable(
            f"the history storage contract holds no hash for block {number} in the state of "
            f"block {state_number}: the block is older than the contract's first entry")
    return slot_value.to_bytes(32, "big")


def confirmed_header(number: int, block_hash: bytes, header: Header, who: str) -> Header:
    """The header ``who`` served for the proven ``block_hash``, confirmed to be block
    ``number``'s: it must hash to ``block_hash`` and carry ``number`` (a ring slot can hold a
    newer block's hash; a hash is only as good as the number it is proven for)."""
    if header.hash != block_hash:
        raise Unverifiable(
            "header-mismatch",
            f"{who} returned for the history contract's hash of block {number} "
            f"(0x{block_hash.hex()}) a header that hashes to 0x{header.hash.hex()}")
    if header.number != number:
        raise Unverifiable(
            "header-mismatch",
            f"the history contract's slot for block {number} holds the hash of block "
            f"{header.number} (0x{block_hash.hex()}), not of block {number}")
    return header
