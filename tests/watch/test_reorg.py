"""A reorg under a following watch (anvil's evm_snapshot / evm_revert): it is reported with
the fork point and the orphaned hashes the node had given those blocks, the new canonical
blocks are evaluated, and no final line is about an orphaned block.

The orphaned branch holds an empty block and A's draw of 40 (40 <= cap 100: GOOD); the new
branch holds the owner's overdraw of 101 for C at the same height (101 > 100: BAD) and three
empty blocks.
"""

from __future__ import annotations

import signal

import pytest

from tests.watch.meters import HISTORY_AGE, LyingTree, lying_cap_check, start_meters_chain
from tests.watch.watchproc import Watch, block_hash, head, write_config

CHECK = "lying-cap"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reorg")
    node, manifest = start_meters_chain()
    watch = None
    try:
        tree = LyingTree(node, manifest)
        fork = int(head(node.url)["number"], 16)
        period = tree.period_of(tree.now + 12)
        assert tree.period_of(tree.now + 12 * 8) == period
        config = write_config(tmp / "checks.toml", [lying_cap_check(CHECK, manifest, period)])
        watch = Watch(*HISTORY_AGE, "--rpc", node.url, "--config", str(config), "--poll", "0.1",
                      "--confirmations", "2")
        watch.wait_for_block(fork, 1)
        snapshot = node.rpc("evm_snapshot")
        old = [tree.mine(), tree.draw("A", 40)]
        watch.wait_for_block(old[-1], 1)
        orphaned = [block_hash(node.url, n) for n in old]
        assert node.rpc("evm_revert", snapshot) is True
        new = [tree.overdraw("C", 101)] + [tree.mine() for _ in range(3)]
        assert new[0] == fork + 1
        last = new[-1]
        watch.wait_for(lambda ls: any(x.get("block") == last - 2 and x.get("final")
                                      for x in ls), what="final lines of the new branch")
        code = watch.stop(signal.SIGINT)
        canonical = {n: block_hash(node.url, n) for n in range(fork, last + 1)}
        yield {"lines": watch.lines, "code": code, "fork": fork, "orphaned": orphaned,
               "new": new, "canonical": canonical}
    finally:
        if watch is not None:
            watch.kill()
        node.stop()


def test_the_reorg_is_reported_once_with_the_fork_point_and_orphaned_hashes(run):
    events = [x for x in run["lines"] if x.get("event") == "reorg"]
    assert len(events) == 1
    event = events[0]
    assert event["fork_point"] == run["fork"]
    assert event["orphaned"] == run["orphaned"]
    assert "final_orphaned" not in event


def test_the_orphaned_blocks_were_evaluated_but_never_final(run):
    orphaned = set(run["orphaned"])
    about = [x for x in run["lines"] if x.get("hash") in orphaned]
    assert {x["hash"] for x in about} == orphaned  # evaluated while they were the head
    assert not any(x["final"] for x in about)
    assert all(x["verdict"] == "VERIFIED-GOOD" for x in about)  # 0 and 40 of 100


def test_the_new_canonical_blocks_are_re_evaluated(run):
    lines = [x for x in run["lines"] if "check" in x and not x["final"]]
    new = {x["block"]: x for x in lines if x["hash"] == run["canonical"].get(x["block"])
           and x["block"] > run["fork"]}
    assert sorted(new) == run["new"]
    replaced = new[run["fork"] + 1]
    assert replaced["verdict"] == "VERIFIED-BAD"
    assert replaced["derived"]["aggregate"] == "101" and replaced["derived"]["cap"] == "100"
    # the reorg event comes after the orphaned lines and before the replacement's
    index = {id(x): i for i, x in enumerate(run["lines"])}
    event = next(i for i, x in enumerate(run["lines"]) if x.get("event") == "reorg")
    assert max(index[id(x)] for x in run["lines"] if x.get("hash") in run["orphaned"]) < event
    assert index[id(replaced)] > event


def test_final_lines_are_canonical_and_once(run):
    final = [x for x in run["lines"] if x.get("final")]
    assert all(x["hash"] == run["canonical"][x["block"]] for x in final)
    numbers = [x["block"] for x in final]
    assert numbers == list(range(run["fork"], run["new"][-1] - 1))


def test_sigint_exits_0(run):
    assert run["code"] == 0
