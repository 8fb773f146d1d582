"""The fuzz harness at the test suite's size (docs/fuzzing.md): every reader gets a fixed
number of hostile inputs, derandomized (the same inputs on every run, so CI is not flaky), and
every special file (FIFO, /dev/zero, a directory, a 3 GB sparse file, a dangling link) in a
child process whose memory is limited. ``python -m tests.fuzz`` runs the same for minutes.

The regression cases below are the smallest inputs the harness found, each a test of its own.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading

import pytest

from tests import REPO_ROOT
from tests.fuzz.__main__ import fuzz
from tests.fuzz.readers import (
    ETHERSCAN,
    READERS,
    SOLC_OUTPUT,
    SOURCIFY,
    Special,
    _write,
    cli,
    judge,
)

# Inputs per reader in the suite: each reader's share of a few seconds (the SQLite store and
# the Sourcify folder copy files for every input; the rest parse one file).
EXAMPLES = {"layout": 40, "vector": 40, "suite": 30, "sourcify": 30, "etherscan": 40,
            "solc-output": 40, "store": 40, "lc-store": 40, "network": 40, "checks": 40,
            "manifest": 40, "pid-file": 40, "swarm-pack": 40, "layer-document": 40,
            "lc-store-synced": 10}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("name", sorted(READERS))
def test_every_input_is_a_verdict_or_one_usage_line(name, workdir, tmp_path):
    reader = READERS[name]
    assert fuzz(reader, reader.prepare(workdir), tmp_path, EXAMPLES[name],
                derandomize=True) == EXAMPLES[name]


def _limited() -> None:
    limit = 2 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_every_special_file_is_one_line_in_bounded_memory_and_time():
    done = subprocess.run([sys.executable, "-m", "tests.fuzz", "--specials", "--memory-mb",
                           "2048"], capture_output=True, text=True, timeout=600, cwd=REPO_ROOT,
                          env={**os.environ, "RECOMPUTE_FUZZ_DEADLINE": "10"},
                          preexec_fn=_limited)
    cases = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(cases) == 5 * (len(READERS) + 1), done.stderr[-2000:]
    assert [c for c in cases if c["problem"]] == []
    assert done.returncode == 0


def test_the_harness_sees_a_crash_a_hang_and_two_lines():
    from tests.fuzz.readers import Outcome

    assert judge(Outcome(0, "VERIFIED-GOOD", "")) is None
    assert judge(Outcome(64, "", "error: one line\n")) is None
    assert "exit 70" in judge(Outcome(70, "", "internal error: x"))
    assert "exit -9" in judge(Outcome(-9, "", "hung"))
    assert "2 lines" in judge(Outcome(64, "", "error: a\nb\n"))
    assert "traceback" in judge(Outcome(1, "Traceback (most recent call last):", ""))


# ---- the smallest failing inputs, kept --------------------------------------------------------


@pytest.mark.parametrize("text", [b"0", b"-1", b" -4242\n", b"1", b"99999999999999999999999",
                                  b"-99999999999999999999999", b"4194305"])
def test_a_pid_file_never_names_a_group_every_process_or_an_impossible_pid(tmp_path, text):
    """``devnet down`` SIGTERMs the pid its pid file names: 0 would be its own process group,
    -1 every process the user may signal, a huge number an OverflowError."""
    from recompute.devnet.lifecycle import running_pid

    (tmp_path / "anvil.pid").write_bytes(text)
    assert running_pid(tmp_path) is None


def test_a_pid_file_of_3_gb_is_not_read_whole(tmp_path):
    """In a child limited to 2 GB of address space: reading it whole is a MemoryError."""
    with (tmp_path / "anvil.pid").open("wb") as handle:
        handle.truncate(3 << 30)
    done = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                           "from recompute.devnet.lifecycle import running_pid; "
                           "print(running_pid(Path(sys.argv[1])))", tmp_path],
                          capture_output=True, text=True, timeout=120, preexec_fn=_limited)
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr[-500:]


def test_a_pid_file_of_a_live_process_is_read(tmp_path):
    from recompute.devnet.lifecycle import running_pid

    (tmp_path / "anvil.pid").write_text(f"{os.getpid()}\n")
    assert running_pid(tmp_path) == os.getpid()


def _one_line(outcome, *says: str) -> None:
    assert outcome.code == 64 and len(outcome.err.strip().splitlines()) == 1, outcome
    for words in says:
        assert words in outcome.err, outcome.err


@pytest.mark.parametrize("name", ["answer.json", "solc.json"])
def test_a_fifo_given_to_layout_import_is_one_line_not_a_hang(tmp_path, name):
    path = _write(tmp_path / name, Special("fifo"))
    _one_line(cli("layout", "import", path, "-o", tmp_path / "out.json"), "not a file")


def test_a_fifo_given_as_a_network_file_is_one_line_not_a_hang(tmp_path):
    path = _write(tmp_path / "net.json", Special("fifo"))
    _one_line(cli("lightclient", "sync", "--beacon", "http://127.0.0.1:9", "--trusted-root",
                  "0x" + "11" * 32, "--network", path), "network file", "not a file")


SOURCE = "sources/contracts/src/amm/IAgentMeditation.sol"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_sourcify_source_that_never_ends_is_one_line(tmp_path, kind):
    """A source of a Sourcify folder that is a FIFO (a hang) or a link to /dev/zero (endless
    bytes: memory) is one line, in a child process limited to 2 GB and 60 s."""
    import shutil

    folder = tmp_path / "sourcify"
    shutil.copytree(SOURCIFY, folder)
    _write(folder / SOURCE, Special(kind))
    done = subprocess.run([sys.executable, "-m", "recompute", "layout", "import", folder, "-o",
                           tmp_path / "out.json"], capture_output=True, text=True, timeout=60,
                          preexec_fn=_limited)
    assert done.returncode == 64 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "IAgentMeditation.sol" in done.stderr and "not a file" in done.stderr


@pytest.mark.parametrize("original", [ETHERSCAN, SOLC_OUTPUT], ids=["etherscan", "solc"])
def test_a_file_that_grows_while_read_is_read_bounded(tmp_path, original):
    """A file another process keeps appending to while recompute reads it: a verdict or one
    line (its first bytes were a valid file; what follows is junk), in bounded memory."""
    path = tmp_path / original.name
    path.write_bytes(original.read_bytes())
    stop = threading.Event()

    def grow() -> None:
        with path.open("ab") as handle:
            written = 0
            while not stop.is_set() and written < 256 << 20:
                handle.write(b" " * (1 << 20) + b"x")
                written += 1 << 20

    writer = threading.Thread(target=grow)
    writer.start()
    try:
        done = subprocess.run([sys.executable, "-m", "recompute", "layout", "import", path,
                               "-o", tmp_path / "out.json"], capture_output=True, text=True,
                              timeout=120, preexec_fn=_limited)
    finally:
        stop.set()
        writer.join()
    assert done.returncode in (0, 64), done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_store_whose_schema_text_is_not_utf8_is_one_line(tmp_path):
    """One byte of SQLite's own copy of a table's CREATE statement made 0x80: Python's sqlite3
    cannot decode what the integrity check answers (UnicodeDecodeError, was exit 70)."""
    from tests.fuzz.readers import _store_seed

    seed = _store_seed(tmp_path)
    data = bytearray(seed.read_bytes())
    data[data.index(b"PRIMARY KEY (block, position)") + len(b"PRIMARY ")] = 0x80  # KEY
    path = _write(tmp_path / "store.sqlite", bytes(data))
    _one_line(cli("audit", "report", "--store", path, "--json"), "not UTF-8")


@pytest.mark.parametrize("text", ['{"version": NaN}', '{"objective": {"w": 1e400}}',
                                  '{"n": 100000000000000000000000000000}'])
def test_a_swarm_pack_jcs_cannot_hash_is_one_line_naming_the_file(tmp_path, text):
    """NaN, Infinity or an integer beyond I-JSON's range: the line names the pack's file (it
    said only "the pack cannot be canonicalised")."""
    from recompute.recipes.sai_charter import load_pack, pack_digests
    from tests.fuzz.readers import call

    path = _write(tmp_path / "pack.json", text.encode())
    _one_line(call(lambda: pack_digests(load_pack(path))), f"{path}: ", "RFC 8785")


@pytest.mark.parametrize("follow", [False, True], ids=["range-store", "follow-store"])
def test_a_checks_file_changed_after_it_was_parsed_is_one_line(tmp_path, follow):
    """watch reads its checks file again to hash it (a follow store, a range audit in
    segments, a range audit's --html/--csv): a file rewritten meanwhile with bytes that are
    not UTF-8 was a UnicodeDecodeError (exit 70), and a FIFO in its place hung the re-read."""
    from unittest import mock

    from recompute.cli import watch_cmd
    from tests.fuzz.readers import CHECKS

    path = tmp_path / "checks.toml"
    path.write_bytes(CHECKS.read_bytes())
    parsed = watch_cmd.load_config

    def then_rewritten(*args, **kwargs):
        checks = parsed(*args, **kwargs)
        path.write_bytes(b"\xff\xfe not UTF-8")
        return checks

    more = ["--store", tmp_path / "bot.sqlite"] if follow else \
        ["--from", 1, "--to", 2, "--store", tmp_path / "audit.sqlite"]
    with mock.patch.object(watch_cmd, "load_config", then_rewritten):
        outcome = cli("watch", "--rpc", "http://127.0.0.1:9", "--config", path,
                      "--start-timeout", "0.5", *more)
    assert outcome.code in (2, 64) and "Traceback" not in outcome.err, outcome
    assert len(outcome.err.strip().splitlines()) == 1, outcome


def test_a_suite_pinning_a_3_gb_file_fails_it_without_hashing_it(tmp_path):
    """A pinned file larger than any vector may be (recompute.core.boundedjson.MAX_BYTES) is a
    failed hash check saying so, not gigabytes hashed (a 3 GB sparse file took seconds; a suite
    may pin the same one a million times)."""
    from tests.fuzz.readers import _suite_seed

    folder = tmp_path / "suite"
    _write(folder / "suite.json", json.dumps(_suite_seed(tmp_path)).encode())
    _write(folder / "v.json", Special("sparse"))
    outcome = cli("vectors", "verify", folder)
    assert outcome.code == 1, outcome
    assert "v.json: larger than 67,108,864 bytes" in outcome.out, outcome


def test_a_suite_path_that_is_a_lone_surrogate_is_a_failed_suite(tmp_path):
    """The harness's smallest input: a pinned path "\\ud800" (valid JSON, no file name can
    hold it) was a UnicodeEncodeError when resolved (exit 70)."""
    from tests.fuzz.readers import VECTOR, _suite_seed

    folder = tmp_path / "suite"
    suite = _suite_seed(tmp_path)
    suite["vectors"][0]["path"] = "\ud800"
    _write(folder / "v.json", VECTOR.read_bytes())
    _write(folder / "suite.json", json.dumps(suite).encode())  # written as \ud800, in ASCII
    outcome = cli("vectors", "verify", folder)
    assert outcome.code == 1, outcome
    assert 'field "vectors[0].path"' in outcome.out and "Traceback" not in outcome.err, outcome
