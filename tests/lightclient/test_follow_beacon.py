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
from recompute.devnet.beacon_server import DevnetBeaconServer
from tests.rpcproxy import RpcProxy
from tests.watch.meters import honest_key_check, start_meters_chain
from tests.watch.watchproc import Watch, write_config

pytestmark = pytest.mark.anvil

CHECK = "honest-key"


def block_json(url: str, number: int) -> dict:
    return rpc_call(url, "eth_getBlockByNumber", [hex(number), False])


def fabricate(parent: dict, like: dict, label: str) -> dict:
    """A block on top of ``parent`` with ``like``'s state root, whose hash is its header's."""
    child = copy.deepcopy(like)
    child.pop("hash")
    child["parentHash"] = parent["hash"]
    child["number"] = hex(int(parent["number"], 16) + 1)
    child["timestamp"] = hex(int(parent["timestamp"], 16) + 12)
    child["extraData"] = "0x" + label.encode().hex()
    child["hash"] = "0x" + Header.from_rpc(child).hash.hex()
    return child


class Fabricator:
    """Rewrites the node's answers so that ``fakes`` (by number) are its chain's top, with
    proofs and receipts of the real block each copies (so they verify against its state
    root). ``fakes = {}`` makes it honest."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.fakes: dict[int, dict] = {}
        self.real_of: dict[str, str] = {}  # fake hash -> the real block hash it copies

    def lie(self, fakes: list[tuple[dict, dict]]) -> None:
        self.real_of = {fake["hash"]: real["hash"] for fake, real in fakes}
        self.fakes = {int(fake["number"], 16): fake for fake, _ in fakes}

    def _real(self, param):
        if isinstance(param, str):
            return self.real_of.get(param, param)
        if isinstance(param, dict) and "blockHash" in param:
            return {**param, "blockHash": self.real_of.get(param["blockHash"],
                                                           param["blockHash"])}
        return param

    def __call__(self, method: str, params: list, reply: dict) -> dict:
        fakes = self.fakes
        if not fakes:
            return reply
        top = fakes[max(fakes)]
        if method == "eth_getBlockByNumber":
            wanted = params[0]
            fake = top if wanted == "latest" else fakes.get(int(wanted, 16)) \
                if wanted.startswith("0x") else None
            if fake is not None:
                return {"jsonrpc": "2.0", "id": reply["id"], "result": fake}
        by_hash = {fake["hash"]: fake for fake in fakes.values()}
        if method == "eth_getBlockByHash" and params[0] in by_hash:
            return {"jsonrpc": "2.0", "id": reply["id"], "result": by_hash[params[0]]}
        if method in ("eth_getProof", "eth_getBlockReceipts"):
            swapped = [self._real(p) for p in params]
            if swapped != params:
                return {"jsonrpc": "2.0", "id": reply["id"],
                        "result": rpc_call(self.upstream, method, swapped)}
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
        real_head = blocks[-1]
        fake_child = fabricate(real_head, real_head, "fabricated child")
        fabricator = Fabricator(node.url)
        fabricator.lie([(fake_child, real_head)])
        proxy = RpcProxy(node.url, fabricator)
        config = write_config(tmp / "checks.toml", [honest_key_check(CHECK, manifest)])
        # the attack is real: without --beacon the fabricated child gets a GOOD line
        control = Watch("--rpc", proxy.url, "--config", str(config), "--poll", "0.1",
                        "--block-hash", real_head["hash"], "--from", str(head))
        try:
            fooled = control.wait_for(lambda ls: any(
                x.get("hash") == fake_child["hash"] for x in ls),
                what="the control watch's line about the fabricated block")
        finally:
            control.kill()
        watch = Watch("--rpc", proxy.url, "--config", str(config), "--poll", "0.1",
                      "--beacon", beacon.url, "--trusted-root",
                      "0x" + beacon.trusted_block_root.hex(), "--network", "devnet",
                      # the meters history is recorded (dated from the devnet's genesis
                      # timestamp): judged as of a minute after its head, its trusted root
                      # (days of chain time before) accepted
                      "--at", str(int(real_head["timestamp"], 16) + 60),
                      "--accept-old-checkpoint")
        watch.wait_for(lambda ls: any(x.get("block") == head for x in ls),
                       what="the signed head's line")
        time.sleep(3)  # the node serves the fabricated child as its head meanwhile
        # then a fabricated branch beside the signed head: a sibling and a child of it
        sibling = fabricate(blocks[-2], real_head, "fabricated sibling")
        on_sibling = fabricate(sibling, real_head, "child of the sibling")
        fabricator.lie([(sibling, real_head), (on_sibling, real_head)])
        time.sleep(3)
        during = watch.snapshot()
        # then the real next block: mined, signed by the committee; the node stops lying
        fabricator.lie([])
        rpc_call(node.url, "evm_mine", [])
        real_next = block_json(node.url, head + 1)
        beacon.add_blocks([real_next])
        watch.wait_for(lambda ls: any(x.get("block") == head + 1 for x in ls) and
                       any(x.get("block") == head and x.get("final") for x in ls),
                       what="the real next block's line and the head's final line")
        code = watch.stop()
        yield {"fooled": fooled, "watch": watch, "code": code, "head": head, "blocks": blocks,
               "during": during, "fakes": [fake_child, sibling, on_sibling],
               "real_next": real_next}
        proxy.close()
        beacon.stop()
    finally:
        if watch is not None:
            watch.kill()
        node.stop()


def checks(lines):
    return [line for line in lines if "check" in line]


def test_fabricated_blocks_never_get_a_line(run):
    fake_child, sibling, on_sibling = run["fakes"]
    assert fake_child["parentHash"] == run["blocks"][-1]["hash"]
    assert sibling["parentHash"] == run["blocks"][-2]["hash"]
    assert [x["verdict"] for x in run["fooled"] if x.get("hash") == fake_child["hash"]] == [
        "VERIFIED-GOOD"]  # the control watch (no --beacon) was fooled
    fake_hashes = {fake["hash"] for fake in run["fakes"]}
    for line in run["watch"].lines:
        assert line.get("hash") not in fake_hashes, line
        assert line.get("event") != "reorg", line  # the unsigned branch orphaned nothing
    # while the node lied, nothing about block head+1 was written at all
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
