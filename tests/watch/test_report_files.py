"""The HTML and CSV reports of a range audit (docs/report.md): ``recompute watch --from --to
--html --csv`` (one process, and in segments with ``--store``) and ``recompute audit report
--store --html --csv``, rendered in headless Chromium.

Independent expectations: the checks, their ``since`` and parameters from the example
checks.toml itself (parsed here with tomllib); the lying meter's first over-cap block from the
devnet manifest (moment ``meter.over-cap``); the evidence digest of its BAD line from ``recompute
step --json`` at that block (docs/watch.md: the line's digest is step's). A store crafted by
hand holds the hostile strings.
"""

from __future__ import annotations

import csv
import io
import json
import tomllib
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest

from recompute.watch.store import Store
from tests.chromium import console, dump_dom, screenshot
from tests.cli import run_cli
from tests.watch.watchproc import EXAMPLE, block_hash, rpc_call

FIRST, LAST = 60, 100  # the lying meter's draws (67..69) and over-cap block inside
CHECKS = tomllib.loads(EXAMPLE.read_text())["check"]


class Dom(HTMLParser):
    """What the tests look at in a page: the check names of the timeline figures, how many
    SVGs each figure holds, script elements, and the text."""

    def __init__(self, text: str):
        super().__init__()
        self.figures: list[dict] = []
        self.scripts = 0
        self.svgs = 0
        self.text: list[str] = []
        self._in_name = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "figure" and "check" in (attrs.get("class") or ""):
            self.figures.append({"name": "", "svgs": 0})
        elif tag == "span" and attrs.get("class") == "name" and self.figures:
            self._in_name = True
        elif tag == "svg":
            self.svgs += 1
            if self.figures:
                self.figures[-1]["svgs"] += 1
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag == "span":
            self._in_name = False
        elif tag == "figure" and self.figures:
            self.figures[-1]["closed"] = True

    def handle_data(self, data):
        self.text.append(data)
        if self._in_name:
            self.figures[-1]["name"] += data


