"""Following a chain while blocks are mined: a line per block per check, the lying meter's
over-cap block is VERIFIED-BAD at that very block, ``--on-bad`` fires once, lines turn final
``--confirmations`` deep, the metrics endpoint counts what stdout shows, SIGTERM exits 0.

One watch process on a chain of our own (the meters history), shared by the module's tests.
Expected values: the meter's rule spentRoot <= cap with cap 100 (history_meters.py) and the
amounts drawn here: A draws 40 (40 <= 100), then the owner overdraws 61 for C (101 > 100).
"""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from recompute.devnet.anvil import free_port
from tests.watch.meters import (
    HISTORY_AGE,
    LyingTree,
    honest_key_check,
    lying_cap_check,
    start_meters_chain,
)
from tests.watch.watchproc import Watch, block_hash, head, write_config

LYING, HONEST = "lying-cap", "honest-key"
CHECKS = 2
EMPTY_AFTER = 3  # empty blocks after the overdraw


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("follow")
    node, manifest = start_meters_chain()
    watch = None
    try:
        tree = LyingTree(node, manifest)
        start = int(head(node.url)["number"], 16)
        period = tree.period_of(tree.now + 12)
        last_ts = tree.now + 12 * (3 + EMPTY_AFTER)
        assert tree.period_of(last_ts) == period, "the mined blocks must share one period"
        config = write_config(tmp / "checks.toml", [lying_cap_check(LYING, manifest, period),
                                                    honest_key_check(HONEST, manifest)])
        hook_file = tmp / "on-bad.jsonl"
        port = free_port()
        watch = Watch(*HISTORY_AGE, "--rpc", node.url, "--config", str(config), "--poll", "0.1",
                      "--confirmations", "2", "--metrics-port", str(port),
                      "--on-bad", f"cat >> {hook_file}")
        watch.wait_for_block(start, CHECKS)
        blocks = {"start": start, "empty": tree.mine(), "draw": tree.draw("A", 40),
                  "overdraw": tree.overdraw("C", 61)}
        blocks["after"] = [tree.mine() for _ in range(EMPTY_AFTER)]
        last = blocks["after"][-1]
        # the last block evaluated, and the block 2 below it final
        watch.wait_for(lambda ls: any(x.get("block") == last - 2 and x.get("final")
                                      for x in ls) and
                       sum(1 for x in ls if x.get("block") == last) >= CHECKS,
                       what="the last block and the final lines 2 below it")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            metrics = (reply.headers["Content-Type"], reply.read().decode())
        code = watch.stop()
        hashes = {n: block_hash(node.url, n) for n in range(start, last + 1)}
        yield {"watch": watch, "code": code, "blocks": blocks, "last": last, "hashes": hashes,
               "hook": hook_file, "metrics": metrics}
    finally:
        if watch is not None:
            watch.kill()
        node.stop()


def first(run) -> dict[tuple[int, str], dict]:
    """(block, check) -> the line written when the block was evaluated; exactly one each."""
    out = {}
    for line in run["watch"].lines:
        if "check" in line and not line["final"]:
            key = (line["block"], line["check"])
            assert key not in out, f"two first lines for {key}"
            out[key] = line
    return out


def test_a_line_per_block_per_check_with_the_nodes_hash(run):
    lines = first(run)
    blocks = range(run["blocks"]["start"], run["last"] + 1)
    assert set(lines) == {(b, c) for b in blocks for c in (LYING, HONEST)}
    assert all(line["hash"] == run["hashes"][line["block"]] for line in lines.values())
    assert all(set(line) >= {"block", "hash", "check", "verdict", "reason", "final", "derived",
                             "evidence_digest"} for line in lines.values())


def test_the_overdraw_block_is_bad_and_only_from_there(run):
    lines, b = first(run), run["blocks"]
    for number in range(b["start"], run["last"] + 1):
        assert lines[(number, HONEST)]["verdict"] == "VERIFIED-GOOD"
        want = "VERIFIED-BAD" if number >= b["overdraw"] else "VERIFIED-GOOD"
        assert lines[(number, LYING)]["verdict"] == want, number
    assert lines[(b["draw"], LYING)]["derived"] == {
        "aggregate": "40", "cap": "100", "headroom": "60", "within_cap": True}
    bad = lines[(b["overdraw"], LYING)]
    assert (bad["reason"], bad["healthy"]) == ("predicate-failed", False)
    assert bad["derived"] == {"aggregate": "101", "cap": "100", "headroom": "-1",
                              "within_cap": False}


def test_on_bad_fires_once_with_the_bad_line(run):
    fired = [json.loads(t) for t in run["hook"].read_text().splitlines()]
    assert len(fired) == 1
    assert (fired[0]["check"], fired[0]["block"], fired[0]["verdict"]) == (
        LYING, run["blocks"]["overdraw"], "VERIFIED-BAD")
    assert fired[0]["hash"] == run["hashes"][run["blocks"]["overdraw"]]


def test_lines_turn_final_two_blocks_deep_once(run):
    final = [x for x in run["watch"].lines if x.get("final")]
    keys = [(x["block"], x["check"]) for x in final]
    assert len(keys) == len(set(keys))
    # stopped with the tip at `last`: final up to last - 2, not above
    blocks = range(run["blocks"]["start"], run["last"] - 1)
    assert set(keys) == {(b, c) for b in blocks for c in (LYING, HONEST)}
    provisional = first(run)
    for line in final:
        assert {**line, "final": False} == provisional[(line["block"], line["check"])]


def test_sigterm_exits_0(run):
    assert run["code"] == 0


def test_metrics_endpoint_counts_the_lines(run):
    content_type, text = run["metrics"]
    assert content_type.startswith("text/plain")

    def value(name: str, **labels: str) -> float | None:
        shown = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        pattern = rf"^recompute_watch_{name}{re.escape('{' + shown + '}') if shown else ''} (\S+)$"
        found = re.search(pattern, text, re.M)
        return None if found is None else float(found.group(1))

    b, last = run["blocks"], run["last"]
    blocks = last - b["start"] + 1
    bad = last - b["overdraw"] + 1
    assert value("verdicts_total", check=LYING, verdict="VERIFIED-BAD") == bad
    assert value("verdicts_total", check=LYING, verdict="VERIFIED-GOOD") == blocks - bad
    assert value("verdicts_total", check=HONEST, verdict="VERIFIED-GOOD") == blocks
    assert value("check_healthy", check=LYING) == 0
    assert value("check_healthy", check=HONEST) == 1
    assert value("last_verified_block") == last
    assert value("last_final_block") == last - 2
    assert value("lag_blocks") == 0
    assert value("head_block") == last
    assert value("blocks_total") == blocks
    assert value("reorgs_total") == 0
    assert "# TYPE recompute_watch_rpc_errors_total counter" in text
