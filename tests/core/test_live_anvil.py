"""The trust core against real anvil nodes on free loopback ports.

Expected values come from the contract's own getters (eth_call) and from the values the test
wrote, never from the verifier.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.errors import Unverifiable
from recompute.core.prover import prove_account
from recompute.devnet.anvil import Anvil, rpc_call
from recompute.devnet.contracts import connect, deploy
from recompute.sources.live import LiveSource
from tests.cli import run_cli
from tests.rpcproxy import RpcProxy, rewrite_proofs

ARTIFACTS = str(Path(__file__).parent / "artifacts")
GENESIS_TS = 1767225600




@pytest.fixture(scope="module")
def chain():
    """One anvil with SlotBox deployed and m[0..9] filled; shared by the module's tests."""
    with Anvil() as node:
        w3 = connect(node.url)
        box = deploy(w3, "SlotBox", directory=ARTIFACTS)
        w3.eth.wait_for_transaction_receipt(box.functions.fill(0, 10).transact())
        yield node, w3, box


def test_set_and_unset_slots_equal_the_getters(chain):
    node, w3, box = chain
    block = anchor_block([LiveSource(node.url)], block="latest")
    m5 = int.from_bytes(w3.keccak(b"".join(x.to_bytes(32, "big") for x in (5, 3))), "big")
    m77 = int.from_bytes(w3.keccak(b"".join(x.to_bytes(32, "big") for x in (77, 3))), "big")
    address = bytes.fromhex(box.address[2:])
    account = prove_account(block, address, [0, 1, 2, m5, m77])
    at = block.number
    assert account.exists and account.nonce == 1  # EIP-161: contracts start at nonce 1
    assert account.storage[0] == box.functions.a().call(block_identifier=at) == 0x38
    assert account.storage[1] == box.functions.b().call(block_identifier=at) == 0
    assert account.storage[2] == box.functions.c().call(block_identifier=at) == 2**256 - 1
    assert account.storage[m5] == box.functions.m(5).call(block_identifier=at) == 5 * 7 + 1
    assert account.storage[m77] == box.functions.m(77).call(block_identifier=at) == 0


def test_an_address_without_an_account_is_proven_absent(chain):
    node, _, _ = chain
    block = anchor_block([LiveSource(node.url)], block="latest")
    account = prove_account(block, bytes.fromhex("c1cada" + "ff" * 17), [0, 1])
    assert not account.exists
    assert (account.nonce, account.balance, dict(account.storage)) == (0, 0, {0: 0, 1: 0})


