"""Alerts a bot operator wires up, through the real CLI: ``--on-bad-webhook`` POSTs to a real
receiver on 127.0.0.1 once per transition to unhealthy and once back (a 503 is tried again),
``--webhook-format slack`` sends ``{"text": …}``, and a real scrape of ``/metrics`` (served by
prometheus_client) shows up, the last verified block and its age, checks by health, the reorg,
the retracted final line and the evaluation latency histogram.

The chain (tests/watch/meters.py): the lying meter's cap rule spentRoot <= cap with cap 100.
At the fork block nothing is drawn (GOOD); the owner's overdraw of 101 (BAD) is then reverted
(anvil's evm_snapshot / evm_revert) and three empty blocks mined at the same heights (GOOD):
one transition to unhealthy at the overdraw block, one back at the block that replaced it.
"""

from __future__ import annotations

import os
import re
import signal
import urllib.request

import pytest

from recompute.devnet.anvil import free_port
from tests.ux.receiver import Receiver
from tests.watch.meters import HISTORY_AGE, LyingTree, lying_cap_check, start_meters_chain
from tests.watch.watchproc import EXAMPLE, Watch, block_hash, head, write_config

CHECK = "lying-cap"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("alerts")
    node, manifest = start_meters_chain()
    receiver = Receiver(statuses=[503])  # the first POST fails once: it must be tried again
    slack = Receiver()
    watch = None
    try:
        tree = LyingTree(node, manifest)
        fork = int(head(node.url)["number"], 16)
        period = tree.period_of(tree.now + 12)
        assert tree.period_of(tree.now + 12 * 8) == period
        config = write_config(tmp / "checks.toml", [lying_cap_check(CHECK, manifest, period)])
        port = free_port()
        os.environ["ETH_RPC_URL"] = node.url  # no --rpc: the watch takes $ETH_RPC_URL
        try:
            watch = Watch(*HISTORY_AGE, "--config", str(config), "--poll", "0.1",
                          "--confirmations", "0",
                          "--metrics-port", str(port), "--on-bad-webhook", receiver.url)
        finally:
            del os.environ["ETH_RPC_URL"]
        _wait_block(watch, fork)
        snapshot = node.rpc("evm_snapshot")
        overdraw = tree.overdraw("C", 101)
        assert overdraw == fork + 1
        _wait_block(watch, overdraw)
        orphaned_hash = block_hash(node.url, overdraw)
        audit = Watch("-r", node.url, "--config", str(config), "--from", str(fork),
                      "--to", str(overdraw), "--on-bad-webhook", slack.url,
                      "--webhook-format", "slack")
        audit_code = audit.finish()
        assert node.rpc("evm_revert", snapshot) is True
        new = [tree.mine() for _ in range(3)]
        assert new[0] == overdraw
        watch.wait_for(lambda ls: sum(1 for x in ls if x.get("block") == new[-1]
                                      and x.get("hash")) >= 1, what="the new branch's head")
        watch.wait_for(lambda ls: len(receiver.snapshot()) >= 3, what="the webhook POSTs")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            metrics = (reply.headers["Content-Type"], reply.read().decode())
        code = watch.stop(signal.SIGINT)
        yield {"watch": watch, "code": code, "fork": fork, "overdraw": overdraw, "new": new,
               "orphaned_hash": orphaned_hash, "replaced_hash": block_hash(node.url, overdraw),
               "last_header": head(node.url), "posts": receiver.snapshot(),
               "slack": slack.snapshot(), "audit_code": audit_code, "metrics": metrics}
    finally:
        if watch is not None:
            watch.kill()
        receiver.close()
        slack.close()
        node.stop()


def test_one_post_to_unhealthy_tried_again_after_a_503(run):
    posts = run["posts"]
    assert [status for status, _, _ in posts[:2]] == [503, 200]
    assert posts[0][2] == posts[1][2]  # the same body, sent again
    status, content_type, body = posts[0]
    assert content_type == "application/json"
    assert body["event"] == "unhealthy" and body["source"] == "recompute"
    assert body["check"] == CHECK and body["block"] == run["overdraw"]
    assert body["hash"] == run["orphaned_hash"]
    assert body["verdict"] == "VERIFIED-BAD" and body["reason"] == "predicate-failed"
    assert body["line"]["derived"]["aggregate"] == "101" and body["line"]["derived"]["cap"] == "100"


def test_one_post_back_to_healthy_at_the_block_that_replaced_it(run):
    later = [body for status, _, body in run["posts"][2:]]
    assert len(later) == 1
    body = later[0]
    assert body["event"] == "healthy" and body["check"] == CHECK
    assert body["block"] == run["overdraw"] and body["hash"] == run["replaced_hash"]
    assert body["verdict"] == "VERIFIED-GOOD"


def test_slack_format_is_one_text_per_transition(run):
    assert run["audit_code"] == 1  # the range had an unhealthy line
    assert len(run["slack"]) == 1
    status, _, body = run["slack"][0]
    assert list(body) == ["text"]
    assert f"`{CHECK}` is UNHEALTHY at block {run['overdraw']}" in body["text"]
    assert "VERIFIED-BAD" in body["text"]


def _wait_block(watch: Watch, number: int) -> None:
    """Until the line of block ``number`` is out (--confirmations 0: it is final at once)."""
    watch.wait_for(lambda ls: any(x.get("block") == number and x.get("hash") for x in ls),
                   what=f"block {number}")


def _value(text: str, name: str, **labels: str) -> float | None:
    shown = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    pattern = rf"^recompute_watch_{name}{re.escape('{' + shown + '}') if shown else ''} (\S+)$"
    found = re.search(pattern, text, re.M)
    return None if found is None else float(found.group(1))


def test_metrics_scrape(run):
    content_type, text = run["metrics"]
    assert content_type.startswith("text/plain")
    last = run["new"][-1]
    header = run["last_header"]
    assert int(header["number"], 16) == last
    assert _value(text, "up") == 1
    assert _value(text, "last_verified_block") == last
    assert _value(text, "last_verified_block_timestamp_seconds") == int(header["timestamp"], 16)
    assert _value(text, "last_verified_block_age_seconds") >= 0
    assert _value(text, "checks", health="healthy") == 1
    assert _value(text, "checks", health="unhealthy") == 0
    assert _value(text, "reorgs_total") == 1
    assert _value(text, "orphaned_blocks_total") == 1
    assert _value(text, "retracted_final_lines_total") == 1  # --confirmations 0: it was final
    # fork, overdraw, then the 3 new blocks: 5 evaluations, each in the latency histogram
    assert _value(text, "blocks_total") == 5
    assert _value(text, "evaluation_seconds_count") == 5
    assert _value(text, "evaluation_seconds_bucket", le="+Inf") == 5
    assert "# TYPE recompute_watch_evaluation_seconds histogram" in text
    assert "_created" not in text


def test_the_watch_exits_0_on_sigint(run):
    assert run["code"] == 0


def test_a_bad_webhook_url_is_a_usage_error(run_cli):
    result = run_cli("watch", "--rpc", "http://127.0.0.1:1", "--config", str(EXAMPLE),
                     "--on-bad-webhook", "ftp://127.0.0.1/hook")
    assert result.returncode == 64, result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: --on-bad-webhook 'ftp://127.0.0.1/hook' is not an http(s) URL"]
