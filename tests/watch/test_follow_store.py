"""Follow mode writing to the evidence store: a restarted bot continues right after the last
final block its store recorded (no final line twice, none missing), ``audit report`` reads the
store offline, another checks.toml is refused in one line. On a chain of our own (the meters
history), blocks mined by the test; expected blocks from the node's own numbering."""

from __future__ import annotations

import json

import pytest

from tests.watch.meters import HISTORY_AGE, honest_key_check, start_meters_chain
from tests.watch.watchproc import Watch, block_hash, head, write_config

pytestmark = pytest.mark.anvil


def test_a_restarted_bot_continues_after_the_last_final_block(tmp_path, run_cli):
    node, manifest = start_meters_chain()
    try:
        config = write_config(tmp_path / "checks.toml", [honest_key_check("key-1", manifest)])
        store = tmp_path / "bot.sqlite"
        args = [*HISTORY_AGE, "--rpc", node.url, "--config", str(config), "--poll", "0.1",
                "--confirmations", "1", "--store", str(store)]
        start = int(head(node.url)["number"], 16)
        first = Watch(*args, "--max-blocks", "3")
        first.wait_for_block(start, 1)
        node.rpc("evm_mine")
        node.rpc("evm_mine")
        assert first.finish() == 0
        # blocks start..start+2 evaluated; start and start+1 are 1 deep: final
        finals = [x["block"] for x in first.lines if x["final"]]
        assert finals == [start, start + 1]

        node.rpc("evm_mine")
        node.rpc("evm_mine")
        second = Watch(*args, "--max-blocks", "2")
        assert second.finish() == 0
        # start+2's first line reached stdout in the first run: not written again (docs/watch.md
        # §Restarts); its final line and start+3's first line are new
        assert [x["block"] for x in second.lines if not x["final"]] == [start + 3]
        assert [x["block"] for x in second.lines if x["final"]] == [start + 2]
        assert any(f"continuing after block {start + 1}" in t for t in second.stderr)
        for line in first.lines + second.lines:
            assert line["hash"] == block_hash(node.url, line["block"])

        report = run_cli("audit", "report", "--store", str(store), "--json")
        summary = json.loads(report.stdout)
        assert report.returncode == 0, report.stderr
        assert (summary["mode"], summary["blocks"], summary["last_final_block"]) == (
            "follow", 3, start + 2)
        # 1000 of 1000 reserved + confirmed against the cap (history_meters.py): GOOD
        assert summary["checks"]["key-1"]["VERIFIED-GOOD"] == 3

        other = write_config(tmp_path / "other.toml", [honest_key_check("key-one", manifest)])
        refused = run_cli("watch", "--rpc", node.url, "--config", str(other), "--store",
                          str(store), "--max-blocks", "1")
        assert refused.returncode == 64
        assert len(refused.stderr.strip().splitlines()) == 1
        assert "not the checks" in refused.stderr
    finally:
        node.stop()