def test_cli_proof_pinned_by_hash_json(chain):
    node, w3, box = chain
    head = w3.eth.get_block("latest")
    result = run_cli("proof", "--rpc", node.url, "--block-hash", head["hash"].to_0x_hex(),
                     "--address", box.address, "--slot", "0", "--slot", "1", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["verdict"] == "VERIFIED-GOOD"
    assert out["evidence"]["anchor"]["method"] == "block-hash"
    assert out["evidence"]["block"]["number"] == head["number"]
    assert out["evidence"]["block"]["state_root"] == head["stateRoot"].to_0x_hex()
    assert out["evidence"]["chain_id"] == 31337
    assert out["evidence"]["account"]["address"] == box.address.lower()
    assert out["evidence"]["slots"] == [
        {"slot": "0x" + "00" * 32, "value": "0x" + "00" * 31 + "38"},
        {"slot": "0x" + "00" * 31 + "01", "value": "0x" + "00" * 32},
    ]


def test_cli_expect_turns_a_difference_into_bad(chain):
    node, _, box = chain
    good = run_cli("proof", "--rpc", node.url, "--block", "latest", "--address", box.address,
                   "--expect", "0=0x38")
    bad = run_cli("proof", "--rpc", node.url, "--block", "latest", "--address", box.address,
                  "--expect", "0=0x39")
    assert good.returncode == 0 and good.stdout.startswith("VERIFIED-GOOD")
    assert bad.returncode == 1 and bad.stdout.startswith("VERIFIED-BAD")
    assert "single-rpc" in good.stdout  # the report says plainly what was trusted


def test_unknown_pinned_hash_and_future_block_are_unverifiable(chain):
    node, _, box = chain
    unknown = run_cli("proof", "--rpc", node.url, "--block-hash", "0x" + "ab" * 32,
                      "--address", box.address, "--json")
    future = run_cli("proof", "--rpc", node.url, "--block", "999999", "--address", box.address,
                     "--json")
    assert unknown.returncode == 2 and json.loads(unknown.stdout)["reason"] == "block-unknown"
    assert future.returncode == 2 and json.loads(future.stdout)["reason"] == "block-unknown"


def test_checkpoint_walk_over_fifty_blocks(anvil):
    for _ in range(55):
        anvil.rpc("evm_mine")
    head = anvil.rpc("eth_getBlockByNumber", "latest", False)
    five = anvil.rpc("eth_getBlockByNumber", "0x5", False)
    result = run_cli("proof", "--rpc", anvil.url, "--checkpoint", head["hash"], "--block", "5",
                     "--address", "0x" + "00" * 20, "--history", "walk", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["evidence"]["block"]["hash"] == five["hash"]
    assert out["evidence"]["anchor"]["history_path"]["headers_walked"] == 50
    above = run_cli("proof", "--rpc", anvil.url, "--checkpoint", five["hash"], "--block", "6",
                    "--address", "0x" + "00" * 20)
    assert above.returncode == 64 and "above the checkpoint" in above.stderr


def _mine_at(node: Anvil, timestamp: int) -> None:
    node.rpc("evm_setNextBlockTimestamp", timestamp)
    node.rpc("evm_mine")


def test_quorum_of_two_anvils_agrees_then_disagrees():
    with Anvil(timestamp=GENESIS_TS) as one, Anvil(timestamp=GENESIS_TS) as two:
        for node in (one, two):
            _mine_at(node, GENESIS_TS + 12)
        args = ["proof", "--rpc", one.url, "--rpc", two.url, "--quorum", "2", "--block", "1",
                "--address", "0x" + "00" * 20, "--json"]
        agree = run_cli(*args)
        assert agree.returncode == 0, agree.stdout + agree.stderr
        out = json.loads(agree.stdout)
        assert out["evidence"]["anchor"]["method"] == "quorum"
        assert set(out["evidence"]["anchor"]["endpoints"]) == {one.url, two.url}

        _mine_at(one, GENESIS_TS + 24)  # block 2 differs: other timestamps
        _mine_at(two, GENESIS_TS + 25)
        args[args.index("1")] = "2"
        disagree = run_cli(*args)
        assert disagree.returncode == 2
        out = json.loads(disagree.stdout)
        assert out["reason"] == "anchor-disagreement"
        hashes = {rpc_call(n.url, "eth_getBlockByNumber", ["0x2", False])["hash"]
                  for n in (one, two)}
        assert len(hashes) == 2  # the nodes really forked
        for url in (one.url, two.url):  # who said what
            said = rpc_call(url, "eth_getBlockByNumber", ["0x2", False])["hash"]
            assert f"{url} says {said}" in out["detail"]


def test_a_stopped_node_is_unreachable():
    node = Anvil().start()
    url = node.url
    node.stop()
    result = run_cli("proof", "--rpc", url, "--block", "latest", "--address", "0x" + "00" * 20)
    assert result.returncode == 2
    assert result.stderr == "" and result.stdout.startswith("UNVERIFIABLE (rpc-unreachable)")


def test_pruned_history_is_state_unavailable():
    with Anvil(extra_args=["--prune-history"]) as node:
        node.rpc("evm_mine")
        for _ in range(300):
            node.rpc("evm_mine")
        result = run_cli("proof", "--rpc", node.url, "--block", "1", "--address", "0x" + "00" * 20,
                         "--json")
    assert result.returncode == 2
    out = json.loads(result.stdout)
    assert out["reason"] == "state-unavailable"
    assert "archive node" in out["detail"]




def _flip_last_node(answer):
    node = answer["storageProof"][0]["proof"][-1]
    answer["storageProof"][0]["proof"][-1] = node[:-2] + ("00" if node[-2:] != "00" else "01")


@pytest.mark.parametrize("rewrite,reason", [
    (lambda a: a["storageProof"][0].update(value="0x39"), "rpc-inconsistent"),
    (lambda a: a.update(balance="0x1"), "rpc-inconsistent"),
    (lambda a: a.update(storageHash="0x" + "11" * 32), "rpc-inconsistent"),
    (_flip_last_node, "invalid-proof"),
    (lambda a: a["accountProof"].pop(), "invalid-proof"),
])
def test_a_lying_node_gives_unverifiable_never_good_or_bad(chain, rewrite, reason):
    node, w3, box = chain
    proxy = RpcProxy(node.url, rewrite_proofs(rewrite))
    try:
        for expect in ("0=0x38", "0=0x39"):
            result = run_cli("proof", "--rpc", proxy.url, "--block", "latest",
                             "--address", box.address, "--expect", expect, "--json")
            assert result.returncode == 2
            assert json.loads(result.stdout)["reason"] == reason
        with pytest.raises(Unverifiable):
            block = anchor_block([LiveSource(proxy.url)], block="latest")
            prove_account(block, bytes.fromhex(box.address[2:]), [0])
    finally:
        proxy.close()


def test_a_slot_cleared_to_zero_is_proven_zero(anvil):
    """anvil keeps a cleared slot as a leaf holding rlp(0) (0x80); it must read as 0."""
    w3 = connect(anvil.url)
    box = deploy(w3, "SlotBox", directory=ARTIFACTS)
    w3.eth.wait_for_transaction_receipt(box.functions.set(0, 5).transact())
    block = anchor_block([LiveSource(anvil.url)], block="latest")
    account = prove_account(block, bytes.fromhex(box.address[2:]), [0, 2])
    assert account.storage[0] == box.functions.a().call(block_identifier=block.number) == 0
    assert account.storage[2] == box.functions.c().call(block_identifier=block.number) == 5


def test_anvils_moved_out_states_go_to_a_folder_it_removes():
    """anvil writes the block states it moves out of memory under ~/.foundry/anvil/tmp unless
    told where (``--cache-path``), and never removes them (72 MB a devnet-sized chain, on every
    start): each Anvil names a private folder, which exists while it runs and is gone after."""
    node = Anvil().start()
    try:
        argv = Path(f"/proc/{node.process.pid}/cmdline").read_bytes().split(b"\0")
        cache = Path(argv[argv.index(b"--cache-path") + 1].decode())
        assert cache.is_dir() and cache.name.startswith("recompute-anvil-")
    finally:
        node.stop()
    assert not cache.exists()