def rows(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


@pytest.fixture(scope="module")
def audited(devnet, tmp_path_factory):
    node, manifest = devnet
    out = tmp_path_factory.mktemp("report")
    common = ["watch", "--rpc", node.url, "--config", EXAMPLE, "--from", FIRST, "--to", LAST]
    stored = run_cli(*common, "--store", out / "audit.sqlite", "--segment-blocks", "20",
                     "--html", out / "stored.html", "--csv", out / "stored.csv")
    assert stored.returncode == 1, stored.stderr  # the lying meter goes over its cap
    alone = run_cli(*common, "--html", out / "alone.html", "--csv", out / "alone.csv")
    assert alone.returncode == 1, alone.stderr
    report = run_cli("audit", "report", "--store", out / "audit.sqlite", "--html",
                     out / "report.html", "--csv", out / "report.csv")
    assert report.returncode == 1, report.stderr
    pinned = run_cli(*common, "--block-hash", block_hash(node.url, LAST), "--html",
                     out / "pinned.html")
    assert pinned.returncode == 1, pinned.stderr
    return {"node": node, "manifest": manifest, "dir": out, "stored": stored, "alone": alone,
            "report": report}


def test_the_csv_has_one_row_per_check_and_block_and_the_bad_line_is_steps(audited):
    out = audited["dir"]
    table = rows(out / "report.csv")
    expected = sum(max(0, LAST - max(FIRST, c.get("since", 0)) + 1) for c in CHECKS)
    assert len(table) == expected
    assert list(table[0]) == ["block", "block_hash", "check", "verdict", "reason", "healthy",
                              "final", "evidence_digest", "anchor_method", "detail", "derived"]
    # the three ways give the same rows (one process, segments with a store, the store later)
    assert (out / "alone.csv").read_bytes() == (out / "stored.csv").read_bytes() == \
        (out / "report.csv").read_bytes()

    over = audited["manifest"]["moments"]["meter.over-cap"]["number"]
    cap = next(c for c in CHECKS if c["name"] == "8312/lying-meter/cap")
    lying = [r for r in table if r["check"] == cap["name"]]
    first_bad = next(r for r in lying if r["verdict"] == "VERIFIED-BAD")
    assert int(first_bad["block"]) == over
    assert first_bad["healthy"] == "false" and first_bad["reason"] == "predicate-failed"
    assert first_bad["block_hash"] == block_hash(audited["node"].url, over)

    step = run_cli("step", cap["recipe"], "--rpc", audited["node"].url, "--block-hash",
                   first_bad["block_hash"], "--address", cap["address"], "--layout",
                   cap["layout"], *[a for k, v in cap["params"].items()
                                    for a in ("--param", f"{k}={v}")], "--json")
    assert step.returncode == 1, step.stderr
    evidence = json.loads(step.stdout)["evidence"]
    assert evidence["evidence_digest"] == first_bad["evidence_digest"]
    assert json.loads(first_bad["derived"]) == evidence["derived"]
    html = (out / "report.html").read_text()
    assert first_bad["evidence_digest"] in html


def test_the_page_renders_in_chromium_with_one_picture_per_check(audited):
    out = audited["dir"]
    assert "report: " in audited["stored"].stderr and "report: " in audited["report"].stderr
    assert (out / "stored.html").read_bytes() == (out / "report.html").read_bytes()
    chromium_dom, messages = dump_dom(out / "report.html", out / "profile")
    assert messages == []  # nothing blocked, nothing failed, no error
    # the one-process page is built by the same code from the same lines: read as written
    for dom_text in (chromium_dom, (out / "alone.html").read_text()):
        dom = Dom(dom_text)
        assert [f["name"] for f in dom.figures] == [c["name"] for c in CHECKS]
        assert all(f["svgs"] == 1 for f in dom.figures)
        assert dom.svgs == len(CHECKS) and dom.scripts == 0
        text = "".join(dom.text)
        assert f"{FIRST}..{LAST}" in text and "anchor method" in text
        assert "A check was unhealthy at some block (exit 1)" in text
    png = out / "report.png"
    assert screenshot(out / "report.html", png, out / "profile") == []
    assert png.stat().st_size > 20_000  # a drawn page, not a blank one


def _page_text(path: Path) -> str:
    return " ".join("".join(Dom(path.read_text()).text).split())


def test_the_page_says_what_was_checked_over_which_blocks_trusting_what(audited):
    """The first paragraph, the anchor in sentences, times as ISO 8601 UTC, no raw field."""
    node, out = audited["node"], audited["dir"]
    top = rpc_call(node.url, "eth_getBlockByNumber", [hex(LAST), False])
    stamp = int(top["timestamp"], 16)
    iso = datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = _page_text(out / "pinned.html")
    assert (f"This audit evaluated {len(CHECKS)} check(s) over blocks {FIRST} to {LAST} "
            f"({LAST - FIRST + 1} block(s) evaluated), the last of them dated {iso}, trusting "
            "only the block hash you pinned") in text
    assert f"Pinned by the block hash you gave, {top['hash']}." in text
    assert f"The block's time is {iso}" in text
    for raw in ("age_s", "as_of", "block_timestamp", str(stamp)):
        assert raw not in text  # no field name, no Unix seconds
    unpinned = _page_text(out / "report.html")
    assert "Not pinned: the node itself (http://127.0.0.1:" in unpinned
    assert "trusting the node itself for which block is which" in unpinned


def test_the_findings_are_runs_with_values_by_type(audited):
    """A run of BAD lines is one row ("from block 69 to 100, 32 blocks"); derived values show
    by their type (a time as a date, an amount with its unit); "healthy when", not "healthy"."""
    out = audited["dir"]
    over = audited["manifest"]["moments"]["meter.over-cap"]["number"]
    table = rows(out / "report.csv")
    text = _page_text(out / "report.html")
    run = f"VERIFIED-BAD from block {over} to {LAST}, {LAST - over + 1} blocks"
    assert f"8312/lying-meter/cap was unhealthy ({run})" in text  # the first paragraph
    page = (out / "report.html").read_text()
    cap_rows = page.split("8312/lying-meter/cap</h3>")[1].split("</table>")[0]
    assert cap_rows.count("<tr>") == 2 and run in cap_rows  # the head and one run
    bad = next(r for r in table if r["check"] == "8312/lying-meter/cap" and r["block"] ==
               str(over))
    cap = int(json.loads(bad["derived"])["cap"])
    assert f"cap {cap:,} units" in text
    amm = next(r for r in table if r["check"] == "amm/example/layer-0" and
               r["verdict"] == "VERIFIED-BAD")
    clock = int(json.loads(amm["derived"])["clock"])
    assert f"clock {datetime.fromtimestamp(clock, UTC):%Y-%m-%dT%H:%M:%SZ}" in text
    assert "healthy when" in text and "<th>healthy</th>" not in page


def test_the_console_check_sees_a_blocked_load(tmp_path):
    """The test above can fail: a page that asks for a remote image logs a console message."""
    page = tmp_path / "remote.html"
    page.write_text("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" "
                    "content=\"default-src 'none'\"></head><body><img src=\"http://127.0.0.1:9/"
                    "x.png\"></body></html>")
    _, messages = dump_dom(page, tmp_path / "profile")
    assert messages and "Content Security Policy" in messages[0]
    assert console("[1:1:INFO:CONSOLE(3)] \"Uncaught\"\nother") == [
        "[1:1:INFO:CONSOLE(3)] \"Uncaught\""]


EVIL = "<script>document.title='owned'</script><img src=x onerror=alert(1)>"


def test_hostile_strings_in_a_store_render_as_text(tmp_path):
    store_path = tmp_path / "hostile.sqlite"
    store = Store(store_path)
    names = [f"evil/{EVIL}", "=HYPERLINK(\"http://127.0.0.1:9\")"]
    store.put({"mode": "follow", "config_hash": "ab" * 32, "confirmations": 2,
               "checks": [{"name": n, "healthy": "VERIFIED-GOOD", "since": 0} for n in names]})
    for number in (5, 6):
        store.record_final([
            {"block": number, "hash": "0x" + f"{number:02x}" * 32, "check": name,
             "verdict": "VERIFIED-BAD", "reason": "predicate-failed", "final": True,
             "healthy": False, "derived": {"note": EVIL}, "evidence_digest": "cd" * 32,
             "detail": f"-1+{EVIL}"} for name in names], number, "0x" + f"{number:02x}" * 32)
    store.close()
    page, table = tmp_path / "hostile.html", tmp_path / "hostile.csv"
    done = run_cli("audit", "report", "--store", store_path, "--html", page, "--csv", table)
    assert done.returncode == 1, done.stderr

    got = rows(table)
    assert [r["check"] for r in got] == [f"evil/{EVIL}", "'" + names[1]] * 2
    assert {r["detail"] for r in got} == {"'" + f"-1+{EVIL}"}  # never a spreadsheet formula
    written = page.read_text()
    assert "<script" not in written and "<img" not in written  # as written: escaped

    dom_text, messages = dump_dom(page, tmp_path / "profile")
    assert messages == []
    dom = Dom(dom_text)
    assert dom.scripts == 0 and "<img" not in dom_text
    assert [f["name"] for f in dom.figures] == names  # shown as the text it is
    assert EVIL in "".join(dom.text)
    assert "<title>" in dom_text and "owned" not in dom_text.split("<title>")[1].split("<")[0]


def test_report_files_are_usage_errors_before_any_work(devnet, tmp_path):
    node, _ = devnet
    common = ["watch", "--rpc", node.url, "--config", EXAMPLE]
    follow = run_cli(*common, "--html", tmp_path / "a.html")
    assert follow.returncode == 64
    assert "--html and --csv are for range audits" in follow.stderr
    missing = run_cli(*common, "--from", "1", "--to", "2", "--csv", tmp_path / "no" / "a.csv")
    assert missing.returncode == 64
    assert f"no folder {tmp_path / 'no'}" in missing.stderr
    assert missing.stdout == ""  # nothing audited


def test_an_endpoint_key_in_the_anchor_stays_out_of_the_page():
    from recompute.core.verdict import Verdict
    from recompute.watch.audit_page import AuditFacts, AuditPage
    from recompute.watch.auditor import Summary
    from recompute.watch.coordinator import CheckMeta

    checks = [CheckMeta("c", Verdict.GOOD, 0)]
    facts = AuditFacts(title="t", config_hash="00", exit_code=0, first=1, last=2, anchor={
        "method": "quorum", "trusts": "k of n", "endpoint": "https://u:pw@node.example/v3/KEY1",
        "confirmed_by": ["https://other.example/?apikey=KEY2"]})
    page = AuditPage([("c", Verdict.GOOD)]).render(facts, Summary(checks))  # type: ignore[arg-type]
    assert "KEY1" not in page and "KEY2" not in page and "pw" not in page
    assert "https://node.example/…" in page and "https://other.example/…" in page


def test_one_bad_block_in_a_long_range_stays_in_the_picture():
    from recompute.watch.timeline import COLUMNS, Timeline, svg

    timeline = Timeline()
    for block in range(1, 100_001):
        if block == 54_321:
            timeline.add(block, "VERIFIED-BAD", "unhealthy")
        elif block > 500:  # nothing before the check's since
            timeline.add(block, "VERIFIED-GOOD", "healthy")
    assert len(timeline.runs) == 3
    columns = timeline.columns("health", 1, 100_000)
    assert [state for _, _, state in columns] == ["none", "healthy", "unhealthy", "healthy"]
    bad = next(c for c in columns if c[2] == "unhealthy")
    assert bad[0] <= 54_321 <= bad[1] and bad[1] - bad[0] < 100_000 // COLUMNS + 1
    picture = svg(timeline, "c", 1, 100_000)
    assert picture.count("<rect") == 8  # each band: none, GOOD, BAD, GOOD (healthy alike)
    assert 'data-state="unhealthy"' in picture and 'data-state="VERIFIED-BAD"' in picture


@pytest.mark.parametrize(("table", "key", "value", "said"), [
    ("audit", "first", '"60"', "'first' is a string, not an integer"),
    ("lines", "detail", "60", "the line of block 60: detail is an integer, not a string"),
])
def test_a_tampered_store_is_one_line_not_a_crash(audited, tmp_path, table, key, value, said):
    import sqlite3

    store = tmp_path / "tampered.sqlite"
    with sqlite3.connect(audited["dir"] / "audit.sqlite") as source, \
            sqlite3.connect(store) as copy:
        source.backup(copy)  # the write-ahead log's pages included
    with sqlite3.connect(store) as db:
        if table == "audit":
            db.execute("UPDATE audit SET value = ? WHERE key = ?", (value, key))
        else:  # a line's detail becomes a number (a block out of place retracts its
            # segment instead: the linking's own check)
            (text,) = db.execute("SELECT line FROM lines WHERE block = ? AND position = 0",
                                 (int(value),)).fetchone()
            line = json.loads(text)
            line[key] = 7
            db.execute("UPDATE lines SET line = ? WHERE block = ? AND position = 0",
                       (json.dumps(line), int(value)))
    done = run_cli("audit", "report", "--store", store, "--html", tmp_path / "t.html")
    assert done.returncode == 64, done.stderr
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t.html").exists()
