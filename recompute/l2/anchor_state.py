"""An L2 block anchored by the chain's ``AnchorStateRegistry`` (docs/l2.md §Current releases).

For a chain on a standard ``op-contracts`` release (its portal proxy's proven EIP-1967 slot
holds an implementation address the superchain registry lists for the L1 network:
:mod:`recompute.l2.releases`), recompute does not choose among the games itself: it takes the
root the chain's own ``AnchorStateRegistry`` accepted, read from the registry's proven storage
by the snapshot layout of its major version:

- ``anchorGame`` when set: a game the registry took only once its claim was valid
  (``setAnchorState`` requires ``isGameClaimValid``: registered, respected, not blacklisted,
  not retired, resolved DEFENDER_WINS, past the finality delay). Its clone's code (hashed to
  its proven code hash) gives the root claim and, from the first word of its extra data, the
  L2 block number; the factory named in the registry's storage must record it under
  ``keccak256(abi.encode(respectedGameType, rootClaim, extraData))``
  (``game-unrecorded``); the registry must not blacklist it (``game-blacklisted``) nor have
  retired it since (its creation time in the factory's record at or before
  ``retirementTimestamp``: ``game-retired``): recompute refuses these even where the
  registry's ``getAnchorRoot`` would still answer;
- else ``startingAnchorRoot`` (root and L2 block number held in the registry's storage).

The anchor's tier is ``final`` (the registry's rule), its basis ``anchor-state-registry``.
"""

from __future__ import annotations

from typing import Any, Protocol

from recompute.core.errors import Unverifiable, literal
from recompute.core.prover import ProvenAccount
from recompute.l2.clone import CloneError, parse_clone
from recompute.l2.game import (
    IMPLEMENTATION_SLOT,
    GameFacts,
    GameId,
    GameStatus,
    address_of,
    game_uuid,
    mapping_slot,
)
from recompute.l2.l1_reads import L1Reads, implementation_of
from recompute.l2.releases import Layout, Release, Releases, UnlistedRelease, load_releases

BASIS = "anchor-state-registry"


class Asked(Protocol):
    """What is asked (recompute.l2.op_stack_anchor.OpStackRequest's fields read here)."""

    @property
    def portal(self) -> bytes: ...
    @property
    def block(self) -> int | None: ...
    @property
    def game(self) -> bytes | None: ...
    @property
    def preset(self) -> str | None: ...
    @property
    def l1_network(self) -> str | None: ...
    @property
    def anchor_state_registry(self) -> bytes | None: ...


def _hex(data: bytes) -> str:
    return "0x" + data.hex()


def network_of(releases: Releases, asked: str | None, chain_id: int,
               beacon: str | None) -> str | None:
    """The L1 network whose addresses apply (None: no table applies): the light client's
    network when a beacon light client pinned the L1 block (its fork data name it), else the
    one of the L1 block's chain id; a preset's network (``asked``) must be that one, and a
    light client's network must have the L1 node's chain id."""
    if beacon is not None:
        if releases.networks.get(beacon, chain_id) != chain_id:
            raise Unverifiable("l1-network-mismatch",
                               f"the light client follows {beacon} (chain id "
                               f"{releases.networks[beacon]}), but the L1 node says chain "
                               f"{chain_id}")
        found: str | None = beacon if beacon in releases.networks else None
    else:
        found = next((name for name, cid in releases.networks.items() if cid == chain_id),
                     None)
    if asked is not None and asked != found:
        raise Unverifiable("l1-network-mismatch",
                           f"the chain's contracts are on L1 {asked}, but the anchored L1 block "
                           f"is on {found or f'chain {chain_id}'}: anchor an L1 block of "
                           f"{asked}")
    return found


def _listed(releases: Releases, network: str | None, chain_id: int, implementation: bytes,
            role: str, what: str) -> Release | None:
    """The listing of ``implementation`` as ``role`` on ``network`` (None: listed nowhere);
    listed for another L1 network only: refused by name."""
    found = releases.find(implementation, role)
    if not found:
        return None
    for entry in found:
        if entry.network == network and entry.chain_id == chain_id:
            return entry
    where = ", ".join(sorted({entry.network for entry in found}))
    raise Unverifiable("l1-network-mismatch",
                       f"{what} implementation {_hex(implementation)} is a standard address "
                       f"on {where} only, and the anchored L1 block is on chain {chain_id}: "
                       "an address table holds only on the network it was published for")


