"""The scripted anvil pair of tests/l2/op_stack_pair.py, its L1 on chain id 1 (Ethereum
mainnet's), with OP Mainnet's L1 system as a standard release leaves it (docs/l2.md §Current
releases): at the ``op-mainnet`` preset's portal and AnchorStateRegistry addresses, OP
``Proxy`` code (contracts-bedrock 0.17.3) whose EIP-1967 slot names the implementation address
the superchain registry lists for op-contracts v7 on mainnet; the registry's storage written
by AnchorStateRegistry 3.x's layout (its snapshot: recompute/data/l2/standard-implementations
.json); its ``disputeGameFactory`` the pair's factory proxy, whose games were made by the real
``DisputeGameFactory`` 0.17.3 ``create`` (the clone format ``creator ‖ rootClaim ‖ l1Head ‖
extraData`` of every listed 1.x factory) and whose slot then names the v7 factory address
(holding that 0.17.3 code: the slots read are the same). The registry's implementation address
holds ``StandardAnchorStateRegistryLayout`` (contracts/src/op-releases: the release's variables
in its order, with its getters).
"""

from __future__ import annotations

from dataclasses import dataclass

from recompute.devnet.anvil import Anvil, rpc_call
from recompute.devnet.contracts import load_artifact
from recompute.l2.game import IMPLEMENTATION_SLOT, game_uuid, mapping_slot
from recompute.l2.presets import load_presets
from tests.l2.op_stack_pair import FACTORY, Pair, build_pair, hx, runtime

PRESET = load_presets()["op-mainnet"]
PORTAL = PRESET.portal
REGISTRY = PRESET.anchor_state_registry or b""
# op-contracts/v7.0.0-rc.4 on mainnet (tests/fixtures/l2-releases/standard-versions-mainnet.toml)
PORTAL_V7 = bytes.fromhex("e89f13c5ee4033b2d3cd76c9d6958efbfe26d3c2")
REGISTRY_V7 = bytes.fromhex("8f40cc98d694ab986f026c5383a181fcc9b6b281")
FACTORY_V7 = bytes.fromhex("72b971717e088b59f26d4236be222adb6acd393b")
REGISTRY_V2 = bytes.fromhex("7b465370bb7a333f99edd19599eb7fb1c2d3f8d2")  # 2.2.2: no layout
PORTAL_SEPOLIA_ONLY = bytes.fromhex("1005217ad392dc64cef501fa1777a27d42166748")  # v8.0.0-rc.2
# AnchorStateRegistry 3.x slots (the layout snapshot)
FACTORY_SLOT, ANCHOR_GAME, START_ROOT, START_NUMBER, BLACKLIST, TYPE_AND_RETIREMENT = 1, 2, 3, 4, \
    5, 6
GAMES_SLOT = 103  # DisputeGameFactory 1.x _disputeGames


@dataclass
class ReleasePair:
    pair: Pair

    @property
    def l1(self) -> Anvil:
        return self.pair.l1

    @property
    def l2(self) -> Anvil:
        return self.pair.l2

    def slot(self, address: bytes, slot: int, value: int) -> None:
        self.pair.set_slot(self.l1, address, slot, value)

    def proxy(self, address: bytes, implementation: bytes) -> None:
        self.pair.set_code(self.l1, address, runtime("Proxy"))
        self.slot(address, IMPLEMENTATION_SLOT, int.from_bytes(implementation, "big"))

    def anchor(self, game: str | None, *, blacklisted: bool = False, retirement: int = 0,
               start: tuple[bytes, int] = (bytes(32), 0),
               registry_impl: bytes = REGISTRY_V7, portal_impl: bytes = PORTAL_V7) -> None:
        """The registry's state: its anchor game (a pair game's name, or None for the starting
        root ``start``), whether it blacklists the game, its retirement timestamp; then mined."""
        address = self.pair.games[game] if game is not None else bytes(20)
        self.slot(PORTAL, IMPLEMENTATION_SLOT, int.from_bytes(portal_impl, "big"))
        self.slot(REGISTRY, IMPLEMENTATION_SLOT, int.from_bytes(registry_impl, "big"))
        self.slot(REGISTRY, ANCHOR_GAME, int.from_bytes(address, "big"))
        self.slot(REGISTRY, START_ROOT, int.from_bytes(start[0], "big"))
        self.slot(REGISTRY, START_NUMBER, start[1])
        self.slot(REGISTRY, TYPE_AND_RETIREMENT, 0 | retirement << 32)
        for name in self.pair.games:
            self.slot(REGISTRY, mapping_slot(self.pair.games[name], BLACKLIST),
                      int(blacklisted and name == game))
        self.pair.mine(self.l1)

    def record_slot(self, name: str) -> int:
        block = self.pair.game_blocks[name]
        root = self.pair.output_root_of(block) if name == "final" else None
        assert root is not None
        uuid = game_uuid(0, root, block.to_bytes(32, "big"))
        return mapping_slot(uuid, GAMES_SLOT)

    def created(self, name: str) -> int:
        value = int(rpc_call(self.l1.url, "eth_getStorageAt",
                             [hx(FACTORY), hex(self.record_slot(name)), "latest"]), 16)
        return (value >> 160) & ((1 << 64) - 1)

    def args(self, *more: object, chain: str = "op-mainnet") -> list[str]:
        head = rpc_call(self.l1.url, "eth_getBlockByNumber", ["latest", False])["hash"]
        return ["--rpc", self.l2.url, "--chain", chain, "--l1-rpc", self.l1.url,
                "--l1-block-hash", head, *[str(m) for m in more]]


def build_release_pair(l1: Anvil, l2: Anvil) -> ReleasePair:
    """The release pair over ``l1`` (chain id 1) and ``l2``: games ``final`` (L2 block 11, its
    real output root) and ``wrong`` (L2 block 13, a false root), the registry anchored on
    ``final``."""
    pair = build_pair(l1, l2, names=("final", "wrong"))
    release = ReleasePair(pair)
    release.proxy(PORTAL, PORTAL_V7)
    release.proxy(REGISTRY, REGISTRY_V7)
    release.slot(REGISTRY, FACTORY_SLOT, int.from_bytes(FACTORY, "big"))
    pair.set_code(l1, FACTORY_V7, runtime("DisputeGameFactory"))
    release.slot(FACTORY, IMPLEMENTATION_SLOT, int.from_bytes(FACTORY_V7, "big"))
    pair.set_code(l1, PORTAL_V7, bytes.fromhex("00"))  # a contract there (its code is not read)
    # the registry's implementation: a contract of the release's storage layout, whose getters
    # (called through the proxy) read that storage as the release's do
    layout = load_artifact("StandardAnchorStateRegistryLayout")["deployedBytecode"]
    pair.set_code(l1, REGISTRY_V7, bytes.fromhex(layout[2:]))
    release.anchor("final")
    return release
