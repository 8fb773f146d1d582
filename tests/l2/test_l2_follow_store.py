"""``recompute watch --store`` following an OP-stack L2 (docs/l2.md §Watch): a restarted
follower goes on after its store's last final block, judges again the games its stored lines
rest on, and a retraction (a game blacklisted after its lines were written) is stored: the
retracted blocks are evaluated again under a usable game, their stored lines replaced
(the scripted anvil pair of tests/l2/op_stack_pair.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from recompute.devnet.anvil import Anvil
from recompute.watch.store import Store
from tests.l2.op_stack_pair import PORTAL, REGISTRY, add_final_game, build_pair, hx

pytestmark = pytest.mark.anvil
RECIPES = "tests/l2/slot_recipes.py"


def lines_of(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def command(pair, tmp_path, blocks: int, *more: str) -> list[str]:
    config = tmp_path / "checks.toml"
    config.write_text(f'[[check]]\nname = "slot"\nrecipe = "probe/slot-at-most"\n'
                      f'address = "{hx(REGISTRY)}"\nparams = {{ cap = 100 }}\n')
    return [sys.executable, "-m", "recompute", "watch", "--rpc", pair.l2.url, "--l2-portal",
            hx(PORTAL), "--l1-rpc", pair.l1.url, "--config", str(config), "--recipes", RECIPES,
            "--from", "9", "--poll", "0.2", "--max-blocks", str(blocks), "--store",
            str(tmp_path / "follow.db"), *more]


def follow(pair, tmp_path, blocks: int, *more: str) -> tuple[list[dict], str]:
    """One run of the follower into the store until it has evaluated ``blocks`` blocks: the
    lines it wrote (stdout is one file across runs, appended) and its stderr."""
    out = tmp_path / "out.jsonl"
    before = len(out.read_text()) if out.exists() else 0
    with open(out, "a") as stdout:
        done = subprocess.run(command(pair, tmp_path, blocks, *more), stdout=stdout,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return lines_of(out.read_text()[before:]), done.stderr


def stored(tmp_path) -> list[tuple[int, str, str]]:
    store = Store.existing(tmp_path / "follow.db")
    try:
        return [(x["block"], x["verdict"], x["anchor"]["game"]) for x in store.final_lines()]
    finally:
        store.close()


def test_a_restarted_l2_follower_resumes_and_stores_a_retraction(tmp_path):
    l1, l2 = Anvil().start(), Anvil().start()
    try:
        pair = build_pair(l1, l2, ("final",))
        final = hx(pair.games["final"])
        lines, _ = follow(pair, tmp_path, 3)
        assert [(x["block"], x["verdict"], x["final"]) for x in lines] == [
            (9, "VERIFIED-GOOD", True), (10, "VERIFIED-GOOD", True),
            (11, "VERIFIED-GOOD", True)]
        assert stored(tmp_path) == [(n, "VERIFIED-GOOD", final) for n in (9, 10, 11)]

        newer = hx(add_final_game(pair, "newer", 13))
        lines, err = follow(pair, tmp_path, 2)  # restarted: after block 11, not from 9
        assert "continuing after L2 block 11" in err, err
        assert [(x["block"], x["anchor"]["game"]) for x in lines] == [(12, newer), (13, newer)]

        pair.blacklist("final")  # lost after its lines were stored, while the bot was down
        pair.mine(l1)
        lines, err = follow(pair, tmp_path, 3)
        events = [x for x in lines if x.get("event") == "retraction"]
        assert [(x["game"], x["reason"], x["blocks"]) for x in events] == [
            (final, "game-blacklisted", [9, 10, 11])]
        verdicts = [(x["block"], x["verdict"], x["final"], x["healthy"]) for x in lines
                    if "check" in x]
        assert verdicts == [(9, "UNVERIFIABLE", True, False), (10, "UNVERIFIABLE", True, False),
                            (11, "UNVERIFIABLE", True, False), (9, "VERIFIED-GOOD", True, True),
                            (10, "VERIFIED-GOOD", True, True), (11, "VERIFIED-GOOD", True, True)]
        assert stored(tmp_path) == [(n, "VERIFIED-GOOD", newer) for n in range(9, 14)]
    finally:
        l1.stop()
        l2.stop()


def test_a_retraction_stored_before_a_restart_is_evaluated_again_after_it(tmp_path):
    l1, l2 = Anvil().start(), Anvil().start()
    try:
        pair = build_pair(l1, l2, ("final",))
        follow(pair, tmp_path, 3)
        pair.blacklist("final")
        pair.mine(l1)
        # no usable game covers 9..11 now: the run retracts them, then waits; stopped there
        stdout = open(tmp_path / "out.jsonl", "a")  # noqa: SIM115 -- closed below
        watch = subprocess.Popen(command(pair, tmp_path, 3), stdout=stdout,
                                 stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while "retraction" not in (tmp_path / "out.jsonl").read_text():
                assert time.monotonic() < deadline and watch.poll() is None
                time.sleep(0.2)
            time.sleep(1)
            watch.terminate()
            assert watch.wait(60) == 0
        finally:
            if watch.poll() is None:
                watch.kill()
            stdout.close()
        assert [v for _, v, _ in stored(tmp_path)] == ["UNVERIFIABLE"] * 3
        newer = hx(add_final_game(pair, "newer", 12))
        lines, err = follow(pair, tmp_path, 4)  # from the retracted blocks, not after them
        assert [(x["block"], x["verdict"]) for x in lines] == [
            (n, "VERIFIED-GOOD") for n in (9, 10, 11, 12)], err
        assert stored(tmp_path) == [(n, "VERIFIED-GOOD", newer) for n in (9, 10, 11, 12)]
    finally:
        l1.stop()
        l2.stop()


def test_first_lines_of_a_game_not_yet_final_are_not_written_twice(tmp_path):
    l1, l2 = Anvil().start(), Anvil().start()
    try:
        pair = build_pair(l1, l2, ("final", "resolved"))
        resolved = hx(pair.games["resolved"])
        lines, _ = follow(pair, tmp_path, 7, "--l2-finality", "resolved")
        assert [(x["block"], x["final"], x["anchor"]["game"], x["anchor"]["tier"])
                for x in lines] == [(n, False, resolved, "resolved") for n in range(9, 16)]
        assert stored(tmp_path) == []  # no final line yet
        lines, err = follow(pair, tmp_path, 7, "--l2-finality", "resolved")
        assert lines == [], lines  # evaluated again, written before the restart: not again
        assert err.count("first lines written before the restart") == 7, err
    finally:
        l1.stop()
        l2.stop()
