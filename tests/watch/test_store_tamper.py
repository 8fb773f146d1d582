"""A store is an input like any other (docs/watch.md §The evidence store): a store handed to
the user with one value changed, a file that is not a store at all, a damaged one, a range
far larger than its rows: ``audit report`` and ``watch --resume`` answer in one line naming
the store and what is wrong (exit 64), never an internal error (70), never unbounded memory.

One small stored audit is built per module (blocks 60..70 of the shared devnet, segments of 4:
60..63, 64..67, 68..70); each test tampers with a copy. Independent expectations: the values
the tamper wrote, the range and segment size the audit was started with.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import REPO_ROOT
from tests.watch.watchproc import EXAMPLE

FIRST, LAST, SIZE = 60, 70, 4


def run(*args: object, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "recompute", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT,
                          **kwargs)


@pytest.fixture(scope="module")
def stored(devnet, tmp_path_factory):
    """(node, the path of a finished stored audit of blocks 60..70 in segments of 4)."""
    node, _ = devnet
    path = tmp_path_factory.mktemp("stored") / "audit.sqlite"
    done = run("watch", "--rpc", node.url, "--config", EXAMPLE, "--from", FIRST, "--to", LAST,
               "--segment-blocks", SIZE, "--store", path)
    assert done.returncode == 1, done.stderr  # the lying meter over its cap at 69
    return node, path


def copy_of(stored, tmp_path: Path, change=None) -> Path:
    path = tmp_path / "handed.sqlite"
    shutil.copyfile(stored[1], path)
    if change is not None:
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            change(db)
    return path


# ---- tampers: one value changed ----------------------------------------------------------


def audit_value(key: str, text: str):
    def change(db):
        assert db.execute("UPDATE audit SET value = ? WHERE key = ?", (text, key)).rowcount == 1
    return change


def audit_deleted(key: str):
    def change(db):
        assert db.execute("DELETE FROM audit WHERE key = ?", (key,)).rowcount == 1
    return change


def line_field(block: int, position: int, key: str, value: object):
    def change(db):
        (text,) = db.execute("SELECT line FROM lines WHERE block = ? AND position = ?",
                             (block, position)).fetchone()
        line = json.loads(text)
        line[key] = value
        db.execute("UPDATE lines SET line = ? WHERE block = ? AND position = ?",
                   (json.dumps(line), block, position))
    return change


def segment_column(lo: int, column: str, value: object):
    def change(db):
        assert db.execute(f"UPDATE segments SET {column} = ? WHERE lo = ?",  # noqa: S608
                          (value, lo)).rowcount == 1
    return change


TAMPERS = {
    "verdict MAYBE": (line_field(65, 0, "verdict", "MAYBE"), "verdict"),
    "checks = 5": (audit_value("checks", "5"), "checks"),
    "confirmations a string": (audit_value("confirmations", '"2"'), "confirmations"),
    "first a string": (audit_value("first", '"60"'), "first"),
    "head a string": (audit_value("head", '"196"'), "head"),
    "pinned_hash deleted": (audit_deleted("pinned_hash"), "pinned_hash"),
    "segment_blocks = 0": (audit_value("segment_blocks", "0"), "segment_blocks"),
    "a failure of one item": (segment_column(64, "failure", '["segment-failed"]'), "failure"),
    # the stored top segment 68..70 is not a segment of 60..10**11 in fours (68..71)
    "last = 10**11": (audit_value("last", str(10**11)), "segment 68..70"),
    # 0..70 in fours holds the three stored segments, but lines were written: all 18 were in
    "first = 0": (audit_value("first", "0"), "'emitted_through' 70"),
    # a range audit's journal of its last write to stdout (docs/watch.md §Restarts)
    "the journal's text a number": (audit_value("stdout_journal", '{"text": 7}'),
                                    "stdout_journal"),
    # a journal naming blocks outside the range: a resume would write the whole audit again
    "the journal's blocks outside the range": (
        audit_value("stdout_journal", '{"blocks": [200, 1000000000000000]}'),
        "'stdout_journal' names blocks 200..1000000000000000, not blocks whose lines the audit "
        "wrote (60..70)"),
    "the journal's blocks below the range": (
        audit_value("stdout_journal", '{"blocks": [0, 70]}'), "names blocks 0..70"),
}


def assert_refused(done: subprocess.CompletedProcess, path: Path, says: str) -> None:
    assert done.returncode == 64, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: store {path}: "), lines[0]
    assert says in lines[0], lines[0]


@pytest.mark.parametrize("tamper", TAMPERS)
def test_a_tampered_store_is_refused_by_the_report(stored, tmp_path, tamper):
    change, says = TAMPERS[tamper]
    path = copy_of(stored, tmp_path, change)
    assert_refused(run("audit", "report", "--store", path), path, says)


@pytest.mark.parametrize("tamper", TAMPERS)
def test_a_tampered_store_is_refused_by_a_resume(stored, tmp_path, tamper):
    change, says = TAMPERS[tamper]
    path = copy_of(stored, tmp_path, change)
    done = run("watch", "--rpc", stored[0].url, "--config", EXAMPLE, "--resume", "--store",
               path)
    assert_refused(done, path, says)


def test_the_untampered_copy_is_reported_and_resumed(stored, tmp_path):
    """The control: the same copy, unchanged, is read (nothing left to evaluate)."""
    path = copy_of(stored, tmp_path)
    report = run("audit", "report", "--store", path, "--json")
    assert report.returncode == 1, report.stderr
    summary = json.loads(report.stdout)
    assert (summary["first"], summary["last"], summary["blocks"]) == (FIRST, LAST, 11)
    assert summary["segments"] == {"planned": 3, "evaluated": 3, "not_merged": []}
    resumed = run("watch", "--rpc", stored[0].url, "--config", EXAMPLE, "--resume", "--store",
                  path)
    assert (resumed.returncode, resumed.stdout) == (1, "")


# ---- a huge range, under a memory limit ---------------------------------------------------

GIB = 1 << 30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def test_a_huge_range_is_answered_in_bounded_memory(stored, tmp_path):
    path = copy_of(stored, tmp_path, audit_value("last", str(10**11)))
    done = run("audit", "report", "--store", path, timeout=60, preexec_fn=_limit_memory)
    assert_refused(done, path, "segment 68..70")


def test_a_huge_range_whose_rows_fit_it_is_an_unfinished_audit_in_bounded_memory(stored,
                                                                                 tmp_path):
    """The top segment and its lines removed, ``last`` = 10**11, nothing written yet: the rows
    left (60..63, 64..67) are segments of 60..10**11 in fours, so the store reads as an audit
    that has evaluated 2 of its 25,000,000,000 segments: exit 2, in bounded memory and time."""
    def change(db):
        db.execute("DELETE FROM segments WHERE lo = 68")
        db.execute("DELETE FROM lines WHERE block >= 68")
        db.execute("UPDATE audit SET value = ? WHERE key = 'last'", (str(10**11),))
        db.execute("DELETE FROM audit WHERE key = 'emitted_through'")  # nothing written yet
    path = copy_of(stored, tmp_path, change)
    done = run("audit", "report", "--store", path, "--json", timeout=60,
               preexec_fn=_limit_memory)
    assert done.returncode == 2, done.stderr
    summary = json.loads(done.stdout)
    planned = (10**11 - FIRST) // SIZE + 1
    assert summary["segments"] == {"planned": planned, "evaluated": 2}
    assert summary["complete"] is False


# ---- files that are not a store --------------------------------------------------------


def _foreign_sqlite(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes VALUES (1, 'mine')")


def _not_sqlite(path: Path) -> None:
    path.write_bytes(b"not a database at all" * 100)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _directory(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)  # reading it would wait for a writer


FOREIGN = {
    "a foreign SQLite file": (_foreign_sqlite, "not a recompute store"),
    "a file that is not SQLite": (_not_sqlite, "not a recompute store"),
    "an empty file": (_empty, "empty"),
    "a directory": (_directory, "directory"),
    "a FIFO": (_fifo, "not a regular file"),
}


@pytest.mark.parametrize("kind", FOREIGN)
def test_a_file_that_is_not_a_store_is_one_line(tmp_path, kind):
    make, says = FOREIGN[kind]
    path = tmp_path / "handed.sqlite"
    make(path)
    assert_refused(run("audit", "report", "--store", path), path, says)


def test_a_foreign_sqlite_file_is_neither_read_nor_written_by_a_new_audit(devnet, tmp_path):
    path = tmp_path / "mine.sqlite"
    _foreign_sqlite(path)
    before = path.read_bytes()
    done = run("watch", "--rpc", devnet[0].url, "--config", EXAMPLE, "--from", LAST - 1,
               "--to", LAST, "--store", path)
    assert_refused(done, path, "not a recompute store")
    assert path.read_bytes() == before


def test_a_store_without_a_schema_version_or_with_another_is_refused(stored, tmp_path):
    for change, says in ((audit_deleted("schema"), "no schema version"),
                         (audit_value("schema", "99"), "schema 99")):
        path = copy_of(stored, tmp_path, change)
        done = run("audit", "report", "--store", path)
        assert_refused(done, path, says)
        assert "new --store" in done.stderr  # says what to do


def test_a_damaged_file_is_refused_by_the_integrity_check(stored, tmp_path):
    path = copy_of(stored, tmp_path)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) >= 4 * page
    data[2 * page + 8: 3 * page] = b"\xa5" * (page - 8)  # a b-tree page's cells overwritten
    path.write_bytes(bytes(data))
    assert_refused(run("audit", "report", "--store", path), path, "damaged")


# ---- any single-field tamper: 64 or a report, never 70 ---------------------------------------

WEIRD = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False), st.text(max_size=20),
    st.sampled_from(["VERIFIED-GOOD", "MAYBE", "0x" + "ab" * 32, "0x12", [], {}, [1], ["x"],
                     {"name": "x"}, 10**30, -1, 0]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(),
                                                          max_size=2))


@st.composite
def tampers(draw):
    """(table, which row, which field, how): one value of the store changed."""
    table = draw(st.sampled_from(["audit", "segments", "lines"]))
    how = draw(st.sampled_from(["value", "delete", "not json", "sql"]))
    value = draw(WEIRD)
    if table == "audit":
        key = draw(st.sampled_from(["schema", "mode", "config_hash", "checks", "first", "last",
                                    "pinned_hash", "anchor", "head", "confirmations",
                                    "segment_blocks", "emitted_through"]))
        return table, key, None, how, value
    if table == "segments":
        lo = draw(st.sampled_from([60, 64, 68]))
        column = draw(st.sampled_from(["lo", "hi", "parent_hash", "top_hash", "hashes",
                                       "failure", "endpoint", "seconds"]))
        return table, lo, column, how, value
    block = draw(st.integers(min_value=FIRST, max_value=LAST))
    field = draw(st.sampled_from(["block", "hash", "check", "verdict", "reason", "final",
                                  "healthy", "derived", "evidence_digest", "detail", "anchor",
                                  "position", "column block"]))
    return table, block, field, how, value


def _apply(db, tamper) -> None:
    table, row, field, how, value = tamper
    raw = value if value is None or isinstance(value, int | float | str) else json.dumps(value)
    if isinstance(raw, int) and not -(2**63) <= raw < 2**63:
        raw = str(raw)
    {"audit": _tamper_audit, "segments": _tamper_segment, "lines": _tamper_line}[table](
        db, row, field, how, value, raw)


def _tamper_audit(db, key, _, how, value, raw) -> None:
    if how == "delete":
        db.execute("DELETE FROM audit WHERE key = ?", (key,))
    elif how == "not json":
        db.execute("UPDATE audit SET value = '{not json' WHERE key = ?", (key,))
    elif how == "sql":
        with contextlib.suppress(sqlite3.IntegrityError):  # value is NOT NULL
            db.execute("UPDATE audit SET value = ? WHERE key = ?", (raw, key))
    else:
        db.execute("UPDATE audit SET value = ? WHERE key = ?", (json.dumps(value), key))


def _tamper_segment(db, lo, column, how, value, raw) -> None:
    if how == "delete":
        db.execute("DELETE FROM segments WHERE lo = ?", (lo,))
    elif how == "not json" and column in ("hashes", "failure"):
        db.execute(f"UPDATE segments SET {column} = '[not json' WHERE lo = ?", (lo,))
    else:
        with contextlib.suppress(sqlite3.IntegrityError):  # lo is the row's key
            db.execute(f"UPDATE segments SET {column} = ? WHERE lo = ?", (raw, lo))


def _tamper_line(db, block, field, how, value, raw) -> None:
    found = db.execute("SELECT position, line FROM lines WHERE block = ? ORDER BY position "
                       "LIMIT 1", (block,)).fetchone()
    if found is None:
        return
    position, text = found
    if field in ("position", "column block"):
        with contextlib.suppress(sqlite3.IntegrityError):
            db.execute(f"UPDATE lines SET {field.removeprefix('column ')} = ? WHERE block = ? "
                       "AND position = ?", (raw, block, position))
        return
    line = json.loads(text)
    if how == "delete":
        line.pop(field, None)
        text = json.dumps(line)
    elif how == "not json":
        text = text[:-3]
    else:
        line[field] = value
        text = json.dumps(line)
    db.execute("UPDATE lines SET line = ? WHERE block = ? AND position = ?",
               (text, block, position))


def _report_in_process(path: Path) -> tuple[int, str, str]:
    """``recompute audit report --store PATH --json`` in this process, its errors turned into
    exit codes as recompute.cli.main turns them (any other exception fails the test: it would
    be exit 70)."""
    from recompute.cli.audit_cmd import report_command
    from recompute.core.errors import UsageError

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            report_command.main(["--store", str(path), "--json"], standalone_mode=False)
            code = 0
        except SystemExit as done:
            code = done.code
        except UsageError as exc:
            print(f"error: {exc}", file=sys.stderr)
            code = 64
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("tampered")


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tamper=tampers())
def test_any_single_field_tamper_is_refused_or_reported(stored, scratch, tamper):
    path = copy_of(stored, scratch, lambda db: _apply(db, tamper))
    code, out, err = _report_in_process(path)
    assert code in (0, 1, 2, 64), err
    if code == 64:
        assert out == ""
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"error: store {path}: "), err
        return
    report = json.loads(out)
    assert report["exit_code"] == code
    assert report["mode"] == "range"
    if report["complete"]:
        assert (report["first"], report["last"], report["blocks"]) == (FIRST, LAST, 11)
    else:
        assert report["blocks"] <= 11
    for counts in report["checks"].values():  # a line per check and block at most
        assert sum(counts[v] for v in ("VERIFIED-GOOD", "VERIFIED-BAD", "UNVERIFIABLE")) \
            <= report["blocks"]
        for first in (counts["first_bad"], counts["first_unhealthy"]):
            assert first is None or FIRST <= first <= LAST


# ---- a follow store ----------------------------------------------------------------------


def _follow_store(path: Path) -> None:
    """A follow bot's store as recompute writes one: one check, final lines of blocks 10..12
    (GOOD, healthy), block 12 the last final one, committed with the journal of the write that
    held it (its text, where stdout stood) and block 13's first lines as written."""
    from recompute.core.verdict import Verdict
    from recompute.watch.evaluate import Line
    from recompute.watch.store import Store

    store = Store(path)
    try:
        store.put({"mode": "follow", "config_hash": "ab" * 32, "confirmations": 2,
                   "checks": [{"name": "c1", "healthy": "VERIFIED-GOOD", "since": 0}]})
        for block in (10, 11, 12):
            block_hash = "0x" + f"{block:02x}" * 32
            line = Line(block, block_hash, "c1", Verdict.GOOD, "ok", final=True, healthy=True,
                        evidence_digest="cd" * 32)
            if block < 12:
                store.record_final([line.to_json()], block, block_hash)
            else:
                store.record_write({"text": "{}\n", "dev": 2049, "ino": 77, "offset": 640},
                                   [(block, block_hash, [line.to_json()])],
                                   {"unfinal_written": {"13": "0x" + "13" * 32}})
    finally:
        store.close()


