"""Old blocks proven from a pinned state: hops through the history storage contract, or the
header walk (docs/trust.md §Old blocks proven from a pinned state).

:func:`reach` ties block ``number`` to an anchored ``top`` below it. By hops: the history
contract's slot for the block is proven under ``top``'s stateRoot (one ``eth_getProof``), the
node's header for the proven hash re-hashed and its number checked
(:mod:`recompute.core.history_window`); a block more than 8,191 below is reached through hop
blocks, each proven so from the state of the one above. Else by the walk: every header down to
the block, each re-hashed against its child's parentHash (:func:`~recompute.core.anchor.
ancestors`). The evidence's ``history_path`` names the way taken and, for a walk after a
failed hop, why: a chain or block without the contract falls back to the walk, never silently.
"""

from __future__ import annotations

from typing import Any

from recompute.core.anchor import AnchoredBlock, ancestors, reached
from recompute.core.errors import OptionError, Unverifiable, literal
from recompute.core.header import Header
from recompute.core.history_window import (
    HISTORY_STORAGE_ADDRESS,
    HistoryUnreachable,
    confirmed_header,
    history_slot,
    hop_blocks,
    proven_hash,
)
from recompute.core.prover import prove_account

MODES = ("auto", "hops", "walk")


def reach(top: AnchoredBlock, number: int, mode: str = "auto") -> AnchoredBlock:
    """Block ``number`` (at or below ``top``) anchored through ``top``: ``hops`` through the
    history contract only (``history-unreachable`` where it cannot), ``walk`` by parentHash
    links only, ``auto`` hops and, where the contract cannot prove the block, the walk (the
    reason in ``history_path.why``). A hash the contract proves wrongly (a header of another
    number, a proof that does not verify, another contract's code) is refused in every mode:
    a lie is never walked around."""
    if mode not in MODES:
        raise OptionError("{history} {mode!r}: give one of auto, hops, walk", ("history",),
                          mode=mode)
    if not 0 <= number <= top.number:
        raise OptionError("{block} {number} is above the pinned block {top}", ("block",),
                          number=number, top=top.number)
    if number == top.number:
        return top
    if mode != "walk":
        try:
            return by_hops(top, number)
        except HistoryUnreachable as exc:
            if mode == "hops":
                raise Unverifiable("history-unreachable", literal(exc.detail + ": ")
                                   + "{history} hops allows no header walk", ("history",)
                                   ) from None
            why = exc.detail
    else:
        why = "the header walk was asked for"
    header = ancestors(top, number)[-1].header
    assert isinstance(header, Header)  # every block below the top was fetched and re-hashed
    return reached(top, header, {"via": "header-walk", "headers_walked": top.number - number,
                                 "why": why})


def by_hops(top: AnchoredBlock, number: int) -> AnchoredBlock:
    """Block ``number`` proven from ``top``'s state through the history contract (see module
    doc); :class:`HistoryUnreachable` where the contract cannot prove it."""
    hops: list[dict[str, Any]] = []
    at = top
    for target in hop_blocks(top.number, number):
        slot = history_slot(target)
        account = prove_account(at, HISTORY_STORAGE_ADDRESS, [slot], source=top.source)
        block_hash = proven_hash(at.number, target, account.code_hash if account.exists
                                 else None, account.storage[slot])
        raw = top.source.block_by_hash(block_hash)
        if raw is None:
            raise Unverifiable("block-unknown", f"{top.source.label} does not know block "
                                                f"{target} (0x{block_hash.hex()}), whose hash "
                                                f"the history contract proves")
        header = confirmed_header(target, block_hash, Header.from_rpc(raw), top.source.label)
        hops.append({"from_block": at.number, "block": target, "slot": slot,
                     "hash": "0x" + block_hash.hex()})
        at = reached(top, header, _path(hops))
    return at


def _path(hops: list[dict[str, Any]]) -> dict[str, Any]:
    return {"via": "history-contract", "contract": "0x" + HISTORY_STORAGE_ADDRESS.hex(),
            "hops": list(hops)}
