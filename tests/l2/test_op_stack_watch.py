"""``recompute watch`` on an OP-stack L2 (docs/l2.md §Watch), on the scripted anvil pair:
range audits pinned through L1 (one process and segmented), and follow mode advancing by games,
retracting the lines of a game blacklisted after they were written."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from recompute.devnet.anvil import Anvil
from tests.cli import run_cli
from tests.l2.op_stack_pair import PORTAL, REGISTRY, add_final_game, build_pair, hx

pytestmark = pytest.mark.anvil
RECIPES = "tests/l2/slot_recipes.py"


def config(tmp_path, cap: int):
    path = tmp_path / "checks.toml"
    path.write_text(f'[[check]]\nname = "slot"\nrecipe = "probe/slot-at-most"\n'
                    f'address = "{hx(REGISTRY)}"\nparams = {{ cap = {cap} }}\n')
    return path



def lines_of(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("mode", [[], ["--processes", "2", "--segment-blocks", "2"]])
def test_a_range_audit_of_l2_blocks_is_pinned_through_l1(pair, tmp_path, mode):
    done = run_cli("watch", *pair.args(), "--config", config(tmp_path, 9), "--recipes",
                   RECIPES, "--from", "7", "--to", "11", *mode)
    lines = lines_of(done.stdout)
    assert done.returncode == 1, done.stderr  # slot 0 > 9 at blocks 10 and 11
    assert [(line["block"], line["verdict"]) for line in lines] == [
        (7, "VERIFIED-GOOD"), (8, "VERIFIED-GOOD"), (9, "VERIFIED-GOOD"),
        (10, "VERIFIED-BAD"), (11, "VERIFIED-BAD")]
    top = lines[-1]["anchor"]
    assert top["method"] == "op-stack" and top["game"] == hx(pair.games["final"])
    assert top["tier"] == "final"


def test_follow_mode_refuses_a_pinned_l1_block(pair, tmp_path):
    done = run_cli("watch", *pair.args(), "--config", config(tmp_path, 9), "--recipes",
                   RECIPES)
    assert done.returncode == 64 and "afresh" in done.stderr


def _wait_for(path, predicate, what, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = lines_of(path.read_text()) if path.exists() else []
        if predicate(lines):
            return lines
        time.sleep(0.2)
    err = path.with_name("err.txt")
    raise AssertionError(f"timed out waiting for {what}: {path.read_text()[-2000:]}\n"
                         f"{err.read_text()[-3000:] if err.exists() else ''}")


def test_follow_mode_advances_by_games_and_retracts_a_blacklisted_games_lines(tmp_path):
    l1, l2 = Anvil().start(), Anvil().start()
    try:
        pair = build_pair(l1, l2, ("final",))
        alerts = tmp_path / "alerts"
        out, err = tmp_path / "out.jsonl", tmp_path / "err.txt"
        args = ["--rpc", l2.url, "--l2-portal", hx(PORTAL), "--l1-rpc", l1.url]
        with open(out, "w") as stdout, open(err, "w") as stderr:
            watch = subprocess.Popen(
                [sys.executable, "-m", "recompute", "watch", *args, "--config",
                 str(config(tmp_path, 100)), "--recipes", RECIPES, "--from", "9", "--poll",
                 "0.2", "--max-blocks", "8", "--on-bad", f"cat >> {alerts}"],
                stdout=stdout, stderr=stderr)
            try:
                first = _wait_for(out, lambda ls: len(ls) >= 3, "the final game's blocks")
                assert [(x["block"], x["verdict"], x["final"]) for x in first[:3]] == [
                    (9, "VERIFIED-GOOD", True), (10, "VERIFIED-GOOD", True),
                    (11, "VERIFIED-GOOD", True)]
                assert {x["anchor"]["game"] for x in first} == {hx(pair.games["final"])}
                pair.blacklist("final")
                pair.mine(l1)
                lines = _wait_for(out, lambda ls: any(x.get("event") == "retraction"
                                                      for x in ls), "the retraction")
                event = next(x for x in lines if x.get("event") == "retraction")
                assert event["game"] == hx(pair.games["final"])
                assert event["reason"] == "game-blacklisted" and event["blocks"] == [9, 10, 11]
                newer = add_final_game(pair, "newer", 13)
                lines = _wait_for(out, lambda ls: any(
                    x.get("anchor", {}).get("game") == hx(newer) for x in ls), "the newer game")
                assert watch.wait(120) == 0, err.read_text()
            finally:
                if watch.poll() is None:
                    watch.kill()
        lines = lines_of(out.read_text())
        lines = [x for x in lines if x.get("event") or x["hash"] is not None]  # no trouble
        retracted = [x for x in lines if "check" in x and x["reason"] == "game-blacklisted"]
        assert [(x["block"], x["verdict"], x["final"], x["healthy"]) for x in retracted] == [
            (9, "UNVERIFIABLE", True, False), (10, "UNVERIFIABLE", True, False),
            (11, "UNVERIFIABLE", True, False)]
        again = [(x["block"], x["verdict"]) for x in lines
                 if x.get("anchor", {}).get("game") == hx(newer)]
        assert again == [(n, "VERIFIED-GOOD") for n in range(9, 14)]
        fired = lines_of(alerts.read_text())
        assert [(x["block"], x["reason"]) for x in fired] == [(9, "game-blacklisted")]
    finally:
        l1.stop()
        l2.stop()


@pytest.mark.parametrize(("game", "finality", "banner"), [
    ("final", "final", "L2 TIER FINAL: pinned through L1 by a dispute game that is final."),
    ("resolved", "resolved", "L2 TIER RESOLVED: pinned through L1 by a dispute game that is "
                             "resolved, not final"),
])
def test_the_html_report_of_an_l2_audit_says_the_tier(pair, tmp_path, game, finality, banner):
    page = tmp_path / "audit.html"
    top = pair.game_blocks[game]
    done = run_cli("watch", *pair.args(game=game), "--l2-finality", finality, "--config",
                   config(tmp_path, 100), "--recipes", RECIPES, "--from", str(top - 1),
                   "--to", str(top), "--html", page)
    assert done.returncode == 0, done.stderr
    assert banner in page.read_text()
