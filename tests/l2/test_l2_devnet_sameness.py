"""The same recipe over the same registry state gives the same verdict and derived values on
L1 and on the devnet's L2 pinned through L1; only the anchor part of the evidence differs
(docs/l2.md). The devnet pair is built in this process as ``devnet up --l2`` builds it."""

from __future__ import annotations

import json

import pytest

from recompute.devnet import l2_games
from recompute.devnet.anvil import Anvil
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build
from recompute.devnet.l2_chain import build_l2, l2_anvil
from recompute.devnet.l2_moments import describe_l2
from tests.cli import run_cli

pytestmark = pytest.mark.anvil

# what differs between the two runs: how the block was pinned, and the block itself
ANCHOR_PART = {"anchor", "block", "chain_id", "chain_id_from", "evidence_digest", "reads",
               "proof_requests", "blocks_walked", "contract"}


@pytest.fixture(scope="module")
def pair():
    l1 = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP).start()
    l2 = l2_anvil().start()
    try:
        manifest = build(l1)
        section = build_l2(l2)
        section.update(l2_games.run(l1.url, l2, section))
        section["rpc"] = section["lying_rpc"] = l2.url
        describe_l2(section, l1.url)
        yield l1, manifest, section
    finally:
        l2.stop()
        l1.stop()


def _json(argv: list[str]) -> tuple[int, dict]:
    done = run_cli(*argv, "--json")
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("label", ["l2.final-good", "l2.final-bad", "l2.in-delay-resolved"])
def test_the_l2_verdict_is_the_l1_twins(pair, label):
    l1, manifest, section = pair
    moment = section["moments"][label]
    code2, on_l2 = _json(moment["argv"][1:])
    twin = manifest["moments"][moment["l2_moment"]]
    argv = list(moment["argv"][1:])
    for option in ("--l2-portal", "--l1-rpc", "--l1-block-hash", "--l2-game", "--rpc",
                   "--l2-finality"):
        if option in argv:
            at = argv.index(option)
            del argv[at:at + 2]
    argv += ["--rpc", l1.url, "--block-hash", twin["hash"]]
    code1, on_l1 = _json(argv)
    assert (code1, on_l1["verdict"], on_l1["reason"]) == (code2, on_l2["verdict"],
                                                          on_l2["reason"])
    assert on_l2["evidence"]["anchor"]["method"] == "op-stack"
    assert on_l1["evidence"]["anchor"]["method"] == "block-hash"
    same = {key: value for key, value in on_l1["evidence"].items() if key not in ANCHOR_PART}
    assert same == {key: value for key, value in on_l2["evidence"].items()
                    if key not in ANCHOR_PART}
    assert same["derived"]  # the derivation itself is compared, not an empty dict
