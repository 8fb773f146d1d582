"""What a node, a beacon or a store says reaches a person only as text (docs/trust.md §What
recompute promises): every output is fed the one hostile corpus of ``tests/hostile_text.py``
and what comes out is checked with its checks (no character that is not text; no CSV cell a
spreadsheet runs; no record split inside a cell; no markup)."""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from html.parser import HTMLParser

import pytest

from recompute.core.errors import Unverifiable
from recompute.core.outside_text import visible
from recompute.core.verdict import Verdict
from recompute.sources.rpc import classify_error
from recompute.watch.audit_csv import COLUMNS, AuditCsv, cell, record
from recompute.watch.evaluate import Line
from tests.cli import run_cli
from tests.hostile_text import (
    ALL,
    CORPUS,
    formula_cells,
    hostile_node,
    not_text,
    spreadsheet_rows,
)

ADDRESS = "0x" + "11" * 20


def _lines() -> list[Line]:
    """One BAD line per corpus string, the string in every text field a line has."""
    return [Line(5, "0x" + "ab" * 32, f"check/{text}", Verdict.BAD, "predicate-failed",
                 True, False, {"note": text, text: 1}, "cd" * 32,
                 f"http://127.0.0.1:1 eth_getProof: {text}", {"method": text})
            for text in CORPUS.values()]


@pytest.mark.parametrize("name", CORPUS)
def test_visible_leaves_nothing_but_text_and_is_its_own_fixed_point(name):
    shown = visible(CORPUS[name])
    assert not_text(shown) == []
    assert visible(shown) == shown
    assert shown.replace("\\", "") != "" and shown != CORPUS[name] or CORPUS[name].isprintable()


def test_visible_writes_what_was_there_and_keeps_printable_text():
    assert visible("x\rVERIFIED-GOOD (ok)\x1b[K") == "x\\rVERIFIED-GOOD (ok)\\x1b[K"
    assert visible("evil\u202egnp.exe\x9b") == "evil\\u202egnp.exe\\x9b"
    assert visible("ok é 漢 ＝ <b>") == "ok é 漢 ＝ <b>"
    assert visible("a" * 10, 6) == "aaa..."


def test_a_node_error_message_becomes_one_line_of_text():
    error = classify_error("http://127.0.0.1:1", "eth_getProof", {"message": ALL})
    assert error.reason == "rpc-error"
    assert not_text(error.detail) == [] and not_text(str(error)) == []
    assert "\\rVERIFIED-GOOD (ok)\\x1b[K" in error.detail
    # the one line a user reads, however the error was made
    assert not_text(Unverifiable("rpc-error", ALL).detail) == []
    assert not_text(Unverifiable("rpc-error", "{rpc}: " + "{x}", ("rpc",), x=ALL)
                    .worded(str.upper)) == []


def test_every_csv_cell_is_text_and_none_is_a_formula():
    out = io.StringIO()
    table = AuditCsv(out)
    table.add(_lines())
    written = out.getvalue()
    got = spreadsheet_rows(written)
    assert len(got) == 1 + len(CORPUS)  # no record split inside a cell
    assert all(len(r) == len(COLUMNS) for r in got)
    assert formula_cells(got) == []
    assert not_text(written) == []


@pytest.mark.parametrize(("text", "written"), [
    ("=1", "'=1"), ("   =1", "'   =1"), ("\uff1d1", "'\uff1d1"), (" \uff0b1", "' \uff0b1"),
    ("\ufe661", "'\ufe661"), ("\t=1", "\\t=1"), ("\r=1", "\\r=1"), ("@x", "'@x"),
    ("-1", "'-1"), ("a=1", "a=1"), ("", ""), ("0x12", "0x12"),
])
def test_the_csv_formula_rule(text, written):
    assert cell(text) == written


def test_a_csv_cell_with_a_line_break_is_quoted_whatever_made_it():
    assert record(["a\rb", "c\nd", 'e"f', "g,h", "i"]) == '"a\rb","c\nd","e""f","g,h",i\n'


class _Text(HTMLParser):
    def __init__(self, page: str):
        super().__init__()
        self.data: list[str] = []
        self.tags: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.data.append(data)


def test_the_html_page_shows_the_corpus_as_text():
    from recompute.watch.audit_page import AuditFacts, AuditPage
    from recompute.watch.auditor import Summary
    from recompute.watch.coordinator import CheckMeta

    lines = _lines()
    page = AuditPage([(line.check, Verdict.GOOD) for line in lines])
    page.add(lines)
    summary = Summary([CheckMeta(line.check, Verdict.GOOD, 0) for line in lines])
    summary.add(lines)
    facts = AuditFacts(title=f"audit {ALL}", config_hash="00", exit_code=1, first=5, last=5,
                       anchor={"method": "single-rpc", "trusts": ALL, "endpoint": ALL},
                       notes=[ALL], retractions=[{"from": 1, "to": 2, "reason": ALL,
                                                  "detail": ALL}])
    written = page.render(facts, summary)
    assert not_text(written) == []
    parsed = _Text(written)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert not_text("".join(parsed.data).replace("\n", "")) == []
    assert "\\u202e" in written  # the override shown as what it is


def test_json_lines_webhook_bodies_and_metrics_carry_only_text():
    from recompute.watch.metrics import Metrics
    from recompute.watch.sink import lines_text
    from recompute.watch.webhook import body

    lines = _lines()
    assert not_text(lines_text(lines)) == []  # JSON-escaped
    for line in lines:
        for fmt in ("json", "slack"):
            sent = body(line, "unhealthy", fmt)
            strings: list[str] = []
            _strings(sent, strings)
            assert [s for s in strings if not_text(s)] == [], fmt
        slack = body(line, "unhealthy", "slack")["text"]
        assert "<" not in slack and ">" not in slack
    metrics = Metrics()
    for line in lines:
        metrics.inc("verdicts_total", check=line.check, verdict=line.verdict.value)
    assert not_text(metrics.render()) == []


