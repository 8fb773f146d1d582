"""A scripted L1 + L2 anvil pair for the op-stack anchor's tests.

L1 holds the real contracts-bedrock 0.17.3 runtime code (node_modules'
@eth-optimism/contracts-bedrock forge artifacts): an OP ``Proxy`` in front of
``OptimismPortal2`` (its finality-delay immutable written into the code as a constructor
would), one in front of ``DisputeGameFactory``, and games created by that factory's own
``create`` (so the clone bytes and the factory's records are the real ones) whose
implementation is then given ``FaultDisputeGame``'s code; each game's status and times are
written into its storage. L2 is an anvil holding a registry-like contract (slot 0 = the number
of the L2 block whose transaction wrote it) and the ``L2ToL1MessagePasser`` code at its
predeploy address.
Root claims are the L2 blocks' real output roots, unless a test asks for a wrong one.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from recompute.core.keccak import keccak256
from recompute.devnet.anvil import Anvil, rpc_call
from recompute.l2.game import IMPLEMENTATION_SLOT, GameStatus, mapping_slot
from recompute.l2.output_root import MESSAGE_PASSER, OutputRootPreimage, output_root
from recompute.l2.versions import load_table
from tests import REPO_ROOT

CB = REPO_ROOT / "node_modules" / "@eth-optimism" / "contracts-bedrock" / "forge-artifacts"
PORTAL = bytes.fromhex("11" * 20)
PORTAL_IMPL = bytes.fromhex("12" * 20)
FACTORY = bytes.fromhex("21" * 20)
FACTORY_IMPL = bytes.fromhex("22" * 20)
GAME_IMPL = bytes.fromhex("31" * 20)
REGISTRY = bytes.fromhex("51" * 20)
FINALITY_DELAY = 3600
CREATE = bytes.fromhex("82ecf2f6")  # create(uint32,bytes32,bytes)
# the registry: stores its calldata's first word in slot 0 (PUSH1 0 CALLDATALOAD PUSH1 0 SSTORE)
STORE_WORD = bytes.fromhex("600035600055")


def runtime(name: str) -> bytes:
    artifact = json.loads((CB / f"{name}.sol" / f"{name}.json").read_text())
    return bytes.fromhex(artifact["deployedBytecode"]["object"][2:])


def with_immutables(code: bytes, name: str, values: dict[str, int]) -> bytes:
    entry = next(e for e in load_table() if e.name == name)
    out = bytearray(code)
    for label, value in values.items():
        for start, length in entry.immutables[label]:
            out[start:start + length] = value.to_bytes(length, "big")
    return bytes(out)


def hx(data: bytes) -> str:
    return "0x" + data.hex()


def word(value: int) -> str:
    return "0x" + value.to_bytes(32, "big").hex()


@dataclass
class Pair:
    l1: Anvil
    l2: Anvil
    games: dict[str, bytes] = field(default_factory=dict)
    game_blocks: dict[str, int] = field(default_factory=dict)

    def set_code(self, node: Anvil, address: bytes, code: bytes) -> None:
        rpc_call(node.url, "anvil_setCode", [hx(address), hx(code)])

    def set_slot(self, node: Anvil, address: bytes, slot: int, value: int) -> None:
        rpc_call(node.url, "anvil_setStorageAt", [hx(address), word(slot), word(value)])

    def mine(self, node: Anvil) -> dict:
        rpc_call(node.url, "evm_mine", [])
        return rpc_call(node.url, "eth_getBlockByNumber", ["latest", False])

    def output_root_of(self, number: int) -> bytes:
        block = rpc_call(self.l2.url, "eth_getBlockByNumber", [hex(number), False])
        proof = rpc_call(self.l2.url, "eth_getProof", [hx(MESSAGE_PASSER), [], hex(number)])
        return output_root(OutputRootPreimage(bytes.fromhex(block["stateRoot"][2:]),
                                              bytes.fromhex(proof["storageHash"][2:]),
                                              bytes.fromhex(block["hash"][2:])))

    def send(self, node: Anvil, to: bytes, data: bytes) -> None:
        sender = rpc_call(node.url, "eth_accounts", [])[0]
        tx = rpc_call(node.url, "eth_sendTransaction",
                      [{"from": sender, "to": hx(to), "data": hx(data), "gas": hex(2_000_000)}])
        receipt = None
        for _ in range(50):
            receipt = rpc_call(node.url, "eth_getTransactionReceipt", [tx])
            if receipt is not None:
                break
            time.sleep(0.1)
        assert receipt is not None and receipt["status"] == "0x1", receipt

    def create_game(self, name: str, l2_block: int, root: bytes | None = None) -> bytes:
        claim = root if root is not None else self.output_root_of(l2_block)
        data = CREATE + (0).to_bytes(32, "big") + claim + (0x60).to_bytes(32, "big") \
            + (32).to_bytes(32, "big") + l2_block.to_bytes(32, "big")
        self.send(self.l1, FACTORY, data)
        count = int(rpc_call(self.l1.url, "eth_getStorageAt",
                             [hx(FACTORY), hex(104), "latest"]), 16)
        base = int.from_bytes(keccak256((104).to_bytes(32, "big")), "big")
        game_id = int(rpc_call(self.l1.url, "eth_getStorageAt",
                               [hx(FACTORY), hex(base + count - 1), "latest"]), 16)
        address = (game_id & ((1 << 160) - 1)).to_bytes(20, "big")
        self.games[name], self.game_blocks[name] = address, l2_block
        return address

    def set_game(self, name: str, status: GameStatus, created: int, resolved: int = 0) -> None:
        self.set_slot(self.l1, self.games[name], 0,
                      created | resolved << 64 | int(status) << 128 | 1 << 136)

    def blacklist(self, name: str) -> None:
        self.set_slot(self.l1, PORTAL, mapping_slot(self.games[name], 58), 1)

    def l1_head(self) -> str:
        return rpc_call(self.l1.url, "eth_getBlockByNumber", ["latest", False])["hash"]

    def args(self, *more: object, game: str | None = None) -> list[str]:
        out = ["--rpc", self.l2.url, "--l2-portal", hx(PORTAL), "--l1-rpc", self.l1.url,
               "--l1-block-hash", self.l1_head()]
        if game is not None:
            out += ["--l2-game", hx(self.games[game])]
        return out + [str(m) for m in more]


ALL_GAMES = ("retired", "blacklisted", "final", "wrong", "challenged", "resolved", "proposed")


def build_pair(l1: Anvil, l2: Anvil, names: tuple[str, ...] = ALL_GAMES) -> Pair:
    """The pair with games (L2 block n holds slot 0 = n): ``final`` (L2 block 11),
    ``resolved`` (in its delay, block 15), ``challenged`` (CHALLENGER_WINS, a false root
    claim), ``blacklisted`` (block 9), ``wrong`` (a false root claim, final), ``proposed``
    (IN_PROGRESS, block 17) and ``retired`` (created before the respected type was set), or
    only those ``names``."""
    pair = Pair(l1, l2)
    pair.set_code(l2, MESSAGE_PASSER, runtime("L2ToL1MessagePasser"))
    pair.set_slot(l2, MESSAGE_PASSER, 0, 7)  # a sent-messages nonce: a non-empty storage root
    # anvil writes a set slot or code into its head block's state (that block's proofs stop
    # hashing to its state root): every write is at genesis, mined into block 1; then each
    # block n (2..20) is one transaction storing n in the registry's slot 0
    pair.set_code(l2, REGISTRY, STORE_WORD)
    pair.mine(l2)
    for n in range(2, 21):
        pair.send(l2, REGISTRY, n.to_bytes(32, "big"))
    pair.set_code(l1, PORTAL, runtime("Proxy"))
    pair.set_code(l1, PORTAL_IMPL, with_immutables(runtime("OptimismPortal2"), "OptimismPortal2",
                                                   {"DISPUTE_GAME_FINALITY_DELAY_SECONDS":
                                                    FINALITY_DELAY,
                                                    "PROOF_MATURITY_DELAY_SECONDS": 7200}))
    pair.set_slot(l1, PORTAL, IMPLEMENTATION_SLOT, int.from_bytes(PORTAL_IMPL, "big"))
    pair.set_code(l1, FACTORY, runtime("Proxy"))
    pair.set_code(l1, FACTORY_IMPL, runtime("DisputeGameFactory"))
    pair.set_slot(l1, FACTORY, IMPLEMENTATION_SLOT, int.from_bytes(FACTORY_IMPL, "big"))
    pair.set_slot(l1, FACTORY, mapping_slot((0).to_bytes(32, "big"), 101),
                  int.from_bytes(GAME_IMPL, "big"))
    pair.set_code(l1, GAME_IMPL, bytes.fromhex("00"))  # initialize() returns: no VM needed
    pair.mine(l1)
    now = int(time.time())
    respected_since = now - 10 * FINALITY_DELAY
    for name, l2_block in (("retired", 5), ("blacklisted", 9), ("final", 11), ("wrong", 13),
                           ("challenged", 13), ("resolved", 15), ("proposed", 17)):
        if name in names:
            root = keccak256(name.encode()) if name in ("wrong", "challenged") else None
            pair.create_game(name, l2_block, root)
    pair.set_code(l1, GAME_IMPL, with_immutables(runtime("FaultDisputeGame"), "FaultDisputeGame",
                                                 {"GAME_TYPE": 0}))
    pair.set_slot(l1, PORTAL, 56, int.from_bytes(FACTORY, "big"))
    pair.set_slot(l1, PORTAL, 59, 0 | respected_since << 32)
    old = now - 3 * FINALITY_DELAY
    states = {"retired": (GameStatus.DEFENDER_WINS, respected_since - 100, old),
              "final": (GameStatus.DEFENDER_WINS, old - 600, old),
              "wrong": (GameStatus.DEFENDER_WINS, old - 600, old),
              "blacklisted": (GameStatus.DEFENDER_WINS, old - 600, old),
              "challenged": (GameStatus.CHALLENGER_WINS, old - 600, old),
              "resolved": (GameStatus.DEFENDER_WINS, now - 900, now - 60),
              "proposed": (GameStatus.IN_PROGRESS, now - 60, 0)}
    for name in names:
        pair.set_game(name, *states[name])
    if "blacklisted" in names:
        pair.blacklist("blacklisted")
    pair.mine(l1)
    return pair


def add_final_game(pair: Pair, name: str, l2_block: int) -> bytes:
    """A game made by the factory after the pair was built (its implementation given no code
    for the creation, then FaultDisputeGame's again), resolved DEFENDER_WINS long ago."""
    pair.set_code(pair.l1, GAME_IMPL, bytes.fromhex("00"))
    pair.mine(pair.l1)
    pair.create_game(name, l2_block)
    pair.set_code(pair.l1, GAME_IMPL, with_immutables(runtime("FaultDisputeGame"),
                                                      "FaultDisputeGame", {"GAME_TYPE": 0}))
    old = int(time.time()) - 3 * FINALITY_DELAY
    pair.set_game(name, GameStatus.DEFENDER_WINS, old - 600, old)
    pair.mine(pair.l1)
    return pair.games[name]
