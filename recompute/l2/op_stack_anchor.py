"""An L2 block anchored through L1 (the ``op-stack`` anchor; docs/l2.md §The chain of proofs).

From an anchored L1 block (any L1 anchor) and the chain's ``OptimismPortal2`` proxy address:

1. the L1 block must be fresh (the clock's maximum anchor age), whatever anchored it;
2. the portal and the factory: each proxy's code and its EIP-1967 implementation, every code
   taken only when it hashes to the account's proven code hash and identified by its bytes
   (:mod:`recompute.l2.versions`); the respected game type, when it was set, the factory's
   address and the blacklist from the portal's proven storage; the finality delay from the
   identified implementation's code;
3. the game: the factory's proven record of it (its list, or ``_disputeGames`` by the game's
   UUID), the clone's code (its proven code hash) giving root claim, L1 head and L2 block
   number, its status and times from its proven storage; its tier (:mod:`recompute.l2.finality`);
4. the output root: the L2 node's block at the game's L2 block number and the
   ``L2ToL1MessagePasser``'s storage root must hash to the root claim
   (``output-root-mismatch``), its header to the block hash the preimage names
   (``l2-header-mismatch``); the message passer's account proof roots in that header;
5. the L2 block asked for: that block, or one below it reached from its state by
   :func:`recompute.core.hops.reach` (hops through the L2's history storage contract, or the
   header walk, as ``--history`` says; the way in the evidence's ``history_path``).

This module asks the sources; every decision is a pure function of the modules beside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from recompute.core.anchor import AnchoredBlock, Reach, by_proven_header
from recompute.core.clock import Clock
from recompute.core.errors import OptionError, Unverifiable, literal, malformed
from recompute.core.header import Header
from recompute.core.hexdata import parse_data
from recompute.core.hops import reach as reach_below
from recompute.core.prover import ProofStats, ProvenAccount, prove_account
from recompute.core.source import ProofSource
from recompute.l2.anchor_state import registry_standing
from recompute.l2.clone import CloneError, GameClone, parse_clone
from recompute.l2.finality import TIERS, SystemFacts, tier_of
from recompute.l2.game import (
    IMPLEMENTATION_SLOT,
    GameFacts,
    GameId,
    GameStatus,
    array_element_slot,
    game_uuid,
    mapping_slot,
)
from recompute.l2.l1_reads import CodeOf, L1Reads, implementation_of
from recompute.l2.output_root import MESSAGE_PASSER, OutputRootPreimage, output_root
from recompute.l2.versions import Identified, Implementation

METHOD = "op-stack"
MAX_GAMES = 256  # games of the factory's list looked at, newest first, for one block
LIST_PAGE = 16  # entries of the factory's list asked in one eth_getProof


@dataclass(frozen=True)
class OpStackRequest:
    """What to anchor: the portal proxy, the L2 block (a number, or None for the newest
    usable game's), a game to use (None: the newest usable one covering the block), the
    weakest tier accepted, and the preset it came from (for the evidence), with the preset's
    L1 network and AnchorStateRegistry proxy (a standard release's anchor root:
    :mod:`recompute.l2.anchor_state`)."""

    portal: bytes
    block: int | None = None
    game: bytes | None = None
    accept: str = "final"
    preset: str | None = None
    max_games: int = MAX_GAMES
    l1_network: str | None = None
    anchor_state_registry: bytes | None = None


_L1 = L1Reads  # the L1 side of one anchoring: proofs and code, asked together


def _slot(kind: Implementation, name: str) -> int:
    return kind.variable(name).slot


def _portal_slots(kind: Implementation) -> list[int]:
    return sorted({_slot(kind, "disputeGameFactory"), _slot(kind, "respectedGameType"),
                   _slot(kind, "respectedGameTypeUpdatedAt")})


def _system(l1: _L1, portal_address: bytes) -> tuple[bytes, SystemFacts, dict[str, Any],
                                                      Implementation]:
    """The portal's facts and the factory's address."""
    portal_impl = l1.behind_proxy(portal_address, "portal", "portal", [])[1]
    portal = l1.account(portal_address, _portal_slots(portal_impl.implementation))
    return _system_of(portal_address, portal_impl, portal)


def _system_of(portal_address: bytes, portal_impl: Identified, portal: ProvenAccount
               ) -> tuple[bytes, SystemFacts, dict[str, Any], Implementation]:
    """The portal's facts and the factory's address, from its proven storage."""
    kind = portal_impl.implementation
    factory = kind.variable("disputeGameFactory").value(portal.storage[_slot(
        kind, "disputeGameFactory")]).to_bytes(20, "big")
    system = SystemFacts(
        respected_game_type=kind.variable("respectedGameType").value(
            portal.storage[_slot(kind, "respectedGameType")]),
        respected_since=kind.variable("respectedGameTypeUpdatedAt").value(
            portal.storage[_slot(kind, "respectedGameTypeUpdatedAt")]),
        finality_delay=portal_impl.immutables["DISPUTE_GAME_FINALITY_DELAY_SECONDS"])
    evidence = {"portal": {"address": "0x" + portal_address.hex(), **portal_impl.to_json()},
                **system.to_json()}
    return factory, system, evidence, kind


_GAME_WORDS = ("createdAt", "resolvedAt", "status")


def _clone_of(address: bytes, code: bytes) -> GameClone:
    try:
        clone = parse_clone(code)
        clone.l2_block_number  # noqa: B018 -- a clone whose arguments hold no number: refused
    except CloneError as exc:
        raise Unverifiable("clone-code-mismatch", f"game 0x{address.hex()}: {exc}") from None
    return clone


def _game_slots(kind: Identified) -> list[int]:
    return sorted({kind.implementation.variable(name).slot for name in _GAME_WORDS})


def _games(l1: _L1, games: list[tuple[int, bytes]], portal: Implementation,
           portal_address: bytes) -> dict[int, tuple[GameFacts, GameClone] | Unverifiable]:
    """Several games of the factory's list (index, address) judged as :func:`_game` judges
    one, each step asked for all of them at once (their accounts; their codes; their
    implementations with the portal's blacklist entries; the implementations' codes). A game
    that cannot be judged holds its Unverifiable, raised only if the scan reaches it; a node's
    lie in a batch (a proof that does not verify, a code of another hash) is raised at once."""
    out: dict[int, tuple[GameFacts, GameClone] | Unverifiable] = {}
    found = l1.accounts([(address, [0]) for _, address in games])
    coded = []
    for (index, address), account in zip(games, found, strict=True):
        missing = l1.codeless(account, "game")
        if missing is not None:
            out[index] = missing
        else:
            coded.append((index, address, account))
    clones: dict[int, tuple[bytes, ProvenAccount, GameClone]] = {}
    for (index, address, account), code in zip(
            coded, l1.codes([(account, "game") for _, _, account in coded]), strict=True):
        try:
            clones[index] = address, account, _clone_of(address, code)
        except Unverifiable as exc:
            out[index] = exc
    slots = {index: mapping_slot(address, _slot(portal, "disputeGameBlacklist"))
             for index, (address, _, _) in clones.items()}
    proven = l1.accounts([(clone.implementation, []) for _, _, clone in clones.values()]
                         + [(portal_address, list(slots.values()))])
    listed, implementations = proven[-1], dict(zip(clones, proven[:-1], strict=True))
    for index, implementation in implementations.items():
        if (missing := l1.codeless(implementation, "game implementation")) is not None:
            out[index] = missing
    have = [index for index in clones if index not in out]
    codes = l1.codes([(implementations[index], "game implementation") for index in have])
    for index, code in zip(have, codes, strict=True):
        address, account, clone = clones[index]
        try:
            kind = l1.known(implementations[index], code, "game", "game implementation")
            if _game_slots(kind) != [0]:
                account = l1.account(address, _game_slots(kind))
            out[index] = _game_facts(address, clone, kind, account,
                                     listed.storage[slots[index]], index), clone
        except Unverifiable as exc:
            out[index] = exc
    return out


def _game_facts(address: bytes, clone: GameClone, kind: Identified, account: ProvenAccount,
                listed: int, index: int | None) -> GameFacts:
    """A game's facts from its clone, its identified implementation, its proven storage
    (``account``) and the portal's proven blacklist word for it (``listed``)."""
    layout = kind.implementation
    words = {name: layout.variable(name) for name in _GAME_WORDS}
    status = words["status"].value(account.storage[words["status"].slot])
    if status not in GameStatus._value2member_map_:
        raise Unverifiable("unknown-contract-version", f"game 0x{address.hex()} has status "
                                                       f"{status}, not one of GameStatus")
    return GameFacts(
        address=address, index=index, game_type=kind.immutables["GAME_TYPE"],
        root_claim=clone.root_claim, l1_head=clone.l1_head,
        l2_block_number=clone.l2_block_number,
        created_at=words["createdAt"].value(account.storage[words["createdAt"].slot]),
        resolved_at=words["resolvedAt"].value(account.storage[words["resolvedAt"].slot]),
        status=GameStatus(status), blacklisted=listed != 0,
        implementation=layout.label)


def _named(l1: _L1, request: OpStackRequest) -> tuple[GameFacts, SystemFacts, dict[str, Any],
                                                      bytes, Identified]:
    """The game ``request`` names and the portal it is judged by, each step's reads asked
    together (docs/l2.md §The chain of proofs, steps 2 and 3): the portal proxy and the game;
    their codes; both implementations; their codes; the portal's words and the game's
    blacklist entry (and status words, where a layout keeps them beyond slot 0); then the
    factory behind its proxy, with its record of the game (``game-unrecorded``)."""
    assert request.game is not None
    game = request.game
    proxy, account = l1.accounts([(request.portal, [IMPLEMENTATION_SLOT]), (game, [0])])
    proxy_code, game_code = l1.codes([(proxy, "portal proxy"), (account, "game")])
    l1.known(proxy, proxy_code, "proxy", "portal proxy")
    clone = _clone_of(game, game_code)
    portal_account, game_account = l1.accounts([(implementation_of(proxy, "portal"), []),
                                                (clone.implementation, [])])
    portal_code, kind_code = l1.codes([(portal_account, "portal implementation"),
                                       (game_account, "game implementation")])
    portal_impl = l1.known(portal_account, portal_code, "portal", "portal implementation")
    kind = l1.known(game_account, kind_code, "game", "game implementation")
    blacklist = mapping_slot(game, _slot(portal_impl.implementation, "disputeGameBlacklist"))
    wants = [(request.portal, [*_portal_slots(portal_impl.implementation), blacklist])]
    if _game_slots(kind) != [0]:
        wants.append((game, _game_slots(kind)))
    proven = l1.accounts(wants)
    factory, system, evidence, _ = _system_of(request.portal, portal_impl, proven[0])
    facts = _game_facts(game, clone, kind, proven[-1] if len(proven) > 1 else account,
                        proven[0].storage[blacklist], None)
    # the factory proxy's proof carries the game's record under every known factory layout
    uuid = game_uuid(facts.game_type, clone.root_claim, clone.extra_data)
    records = sorted({mapping_slot(uuid, entry.storage["_disputeGames"].slot)
                      for entry in l1.table
                      if entry.role == "factory" and "_disputeGames" in entry.storage})
    factory_proxy, factory_impl = l1.behind_proxy(factory, "factory", "factory", records)
    _recorded(l1, factory, factory_impl.implementation, facts, clone, factory_proxy)
    return facts, system, evidence, factory, factory_impl


def _recorded(l1: _L1, factory: bytes, kind: Implementation, facts: GameFacts,
              clone: GameClone, proven: ProvenAccount | None = None) -> None:
    """The factory's ``_disputeGames`` entry for the game's UUID must name this game (read
    from ``proven``, the factory's account already proven, when it holds the slot)."""
    uuid = game_uuid(facts.game_type, clone.root_claim, clone.extra_data)
    slot = mapping_slot(uuid, _slot(kind, "_disputeGames"))
    if proven is None or slot not in proven.storage:
        proven = l1.account(factory, [slot])
    recorded = GameId.unpack(proven.storage[slot])
    if recorded.address != facts.address or recorded.game_type != facts.game_type:
        raise Unverifiable("game-unrecorded",
                           f"the factory 0x{factory.hex()} does not record game "
                           f"0x{facts.address.hex()} (type {facts.game_type}, root claim "
                           f"0x{clone.root_claim.hex()}) at L1 block {l1.block.number}")


def _choose(l1: _L1, request: OpStackRequest, factory: bytes, factory_kind: Implementation,
            portal: Implementation, system: SystemFacts) -> tuple[GameFacts, str]:
    """The game to use and its tier when none is named: the newest usable game whose L2
    block is at or above the block asked for (the closest above it, among the newest
    ``max_games``)."""
    l1_time = l1.block.timestamp
    list_slot = _slot(factory_kind, "_disputeGameList")
    count = l1.account(factory, [list_slot]).storage[list_slot]
    best: tuple[GameFacts, str] | None = None
    refused: Unverifiable | None = None
    newest: int | None = None
    indexes = range(count - 1, max(count - request.max_games, 0) - 1, -1)
    for game_id, facts in _scanned(l1, factory, list_slot, indexes, portal, request.portal):
        if game_id.game_type != facts.game_type:
            raise Unverifiable("game-unrecorded", f"the factory records game "
                                                  f"0x{facts.address.hex()} as type "
                                                  f"{game_id.game_type}, its code says "
                                                  f"{facts.game_type}")
        try:
            tier = tier_of(facts, system, l1_time, request.accept)
        except Unverifiable as exc:
            if refused is None and (request.block is None
                                    or facts.l2_block_number >= request.block):
                refused = exc
            continue
        newest = max(newest or 0, facts.l2_block_number)
        if request.block is None:
            return facts, tier
        if facts.l2_block_number >= request.block and (
                best is None or facts.l2_block_number < best[0].l2_block_number):
            best = facts, tier
        elif best is not None and facts.l2_block_number < request.block:
            break  # proposals below the block: the closest one above it is found
    if best is not None:
        return best
    if refused is not None and newest is None:
        raise refused
    asked = "the newest block" if request.block is None else f"L2 block {request.block}"
    above = "no usable game" if newest is None else \
        f"the newest usable game's L2 block is {newest}"
    looked = min(count, request.max_games)
    newer = f"; {refused.reason} for a newer one" if refused is not None else ""
    raise Unverifiable("l2-block-unproposed",
                       f"{asked} is not covered by a usable dispute game at L1 block "
                       f"{l1.block.number}: {above} (looked at the newest {looked} of "
                       f"{count} games{newer})")


def _scanned(l1: _L1, factory: bytes, list_slot: int, indexes: range, portal: Implementation,
             portal_address: bytes) -> Iterator[tuple[GameId, GameFacts]]:
    """The games of the factory's list at ``indexes`` (newest first), each with its facts:
    the list read a page an ``eth_getProof``, the games judged together (:func:`_games`) two,
    then four... up to a page at a time (the newest usable game is most often near); a game
    that cannot be judged is raised when the scan reaches it, not before."""
    page: dict[int, int] = {}
    judged: dict[int, tuple[GameFacts, GameClone] | Unverifiable] = {}
    ahead = 2
    for at, index in enumerate(indexes):
        if at % LIST_PAGE == 0:
            page = {i: array_element_slot(list_slot, i) for i in indexes[at:at + LIST_PAGE]}
            entries = l1.account(factory, list(page.values())).storage
        if index not in judged:
            batch = [i for i in indexes[at:at + ahead] if i in page]
            judged.update(_games(l1, [(i, GameId.unpack(entries[page[i]]).address)
                                      for i in batch], portal, portal_address))
            ahead = min(2 * ahead, LIST_PAGE)
        outcome = judged.pop(index)
        if isinstance(outcome, Unverifiable):
            raise outcome
        yield GameId.unpack(entries[page[index]]), outcome[0]


def _covers(facts: GameFacts, block: int | None) -> None:
    if block is not None and block > facts.l2_block_number:
        raise Unverifiable("l2-block-unproposed",
                           f"L2 block {block} is above game 0x{facts.address.hex()}'s L2 block "
                           f"{facts.l2_block_number}: no output root covers it yet")


def _l2_block(source: ProofSource, facts: GameFacts) -> tuple[Header, OutputRootPreimage]:
    """The L2 node's block at the game's number, its preimage checked against the root claim
    and its header against the preimage's block hash."""
    number = facts.l2_block_number
    raw = source.block_by_number(number)
    if raw is None:
        raise Unverifiable("block-unknown", f"{source.label} does not know L2 block {number}")
    claimed_hash = parse_data(raw.get("hash"), "block.hash", malformed, 32)
    claimed_state = parse_data(raw.get("stateRoot"), "block.stateRoot", malformed, 32)
    passer = source.get_proof(MESSAGE_PASSER, [], claimed_hash)
    if not isinstance(passer, dict):
        raise malformed(f"{source.label} eth_getProof: the answer is not a JSON object")
    claimed_storage = parse_data(passer.get("storageHash"), "eth_getProof storageHash",
                                 malformed, 32)
    preimage = OutputRootPreimage(claimed_state, claimed_storage, claimed_hash)
    if output_root(preimage) != facts.root_claim:
        raise Unverifiable("output-root-mismatch",
                           f"{source.label}'s L2 block {number} (hash 0x{claimed_hash.hex()}, "
                           f"state root 0x{claimed_state.hex()}, message-passer storage root "
                           f"0x{claimed_storage.hex()}) has output root "
                           f"0x{output_root(preimage).hex()}, not game "
                           f"0x{facts.address.hex()}'s root claim 0x{facts.root_claim.hex()}")
    header = Header.from_rpc({key: value for key, value in raw.items() if key != "hash"})
    if header.hash != claimed_hash or header.number != number:
        raise Unverifiable("l2-header-mismatch",
                           f"{source.label} served for L2 block {number} a header that hashes "
                           f"to 0x{header.hash.hex()}, not 0x{claimed_hash.hex()}, the block "
                           "hash the output root names")
    return header, preimage


def _l1_side(l1_block: AnchoredBlock, clock: Clock, code_of: CodeOf | None,
             accept: str) -> _L1:
    """The L1 block judged fresh, and the prover of its side."""
    if accept not in TIERS:
        raise OptionError("{l2_finality} {tier!r}: give one of " + literal(", ".join(TIERS)),
                          ("l2_finality",), tier=accept)
    what = literal(f"L1 block {l1_block.number} (the L2 anchor's L1 block)")
    clock.check_fresh(l1_block.timestamp, clock.max_anchor_age, what, "max_anchor_age")
    clock.check_not_future(l1_block.timestamp, what)
    if code_of is None:
        code_of = getattr(l1_block.source, "get_code", None)
        if code_of is None:
            raise Unverifiable("state-unavailable", f"{l1_block.source.label} serves no "
                                                    "contract code (eth_getCode)")
    return _L1(l1_block, code_of, ProofStats())


@dataclass(frozen=True)
class Standing:
    """A game as L1 state shows it at one L1 block: its facts, its tier, and the evidence of
    the system contracts it was judged by."""

    facts: GameFacts
    tier: str
    evidence: dict[str, Any]


def _judged(l1: _L1, request: OpStackRequest) -> Standing:
    if request.game is not None:
        facts, system, evidence, factory, factory_impl = _named(l1, request)
        _covers(facts, request.block)
        tier = tier_of(facts, system, l1.block.timestamp, request.accept)
    else:
        factory, system, evidence, portal = _system(l1, request.portal)
        factory_impl = l1.behind_proxy(factory, "factory", "factory", [])[1]
        facts, tier = _choose(l1, request, factory, factory_impl.implementation, portal,
                              system)
    l1_time = l1.block.timestamp
    return Standing(facts, tier, {
        "tier": tier,
        "chain": request.preset,
        "l1": {"block": l1.block.to_json(), "anchor": l1.block.anchor.to_json(),
               "chain_id": l1.block.chain_id},
        **evidence,
        "factory": {"address": "0x" + factory.hex(), **factory_impl.to_json()},
        "game": {**facts.to_json(),
                 "resolved_ago_s": l1_time - facts.resolved_at if facts.resolved_at else None},
        "output_root": "0x" + facts.root_claim.hex(),
    })


def game_standing(l1_block: AnchoredBlock, request: OpStackRequest, clock: Clock,
                  code_of: CodeOf | None = None) -> Standing:
    """The game of ``request`` (named, or the one it would choose) as L1 state shows it at
    ``l1_block``: Unverifiable with its reason when it is not usable at ``request.accept``
    (follow mode asks this of every game its lines rest on, at each new L1 block). On a
    standard release the game named is one whose root lines rest on: a former anchor of the
    registry, which this can only find lost (blacklisted, retired, unrecorded), not vouch for
    again (the registry keeps no list of its former anchors)."""
    l1 = _l1_side(l1_block, clock, code_of, request.accept)
    released = registry_standing(l1, request, judge=True)  # a root a registry held
    return Standing(released[0], "final", released[1]) if released else _judged(l1, request)


def by_output_root(l1_block: AnchoredBlock, l2_source: ProofSource, request: OpStackRequest,
                   clock: Clock, code_of: CodeOf | None = None,
                   reach: Reach | None = None) -> AnchoredBlock:
    """The L2 block of ``request`` anchored through ``l1_block`` (see module doc); one below
    the game's block by ``reach`` (:func:`recompute.core.hops.reach` in auto mode unless
    given). The evidence (the anchor's detail) names every step."""
    l1 = _l1_side(l1_block, clock, code_of, request.accept)
    released = registry_standing(l1, request)  # a standard release: its registry's root
    standing = Standing(released[0], "final", released[1]) if released else _judged(l1, request)
    header, preimage = _l2_block(l2_source, standing.facts)
    detail = {**standing.evidence, "output_root_preimage": preimage.to_json(),
              "l1_proof_requests": l1.stats.requests,
              "l1_requests": l1.requests}
    top = by_proven_header(l2_source, header, preimage.block_hash, METHOD, detail)
    passer = prove_account(top, MESSAGE_PASSER, [])
    if passer.storage_root != preimage.message_passer_storage_root:  # the node said it beside
        raise Unverifiable("rpc-inconsistent",  # (the prover compares storageHash too)
                           f"the message passer's proven storage root at L2 block "
                           f"{header.number} is 0x{passer.storage_root.hex()}, not the "
                           "one its proof answer claimed")
    if request.block is None or request.block == header.number:
        return top
    return (reach or reach_below)(top, request.block)


@dataclass(frozen=True)
class L2Round:
    """One look at L1 for follow mode (docs/l2.md §Watch): an L1 block anchored afresh, and
    what it says of the newest usable game and of each game earlier lines rest on."""

    l1: AnchoredBlock
    l2_source: ProofSource
    request: OpStackRequest
    clock: Clock

    def newest(self) -> AnchoredBlock:
        """The newest usable game's L2 block (a standard release: its registry's anchor root),
        anchored through this round's L1 block."""
        return by_output_root(self.l1, self.l2_source, replace(self.request, block=None),
                              self.clock)

    def judge(self, game: bytes) -> Standing:
        """``game`` as this round's L1 block shows it (Unverifiable: why it is not usable)."""
        return game_standing(self.l1, replace(self.request, game=game, block=None),
                             self.clock)


def below(top: AnchoredBlock, number: int, history: str = "auto") -> AnchoredBlock:
    """Block ``number`` at or below ``top`` (an ``op-stack`` block), reached from it as
    ``history`` says (:func:`recompute.core.hops.reach`: hops through the L2's history
    contract, or re-hashed parentHash links), its anchor ``top``'s with the way
    (``pinned_number``, ``history_path``)."""
    if top.anchor.method != METHOD:
        raise TypeError("below() takes an op-stack block")
    return reach_below(top, number, history)
