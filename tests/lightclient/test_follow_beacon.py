"""``recompute watch --beacon``: follow mode writes a head's lines only once the sync
committee has signed it, and makes them final when the light client's finalized header
covers them. A node that fabricates a child of the signed head (hash-correct, parent-linked,
proofs that verify against its state root) gets no line about it: never GOOD, BAD or final.

One chain of our own (the meters history), the devnet beacon chain over its blocks, a proxy
in front of anvil that fabricates while told to. Expected: the blocks anvil mined and the
beacon server signed, the check's rule (honest key at its cap: GOOD at every block)."""

from __future__ import annotations

import copy
import time

import pytest

from recompute.core.header import Header
from recompute.devnet.anvil import rpc_call
from recompute.devnet.beacon import DevnetBeaconServer
from tests.lightclient.rpcproxy import RpcProxy
from tests.watch.meters import honest_key_check, start_meters_chain
from tests.watch.watchproc import Watch, write_config

pytestmark = pytest.mark.anvil

CHECK = "honest-key"


def block_json(url: str, number: int) -> dict:
    return rpc_call(url, "eth_getBlockByNumber", [hex(number), False])


def fabricate_child(parent: dict) -> dict:
    """A block numbered parent+1 with parent's state root, whose hash is its header's."""
    child = copy.deepcopy(parent)
    child.pop("hash")
    child["parentHash"] = parent["hash"]
    child["number"] = hex(int(parent["number"], 16) + 1)
    child["timestamp"] = hex(int(parent["timestamp"], 16) + 12)
    child["extraData"] = "0x" + b"fabricated".hex()
    child["hash"] = "0x" + Header.from_rpc(child).hash.hex()
    return child


class Fabricator:
    """Rewrites the node's answers so that ``fake`` (a child of ``real``) is its head, with
    proofs and receipts of ``real`` (so they verify against the fake's state root)."""

    def __init__(self, real: dict):
        self.real, self.fake, self.on = real, fabricate_child(real), True

    def __call__(self, method: str, params: list, reply: dict) -> dict:
        if not self.on:
            return reply
        fake, number = self.fake, self.fake["number"]
        if method == "eth_getBlockByNumber" and params[0] in ("latest", number):
            return {**reply, "result": fake, "error": None} if "error" in reply else \
                {**reply, "result": fake}
        if method == "eth_getBlockByHash" and params[0] == fake["hash"]:
            return {"jsonrpc": "2.0", "id": reply["id"], "result": fake}
        if method in ("eth_getProof", "eth_getBlockReceipts") and fake["hash"] in str(params):
            swapped = [self.real["hash"] if p == fake["hash"] else
                       ({"blockHash": self.real["hash"]} if isinstance(p, dict) else p)
                       for p in params]
            return {"jsonrpc": "2.0", "id": reply["id"], "result": rpc_call(
                self.upstream, method, swapped)}
        return reply


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("follow-beacon")
    node, manifest = start_meters_chain()
    watch = None
    try:
        head = int(rpc_call(node.url, "eth_blockNumber", []), 16)
        blocks = [block_json(node.url, n) for n in range(head + 1)]
        beacon = DevnetBeaconServer(blocks).start()
        fabricator = Fabricator(blocks[-1])
        fabricator.upstream = node.url
        proxy = RpcProxy(node.url, fabricator)
        config = write_config(tmp / "checks.toml", [honest_key_check(CHECK, manifest)])
        # the attack is real: without --beacon the fabricated child gets a GOOD line
        control = Watch("--rpc", proxy.url, "--config", str(config), "--poll", "0.1",
                        "--block-hash", blocks[-1]["hash"], "--from", str(head))
        try:
            fooled = control.wait_for(lambda ls: any(
                x.get("hash") == fabricator.fake["hash"] for x in ls),
                what="the control watch's line about the fabricated block")
        finally:
            control.kill()
        watch = Watch("--rpc", proxy.url, "--config", str(config), "--poll", "0.1",
                      "--beacon", beacon.url, "--trusted-root",
                      "0x" + beacon.trusted_block_root.hex(), "--network", "devnet")
        watch.wait_for(lambda ls: any(x.get("block") == head for x in ls),
                       what="the signed head's line")
        # the node now serves the fabricated child as its head, for a while
        time.sleep(3)
        during = watch.snapshot()
        # then the real next block: mined, signed by the committee; the node stops lying
        fabricator.on = False
        rpc_call(node.url, "evm_mine", [])
        real_next = block_json(node.url, head + 1)
        beacon.add_blocks([real_next])
        watch.wait_for(lambda ls: any(x.get("block") == head + 1 for x in ls) and
                       any(x.get("block") == head and x.get("final") for x in ls),
                       what="the real next block's line and the head's final line")
        code = watch.stop()
        yield {"fooled": fooled, "watch": watch, "code": code, "head": head, "blocks": blocks,
               "during": during, "fake": fabricator.fake, "real_next": real_next}
        proxy.close()
        beacon.stop()
    finally:
        if watch is not None:
            watch.kill()
        node.stop()


def checks(lines):
    return [line for line in lines if "check" in line]


def test_the_fabricated_child_never_gets_a_line(run):
    fake = run["fake"]
    assert [x["verdict"] for x in run["fooled"] if x.get("hash") == fake["hash"]] == [
        "VERIFIED-GOOD"]  # the control watch (no --beacon) was fooled
    assert fake["parentHash"] == run["blocks"][-1]["hash"]
    for line in checks(run["watch"].lines):
        assert line["hash"] != fake["hash"], line
    # while the node served it, nothing about block head+1 was written at all
    assert not [line for line in checks(run["during"]) if line["block"] == run["head"] + 1]


def test_the_signed_head_is_good_but_not_final_until_finalized(run):
    head = run["head"]
    during = checks(run["during"])
    assert [(x["block"], x["verdict"], x["final"]) for x in during] == [
        (head, "VERIFIED-GOOD", False)]
    assert during[0]["hash"] == run["blocks"][-1]["hash"]


def test_the_real_next_block_is_written_and_finality_follows_the_light_client(run):
    lines = checks(run["watch"].lines)
    real = [x for x in lines if x["block"] == run["head"] + 1]
    assert real and all(x["hash"] == run["real_next"]["hash"] for x in real)
    assert all(x["verdict"] == "VERIFIED-GOOD" for x in real)
    assert not any(x["final"] for x in real)  # the newest signed block is not finalized
    final = [x for x in lines if x["final"]]
    assert [(x["block"], x["hash"]) for x in final] == [(run["head"],
                                                        run["blocks"][-1]["hash"])]
    assert run["code"] == 0
    notes = "\n".join(run["watch"].stderr)
    assert "anchored by light-client" in notes
