"""The devnet L2's L1 side: the OP stack's L1 contracts, a proposer, a challenger, a resolver
and the guardian, scripted on the devnet's L1 after its whole history (``devnet up --l2``).

The contracts are the real ones of ``@eth-optimism/contracts-bedrock`` 0.17.3 (bundled in
``recompute/data/artifacts/optimism``): ``SuperchainConfig``, ``DisputeGameFactory`` 1.0.0,
``AnchorStateRegistry`` 1.0.0, ``DelayedWETH``, ``OptimismPortal2`` 3.10.0, each behind an OP
``Proxy`` administered by a ``ProxyAdmin``, as real deployments are, and the
``FaultDisputeGame`` 1.2.0 implementation (game type 0) the factory clones. No game is
simplified: the MIPS VM is not deployed (``vm`` is the zero address) because no game here ever
reaches a ``step``; a game is decided the way an unplayed or once-attacked game is on mainnet,
by its clock running out (``resolveClaim``, then ``resolve``). ``SystemConfig`` is not deployed
(the portal's ``systemConfig`` is the zero address): nothing here reads it.

Times are the OP stack's kinds with devnet lengths (:data:`TIMINGS`); every block has a fixed
timestamp after the L1 history's last one, so the block hashes are the same on every machine.
The games (each over the L2 twin of an AMM moment, :data:`GAMES`), in L1 order:

- five games created by the proposer; one with a wrong output root, attacked by the
  challenger;
- the clocks run out; four games resolved: three DEFENDER_WINS, the wrong one CHALLENGER_WINS;
- the guardian blacklists one of the DEFENDER_WINS games in the portal;
- the finality delay passes; the fifth game is resolved DEFENDER_WINS and the L1 moment
  ``l2.settled`` named in the same block: that game is in its finality delay there, the others
  are final (or refused).
"""

from __future__ import annotations

from typing import Any

from eth_hash.auto import keccak
from web3 import Web3
from web3.contract import Contract

from recompute.devnet.anvil import Anvil
from recompute.devnet.contracts import connect, load_artifact
from recompute.devnet.driver import Driver, HistoryError
from recompute.devnet.l2_chain import L2_CHAIN_ID, OPTIMISM_ARTIFACTS, output_root

GAME_TYPE = 0  # CANNON: the respected game type of the OP mainnet chains
TIMINGS = {
    "max_clock_duration": 3600,  # mainnet 302400 (3.5 days)
    "clock_extension": 600,  # mainnet 10800
    "dispute_game_finality_delay": 1800,  # the portal's; mainnet 302400
    "proof_maturity_delay": 3600,  # the portal's; mainnet 604800
    "weth_delay": 3600,  # DelayedWETH's; mainnet 604800
}
INIT_BOND = 80_000_000_000_000_000  # 0.08 ether, mainnet's
MAX_GAME_DEPTH, SPLIT_DEPTH = 73, 30  # mainnet's
ABSOLUTE_PRESTATE = "0x03" + keccak(b"recompute devnet: no MIPS prestate").hex()[2:]
STATUS = {0: "IN_PROGRESS", 1: "CHALLENGER_WINS", 2: "DEFENDER_WINS"}

# game name -> (the AMM moment whose L2 twin it proposes, its fate)
GAMES: dict[str, tuple[str, str]] = {
    "final-good": ("amm.due", "final"),
    "final-bad": ("amm.overdue", "final"),
    "challenger-wins": ("amm.present-overdue", "wrong-root"),
    "blacklisted": ("amm.silent-fresh", "blacklisted"),
    "in-delay": ("amm.after-cycle-1", "in-delay"),
}
# roles (indices into the devnet's accounts)
OWNER, GUARDIAN, PROPOSER, CHALLENGER, RESOLVER = 0, 1, 2, 3, 5


def _op(driver: Driver, name: str, *args: Any, alias: str | None = None) -> Contract:
    return driver.deploy(name, *args, alias=alias, directory=OPTIMISM_ARTIFACTS)


