"""``sai/charter`` through the real CLI against a registry that committed to real packs.

The devnet's swarms commit to hashes of labels, not to packs (checked last, at
``swarm.amended``: VERIFIED-BAD with the proven hashes read), so this module forms its own
swarm on a fresh anvil (not the shared devnet) from the bundled ``pack-v1.json`` and amends it
materially to ``pack-v2.json`` (the objective changed, ERC-8447 §9.1). The hashes sent to
the registry are computed here with the standard library's JSON encoder (sorted keys, no
whitespace, UTF-8 — RFC 8785 for packs of integers and strings, a second canonicaliser
beside the recipe's ``rfc8785``), and ``specHash`` with eth_abi (§3.1).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from eth_abi import encode
from eth_hash.auto import keccak
from web3.logs import DISCARD

from recompute.data import PACKS
from recompute.devnet.anvil import Anvil
from recompute.devnet.contracts import connect
from recompute.devnet.driver import Driver

ROOT = Path(__file__).resolve().parents[2]
DATA = PACKS
ZERO32, ZERO_ADDR = b"\x00" * 32, "0x" + "00" * 20
ROLE_T = "(bytes32,uint32,uint32,address,bool)"
PHASE_T = "(bytes32,bytes32,bytes32,bytes32,uint8,uint8,uint64,bytes32)"
AUTH_T = "(uint8,address,bytes32)"
SPEC_T = (f"({ROLE_T}[],{PHASE_T}[],{AUTH_T}[],uint8,uint8,uint32,uint32,"
          "uint64,uint64,uint64,uint64,uint64,uint64,bytes32)")


def kid(text: str) -> bytes:
    return keccak(text.encode())


def canonical_sha256(value) -> bytes:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).digest()


def pack(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def chain():
    node = Anvil().start()
    try:
        d = Driver(connect(node.url), start_timestamp=node.timestamp)
        steward, judge = d.accounts[1], d.accounts[2]
        d.deploy("SpecLib")
        d.deploy("MembershipLib")
        reg = d.deploy("SwarmRegistry",
                       libraries={"SpecLib": "SpecLib", "MembershipLib": "MembershipLib"})
        # §3.1 one GATED RECRUIT phase of base terms (§7.1), every authority the steward's
        spec = ([(kid("sai.role.worker"), 1, 0, ZERO_ADDR, False)],
                [(b"work".ljust(32, b"\x00"), kid("sai.payoff.shared"),
                  kid("sai.topology.partitioned"), kid("sai.coordination.leader"), 1, 0, 0,
                  ZERO32)],
                [(1, steward, ZERO32)] * 16, 0, 0, 1, 0, 3600, 86400, 0, 600, 1800, 900, ZERO32)
        v1, v2 = pack("pack-v1.json"), pack("pack-v2.json")
        assert "0x" + keccak(encode([SPEC_T], [spec])).hex() == v1["specHash"] == v2["specHash"]
        receipt = d.tx(reg.functions.form(
            spec, canonical_sha256(v1), canonical_sha256(v1["commitment"]), "ipfs://pack/v1",
            ZERO32, (kid("sai.origin.initiator"), ZERO32),
            (canonical_sha256(v1["objective"]), 0, judge, (0, ZERO_ADDR, 0), 0)),
            sender=d.accounts[0])
        (formed,) = reg.events.SwarmFormed().process_receipt(receipt, errors=DISCARD)
        moments = {"formed": d.moment("formed")["hash"]}
        # §9.1 material by construction: the objective hash changes, the commitment does not
        receipt = d.tx(reg.functions.amend(formed["args"]["swarmId"], canonical_sha256(v2),
                                           "ipfs://pack/v2", canonical_sha256(v2["objective"]),
                                           ZERO32, False), sender=steward)
        (amended,) = reg.events.CharterAmended().process_receipt(receipt, errors=DISCARD)
        assert amended["args"]["material"] and amended["args"]["charterVersion"] == 2
        moments["amended"] = d.moment("amended")["hash"]
        yield {"url": node.url, "registry": reg.address, "moments": moments,
               "swarm": "0x" + formed["args"]["swarmId"].hex(), "v1": v1, "v2": v2}
    finally:
        node.stop()


def charter_step(chain, moment: str, pack_file: str, *extra: str) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "recompute", "step", "sai/charter", "--rpc", chain["url"],
         "--block-hash", chain["moments"][moment], "--address", chain["registry"],
         "--param", f"swarm={chain['swarm']}", "--param", f"pack={DATA / pack_file}",
         "--json", *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=120)
    return proc.returncode, json.loads(proc.stdout)


FLAGS = ("charter_matches", "objective_matches", "commitment_matches", "spec_hash_matches",
         "version_matches")


@pytest.mark.parametrize("moment, pack_file, flags", [
    ("formed", "pack-v1.json", (True, True, True, True, True)),
    ("amended", "pack-v2.json", (True, True, True, True, True)),
    # the superseded pack: charter, objective and version moved on; the commitment did not
    ("amended", "pack-v1.json", (False, False, True, True, False)),
    # a pack from the future: its objective is not the one the registry holds yet
    ("formed", "pack-v2.json", (False, False, True, True, False)),
])
def test_charter_against_proven_hashes(chain, moment, pack_file, flags):
    rc, out = charter_step(chain, moment, pack_file)
    derived = out["evidence"]["derived"]
    assert tuple(derived[k] for k in FLAGS) == flags
    expected = chain["v1"] if pack_file == "pack-v1.json" else chain["v2"]
    assert derived["charter_hash"] == "0x" + canonical_sha256(expected).hex()
    current = chain["v1"] if moment == "formed" else chain["v2"]
    assert derived["proven_charter_hash"] == "0x" + canonical_sha256(current).hex()
    assert derived["proven_objective_hash"] == \
        "0x" + canonical_sha256(current["objective"]).hex()
    good = all(flags)
    assert (rc, out["verdict"]) == ((0, "VERIFIED-GOOD") if good else (1, "VERIFIED-BAD"))


def test_charter_view_agrees(chain):
    rc, out = charter_step(chain, "amended", "pack-v2.json", "--compare-views")
    assert rc == 0 and out["evidence"]["findings"] == []
    (view,) = out["evidence"]["views"]
    assert view["view"] == "getSwarm(bytes32)" and view["agrees"] is True


def test_expect_a_single_member(chain):
    # --expect judges one derived value: the superseded pack's commitment still matches
    rc, out = charter_step(chain, "amended", "pack-v1.json", "--expect", "commitment_matches=true")
    assert (rc, out["verdict"]) == (0, "VERIFIED-GOOD")


def test_devnet_charter_commits_to_labels_not_packs(devnet):
    # the devnet's history commits to keccak256 of labels (history_swarm.py CHARTER,
    # OBJECTIVE, COMMITMENT), so no pack hashes to them: the proven hashes are read, and the
    # pack is VERIFIED-BAD against them (§4.1)
    node, manifest = devnet
    s = manifest["swarm"]["swarms"]["minimal"]
    proc = subprocess.run(
        [sys.executable, "-m", "recompute", "step", "sai/charter", "--rpc", node.url,
         "--block-hash", manifest["moments"]["swarm.amended"]["hash"],
         "--address", manifest["contracts"]["SwarmRegistry"], "--param", f"swarm={s['id']}",
         "--param", f"pack={DATA / 'pack-v2.json'}", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120)
    derived = json.loads(proc.stdout)["evidence"]["derived"]
    assert derived["proven_charter_hash"] == s["charters"][1]["hash"]
    assert derived["proven_objective_hash"] == s["objective_hashes"][1]
    assert derived["proven_commitment_hash"] == \
        "0x" + keccak(b"devnet swarm commitment v1").hex()
    assert derived["charter_version"] == "2" and derived["version_matches"] is True
    assert derived["charter_matches"] is False and derived["objective_matches"] is False
    assert proc.returncode == 1
