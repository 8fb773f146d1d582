"""The L1 side of one op-stack anchoring (recompute.l2.op_stack_anchor): proofs at one L1
block and code checked against them, asked together where they can be.

What one step of the anchoring needs at once is asked at once: the slots of one account in one
``eth_getProof``, several accounts in one JSON-RPC batch (``get_proofs``, as the watch's shared
source asks them) and several codes in one batch (``get_codes``) when the source takes batches;
one request each otherwise. Nothing is kept: every answer is verified as
:func:`recompute.core.prover.prove_account` verifies it (against the L1 block's stateRoot), every
code taken only when it hashes to its account's proven code hash, and handed back to the step
that asked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recompute.core.anchor import AnchoredBlock
from recompute.core.errors import Unverifiable
from recompute.core.keccak import keccak256
from recompute.core.prover import ProofStats, ProvenAccount, prove_account, verify_account_proof
from recompute.l2.game import IMPLEMENTATION_SLOT, address_of
from recompute.l2.versions import Identified, UnknownVersion, identify, load_table

CodeOf = Callable[[bytes, bytes], bytes]  # (address, block hash) -> runtime code
Want = tuple[bytes, list[int]]  # an account and slots of it


class L1Reads:
    """Proofs and code at one L1 block; ``requests`` counts the HTTP requests made (a batch is
    one), ``stats`` the ``eth_getProof`` calls, slots and nodes."""

    def __init__(self, block: AnchoredBlock, code_of: CodeOf, stats: ProofStats,
                 batched: bool = True):
        self.block, self.code_of, self.stats = block, code_of, stats
        self.table = load_table()
        self.requests = 0
        source: Any = block.source
        self._proofs = getattr(source, "get_proofs", None) if batched else None
        # codes in a batch only when they are the source's own (not a code_of handed in)
        own = getattr(code_of, "__self__", None) is source
        self._codes = getattr(source, "get_codes", None) if batched and own else None

    def account(self, address: bytes, slots: list[int]) -> ProvenAccount:
        return self.accounts([(address, slots)])[0]

    def accounts(self, wants: list[Want]) -> list[ProvenAccount]:
        """Each ``(address, slots)`` of ``wants`` proven, in order: one ``eth_getProof`` per
        address (its slots merged: an account asked twice comes back with every slot of
        both), the addresses in one batch where the source takes it."""
        merged: dict[bytes, list[int]] = {}
        for address, slots in wants:
            asked = merged.setdefault(address, [])
            asked.extend(slot for slot in slots if slot not in asked)
        proven: dict[bytes, ProvenAccount] = {}
        if self._proofs is None or len(merged) == 1:
            for address, slots in merged.items():
                self.requests += 1
                proven[address] = prove_account(self.block, address, slots, stats=self.stats)
        else:
            self.requests += 1
            answers = self._proofs(list(merged.items()), self.block.hash)
            for (address, slots), answer in zip(merged.items(), answers, strict=True):
                if isinstance(answer, Unverifiable):
                    raise answer
                self.stats.requests += 1
                self.stats.slots += len(slots)
                proven[address] = verify_account_proof(self.block, address, slots, answer,
                                                       self.stats)
        return [proven[address] for address, _ in wants]

    def code(self, account: ProvenAccount, what: str) -> bytes:
        return self.codes([(account, what)])[0]

    def codes(self, asked: list[tuple[ProvenAccount, str]]) -> list[bytes]:
        """The runtime code of each account (``what`` it is, for the message), each taken only
        when it hashes to the account's proven code hash; in one batch where the source takes
        it."""
        for account, what in asked:
            if (missing := self.codeless(account, what)) is not None:
                raise missing
        addresses = list(dict.fromkeys(account.address for account, _ in asked))
        if self._codes is not None and len(addresses) > 1:
            self.requests += 1
            fetched = dict(zip(addresses, self._codes(addresses, self.block.hash), strict=True))
        else:
            fetched = {}
            for address in addresses:
                self.requests += 1
                fetched[address] = self.code_of(address, self.block.hash)
        out = []
        for account, what in asked:
            code = fetched[account.address]
            if keccak256(code) != account.code_hash:
                raise Unverifiable("clone-code-mismatch",
                                   f"the L1 node served code for {what} "
                                   f"0x{account.address.hex()} that hashes to "
                                   f"0x{keccak256(code).hex()}, not its proven code hash "
                                   f"0x{account.code_hash.hex()}")
            out.append(code)
        return out

    def codeless(self, account: ProvenAccount, what: str) -> Unverifiable | None:
        """``no-contract`` for an account without code (none, or the empty code's hash)."""
        if account.exists and account.code_hash != keccak256(b""):
            return None
        return Unverifiable("no-contract", f"{what} 0x{account.address.hex()} has no code at "
                                           f"L1 block {self.block.number}")

    def identified(self, account: ProvenAccount, role: str, what: str) -> Identified:
        """The implementation ``account``'s code is (fetched and identified each time: kept
        values belong to the caching layer around sources, not here)."""
        return self.known(account, self.code(account, what), role, what)

    def known(self, account: ProvenAccount, code: bytes, role: str, what: str) -> Identified:
        """The implementation ``code`` (``account``'s, checked) is, by its bytes."""
        try:
            return identify(code, role, self.table)
        except UnknownVersion as exc:
            raise Unverifiable("unknown-contract-version",
                               f"{what} 0x{account.address.hex()}: {exc}") from None

    def behind_proxy(self, address: bytes, role: str, what: str,
                     slots: list[int]) -> tuple[ProvenAccount, Identified]:
        """A proxy at ``address`` (its code the known Proxy), its implementation (identified
        as ``role``), and ``slots`` of the proxy's storage, proven."""
        proxy = self.account(address, [IMPLEMENTATION_SLOT, *slots])
        self.identified(proxy, "proxy", f"{what} proxy")
        return proxy, self.identified(self.account(implementation_of(proxy, what), []), role,
                                      f"{what} implementation")


def implementation_of(proxy: ProvenAccount, what: str) -> bytes:
    """The address in a proxy's proven EIP-1967 implementation slot."""
    try:
        return address_of(proxy.storage[IMPLEMENTATION_SLOT])
    except ValueError as exc:
        raise Unverifiable("unknown-contract-version",
                           f"{what} 0x{proxy.address.hex()}: its implementation slot {exc}"
                           ) from None
