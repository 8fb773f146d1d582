"""The light-client anchor through the CLI, on a real anvil chain with the devnet beacon
server over its blocks. Expected values come from the contract's getters (eth_call) and the
blocks anvil mined, never from the verifier."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recompute.devnet.anvil import Anvil, rpc_call
from recompute.devnet.beacon_server import DevnetBeaconServer
from recompute.devnet.contracts import connect, deploy
from tests.rpcproxy import RpcProxy, refuse

ARTIFACTS = str(Path(__file__).parents[1] / "core" / "artifacts")


@pytest.fixture(scope="module")
def chain():
    """anvil with SlotBox (a() = 0x38 at slot 0) and a few blocks on top; the devnet beacon
    chain over every block (the second-to-last is finalized, the last optimistic)."""
    with Anvil() as node:
        w3 = connect(node.url)
        box = deploy(w3, "SlotBox", directory=ARTIFACTS)
        w3.eth.wait_for_transaction_receipt(box.functions.fill(0, 10).transact())
        for _ in range(3):
            rpc_call(node.url, "evm_mine", [])
        head = w3.eth.block_number
        blocks = [rpc_call(node.url, "eth_getBlockByNumber", [hex(n), False])
                  for n in range(head + 1)]
        with DevnetBeaconServer(blocks) as beacon:
            yield node, w3, box, beacon, blocks


def lc_args(beacon, *more: str) -> list[str]:
    return ["--beacon", beacon.url, "--trusted-root", "0x" + beacon.trusted_block_root.hex(),
            "--network", "devnet", *more]


def test_proof_pinned_by_the_light_client_is_good(chain, run_cli):
    node, w3, box, beacon, blocks = chain
    finalized = blocks[-2]
    want = box.functions.a().call(block_identifier=int(finalized["number"], 16))
    assert want == 0x38
    result = run_cli("proof", "--rpc", node.url, *lc_args(beacon), "--address", box.address,
                     "--slot", "0", "--expect", f"0={want:#x}", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    out = json.loads(result.stdout)
    assert out["verdict"] == "VERIFIED-GOOD"
    block, anchor = out["evidence"]["block"], out["evidence"]["anchor"]
    assert block["hash"] == finalized["hash"]
    assert block["number"] == int(finalized["number"], 16)
    assert block["state_root"] == finalized["stateRoot"]
    assert anchor["method"] == "light-client"
    assert anchor["trusted_root"] == "0x" + beacon.trusted_block_root.hex()
    assert anchor["network"] == "devnet"
    assert anchor["participation"] == "32/32"
    assert anchor["sync_committee_period"] == 0
    # the devnet beacon chain puts execution block k at slot 1 + k
    assert anchor["finalized_beacon_slot"] == 1 + int(finalized["number"], 16)
    assert anchor["execution_header"] == "re-hashed to the block hash"
    human = run_cli("proof", "--rpc", node.url, *lc_args(beacon), "--address", box.address,
                    "--expect", "0=0x39")
    assert human.returncode == 1 and human.stdout.startswith("VERIFIED-BAD")
    assert "anchor light-client: trusts the trusted beacon block root and 2/3" in human.stdout


def test_latest_is_the_signed_optimistic_head_and_n_is_reached_below(chain, run_cli):
    node, w3, box, beacon, blocks = chain
    latest = run_cli("proof", "--rpc", node.url, *lc_args(beacon, "--block", "latest"),
                     "--address", box.address, "--slot", "0", "--json")
    assert latest.returncode == 0, latest.stderr
    assert json.loads(latest.stdout)["evidence"]["block"]["hash"] == blocks[-1]["hash"]
    down = run_cli("proof", "--rpc", node.url, *lc_args(beacon, "--block", "1"),
                   "--address", box.address, "--slot", "0", "--json")
    assert down.returncode == 0, down.stderr
    out = json.loads(down.stdout)
    assert out["evidence"]["block"]["hash"] == blocks[1]["hash"]
    path = out["evidence"]["anchor"]["history_path"]  # one hop from the finalized state
    assert path["via"] == "history-contract"
    assert path["hops"] == [{"from_block": len(blocks) - 2, "block": 1, "slot": 1,
                             "hash": blocks[1]["hash"]}]
    walked = run_cli("proof", "--rpc", node.url, *lc_args(beacon, "--block", "1"),
                     "--history", "walk", "--address", box.address, "--slot", "0", "--json")
    walk = json.loads(walked.stdout)
    assert walk["evidence"]["block"] == out["evidence"]["block"]
    assert walk["evidence"]["anchor"]["history_path"]["headers_walked"] == len(blocks) - 2 - 1
    above = run_cli("proof", "--rpc", node.url, *lc_args(beacon, "--block", str(len(blocks))),
                    "--address", box.address, "--json")
    assert above.returncode == 2
    assert json.loads(above.stdout)["reason"] == "block-unknown"


def test_a_node_that_does_not_serve_the_header_still_gets_a_verdict(chain, run_cli):
    node, w3, box, beacon, blocks = chain
    with RpcProxy(node.url, refuse("eth_getBlockByHash")) as proxy:
        good = run_cli("proof", "--rpc", proxy.url, *lc_args(beacon), "--address", box.address,
                       "--expect", "0=0x38", "--json")
        bad = run_cli("proof", "--rpc", proxy.url, *lc_args(beacon), "--address", box.address,
                      "--expect", "0=0x39", "--json")
    assert good.returncode == 0, good.stdout + good.stderr
    out = json.loads(good.stdout)
    assert out["verdict"] == "VERIFIED-GOOD"
    assert out["evidence"]["block"]["state_root"] == blocks[-2]["stateRoot"]
    assert out["evidence"]["anchor"]["execution_header"].startswith("not served")
    assert bad.returncode == 1 and json.loads(bad.stdout)["verdict"] == "VERIFIED-BAD"


def test_a_header_that_does_not_hash_to_the_signed_block_is_a_mismatch(chain, run_cli):
    node, w3, box, beacon, blocks = chain

    other = rpc_call(node.url, "eth_getBlockByNumber", ["0x1", False])

    def another_block(method, params, reply):  # a real, self-consistent header of block 1
        if method == "eth_getBlockByHash":
            reply["result"] = other
        return reply

    def edited(method, params, reply):  # the asked-for header with another state root
        if method == "eth_getBlockByHash" and reply.get("result"):
            reply["result"]["stateRoot"] = "0x" + "11" * 32
        return reply

    for rewrite, reason in ((another_block, "header-mismatch"), (edited, "rpc-inconsistent")):
        with RpcProxy(node.url, rewrite) as proxy:
            result = run_cli("proof", "--rpc", proxy.url, *lc_args(beacon), "--address",
                             box.address, "--expect", "0=0x38", "--json")
        assert result.returncode == 2
        assert json.loads(result.stdout)["reason"] == reason


def test_a_node_lying_in_proofs_is_unverifiable_under_the_light_client(chain, run_cli):
    node, w3, box, beacon, blocks = chain

    def lie(method, params, reply):
        if method == "eth_getProof" and reply.get("result"):
            reply["result"]["storageProof"][0]["value"] = "0x39"
        return reply

    with RpcProxy(node.url, lie) as proxy:
        for expect in ("0=0x38", "0=0x39"):
            result = run_cli("proof", "--rpc", proxy.url, *lc_args(beacon), "--address",
                             box.address, "--expect", expect, "--json")
            assert result.returncode == 2
            assert json.loads(result.stdout)["reason"] == "rpc-inconsistent"


def test_too_few_signers_is_unverifiable_never_a_verdict(chain, run_cli):
    node, w3, box, beacon, blocks = chain
    with DevnetBeaconServer(blocks, signers=21) as weak:  # 21/32 < 2/3
        for expect in ("0=0x38", "0=0x39"):
            result = run_cli("proof", "--rpc", node.url, *lc_args(weak), "--address",
                             box.address, "--expect", expect, "--json")
            assert result.returncode == 2, result.stdout
            assert json.loads(result.stdout)["reason"] == "invalid-consensus-proof"


def test_light_client_options_usage_errors(chain, run_cli):
    node, w3, box, beacon, blocks = chain
    cases = [
        ["--beacon", beacon.url],  # no --trusted-root
        ["--trusted-root", "0x" + "00" * 32],  # no --beacon
        [*lc_args(beacon), "--block-hash", blocks[-2]["hash"]],
        [*lc_args(beacon), "--block", "earliest"],
        ["--beacon", beacon.url, "--trusted-root", "0x12", "--network", "devnet"],
        ["--beacon", beacon.url, "--trusted-root", "0x" + "00" * 32, "--network", "nowhere"],
    ]
    for extra in cases:
        result = run_cli("proof", "--rpc", node.url, *extra, "--address", box.address)
        assert result.returncode == 64, (extra, result.stdout, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_block_below_the_pin_is_proven_by_hops_as_its_own_hash_pins_it(chain, run_cli):
    """No header walk (the node is asked no eth_getBlockByNumber), the same verdict and block as
    a pin by the block's own hash; a node lying about the history slot gets UNVERIFIABLE."""
    node, w3, box, beacon, blocks = chain
    args = ["--address", box.address, "--slot", "0", "--expect", "0=0x38", "--json"]
    with RpcProxy(node.url) as proxy:
        result = run_cli("proof", "--rpc", proxy.url, *lc_args(beacon, "--block", "2"), *args)
        asked = dict(proxy.methods)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "eth_getBlockByNumber" not in asked and asked["eth_getProof"] == 2, asked
    by_hash = run_cli("proof", "--rpc", node.url, "--block-hash", blocks[2]["hash"], *args)
    hops, pinned = json.loads(result.stdout), json.loads(by_hash.stdout)
    assert (hops["verdict"], hops["evidence"]["block"]) == (pinned["verdict"],
                                                            pinned["evidence"]["block"])
    assert hops["evidence"]["block"]["hash"] == blocks[2]["hash"]

    def lie(method, params, reply):  # only the history contract's slot
        result = reply.get("result")
        if method == "eth_getProof" and result and result["address"].lower() == \
                "0x0000f90827f1c53a10cb7a02335b175320002935":
            result["storageProof"][0]["value"] = blocks[3]["hash"]
        return reply

    with RpcProxy(node.url, lie) as proxy:
        lied = run_cli("proof", "--rpc", proxy.url, *lc_args(beacon, "--block", "2"), *args)
    assert lied.returncode == 2, lied.stdout
    assert json.loads(lied.stdout)["reason"] == "rpc-inconsistent"
