"""The devnet's L2 (``devnet up --l2``): the L2 anvil's registries, the real OP-stack L1
contracts and the scripted games, read back through the contracts' own views (the independent
source: the L1 contracts' code is the OP stack's own, from its npm package), the output roots
recomputed here from the L2 node, and the lying L2 node."""

from __future__ import annotations

import json
import threading

import pytest
from eth_hash.auto import keccak
from web3 import Web3

from recompute.core.anchor import anchor_block
from recompute.data import ARTIFACTS
from recompute.devnet import l2_games
from recompute.devnet.anvil import Anvil, rpc_call
from recompute.devnet.beacon_server import DevnetBeaconServer
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build
from recompute.devnet.contracts import connect, load_artifact
from recompute.devnet.l2_chain import MESSAGE_PASSER, OPTIMISM_ARTIFACTS, build_l2, l2_anvil
from recompute.devnet.l2_lie import server as lying_server
from recompute.devnet.l2_moments import L2_MOMENTS, UNNAMED, describe_l2
from recompute.devnet.moments import ABOUT
from recompute.evaluator.job import step
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource
from tests.cli import run_cli

pytestmark = pytest.mark.anvil

FINALITY_DELAY = 1800  # what the devnet's portal is deployed with (docs/devnet.md)


@pytest.fixture(scope="module")
def l2net():
    """``(l1 node, L1 manifest, L2 node, the manifest's l2 section)``, built in this process
    as ``devnet up --l2`` builds it (the lying node in a thread)."""
    l1 = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP).start()
    l2 = l2_anvil().start()
    lie = None
    try:
        manifest = build(l1)
        section = build_l2(l2)
        section.update(l2_games.run(l1.url, l2, section))
        lie = lying_server(l2.url, section["contracts"]["AgentMeditationRegistry"])
        threading.Thread(target=lie.serve_forever, daemon=True).start()
        section["rpc"], section["lying_rpc"] = l2.url, f"http://127.0.0.1:{lie.server_address[1]}"
        describe_l2(section, l1.url)
        yield l1, manifest, l2, section
    finally:
        if lie is not None:
            lie.shutdown()
        l2.stop()
        l1.stop()


def _bound(w3, name, address):
    return w3.eth.contract(address=Web3.to_checksum_address(address),
                           abi=load_artifact(name, OPTIMISM_ARTIFACTS)["abi"])


def _output_root(url: str, number: int) -> str:
    """Recomputed here: keccak256(bytes32(0) ‖ stateRoot ‖ passer storage root ‖ block hash)."""
    block = rpc_call(url, "eth_getBlockByNumber", [hex(number), False])
    passer = rpc_call(url, "eth_getProof", [MESSAGE_PASSER, [], hex(number)])
    return "0x" + keccak(bytes(32) + bytes.fromhex(block["stateRoot"][2:])
                         + bytes.fromhex(passer["storageHash"][2:])
                         + bytes.fromhex(block["hash"][2:])).hex()


def test_the_l1_history_is_untouched(l2net):
    """The L2's L1 blocks come after the whole L1 history: every L1 moment's block is where it
    was (its hash as the L1 manifest recorded it)."""
    l1, manifest, _, section = l2net
    for label, moment in manifest["moments"].items():
        block = rpc_call(l1.url, "eth_getBlockByNumber", [hex(moment["number"]), False])
        assert block["hash"] == moment["hash"], label
    first_game = min(game["created_block"] for game in section["games"].values())
    assert first_game > max(m["number"] for m in manifest["moments"].values())