FOLLOW_TAMPERS = {
    "last_final_block a string": (audit_value("last_final_block", '"12"'), "last_final_block"),
    "last_final_hash deleted": (audit_deleted("last_final_hash"), "last_final_hash"),
    "a line not final": (line_field(11, 0, "final", False), "final"),
    "a line above the last final block": (audit_value("last_final_block", "11"), "block 12"),
    "a check of another audit": (line_field(10, 0, "check", "c2"), "'c2'"),
    "the journal's text a number": (audit_value("stdout_journal", '{"text": 7}'),
                                    "stdout_journal"),
    "the journal's offset negative": (
        audit_value("stdout_journal", '{"text": "{}\\n", "dev": 1, "ino": 2, "offset": -1}'),
        "offset"),
    "the journal without its inode": (
        audit_value("stdout_journal", '{"text": "{}\\n", "dev": 1, "offset": 5}'),
        "go together"),
    "the journal a list": (audit_value("stdout_journal", '["{}\\n"]'), "stdout_journal"),
    # the journal's text is written to stdout again on a restart: outside text
    "the journal's text with a terminal escape": (
        audit_value("stdout_journal", json.dumps({"text": "\x1b]2;owned\x07{}\n"})),
        "'stdout_journal' text holds U+001B at character 0"),
    "the journal's text with a bidi control": (
        audit_value("stdout_journal", json.dumps({"text": '{"a": "\u202e"}\n'})), "U+202E"),
    "a written block not a number": (audit_value("unfinal_written", '{"x13": "0x' + "13" * 32
                                                 + '"}'), "unfinal_written"),
    "a written block's hash short": (audit_value("unfinal_written", '{"13": "0x13"}'),
                                     "unfinal_written"),
}