def _standard(l1: L1Reads, releases: Releases, network: str | None, proxy: ProvenAccount,
              code: bytes, role: str, what: str) -> tuple[Release, Layout]:
    """A proxy (``proxy`` proven with its implementation slot, ``code`` its checked code: the
    known Proxy) whose implementation is a listed ``role`` with a known layout; Unverifiable
    by name otherwise."""
    l1.known(proxy, code, "proxy", f"{what} proxy")
    implementation = implementation_of(proxy, f"{what} proxy")
    release = _listed(releases, network, l1.block.chain_id, implementation, role, what)
    if release is None:
        raise Unverifiable("unknown-contract-version",
                           f"{what} 0x{proxy.address.hex()}: its implementation "
                           f"{_hex(implementation)} is no standard {role} implementation "
                           f"listed for {network or 'this L1 network'}; refused rather than "
                           "guessed")
    try:
        return release, releases.layout(release)
    except UnlistedRelease as exc:
        raise Unverifiable("unknown-contract-version",
                           f"{what} 0x{proxy.address.hex()}: {exc}") from None


def _slots(releases: Releases, name: str, variables: list[str]) -> list[int]:
    """The slots of ``variables`` in every known layout of contract ``name``: proven with the
    proxy's implementation slot in one request, before the implementation says which layout
    applies (a slot read and not used is only proven, never decoded)."""
    return sorted({layout.variable(v).slot for layout in releases.layouts
                   if layout.name == name for v in variables})


REGISTRY_READ = ["disputeGameFactory", "anchorGame", "startingAnchorRoot.root",
                 "startingAnchorRoot.l2SequenceNumber", "respectedGameType",
                 "retirementTimestamp"]


def _read(account: ProvenAccount, layout: Layout, names: list[str]) -> dict[str, int]:
    variables = {name: layout.variable(name) for name in names}
    return {name: v.value(account.storage[v.slot]) for name, v in variables.items()}


def registry_standing(l1: L1Reads, asked: Asked,
                      judge: bool = False) -> tuple[GameFacts, dict[str, Any]] | None:
    """The registry's anchor root as L1 state shows it, with the evidence; None when the
    portal's implementation is no listed standard one (the code-identified path applies).
    ``judge``: ``asked.game`` is a root lines already rest on (follow mode judges it again): a
    game that was the registry's anchor, judged by the same rules (the factory's record, the
    blacklist, the retirement time), or the registry's own address for its starting root."""
    releases = load_releases()
    chain_id = l1.block.chain_id
    proxy = l1.account(asked.portal, [IMPLEMENTATION_SLOT])
    try:
        implementation = address_of(proxy.storage[IMPLEMENTATION_SLOT])
    except ValueError:
        return None  # (the code-identified path refuses it by name)
    if not releases.find(implementation, "portal"):
        return None
    anchor = l1.block.anchor
    beacon = anchor.detail.get("network") if anchor.method == "light-client" else None
    network = network_of(releases, asked.l1_network, chain_id,
                         beacon if isinstance(beacon, str) else None)
    portal_release = _listed(releases, network, chain_id, implementation, "portal", "portal")
    assert portal_release is not None  # (listed: found above)
    if asked.game is not None and not judge:
        raise Unverifiable("unknown-contract-version",
                           literal(f"game {_hex(asked.game)}: the games of "
                                   f"{portal_release.label} are not of an implementation "
                                   "recompute identifies; without ") + "{l2_game} the chain's "
                           "AnchorStateRegistry gives the anchor root", ("l2_game",))
    if asked.anchor_state_registry is None:
        raise Unverifiable("unknown-contract-version",
                           literal(f"portal {_hex(asked.portal)} is {portal_release.label}: "
                                   "recompute reads this release through the chain's "
                                   "AnchorStateRegistry, whose address comes with ")
                           + "{chain} NAME or {l2_registry} ADDR", ("chain", "l2_registry"))
    registry = asked.anchor_state_registry
    registry_proxy = l1.account(registry, [IMPLEMENTATION_SLOT, *_slots(
        releases, "AnchorStateRegistry", REGISTRY_READ)])
    portal_code, registry_code = l1.codes([(proxy, "portal proxy"),
                                           (registry_proxy, "anchor-state registry proxy")])
    l1.known(proxy, portal_code, "proxy", "portal proxy")
    registry_release, registry_layout = _standard(l1, releases, network, registry_proxy,
                                                  registry_code, "registry",
                                                  "anchor-state registry")
    state = _read(registry_proxy, registry_layout, REGISTRY_READ)
    factory = state["disputeGameFactory"].to_bytes(20, "big")
    anchor_game = state["anchorGame"].to_bytes(20, "big")
    target = anchor_game  # the game whose root is taken (judged: the one named)
    if judge and asked.game is not None:
        target = bytes(20) if asked.game == registry else asked.game
    # the factory proxy, the game and its blacklist entry: asked together
    blacklist = mapping_slot(target, registry_layout.variable("disputeGameBlacklist").slot)
    wants = [(factory, [IMPLEMENTATION_SLOT])]
    if any(target):
        wants += [(target, []), (registry, [blacklist])]
    proven = l1.accounts(wants)
    asked_codes = [(proven[0], "factory proxy")]
    if any(target):
        asked_codes.append((proven[1], "anchor game"))
    codes = l1.codes(asked_codes)
    factory_release, factory_layout = _standard(l1, releases, network, proven[0], codes[0],
                                                "factory", "factory")
    evidence: dict[str, Any] = {
        "tier": "final", "basis": BASIS, "chain": asked.preset, "l1_network": network,
        "l1": {"block": l1.block.to_json(), "anchor": l1.block.anchor.to_json(),
               "chain_id": chain_id},
        "portal": {"address": _hex(asked.portal), **portal_release.to_json()},
        "anchor_state_registry": {
            "address": _hex(registry), **registry_release.to_json(),
            "layout": registry_layout.source,
            "respected_game_type": state["respectedGameType"],
            "retirement_timestamp": state["retirementTimestamp"],
            "anchor_game": _hex(anchor_game) if any(anchor_game) else None},
        "factory": {"address": _hex(factory), **factory_release.to_json(),
                    "layout": factory_layout.source},
    }
    if not any(target):
        root = state["startingAnchorRoot.root"].to_bytes(32, "big")
        number = state["startingAnchorRoot.l2SequenceNumber"]
        facts = GameFacts(address=registry, index=None, game_type=state["respectedGameType"],
                          root_claim=root, l1_head=bytes(32), l2_block_number=number,
                          created_at=0, resolved_at=0, status=GameStatus.DEFENDER_WINS,
                          blacklisted=False, implementation=registry_release.label)
        evidence["game"] = {"address": None, "anchor": "startingAnchorRoot",
                            "root_claim": _hex(root), "l2_block_number": number}
    else:
        facts, game = _anchor_game(l1, target, codes[1], state,
                                   proven[2].storage[blacklist] != 0, factory, factory_layout)
        evidence["game"] = {**game, "anchor": "anchorGame" if target == anchor_game
                            else "an earlier anchorGame"}
    evidence["output_root"] = _hex(facts.root_claim)
    if asked.block is not None and asked.block > facts.l2_block_number:
        raise Unverifiable("l2-block-unproposed",
                           f"L2 block {asked.block} is above L2 block {facts.l2_block_number}, "
                           f"the anchor root of the chain's AnchorStateRegistry "
                           f"{_hex(registry)} at L1 block {l1.block.number}: no accepted "
                           "output root covers it yet")
    return facts, evidence