def test_the_games_are_as_scripted(l2net):
    l1, _, l2, section = l2net
    w3 = connect(l1.url)
    contracts = section["l1"]["contracts"]
    settled = section["settled"]
    at = settled["number"]
    factory = _bound(w3, "DisputeGameFactory", contracts["DisputeGameFactory"])
    portal = _bound(w3, "OptimismPortal2", contracts["OptimismPortal2"])
    assert factory.functions.gameCount().call(block_identifier=at) == 5
    assert factory.functions.version().call() == "1.0.0"
    assert portal.functions.version().call() == "3.10.0"
    assert portal.functions.disputeGameFactory().call() == contracts["DisputeGameFactory"]
    assert portal.functions.respectedGameType().call(block_identifier=at) == 0
    assert portal.functions.disputeGameFinalityDelaySeconds().call() == FINALITY_DELAY
    proposer = w3.eth.accounts[2]
    statuses = {}
    for name, game in section["games"].items():
        kind, created, proxy = factory.functions.gameAtIndex(game["index"]).call(
            block_identifier=at)
        assert (kind, proxy) == (0, game["address"]), name
        contract = _bound(w3, "FaultDisputeGame", proxy)
        assert contract.functions.gameCreator().call() == proposer, name
        assert contract.functions.l2BlockNumber().call() == game["l2_block"], name
        assert contract.functions.createdAt().call(block_identifier=at) == created, name
        true_root = _output_root(l2.url, game["l2_block"])
        root = "0x" + contract.functions.rootClaim().call().hex()
        assert (root == true_root) == (name != "challenger-wins"), name
        status = contract.functions.status().call(block_identifier=at)
        resolved = contract.functions.resolvedAt().call(block_identifier=at)
        statuses[name] = status
        final = settled["timestamp"] - resolved > FINALITY_DELAY
        assert final == (name != "in-delay"), name
        blacklisted = portal.functions.disputeGameBlacklist(proxy).call(block_identifier=at)
        assert blacklisted == (name == "blacklisted"), name
    assert statuses == {"final-good": 2, "final-bad": 2, "challenger-wins": 1,
                        "blacklisted": 2, "in-delay": 2}  # 1 CHALLENGER_WINS, 2 DEFENDER_WINS
    # the anchor state registry moved to the highest L2 block of a DEFENDER_WINS game
    registry = _bound(w3, "AnchorStateRegistry", contracts["AnchorStateRegistry"])
    best = max((g for n, g in section["games"].items() if n != "challenger-wins"),
               key=lambda g: g["l2_block"])
    assert registry.functions.anchors(0).call(block_identifier=at) == [
        bytes.fromhex(best["root_claim"][2:]), best["l2_block"]]


def test_the_l1_contracts_are_the_packages_behind_proxies(l2net):
    """Every system contract's runtime code is its npm artifact's (immutables aside), each
    behind an OP Proxy whose EIP-1967 implementation slot names it."""
    l1, _, _, section = l2net
    contracts = section["l1"]["contracts"]
    impl_slot = hex(int.from_bytes(keccak(b"eip1967.proxy.implementation"), "big") - 1)
    proxy_code = load_artifact("Proxy", OPTIMISM_ARTIFACTS)["deployedBytecode"]
    for name in ("SuperchainConfig", "DisputeGameFactory", "AnchorStateRegistry",
                 "DelayedWETH", "OptimismPortal2"):
        assert rpc_call(l1.url, "eth_getCode", [contracts[name], "latest"]) == proxy_code, name
        slot = rpc_call(l1.url, "eth_getStorageAt", [contracts[name], impl_slot, "latest"])
        assert int(slot, 16) == int(contracts[f"{name}.implementation"], 16), name
    for name in ("DisputeGameFactory", "SuperchainConfig"):  # no immutables: byte for byte
        code = rpc_call(l1.url, "eth_getCode", [contracts[f"{name}.implementation"], "latest"])
        assert code == load_artifact(name, OPTIMISM_ARTIFACTS)["deployedBytecode"], name
    bundled = json.loads((ARTIFACTS / "optimism" / "FaultDisputeGame.json").read_text())
    assert bundled["package"] == "@eth-optimism/contracts-bedrock@0.17.3"