@pytest.fixture(scope="module")
def follow_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("follow") / "bot.sqlite"
    _follow_store(path)
    return path


def test_a_follow_store_is_reported(follow_store, tmp_path):
    path = tmp_path / "bot.sqlite"
    shutil.copyfile(follow_store, path)
    done = run("audit", "report", "--store", path, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["mode"], summary["blocks"], summary["last_final_block"]) == ("follow", 3, 12)
    assert summary["checks"]["c1"]["VERIFIED-GOOD"] == 3


@pytest.mark.parametrize("tamper", FOLLOW_TAMPERS)
def test_a_tampered_follow_store_is_refused(follow_store, tmp_path, tamper):
    change, says = FOLLOW_TAMPERS[tamper]
    path = tmp_path / "bot.sqlite"
    shutil.copyfile(follow_store, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        change(db)
    assert_refused(run("audit", "report", "--store", path), path, says)


RESTART_TAMPERS = {
    "a check without its healthy verdict": ("checks", '[{"name": "c1"}]', "check"),
    # the journal of the last write is what a restart writes to stdout again
    "the journal's text not text": ("stdout_journal", '{"text": ["forged"]}',
                                    "stdout_journal"),
    "the journal's text clearing the terminal": (
        "stdout_journal", json.dumps({"text": "{}\n\x1b[2J\x1b[H{}\n"}), "U+001B at character 3"),
}


@pytest.mark.parametrize("tamper", RESTART_TAMPERS)
def test_a_restarted_bot_refuses_a_tampered_store_before_asking_a_node(follow_store, tmp_path,
                                                                       tamper):
    """Exit 64 before any node is asked and before anything reaches stdout."""
    key, value, says = RESTART_TAMPERS[tamper]
    path = tmp_path / "bot.sqlite"
    shutil.copyfile(follow_store, path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        audit_value(key, value)(db)
    config = tmp_path / "checks.toml"
    config.write_text(EXAMPLE.read_text())
    done = run("watch", "--rpc", "http://127.0.0.1:9", "--config", config, "--store", path)
    assert_refused(done, path, says)


def test_a_report_reads_one_state_of_a_store_an_audit_is_writing(stored, tmp_path):
    """The report's reads share one snapshot: a writer committing meanwhile (here a segment's
    row replaced) changes nothing it compares (without it, the lines of a segment committed
    between its segments and its line count read as lines of no segment)."""
    from recompute.cli.audit_cmd import _report
    from recompute.watch.store import Store

    path = copy_of(stored, tmp_path)
    store = Store.existing(path)
    try:
        with store.snapshot():
            assert store.segment_count() == 3
            with contextlib.closing(sqlite3.connect(path)) as writer, writer:
                writer.execute("DELETE FROM segments WHERE lo = 64")
            report, _, _ = _report(store)
    finally:
        store.close()
    assert report["segments"] == {"planned": 3, "evaluated": 3, "not_merged": []}
    assert report["blocks"] == 11