def _bind(w3: Web3, name: str, address: str) -> Contract:
    return w3.eth.contract(address=Web3.to_checksum_address(address),
                           abi=load_artifact(name, OPTIMISM_ARTIFACTS)["abi"])


def _proxied(driver: Driver, admin: Contract, name: str, implementation: Contract,
             initialize: tuple[Any, ...]) -> Contract:
    """A ``Proxy`` administered by ``admin`` in front of ``implementation``, initialized."""
    proxy = _op(driver, "Proxy", admin.address, alias=name)
    data = implementation.encode_abi("initialize", args=list(initialize))
    driver.tx(admin.functions.upgradeAndCall(proxy.address, implementation.address, data),
              what=f"upgradeAndCall {name}")
    return _bind(driver.w3, name, proxy.address)


def deploy_system(driver: Driver, l2_anchor: dict[str, str]) -> dict[str, Contract]:
    """The OP stack's L1 contracts; the anchor state registry starts at ``l2_anchor`` (the
    output root of L2 block 0)."""
    accounts = driver.accounts
    admin = _op(driver, "ProxyAdmin", accounts[OWNER])
    superchain = _proxied(driver, admin, "SuperchainConfig", _op(
        driver, "SuperchainConfig", alias="SuperchainConfig.implementation"),
        (accounts[GUARDIAN], False))
    factory = _proxied(driver, admin, "DisputeGameFactory", _op(
        driver, "DisputeGameFactory", alias="DisputeGameFactory.implementation"),
        (accounts[OWNER],))
    registry = _proxied(driver, admin, "AnchorStateRegistry", _op(
        driver, "AnchorStateRegistry", factory.address,
        alias="AnchorStateRegistry.implementation"),
        ([(GAME_TYPE, (l2_anchor["output_root"], 0))],))
    weth = _proxied(driver, admin, "DelayedWETH", _op(
        driver, "DelayedWETH", TIMINGS["weth_delay"], alias="DelayedWETH.implementation"),
        (accounts[OWNER], superchain.address))
    game = _op(driver, "FaultDisputeGame", GAME_TYPE, ABSOLUTE_PRESTATE, MAX_GAME_DEPTH,
               SPLIT_DEPTH, TIMINGS["clock_extension"], TIMINGS["max_clock_duration"],
               "0x" + "00" * 20, weth.address, registry.address, L2_CHAIN_ID)
    driver.tx(factory.functions.setImplementation(GAME_TYPE, game.address))
    driver.tx(factory.functions.setInitBond(GAME_TYPE, INIT_BOND))
    portal = _proxied(driver, admin, "OptimismPortal2", _op(
        driver, "OptimismPortal2", TIMINGS["proof_maturity_delay"],
        TIMINGS["dispute_game_finality_delay"], alias="OptimismPortal2.implementation"),
        (factory.address, "0x" + "00" * 20, superchain.address, GAME_TYPE))
    return {"ProxyAdmin": admin, "SuperchainConfig": superchain, "DisputeGameFactory": factory,
            "AnchorStateRegistry": registry, "DelayedWETH": weth, "FaultDisputeGame": game,
            "OptimismPortal2": portal}


def _wrong(root: str) -> str:
    """An output root no L2 block has: the true one with its last bit flipped."""
    raw = bytearray(bytes.fromhex(root[2:]))
    raw[-1] ^= 1
    return "0x" + raw.hex()