def test_the_l2_registries_give_the_l1_verdicts(l2net):
    """The same recipe over the same registry state gives the same verdict on L2 as on L1:
    each game's L2 block, anchored by its hash, judged as its AMM moment says."""
    _, _, l2, section = l2net
    for name, game in section["games"].items():
        about = ABOUT[game["l2_moment"]]
        recipe = get_recipe(about["recipe"])
        block = anchor_block([LiveSource(l2.url)],
                             block_hash=bytes.fromhex(game["output_root"]["block_hash"][2:]))
        address = bytes.fromhex(section["contracts"][about["contract"]][2:])
        outcome = step(recipe, recipe.parse_params(about["params"](section)), block, address,
                       load_layout(about["layout"] or recipe.layout), None)
        assert outcome.verdict.value == about["verdict"], name


def test_the_message_passer_holds_a_withdrawal(l2net):
    """The output roots commit to a non-empty message passer storage (one withdrawal)."""
    _, _, l2, section = l2net
    number = section["games"]["final-good"]["l2_block"]
    passer = rpc_call(l2.url, "eth_getProof", [MESSAGE_PASSER, ["0x" + "00" * 32], hex(number)])
    empty_trie = "0x" + keccak(b"\x80").hex()
    assert passer["storageHash"] != empty_trie
    nonce = rpc_call(l2.url, "eth_call", [{"to": MESSAGE_PASSER,
                                           "data": "0xecc70428"}, hex(number)])  # messageNonce()
    assert int(nonce, 16) == (1 << 240) | 1  # version 1 in the top bytes, one message sent


def test_the_lying_node_lies_about_the_registry_only(l2net):
    _, _, l2, section = l2net
    registry = section["contracts"]["AgentMeditationRegistry"]
    number = hex(section["games"]["final-good"]["l2_block"])
    slot = "0x" + "00" * 31 + "01"
    honest = rpc_call(l2.url, "eth_getProof", [registry, [slot], number])
    lying = rpc_call(section["lying_rpc"], "eth_getProof", [registry, [slot], number])
    assert int(lying["storageProof"][0]["value"], 16) == \
        int(honest["storageProof"][0]["value"], 16) + 1
    assert lying["storageProof"][0]["proof"] == honest["storageProof"][0]["proof"]
    assert lying["storageHash"] == honest["storageHash"]
    header = [rpc_call(url, "eth_getBlockByNumber", [number, False])["hash"]
              for url in (l2.url, section["lying_rpc"])]
    assert header[0] == header[1]
    other = rpc_call(section["lying_rpc"], "eth_getProof", [MESSAGE_PASSER, [slot], number])
    assert other == rpc_call(l2.url, "eth_getProof", [MESSAGE_PASSER, [slot], number])


def test_every_l2_moment_names_its_command(l2net):
    l1, _, _, section = l2net
    moments = section["moments"]
    assert set(moments) == set(L2_MOMENTS)
    portal = section["l1"]["contracts"]["OptimismPortal2"]
    for label, moment in moments.items():
        argv = moment["argv"]
        assert argv[:2] == ["recompute", "step"], label
        node = section["lying_rpc"] if label == "l2.lying-node" else section["rpc"]
        assert argv[argv.index("--rpc") + 1] == node, label
        assert argv[argv.index("--l1-rpc") + 1] == l1.url, label
        assert argv[argv.index("--l2-portal") + 1] == portal, label
        assert argv[argv.index("--l1-block-hash") + 1] == section["settled"]["hash"], label
        if label in UNNAMED:
            assert "--l2-game" not in argv, label
        else:
            assert argv[argv.index("--l2-game") + 1] == moment["game_address"], label
        expected = ABOUT[section["games"][moment["game"]]["l2_moment"]]["verdict"]
        if moment["verdict"] != "UNVERIFIABLE":
            assert moment["verdict"] == expected, label
    assert {m["verdict"] for m in moments.values()} == {
        "VERIFIED-GOOD", "VERIFIED-BAD", "UNVERIFIABLE"}


@pytest.fixture(scope="module")
def l1_beacon(l2net):
    """The devnet's beacon side over the L1 chain, the L2's games included (as ``devnet up``
    starts it after them)."""
    l1 = l2net[0]
    head = int(rpc_call(l1.url, "eth_blockNumber"), 16)
    blocks = [rpc_call(l1.url, "eth_getBlockByNumber", [hex(n), False]) for n in range(head + 1)]
    with DevnetBeaconServer(blocks) as server:
        yield server


