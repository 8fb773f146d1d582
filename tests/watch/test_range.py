"""``--from N --to M`` over the devnet history (the shared session devnet, read-only): the same
verdict, derived values and evidence digest as ``step`` at every named moment, lines in block
order, the summary table, and the exit codes 0 / 1 / 2.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.errors import Unverifiable
from recompute.devnet.anvil import free_port
from recompute.evaluator.job import step
from recompute.sources.live import LiveSource
from recompute.watch.config import load_config
from tests import REPO_ROOT
from tests.watch.watchproc import EXAMPLE, write_config

RECORDED = REPO_ROOT / "tests" / "fixtures" / "devnet-range-audit" / "lines.jsonl.gz"


def run_watch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "recompute", "watch", *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)


def watch(*args: str) -> tuple[int, list[dict], str]:
    done = run_watch(*args)
    return done.returncode, [json.loads(t) for t in done.stdout.splitlines()], done.stderr


@pytest.fixture(scope="module")
def audit(devnet):
    node, manifest = devnet
    last = max(m["number"] for m in manifest["moments"].values())
    done = run_watch("--rpc", node.url, "--config", str(EXAMPLE), "--from", "1", "--to",
                     str(last), "--confirmations", "0")
    lines = [json.loads(t) for t in done.stdout.splitlines()]
    return {"node": node, "manifest": manifest, "last": last, "code": done.returncode,
            "lines": lines, "stderr": done.stderr, "stdout": done.stdout}


def test_the_audit_prints_the_recorded_lines_byte_for_byte(audit):
    """The audit's standard output is, byte for byte, the one recorded in
    tests/fixtures/devnet-range-audit (its README: the same deterministic history and example
    config): a change of the evaluator's internals must not move a byte of any line."""
    expected = gzip.decompress(RECORDED.read_bytes()).decode()
    got = audit["stdout"]
    if got != expected:
        pairs = zip(got.splitlines(), expected.splitlines(), strict=False)
        where = next((n for n, (g, e) in enumerate(pairs, 1) if g != e), None)
        pytest.fail(f"line {where} differs from the recorded audit ({len(got.splitlines())} "
                    f"lines, {len(expected.splitlines())} recorded)")


def test_the_audit_agrees_with_step_at_every_named_moment(audit):
    manifest = audit["manifest"]
    by_key = {(x["block"], x["check"]): x for x in audit["lines"]}
    source = LiveSource(audit["node"].url)
    checks = load_config(EXAMPLE)
    compared = 0
    for moment in manifest["moments"].values():
        block = anchor_block([source], block_hash=bytes.fromhex(moment["hash"][2:]))
        for check in checks:
            line = by_key.get((moment["number"], check.name))
            if moment["number"] < check.since:
                assert line is None
                continue
            assert line["hash"] == moment["hash"]
            try:
                outcome = step(check.recipe, check.params, block, check.address, check.layout)
            except Unverifiable as exc:
                assert (line["verdict"], line["reason"]) == ("UNVERIFIABLE", exc.reason)
                continue
            assert (line["verdict"], line["reason"]) == (outcome.verdict.value, outcome.reason)
            assert line["derived"] == outcome.evidence["derived"]
            assert line["evidence_digest"] == outcome.evidence["evidence_digest"]
            compared += 1
    assert compared >= len(manifest["moments"]) * 3


def test_the_lying_meter_is_bad_from_its_over_cap_block(audit):
    over = audit["manifest"]["moments"]["meter.over-cap"]["number"]
    lying = [x for x in audit["lines"] if x["check"] == "8312/lying-meter/cap"]
    assert [x["block"] for x in lying if x["verdict"] == "VERIFIED-BAD"] == list(
        range(over, audit["last"] + 1))
    at = next(x for x in lying if x["block"] == over)
    # history_meters.py: A 40 + B 40 + C's overdrawn 40 = 120 against the root cap 100
    assert at["derived"] == {"aggregate": "120", "cap": "100", "headroom": "-20",
                             "within_cap": False}
    row = next(t for t in audit["stderr"].splitlines() if t.startswith("8312/lying-meter/cap "))
    assert row.split()[-2:] == [str(over), str(over)]  # first BAD, first unhealthy


def test_lines_are_in_block_order_final_and_complete(audit):
    blocks = [x["block"] for x in audit["lines"]]
    assert blocks == sorted(blocks)
    # every block from the first check's `since` (each check starts at its contract)
    first = min(check.since for check in load_config(EXAMPLE))
    assert set(blocks) == set(range(first, audit["last"] + 1))
    assert all(x["final"] for x in audit["lines"])
    assert audit["code"] == 1  # VERIFIED-BAD where GOOD is healthy


def test_a_healthy_range_exits_0_and_a_dead_node_2(devnet, tmp_path):
    node, manifest = devnet
    rc = manifest["meters"]["reserved_confirmed"]
    config = write_config(tmp_path / "checks.toml", [{
        "name": "key-1", "recipe": "8312/cap-conservation",
        "address": manifest["contracts"]["ReservedConfirmedMeter"],
        "params": {"shape": "reserved-confirmed", "key": rc["keys"]["key-1"]["key"]}}])
    code, lines, err = watch("--rpc", node.url, "--config", str(config), "--from", "40",
                             "--to", "45", "--workers", "2")
    assert code == 0 and len(lines) == 6
    assert all(x["verdict"] == "VERIFIED-GOOD" for x in lines)
    assert "key-1" in err and "GOOD" in err
    dead = f"http://127.0.0.1:{free_port()}"
    code, lines, err = watch("--rpc", dead, "--config", str(config), "--from", "1", "--to", "2")
    assert (code, lines) == (2, [])
    assert "rpc-unreachable" in err.strip().splitlines()[-1]


def test_unverifiable_blocks_in_a_range_exit_2(tmp_path):
    """Old blocks whose state a pruning node dropped: UNVERIFIABLE lines, no BAD, exit 2."""
    from recompute.devnet.anvil import Anvil

    config = write_config(tmp_path / "checks.toml", [{
        "name": "empty-meter", "recipe": "8312/cap-conservation", "address": "0x" + "11" * 20,
        "params": {"shape": "cap:100", "key": "0x" + "22" * 32}}])
    with Anvil(extra_args=["--prune-history"]) as node:
        for _ in range(300):
            node.rpc("evm_mine")
        code, lines, err = watch("--rpc", node.url, "--config", str(config), "--from", "1",
                                 "--to", "3", "--workers", "1")
    assert code == 2
    assert [(x["block"], x["verdict"], x["reason"]) for x in lines] == [
        (n, "UNVERIFIABLE", "state-unavailable") for n in (1, 2, 3)]
    assert "empty-meter" in err
