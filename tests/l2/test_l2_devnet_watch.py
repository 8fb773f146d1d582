"""``recompute watch`` range audits of the devnet's L2 pinned through L1, the L1 block reached by
the devnet's beacon light client or pinned by its hash: the top line is the L2 moment's verdict
and every line names the game (docs/l2.md §Watch). The devnet pair and its beacon side are the
ones tests/devnet/test_l2_devnet.py builds."""

from __future__ import annotations

import json

import pytest

from tests.cli import run_cli
from tests.devnet.test_l2_devnet import l1_beacon, l2net  # noqa: F401 (fixtures)

pytestmark = pytest.mark.anvil


def _config(tmp_path, moment) -> str:
    params = ", ".join(f'{key} = "{value}"' for key, value in moment["params"].items())
    path = tmp_path / "checks.toml"
    path.write_text(f'[[check]]\nname = "l2"\nrecipe = "{moment["recipe"]}"\n'
                    f'address = "{moment["address"]}"\nparams = {{ {params} }}\n')
    return str(path)


@pytest.mark.parametrize("anchor", ["rpc-pinned", "beacon"])
@pytest.mark.parametrize("label", ["l2.final-good", "l2.final-bad"])
def test_a_range_audit_of_the_devnet_l2(l2net, l1_beacon, tmp_path, label, anchor):  # noqa: F811
    l1, _, l2, section = l2net
    moment = section["moments"][label]
    top = moment["l2_block"]
    l1_options = ["--l1-block-hash", moment["l1"]["hash"]]
    if anchor == "beacon":
        l1_options = ["--l1-block", str(moment["l1"]["number"]), "--beacon", l1_beacon.url,
                      "--trusted-root", "0x" + l1_beacon.trusted_block_root.hex(),
                      "--network", "devnet", "--accept-old-checkpoint"]
    done = run_cli("watch", "--rpc", l2.url, "--l2-portal",
                   section["l1"]["contracts"]["OptimismPortal2"], "--l1-rpc", l1.url,
                   *l1_options, "--l2-game", moment["game_address"], "--at",
                   str(moment["l1"]["timestamp"]), "--config", _config(tmp_path, moment),
                   "--from", str(top - 2), "--to", str(top))
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["block"] for line in lines] == [top - 2, top - 1, top], done.stderr
    assert lines[-1]["verdict"] == moment["verdict"]
    assert lines[-1]["anchor"]["game"] == moment["game_address"].lower()
    assert lines[-1]["anchor"]["tier"] == "final"
    assert {line["anchor"].get("pinned_hash") for line in lines[:-1]} == {lines[-1]["hash"]}