EXIT = {"VERIFIED-GOOD": 0, "VERIFIED-BAD": 1, "UNVERIFIABLE": 2}


@pytest.mark.parametrize("anchor", ["rpc-pinned", "beacon"])
@pytest.mark.parametrize("label", sorted(L2_MOMENTS))
def test_each_l2_moment_gives_its_verdict_through_l1(l2net, l1_beacon, label, anchor):
    """The moment's own command (the L1 block pinned by its hash), or the same with the L1
    block reached through the devnet's beacon light client instead: the verdict and reason the
    manifest says; the lying node never gets past UNVERIFIABLE."""
    moment = l2net[3]["moments"][label]
    argv = list(moment["argv"][1:])
    if anchor == "beacon":
        at = argv.index("--l1-block-hash")
        argv[at:at + 2] = ["--l1-block", str(moment["l1"]["number"]), "--beacon", l1_beacon.url,
                           "--trusted-root", "0x" + l1_beacon.trusted_block_root.hex(),
                           "--network", "devnet", "--accept-old-checkpoint"]
    result = run_cli(*argv)
    first = result.stdout.splitlines()[0] if result.stdout else ""
    assert result.returncode == EXIT[moment["verdict"]], (label, result.stdout, result.stderr)
    assert first.startswith(moment["verdict"] + " ("), (label, first)
    if moment.get("reason"):
        assert first.startswith(f"UNVERIFIABLE ({moment['reason']})"), (label, first)


def test_the_anchor_chooses_the_game_the_manifest_names(l2net):
    """Without --l2-game the anchor picks the newest usable game: the evidence names the one
    the manifest expects, past the newer games it must refuse."""
    section = l2net[3]
    for label in sorted(UNNAMED):
        moment = section["moments"][label]
        newer = [name for name, game in section["games"].items()
                 if game["index"] > section["games"][moment["game"]]["index"]]
        assert sorted(newer) == ["blacklisted", "challenger-wins", "in-delay"], label
        result = run_cli(*moment["argv"][1:], "--json")
        assert result.returncode == EXIT[moment["verdict"]], (label, result.stderr)
        chosen = json.loads(result.stdout)["evidence"]["anchor"]["game"]
        assert chosen["address"] == moment["game_address"].lower(), label
        assert chosen["l2_block_number"] == moment["l2_block"], label


def test_an_l2_block_below_the_game_is_one_hop_through_the_l2_history_contract(l2net):
    """The devnet's L2 (anvil in OP-stack mode at Isthmus) holds the history storage contract
    from its genesis, the EIP-2935 code at the EIP's address as an Isthmus chain does; a block
    below a final game's is proven by one hop from the game block's state (its hash anvil's)."""
    from recompute.core.history_window import HISTORY_STORAGE_ADDRESS, HISTORY_STORAGE_CODE

    l2, section = l2net[2], l2net[3]
    history = "0x" + HISTORY_STORAGE_ADDRESS.hex()
    assert rpc_call(l2.url, "eth_getCode", [history, "0x0"]) == "0x" + HISTORY_STORAGE_CODE.hex()
    moment = section["moments"]["l2.final-bad"]
    argv = moment["argv"]
    number = moment["l2_block"] - 3
    pick = ["--rpc", "--l2-portal", "--l1-rpc", "--l1-block-hash", "--l2-game", "--at",
            "--address"]
    args = [part for flag in pick for part in (flag, argv[argv.index(flag) + 1])]
    result = run_cli("proof", *args, "--slot", "0", "-b", number, "--json")
    assert result.returncode == 0, result.stderr
    evidence = json.loads(result.stdout)["evidence"]
    want = rpc_call(l2.url, "eth_getBlockByNumber", [hex(number), False])["hash"]
    assert evidence["block"]["hash"] == want
    assert evidence["anchor"]["history_path"] == {
        "via": "history-contract", "contract": history,
        "hops": [{"from_block": moment["l2_block"], "block": number, "slot": number,
                  "hash": want}]}