def _anchor_game(l1: L1Reads, address: bytes, code: bytes, state: dict[str, int],
                 blacklisted: bool, factory: bytes,
                 factory_layout: Layout) -> tuple[GameFacts, dict[str, Any]]:
    """The registry's anchor game (``code`` its checked clone code): the clone's arguments, the
    factory's record of it, and the registry's blacklist and retirement time."""
    try:
        clone = parse_clone(code)
        number = clone.l2_block_number
    except CloneError as exc:
        raise Unverifiable("clone-code-mismatch",
                           f"anchor game 0x{address.hex()}: {exc}") from None
    game_type = state["respectedGameType"]
    extra_data = clone.extra_data[:32]  # a fault dispute game's extra data: its L2 block number
    uuid = game_uuid(game_type, clone.root_claim, extra_data)
    record_slot = mapping_slot(uuid, factory_layout.variable("_disputeGames").slot)
    recorded = GameId.unpack(l1.account(factory, [record_slot]).storage[record_slot])
    if recorded.address != address or recorded.game_type != game_type:
        raise Unverifiable("game-unrecorded",
                           f"the factory 0x{factory.hex()} does not record the registry's "
                           f"anchor game 0x{address.hex()} as a game of the respected type "
                           f"{game_type} with root claim 0x{clone.root_claim.hex()} and L2 "
                           f"block {number} at L1 block {l1.block.number}")
    if blacklisted:
        raise Unverifiable("game-blacklisted",
                           f"the registry's anchor game 0x{address.hex()} is blacklisted by "
                           "the AnchorStateRegistry: its root claim may not be relied on")
    if recorded.created <= state["retirementTimestamp"]:
        raise Unverifiable("game-retired",
                           f"the registry's anchor game 0x{address.hex()} was created at "
                           f"{recorded.created}, at or before the registry's retirement "
                           f"timestamp {state['retirementTimestamp']}: every game of that "
                           "time is retired")
    facts = GameFacts(address=address, index=None, game_type=game_type,
                      root_claim=clone.root_claim, l1_head=clone.l1_head,
                      l2_block_number=number, created_at=recorded.created, resolved_at=0,
                      status=GameStatus.DEFENDER_WINS, blacklisted=False,
                      implementation="clone of " + _hex(clone.implementation))
    return facts, {"address": _hex(address), "anchor": "anchorGame", "game_type": game_type,
                   "root_claim": _hex(clone.root_claim), "l1_head": _hex(clone.l1_head),
                   "extra_data": _hex(extra_data), "l2_block_number": number,
                   "created_at": recorded.created,
                   "implementation": "clone of " + _hex(clone.implementation)
                                     + " (not identified: the registry vouches for the game)"}