def run(l1_url: str, l2: Anvil, l2_section: dict[str, Any]) -> dict[str, Any]:
    """Deploy the system on the L1 at ``l1_url`` and play the games over the L2 blocks of
    ``l2_section`` (recompute.devnet.l2_chain.build_l2); the manifest ``l2`` section's L1 part:
    ``{"l1": …, "games": …, "settled": the L1 moment}``."""
    w3 = connect(l1_url)
    head = w3.eth.get_block("latest")
    driver = Driver(w3, start_timestamp=head["timestamp"])
    accounts = driver.accounts
    system = deploy_system(driver, output_root(l2, 0))
    factory, portal = system["DisputeGameFactory"], system["OptimismPortal2"]

    games: dict[str, dict[str, Any]] = {}
    for name, (label, fate) in GAMES.items():  # the proposer
        number = l2_section["blocks"][label]["number"]
        root = output_root(l2, number)
        claim = _wrong(root["output_root"]) if fate == "wrong-root" else root["output_root"]
        extra = number.to_bytes(32, "big")
        receipt = driver.tx(factory.functions.create(GAME_TYPE, claim, extra),
                            sender=accounts[PROPOSER], value=INIT_BOND, what=f"create {name}")
        address, _ = factory.functions.games(GAME_TYPE, claim, extra).call()
        games[name] = {"address": address, "index": factory.functions.gameCount().call() - 1,
                       "l2_moment": label, "l2_block": number, "root_claim": claim,
                       "output_root": root, "proposer": accounts[PROPOSER],
                       "created_block": receipt["blockNumber"], "fate": fate}
    wrong = _bind(w3, "FaultDisputeGame", games["challenger-wins"]["address"])
    bond = wrong.functions.getRequiredBond(2).call()  # position 2: an attack on the root
    driver.tx(wrong.functions.attack(games["challenger-wins"]["root_claim"], 0,
                                     games["challenger-wins"]["output_root"]["output_root"]),
              sender=accounts[CHALLENGER], value=bond, what="attack the wrong root")

    driver.mine(at=driver.now + 2 * TIMINGS["max_clock_duration"])  # every clock runs out
    resolver = accounts[RESOLVER]
    for name in ("final-good", "final-bad", "challenger-wins", "blacklisted"):
        _resolve(driver, w3, games[name], resolver)
    driver.tx(portal.functions.blacklistDisputeGame(games["blacklisted"]["address"]),
              sender=accounts[GUARDIAN], what="blacklist a game")
    games["blacklisted"]["blacklisted_block"] = w3.eth.block_number
    driver.mine(at=driver.now + TIMINGS["dispute_game_finality_delay"] + 60)
    _resolve(driver, w3, games["in-delay"], resolver)
    settled = driver.moment("l2.settled")

    contracts = {name: contract.address for name, contract in system.items()}
    contracts.update({name: address for name, address in driver.contracts.items()
                      if name.endswith(".implementation")})
    return {"l1": {"contracts": dict(sorted(contracts.items())), "game_type": GAME_TYPE,
                   **TIMINGS, "init_bond": str(INIT_BOND), "max_game_depth": MAX_GAME_DEPTH,
                   "split_depth": SPLIT_DEPTH, "absolute_prestate": ABSOLUTE_PRESTATE,
                   "roles": {"owner": accounts[OWNER], "guardian": accounts[GUARDIAN],
                             "proposer": accounts[PROPOSER], "challenger": accounts[CHALLENGER],
                             "resolver": resolver},
                   "package": load_artifact("OptimismPortal2", OPTIMISM_ARTIFACTS)["package"]},
            "games": games, "settled": settled}


def _resolve(driver: Driver, w3: Web3, game: dict[str, Any], resolver: str) -> None:
    """The resolver: resolve every claim bottom-up (here: the attack, then the root), then the
    game; record its status and times as the game's own views say."""
    contract = _bind(w3, "FaultDisputeGame", game["address"])
    for index in reversed(range(contract.functions.claimDataLen().call())):
        driver.tx(contract.functions.resolveClaim(index, 0), sender=resolver,
                  what=f"resolveClaim {index}")
    driver.tx(contract.functions.resolve(), sender=resolver, what="resolve")
    status = contract.functions.status().call()
    expected = "CHALLENGER_WINS" if game["fate"] == "wrong-root" else "DEFENDER_WINS"
    if STATUS[status] != expected:
        raise HistoryError(f"game {game['address']} resolved {STATUS[status]}, not {expected}")
    game.update(status=STATUS[status], created_at=contract.functions.createdAt().call(),
                resolved_at=contract.functions.resolvedAt().call(),
                resolved_block=w3.eth.block_number)
