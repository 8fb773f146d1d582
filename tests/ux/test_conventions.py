"""Foundry's connection and block conventions on every chain-reading command, through the real
CLI: ``$ETH_RPC_URL`` when no endpoint is given, ``-r/--rpc-url`` beside ``--rpc``, ``-b/--block``
with a tag or a 0x-hex number, who decided what a tag meant, ``--rpc-timeout``, a repeated
``--param`` refused. Expected blocks and balances come from the node's own plain answers
(``eth_getBlockByNumber(tag)``, ``eth_getBalance``), never from recompute.
"""

from __future__ import annotations

import json
import os

import pytest

from recompute.devnet.anvil import rpc_call
from tests.rpcproxy import RpcProxy, silent_endpoint, unchanged

DEV = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"  # anvil's first funded account


@pytest.fixture(scope="module")
def chain(module_anvil):
    rpc_call(module_anvil.url, "anvil_mine", ["0x50"])  # 80 blocks: safe and finalized below
    return module_anvil


def _block(url: str, tag: str) -> dict:
    return rpc_call(url, "eth_getBlockByNumber", [tag, False])


def _proof(run_cli, *args, env=None, codes=(0,)):
    result = run_cli("proof", "--address", DEV, "--json", *args, env=env)
    assert result.returncode in codes, result.stderr
    return json.loads(result.stdout)["evidence"]


def test_eth_rpc_url_is_used_when_no_rpc_is_given(run_cli, chain):
    env = dict(os.environ, ETH_RPC_URL=chain.url)
    evidence = _proof(run_cli, "-b", "latest", env=env)
    assert evidence["anchor"]["endpoint"] == chain.url
    number = evidence["block"]["number"]
    balance = int(rpc_call(chain.url, "eth_getBalance", [DEV, hex(number)]), 16)
    assert int(evidence["account"]["balance"]) == balance


def test_no_rpc_and_no_env_names_both(run_cli):
    env = {k: v for k, v in os.environ.items() if k != "ETH_RPC_URL"}
    result = run_cli("proof", "--address", DEV, "-b", "1", env=env)
    assert result.returncode == 64
    assert "give --rpc URL (-r/--rpc-url) or set $ETH_RPC_URL" in result.stderr


@pytest.mark.parametrize("spelling", ["-r", "--rpc-url", "--rpc"])
def test_the_three_spellings_of_the_endpoint(run_cli, chain, spelling):
    evidence = _proof(run_cli, spelling, chain.url, "--block", "2")
    assert evidence["block"]["hash"] == _block(chain.url, "0x2")["hash"]


@pytest.mark.parametrize("tag", ["latest", "safe", "finalized", "earliest"])
def test_a_tag_is_resolved_by_the_node_and_the_evidence_says_so(run_cli, chain, tag):
    # anvil's genesis header names the empty state root under a funded state: a proof at
    # `earliest` is UNVERIFIABLE there, but the block it anchored is still the node's block 0
    evidence = _proof(run_cli, "-r", chain.url, "-b", tag, codes=(0, 2) if tag == "earliest"
                      else (0,))
    expected = _block(chain.url, tag)
    assert evidence["block"]["hash"] == expected["hash"]
    assert 0 < int(expected["number"], 16) or tag == "earliest"
    assert evidence["anchor"]["tag"] == tag
    assert evidence["anchor"]["tag_decided_by"] == "node"


def test_a_tag_under_a_quorum_is_decided_by_the_quorum(run_cli, chain):
    with RpcProxy(chain.url, unchanged) as other:  # the same node on another port
        evidence = _proof(run_cli, "-r", chain.url, "-r", other.url, "-b", "finalized")
    assert evidence["anchor"]["method"] == "quorum"
    assert evidence["anchor"]["tag_decided_by"] == "quorum"
    assert evidence["block"]["hash"] == _block(chain.url, "finalized")["hash"]


def test_hex_block_numbers(run_cli, chain):
    evidence = _proof(run_cli, "-r", chain.url, "-b", "0x3")
    assert evidence["block"]["number"] == 3
    assert "tag_decided_by" not in evidence["anchor"]  # a number is the user's own choice


def test_read_and_step_take_the_same_options(run_cli, chain):
    env = dict(os.environ, ETH_RPC_URL=chain.url)
    read = run_cli("read", "-b", "safe", "--layout", "amm-registry", "--address", DEV, "--json",
                   f"floors[{DEV}]", env=env)
    assert read.returncode == 0, read.stderr
    evidence = json.loads(read.stdout)["evidence"]
    assert evidence["anchor"]["tag"] == "safe"
    assert evidence["block"]["hash"] == _block(chain.url, "safe")["hash"]
    step = run_cli("step", "amm/layer-status", "-r", chain.url, "-b", "finalized", "--address",
                   DEV, "--param", "subject=0x" + "ab" * 20, "--param", "layer=1",
                   "--json")
    assert step.returncode in (0, 1, 2), step.stderr
    out = json.loads(step.stdout)
    assert out["evidence"]["anchor"]["tag_decided_by"] == "node"


def test_vectors_capture_pins_the_hash_the_node_gives_a_tag(run_cli, chain, tmp_path):
    out = tmp_path / "v.json"
    result = run_cli("vectors", "capture", "amm/layer-status", "-r", chain.url, "-b", "latest",
                     "--address", DEV, "--param", "subject=0x" + "ab" * 20, "--param",
                     "layer=1", "-o", str(out))
    assert result.returncode == 0, result.stderr
    vector = json.loads(out.read_text())
    assert vector["pinned_block_hash"] == _block(chain.url, "latest")["hash"]


def test_a_repeated_param_is_an_error(run_cli):
    result = run_cli("step", "amm/layer-status", "--rpc", "http://127.0.0.1:1", "-b", "1",
                     "--address", DEV, "--param", "layer=1", "--param", "layer=2")
    assert result.returncode == 64
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--param layer is given twice ('1' and '2')" in lines[0]


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_a_bad_rpc_timeout_is_a_usage_error(run_cli, value):
    result = run_cli("proof", "-r", "http://127.0.0.1:1", "-b", "1", "--address", DEV,
                     "--rpc-timeout", value)
    assert result.returncode == 64 and "--rpc-timeout" in result.stderr


def test_rpc_timeout_bounds_a_node_that_never_answers(run_cli):
    """A node that accepts the connection and says nothing: with --rpc-timeout 0.5 the
    command gives up (UNVERIFIABLE, rpc-unreachable) long before the 30 s default would."""
    with silent_endpoint() as url:
        result = run_cli("proof", "-r", url, "-b", "1", "--address", DEV, "--json",
                         "--rpc-timeout", "0.5", timeout=15)
    assert result.returncode == 2, result.stderr
    assert json.loads(result.stdout)["reason"] == "rpc-unreachable"
