"""``step`` and ``vectors capture`` with the light-client anchor, on a chain of our own (the
meters history) and the devnet beacon chain over its blocks. Expected: the history's honest
key sits at its cap (1000 of 1000: GOOD at every block, history_meters.py) and the block the
beacon server finalized (the second-to-last one it was given)."""

from __future__ import annotations

import json

import pytest

from recompute.devnet.beacon_server import DevnetBeaconServer
from tests.watch.meters import chain_blocks, honest_key_check, start_meters_chain

pytestmark = pytest.mark.anvil


@pytest.fixture(scope="module")
def chain():
    node, manifest = start_meters_chain()
    try:
        blocks = chain_blocks(node.url)
        with DevnetBeaconServer(blocks) as beacon:
            # a recorded history (blocks dated from the devnet's genesis timestamp): judged as
            # of its head's time, and its trusted root (block 0, days of chain time before
            # the head) accepted though older than the devnet's weak-subjectivity bound
            lc = ["--beacon", beacon.url, "--trusted-root",
                  "0x" + beacon.trusted_block_root.hex(), "--network", "devnet",
                  "--at", str(int(blocks[-1]["timestamp"], 16)), "--accept-old-checkpoint"]
            yield node, honest_key_check("honest", manifest), blocks, lc
    finally:
        node.stop()


def step_args(check: dict) -> list[str]:
    params = [arg for key, value in check["params"].items()
              for arg in ("--param", f"{key}={value}")]
    return [check["recipe"], "--address", check["address"], *params]


def test_step_pinned_by_the_light_client(chain, run_cli):
    node, check, blocks, lc = chain
    result = run_cli("step", *step_args(check), "--rpc", node.url, *lc, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    out = json.loads(result.stdout)
    assert out["verdict"] == "VERIFIED-GOOD"
    assert out["evidence"]["block"]["hash"] == blocks[-2]["hash"]
    assert out["evidence"]["anchor"]["method"] == "light-client"


def test_vectors_capture_pinned_by_the_light_client_replays(chain, run_cli, tmp_path):
    node, check, blocks, lc = chain
    out = tmp_path / "lc-vector.json"
    captured = run_cli("vectors", "capture", *step_args(check), "--rpc", node.url, *lc,
                       "-o", out)
    assert captured.returncode == 0, captured.stdout + captured.stderr
    assert f"pinned by the light client: {blocks[-2]['hash']}" in captured.stdout
    vector = json.loads(out.read_text())
    assert vector["pinned_block_hash"] == blocks[-2]["hash"]
    assert vector["expected"]["verdict"] == "VERIFIED-GOOD"
    verified = run_cli("vectors", "verify", out)
    assert verified.returncode == 0 and "1 passed, 0 failed" in verified.stdout
    both = run_cli("vectors", "capture", *step_args(check), "--rpc", node.url, *lc,
                   "--block-hash", blocks[-2]["hash"], "-o", tmp_path / "x.json")
    assert both.returncode == 64
