"""``watch --blocks`` / ``--every``: verdicts at chosen blocks, each proven from one pinned block
(the shared session devnet, read-only). Expected verdicts come from ``step`` pinned by each
moment's own hash (the manifest's), never from the sparse audit itself."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import REPO_ROOT
from tests.rpcproxy import RpcProxy
from tests.watch.test_range import (
    test_the_audit_agrees_with_step_at_every_named_moment as agrees_with_step,
)
from tests.watch.watchproc import EXAMPLE


def watch(*args: str) -> tuple[int, list[dict], str]:
    done = subprocess.run([sys.executable, "-m", "recompute", "watch", *args],
                          capture_output=True, text=True, timeout=180, cwd=REPO_ROOT)
    return done.returncode, [json.loads(t) for t in done.stdout.splitlines()], done.stderr


@pytest.fixture(scope="module")
def sparse(devnet, tmp_path_factory):
    node, manifest = devnet
    moments = sorted({m["number"] for m in manifest["moments"].values()})
    top = moments[-1]
    top_hash = next(m["hash"] for m in manifest["moments"].values() if m["number"] == top)
    html = tmp_path_factory.mktemp("sparse") / "audit.html"
    with RpcProxy(node.url) as proxy:
        code, lines, err = watch("--rpc", proxy.url, "--config", str(EXAMPLE), "--block-hash",
                                 top_hash, "--blocks", ",".join(map(str, moments)),
                                 "--confirmations", "0", "--html", str(html))
        asked = dict(proxy.methods)
    return {"node": node, "manifest": manifest, "moments": moments, "top": top, "code": code,
            "lines": lines, "stderr": err, "asked": asked, "html": html.read_text()}


def test_every_named_moment_agrees_with_its_own_pin(sparse):
    assert sparse["code"] in (0, 1, 2), sparse["stderr"]
    assert {x["block"] for x in sparse["lines"]} == set(sparse["moments"])
    agrees_with_step(sparse)  # step pinned by each moment's own hash, as the range audit


def test_each_block_is_proven_by_one_hop_from_the_pin(sparse):
    for line in sparse["lines"]:
        anchor = line["anchor"]
        assert anchor["method"] == "block-hash"
        if line["block"] == sparse["top"]:
            assert "history_path" not in anchor
            continue
        path = anchor["history_path"]
        assert path["via"] == "history-contract"
        assert path["hops"] == [{"from_block": sparse["top"], "block": line["block"],
                                 "slot": line["block"], "hash": line["hash"]}]
    assert "proven from it (" in sparse["stderr"]


def test_the_report_marks_each_block_as_a_point(sparse):
    page = sparse["html"]
    for number in sparse["moments"]:
        assert f"<title>block {number}</title></circle>" in page
    assert f"proven from block {sparse['top']}" in page


def test_every_nth_block_of_a_range(devnet):
    node, manifest = devnet
    code, lines, err = watch("--rpc", node.url, "--config", str(EXAMPLE), "--from", "10",
                             "--to", "40", "--every", "10", "--confirmations", "0")
    assert code in (0, 1, 2), err
    assert sorted({x["block"] for x in lines}) == [10, 20, 30, 40]


@pytest.mark.parametrize("args, said", [
    (["--blocks", "5,7,5"], "--blocks: block '5' is given twice"),
    (["--blocks", "5", "--blocks", "0x5"], "--blocks: block '0x5' is given twice"),
    (["--blocks", "5,seven"], "--blocks: 'seven' is not a block number"),
    (["--blocks", "5,,6"], "--blocks: '' is not a block number"),
    (["--blocks", "5,50", "--to", "40"], "--blocks: block 50 is above the pinned block 40"),
    (["--blocks", "5", "--from", "1"], "--blocks names its blocks: give no --from"),
    (["--every", "5"], "--every N needs --from A --to M"),
    (["--every", "0", "--from", "1", "--to", "9"], "--every 0: give a step of at least 1"),
    (["--blocks", "5", "--every", "5"], "give one"),
    (["--blocks", "5", "--processes", "2"], "audit in one process"),
])
def test_bad_block_lists_are_usage_errors_naming_the_entry(args, said):
    done = subprocess.run([sys.executable, "-m", "recompute", "watch", "--rpc",
                           "http://127.0.0.1:9", "--config", str(EXAMPLE), *args],
                          capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 64, done.stderr
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


def test_a_block_above_the_pin_found_after_anchoring_is_a_usage_error(devnet):
    node, manifest = devnet
    first = min(manifest["moments"].values(), key=lambda m: m["number"])
    done = subprocess.run([sys.executable, "-m", "recompute", "watch", "--rpc", node.url,
                           "--config", str(EXAMPLE), "--block-hash", first["hash"],
                           "--blocks", f"1,{first['number'] + 1}"],
                          capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 64, done.stderr
    assert f"block {first['number'] + 1} is above the pinned block {first['number']}" \
        in done.stderr.strip().splitlines()[-1]


def test_every_moment_from_one_light_client_pin_agrees(sparse):
    """The same sparse audit pinned by the light client (the devnet beacon chain over the
    devnet's blocks; its newest signed block is the last moment, ``--to`` it): the same
    lines, each block proven by one hop from the signed block's state."""
    from recompute.devnet.anvil import rpc_call
    from recompute.devnet.beacon_server import DevnetBeaconServer

    node, top = sparse["node"], sparse["top"]
    blocks = [rpc_call(node.url, "eth_getBlockByNumber", [hex(n), False])
              for n in range(top + 1)]  # the last (the top moment) is the signed head
    with DevnetBeaconServer(blocks) as beacon:
        code, lines, err = watch(
            "--rpc", node.url, "--config", str(EXAMPLE), "--beacon", beacon.url,
            "--trusted-root", "0x" + beacon.trusted_block_root.hex(), "--network", "devnet",
            "--at", str(int(blocks[top]["timestamp"], 16) + 60), "--accept-old-checkpoint",
            "--to", str(top), "--blocks", ",".join(map(str, sparse["moments"])),
            "--confirmations", "0")
    assert code == sparse["code"], err

    def said(line: dict) -> tuple:
        return (line["block"], line["check"], line["hash"], line["verdict"], line["reason"],
                line.get("evidence_digest"))

    assert [said(x) for x in lines] == [said(x) for x in sparse["lines"]]
    below = [x for x in lines if x["block"] != top]
    assert below and all(x["anchor"]["method"] == "light-client" for x in lines)
    assert all(x["anchor"]["history_path"]["hops"][0]["from_block"] == top for x in below)


def test_under_a_checkpoint_the_top_and_the_blocks_are_reached_by_hops(sparse):
    node, top, moments = sparse["node"], sparse["top"], sparse["moments"]
    low, mid, to = moments[1], moments[2], moments[-2]
    head = next(x["hash"] for x in sparse["lines"] if x["block"] == top)
    code, lines, err = watch("--rpc", node.url, "--config", str(EXAMPLE), "--checkpoint", head,
                             "--to", str(to), "--blocks", f"{low},{mid},{to}",
                             "--confirmations", "0")
    assert code in (0, 1, 2), err
    expected = {(x["block"], x["check"]): x["evidence_digest"] for x in sparse["lines"]
                if x["block"] in (low, mid, to)}
    assert {(x["block"], x["check"]): x["evidence_digest"] for x in lines} == expected
    at_to = next(x["anchor"] for x in lines if x["block"] == to)
    assert at_to["method"] == "checkpoint"
    assert at_to["history_path"]["hops"][0]["from_block"] == top
    line = next(x for x in lines if x["block"] == low)
    assert line["anchor"]["history_path"]["hops"] == [
        {"from_block": to, "block": low, "slot": low, "hash": line["hash"]}]
