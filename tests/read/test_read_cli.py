"""`recompute read` end to end on anvil: proven, decoded values equal the contracts' getters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recompute.devnet.contracts import connect, deploy
from tests.cli import run_cli

TESTS = Path(__file__).resolve().parents[1]
ZOO = TESTS / "layout" / "artifacts"




@pytest.fixture(scope="module")
def deployed(module_anvil, tmp_path_factory):
    w3 = connect(module_anvil.url)
    zoo = deploy(w3, "LayoutZoo", directory=str(ZOO))
    w3.eth.wait_for_transaction_receipt(zoo.functions.setup().transact())
    layout = tmp_path_factory.mktemp("layouts") / "zoo.json"
    imported = run_cli("layout", "import", str(ZOO / "LayoutZoo.json"), "-o", str(layout))
    assert imported.returncode == 0, imported.stderr
    block = w3.eth.get_block("latest")
    return module_anvil, w3, zoo, layout, block


def test_read_json_equals_the_getters_in_one_round(deployed):
    node, w3, zoo, layout, block = deployed
    result = run_cli("read", "--rpc", node.url, "--block-hash", block["hash"].to_0x_hex(),
                     "--layout", str(layout), "--address", zoo.address, "--json",
                     "neg8", "neg128", "str31", "flag", "owner")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    at = block["number"]
    getters = zoo.functions
    values = {v["path"]: v["value"] for v in out["evidence"]["values"]}
    assert values["neg8"] == str(getters.neg8().call(block_identifier=at))
    assert values["neg128"] == str(getters.neg128().call(block_identifier=at))
    assert values["str31"] == getters.str31().call(block_identifier=at)
    assert values["flag"] is getters.flag().call(block_identifier=at)
    assert values["owner"] == getters.owner().call(block_identifier=at).lower()
    assert int(values["neg8"]) < 0 and len(values["str31"]) == 31  # the kinds are exercised
    assert out["evidence"]["proof_requests"] == 1  # every static path in one eth_getProof
    assert [v["path"] for v in out["evidence"]["values"]] == ["neg8", "neg128", "str31", "flag",
                                                              "owner"]
    assert out["evidence"]["anchor"]["method"] == "block-hash"


def test_long_string_takes_a_second_round_not_a_call_per_slot(deployed):
    node, w3, zoo, layout, block = deployed
    result = run_cli("read", "--rpc", node.url, "--block", str(block["number"]),
                     "--layout", str(layout), "--address", zoo.address, "--json", "longStr")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    expected = zoo.functions.longStr().call(block_identifier=block["number"])
    assert out["evidence"]["values"][0]["value"] == expected
    assert len(expected) > 64  # several data slots
    assert out["evidence"]["proof_requests"] == 2


def test_index_beyond_the_proven_length_is_exit_64_with_the_length(deployed):
    node, w3, zoo, layout, block = deployed
    result = run_cli("read", "--rpc", node.url, "--block", str(block["number"]),
                     "--layout", str(layout), "--address", zoo.address, "nums[3]")
    assert result.returncode == 64
    assert "proven length of nums is 3" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args,needle", [
    (["nosuch"], "unknown variable 'nosuch'"),
    (["flag.x"], "flag"),
    (["smallArr[5]"], "out of bounds"),
])
def test_bad_paths_are_one_line_and_exit_64(deployed, args, needle):
    node, w3, zoo, layout, block = deployed
    result = run_cli("read", "--rpc", node.url, "--block", "latest", "--layout", str(layout),
                     "--address", zoo.address, *args)
    assert result.returncode == 64, result.stdout + result.stderr
    assert needle in result.stderr and "Traceback" not in result.stderr


def test_unknown_layout_name_is_exit_64(deployed):
    node, w3, zoo, layout, block = deployed
    result = run_cli("read", "--rpc", node.url, "--block", "latest", "--layout", "no-such-layout",
                     "--address", zoo.address, "flag")
    assert result.returncode == 64 and "no-such-layout" in result.stderr
