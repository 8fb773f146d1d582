"""A node that stops answering under a following watch: UNVERIFIABLE lines (rpc-unreachable)
about the block awaited, retries with capped exponential backoff, and when the node is back
(same port, same ``--state`` file: the same chain) the watch resumes after the last verified
block: every block once, no gap, no final line twice.
"""

from __future__ import annotations

import re

import pytest

from tests.watch.meters import (
    HISTORY_AGE,
    LyingTree,
    honest_key_check,
    lying_cap_check,
    start_meters_chain,
)
from tests.watch.watchproc import Watch, block_hash, head, write_config

CHECKS = ("lying-cap", "honest-key")
POLL, MAX_BACKOFF = 0.1, 0.4
FAILURES = 5  # failed attempts to wait for while the node is down


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("outage")
    node, manifest = start_meters_chain(state_path=tmp / "anvil-state.json")
    watch = None
    try:
        tree = LyingTree(node, manifest)
        start = int(head(node.url)["number"], 16)
        config = write_config(tmp / "checks.toml", [
            lying_cap_check(CHECKS[0], manifest, tree.period_of(tree.now + 12)),
            honest_key_check(CHECKS[1], manifest)])
        watch = Watch(*HISTORY_AGE, "--rpc", node.url, "--config", str(config), "--poll", str(POLL),
                      "--max-backoff", str(MAX_BACKOFF), "--confirmations", "2")
        watch.wait_for_block(start, len(CHECKS))
        before = tree.mine()
        watch.wait_for_block(before, len(CHECKS))
        hash_before = block_hash(node.url, before)
        node.stop()
        watch.wait_for(lambda ls: sum(1 for x in ls if x.get("verdict") == "UNVERIFIABLE")
                       >= FAILURES * len(CHECKS), what=f"{FAILURES} failed attempts")
        node.start()
        assert block_hash(node.url, before) == hash_before  # the same chain came back
        after = [tree.mine() for _ in range(3)]
        last = after[-1]
        watch.wait_for(lambda ls: any(x.get("block") == last - 2 and x.get("final")
                                      for x in ls) and
                       sum(1 for x in ls if x.get("block") == last) >= len(CHECKS),
                       what="the blocks mined after the restart")
        code = watch.stop()
        hashes = {n: block_hash(node.url, n) for n in range(start, last + 1)}
        yield {"watch": watch, "code": code, "start": start, "before": before, "last": last,
               "hashes": hashes}
    finally:
        if watch is not None:
            watch.kill()
        node.stop()


def test_an_unreachable_node_gives_unverifiable_lines_about_the_awaited_block(run):
    lines = run["watch"].lines
    down = [x for x in lines if x.get("verdict") == "UNVERIFIABLE"]
    assert len(down) >= FAILURES * len(CHECKS)
    assert all((x["reason"], x["hash"], x["final"], x["block"]) ==
               ("rpc-unreachable", None, False, run["before"] + 1) for x in down)
    per_check = {c: sum(1 for x in down if x["check"] == c) for c in CHECKS}
    assert per_check[CHECKS[0]] == per_check[CHECKS[1]]
    # between the last block before the outage and the first after it
    index = [i for i, x in enumerate(lines) if x in down]
    assert max(i for i, x in enumerate(lines) if x.get("block") == run["before"]
               and not x["final"]) < index[0]
    assert index[-1] < min(i for i, x in enumerate(lines) if x.get("block") == run["before"] + 1
                           and x["hash"])


def test_retries_back_off_exponentially_up_to_the_cap(run):
    delays = [float(m.group(1)) for text in run["watch"].stderr
              if (m := re.search(r"node trouble \(rpc-unreachable\).*retry \d+ in ([\d.]+)s",
                                 text))]
    assert len(delays) >= FAILURES
    expected = [min(POLL * 2 ** k, MAX_BACKOFF) for k in range(len(delays))]
    assert delays == pytest.approx(expected, abs=0.051)
    assert any("answers again" in text for text in run["watch"].stderr)


def test_recovery_has_no_gap_and_no_duplicate(run):
    lines = [x for x in run["watch"].lines if x.get("hash") and not x["final"]]
    keys = [(x["block"], x["check"]) for x in lines]
    assert len(keys) == len(set(keys))
    blocks = range(run["start"], run["last"] + 1)
    assert set(keys) == {(b, c) for b in blocks for c in CHECKS}
    assert all(x["hash"] == run["hashes"][x["block"]] for x in lines)
    assert all(x["verdict"] == "VERIFIED-GOOD" for x in lines)  # nothing drawn: 0 <= 100


def test_final_lines_once_each(run):
    final = [(x["block"], x["check"]) for x in run["watch"].lines if x.get("final")]
    assert len(final) == len(set(final))
    assert set(final) == {(b, c) for b in range(run["start"], run["last"] - 1) for c in CHECKS}


def test_sigterm_exits_0(run):
    assert run["code"] == 0