def _strings(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            _strings(k, out)
            _strings(v, out)


def test_the_on_bad_command_gets_text_in_its_environment(tmp_path):
    from recompute.watch.hooks import OnBad

    seen = tmp_path / "seen"
    notes: list[str] = []
    program = ("import os,sys; open(sys.argv[1],'w',encoding='utf-8',newline='')"
               ".write(os.environ['RECOMPUTE_CHECK']); sys.stderr.write(sys.stdin.read()); "
               "sys.exit(3)")
    hook = OnBad(f"{sys.executable} -c \"{program}\" {seen}", notes.append)
    hook.observe(_lines()[0])
    hook.close(time.monotonic() + 30)
    assert seen.read_text(encoding="utf-8") == "check/" + visible(CORPUS["cr-formula"])
    assert len(notes) == 1 and not_text(notes[0]) == []


@pytest.mark.parametrize("name", ["cr-overwrite", "osc52-clipboard", "conceal", "bidi-override"])
def test_a_node_error_reaches_the_terminal_as_text(name):
    with hostile_node(CORPUS[name]) as url:
        done = run_cli("proof", "--rpc", url, "--block", "1", "--address", ADDRESS)
        as_json = run_cli("proof", "--rpc", url, "--block", "1", "--address", ADDRESS, "--json")
    assert done.returncode == 2 and as_json.returncode == 2, done.stderr
    assert not_text(done.stdout) == [] and not_text(done.stderr) == []
    assert visible(CORPUS[name]) in done.stdout + done.stderr
    detail = json.loads(as_json.stdout)["detail"]
    assert not_text(detail) == [] and visible(CORPUS[name]) in detail


@pytest.mark.parametrize("name", ["cr-overwrite", "osc52-clipboard"])
def test_a_beacon_error_reaches_the_terminal_as_text(name):
    with hostile_node(CORPUS[name]) as url:
        done = run_cli("lightclient", "sync", "--beacon", url, "--trusted-root",
                       "0x" + "11" * 32)
    assert done.returncode == 2, done.stderr
    assert not_text(done.stdout) == [] and not_text(done.stderr) == []
    # the beacon's message on one line (its whitespace runs made one space), then visible
    assert visible(" ".join(CORPUS[name].split())) in done.stdout + done.stderr


def test_a_hostile_store_gives_a_csv_with_no_formula_and_no_split_record(tmp_path):
    from recompute.watch.store import Store

    store_path = tmp_path / "hostile.sqlite"
    store = Store(store_path)
    store.put({"mode": "follow", "config_hash": "ab" * 32, "confirmations": 2,
               "checks": [{"name": "c", "healthy": "VERIFIED-GOOD", "since": 0}]})
    for number in (5, 6):
        store.record_final([
            {"block": number, "hash": "0x" + f"{number:02x}" * 32, "check": "c",
             "verdict": "UNVERIFIABLE", "reason": "rpc-error", "final": True,
             "healthy": None, "derived": {}, "evidence_digest": None,
             "detail": f"http://127.0.0.1:1 eth_getProof: {ALL}"}], number,
            "0x" + f"{number:02x}" * 32)
    store.close()
    table = tmp_path / "hostile.csv"
    done = run_cli("audit", "report", "--store", store_path, "--csv", table)
    assert done.returncode == 2, done.stderr
    written = table.read_text(encoding="utf-8")
    got = spreadsheet_rows(written)
    assert len(got) == 3 and formula_cells(got) == []
    assert [r["detail"] for r in csv.DictReader(io.StringIO(written))] == [
        visible(f"http://127.0.0.1:1 eth_getProof: {ALL}")] * 2


def test_a_layout_files_labels_reach_the_terminal_as_text(tmp_path):
    from recompute.layout import import_layout
    from tests.layout.conftest import ZOO_ARTIFACT

    document = json.loads(import_layout(ZOO_ARTIFACT).dumps())
    document["contract"] = f"src/{CORPUS['cr-overwrite']}{CORPUS['osc52-clipboard']}.sol:Zoo"
    # (a variable's label must be an identifier: the layout's validator refuses any other)
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document))
    done = run_cli("layout", "show", path)
    assert done.returncode == 0, done.stderr
    assert not_text(done.stdout) == [] and not_text(done.stderr) == []
    assert visible(document["contract"]) in done.stdout


def test_a_node_error_in_a_range_audit_csv_is_never_a_formula(devnet, tmp_path):
    """The attack as found: a node that answers eth_getProof with an error message holding a
    bare CR and then a formula; the line's detail starts with the node's URL."""
    from tests.rpcproxy import RpcProxy
    from tests.watch.watchproc import EXAMPLE

    node, _ = devnet
    evil = CORPUS["cr-formula"]

    def lie(method, params, reply):
        if method == "eth_getProof":
            return {"jsonrpc": "2.0", "id": reply.get("id"),
                    "error": {"code": -32000, "message": evil}}
        return reply

    table = tmp_path / "audit.csv"
    with RpcProxy(node.url, lie) as proxy:
        done = run_cli("watch", "--rpc", proxy.url, "--config", EXAMPLE, "--from", "99",
                       "--to", "100", "--csv", table)
    assert done.returncode == 2, done.stderr
    lines = [json.loads(text) for text in done.stdout.splitlines()]
    assert lines and all(evil not in line.get("detail", "") for line in lines)
    assert any(visible(evil) in line.get("detail", "") for line in lines)
    got = spreadsheet_rows(table.read_text(encoding="utf-8"))
    assert len(got) == 1 + len(lines) and formula_cells(got) == []
