"""Every file recompute reads, as a fuzz target: a valid seed, the hostile variants of it
(:mod:`tests.fuzz.inputs`) and the command that reads it, run in this process (the click CLI's
``main``, or the function the CLI calls), bounded in time by an alarm.

The contract each run is held to (:func:`judge`): exit 0, 1, 2 or 64; for 64 exactly one line
on stderr; never a traceback; never longer than :data:`DEADLINE` seconds.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import sqlite3
import tomllib
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import strategies as st

from recompute.data import LAYOUTS, VECTORS
from tests import REPO_ROOT
from tests.fuzz.inputs import byte_changes, json_variants, toml_variants

# Seconds one input may take: a reader that blocks (a FIFO) or loops fails; generous, so that
# a loaded machine does not fail a slow but finite read.
DEADLINE = float(os.environ.get("RECOMPUTE_FUZZ_DEADLINE", "30"))
HUNG = -9  # the exit code an outcome is given when its deadline rang
UNREACHABLE = "http://127.0.0.1:9"  # nothing listens: a command that reads its file, then asks
ROOT = "0x" + "11" * 32
AMM = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
SLOT_PATH = "heads[0x70997970C51812dc3A010C7d01b50e0d17dc79C8].stateVersion"


class Hung(BaseException):
    """The alarm: an input took longer than its deadline (not an Exception, so no ``except
    Exception`` of the code under test swallows it)."""


@dataclass
class Outcome:
    code: int
    out: str
    err: str


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _signals_kept() -> Iterator[None]:
    """``watch`` installs its own SIGINT/SIGTERM handlers (to stop cleanly): put back the
    harness's after each run, so that the harness itself can still be stopped."""
    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)


def cli(*args: object) -> Outcome:
    """``recompute ARGS…`` in this process, as :func:`recompute.cli.main` ends it."""
    from recompute.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), deadline(DEADLINE), \
            _signals_kept():
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 0
        except Hung as exc:
            return Outcome(HUNG, out.getvalue(), f"hung: {exc}")
    return Outcome(code, out.getvalue(), err.getvalue())


def call(function: Callable[[], object]) -> Outcome:
    """A function the CLI calls, its exceptions mapped to exit codes as ``main`` maps them
    (anything else is 70, with its traceback kept for the report)."""
    from recompute.core.errors import RecomputeError, Unverifiable, UsageError

    with deadline(DEADLINE):
        try:
            function()
            return Outcome(0, "", "")
        except UsageError as exc:
            return Outcome(64, "", f"error: {exc}\n")
        except Unverifiable as exc:
            return Outcome(2, "", f"UNVERIFIABLE ({exc.reason})\n")
        except RecomputeError as exc:
            return Outcome(getattr(exc, "exit_code", 64), "", f"error: {exc}\n")
        except Exception:  # noqa: BLE001 - what main would turn into exit 70
            return Outcome(70, "", traceback.format_exc())
        except Hung as exc:
            return Outcome(HUNG, "", f"hung: {exc}")


def judge(outcome: Outcome) -> str | None:
    """What is wrong with an outcome, or None when it is a verdict or one usage line."""
    if outcome.code not in (0, 1, 2, 64):
        return f"exit {outcome.code}: {outcome.err[-2000:]}"
    if "Traceback" in outcome.out + outcome.err:
        return f"a traceback: {outcome.err[-2000:]}"
    if outcome.code == 64 and len(outcome.err.strip().splitlines()) != 1:
        return f"exit 64 with {len(outcome.err.strip().splitlines())} lines: {outcome.err[:500]}"
    return None


@dataclass
class Reader:
    """One kind of file: ``prepare(workdir)`` makes the seed (once), ``variants(seed)`` the
    Hypothesis strategy of inputs, ``run(seed, variant, scratch)`` writes one and reads it."""

    name: str
    prepare: Callable[[Path], Any]
    variants: Callable[[Any], st.SearchStrategy[Any]]
    run: Callable[[Any, Any, Path], list[Outcome]]


SPECIALS = ("fifo", "dev-zero", "directory", "sparse", "dangling")


@dataclass(frozen=True)
class Special:
    """A file that is not a plain file of bytes: a FIFO with no writer, a link to
    ``/dev/zero``, a directory, a 3 GB sparse file, a link to nowhere."""

    kind: str


def _write(path: Path, data: bytes | Special) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    if not isinstance(data, Special):
        path.write_bytes(data)
    elif data.kind == "fifo":
        os.mkfifo(path)
    elif data.kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif data.kind == "directory":
        path.mkdir()
    elif data.kind == "sparse":
        with path.open("wb") as handle:
            handle.truncate(3 << 30)
    else:
        path.symlink_to(path.parent / "nowhere")
    return path


def _json_seed(path: Path) -> Callable[[Path], Any]:
    return lambda _: json.loads(path.read_text())


# ---- layouts, vectors, suites ----------------------------------------------------------------


def _layout(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    path = _write(scratch / "layout.json", data)
    return [cli("layout", "show", path, "--depth", 2, "--json"),
            cli("layout", "slot", path, SLOT_PATH)]


VECTOR = VECTORS / "devnet" / "8312-cap-conservation-mandate-at-cap.json"


def _vector(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    return [cli("vectors", "verify", _write(scratch / "vector.json", data))]


def _suite_seed(workdir: Path) -> Any:
    import hashlib

    body = VECTOR.read_bytes()
    return {"profile": "recompute-vectors.v1",
            "vectors": [{"path": "v.json", "sha256": hashlib.sha256(body).hexdigest()}]}


def _suite(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    folder = scratch / "suite"
    shutil.rmtree(folder, ignore_errors=True)
    _write(folder / "v.json", VECTOR.read_bytes())
    suite = _write(folder / "suite.json", data)
    return [cli("vectors", "verify", folder),
            cli("vectors", "add", folder / "v.json", "--suite", suite)]


# ---- verified source, solc output ------------------------------------------------------------


SOURCIFY = REPO_ROOT / "examples" / "sourcify" / "31337" / AMM
ETHERSCAN = REPO_ROOT / "examples" / "etherscan" / "ReservedConfirmedMeter.json"


class Compiled(Exception):
    """Stands in for solc: the reader accepted the input (compiling it is solc's business)."""


def _import_without_solc(path: Path, scratch: Path) -> Outcome:
    from recompute.layout import verified_source

    def compiled(*args: Any, **kwargs: Any) -> Any:
        raise Compiled

    with mock.patch.object(verified_source, "compile_storage_layout", compiled):
        outcome = cli("layout", "import", path, "-o", scratch / "out.json")
    if outcome.code == 70 and "Compiled" in outcome.err:
        return Outcome(0, outcome.out, "")
    return outcome


def _sourcify_variants(seed: Any) -> st.SearchStrategy[Any]:
    sources = sorted(str(p.relative_to(SOURCIFY)) for p in SOURCIFY.rglob("*.sol"))
    return st.one_of(
        st.tuples(st.just("metadata.json"), json_variants(seed)),
        st.tuples(st.sampled_from(sources), st.sampled_from(sources).flatmap(
            lambda name: byte_changes((SOURCIFY / name).read_bytes()))))


def _sourcify(seed: Any, variant: tuple[str, bytes], scratch: Path) -> list[Outcome]:
    folder = scratch / "sourcify"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(SOURCIFY, folder)
    _write(folder / variant[0], variant[1])
    return [_import_without_solc(folder, scratch)]


def _etherscan(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    return [_import_without_solc(_write(scratch / "answer.json", data), scratch)]


SOLC_OUTPUT = REPO_ROOT / "recompute" / "data" / "artifacts" / "AllowlistEligibility.json"


def _solc_output(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    path = _write(scratch / "solc.json", data)
    return [cli("layout", "import", path, "-o", scratch / "out.json")]


# ---- the evidence store (SQLite) -------------------------------------------------------------


def _store_seed(workdir: Path) -> Path:
    from tests.watch.test_store_tamper import _follow_store

    path = workdir / "seed.sqlite"
    if not path.exists():
        _follow_store(path)
    return path


_CELLS = [None, 0, -1, 2**63 - 1, 1.5, float("nan"), "", "x", "null", "[]", "{}", '"a"',
          "1e400", "NaN", '{"a": 1}', "[" * 70, "x" * 100_000, b"\xff\x00", "\ud800"]


def _store_variants(seed: Path) -> st.SearchStrategy[Any]:
    with contextlib.closing(sqlite3.connect(seed)) as db:
        cells = [(table, column, rowid)
                 for table in ("audit", "segments", "lines")
                 for column in [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
                 for (rowid,) in db.execute(f"SELECT rowid FROM {table}")]
    size = seed.stat().st_size
    return st.one_of(
        st.tuples(st.just("cell"), st.sampled_from(cells), st.sampled_from(_CELLS)),
        st.tuples(st.just("cell"), st.sampled_from(cells), st.text(max_size=40)),
        st.tuples(st.just("bytes"), st.integers(0, size - 1), st.integers(0, 255)),
        st.tuples(st.just("cut"), st.integers(0, size - 1), st.just(0)))


def _store(seed: Path, variant: tuple[str, Any, Any], scratch: Path) -> list[Outcome]:
    path = scratch / "store.sqlite"
    if isinstance(variant, Special):
        return [cli("audit", "report", "--store", _write(path, variant), "--json")]
    _write(path, b"")
    shutil.copyfile(seed, path)
    how, where, value = variant
    if how == "cell":
        table, column, rowid = where
        if isinstance(value, str):
            value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            try:
                db.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (value, rowid))
            except sqlite3.IntegrityError:  # NOT NULL, a duplicate key: keep the seed
                pass
    else:
        data = bytearray(path.read_bytes())
        if how == "bytes":
            data[where] = value
        else:
            del data[where:]
        path.write_bytes(bytes(data))
    return [cli("audit", "report", "--store", path, "--json")]


# ---- light client: --lc-store, network files -------------------------------------------------


def _lc_seed(workdir: Path) -> Any:
    from recompute.devnet.beacon_http import FixtureBeaconServer
    from recompute.lightclient import MAINNET
    from tests.lightclient.data import FIXTURES
    from tests.lightclient.test_cli_sync import HELIOS, sync_args

    path = workdir / "lc.json"
    if not path.exists():
        with FixtureBeaconServer(FIXTURES / HELIOS, MAINNET) as server:
            done = cli(*sync_args(server, HELIOS, "--lc-store", path, "--json"))
        assert done.code == 0, done.err
    return json.loads(path.read_text())


def _lc_store(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    from tests.lightclient.data import load
    from tests.lightclient.test_cli_sync import HELIOS

    path = _write(scratch / "lc.json", data)
    root = load(HELIOS, "meta.json")["trusted_block_root"]
    return [cli("lightclient", "sync", "--beacon", UNREACHABLE, "--trusted-root", root,
                "--lc-store", path, "--at", 1_700_000_000)]


_BEACON: list[Any] = []  # one recorded beacon node for the process (its thread is a daemon)


def _lc_store_synced(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    """The store read, then synced on from against the recorded mainnet beacon node it was
    written from (a store that passes its reader meets the light client's checks)."""
    from recompute.devnet.beacon_http import FixtureBeaconServer
    from recompute.lightclient import MAINNET
    from tests.lightclient.data import FIXTURES
    from tests.lightclient.test_cli_sync import HELIOS, sync_args

    if not _BEACON:
        _BEACON.append(FixtureBeaconServer(FIXTURES / HELIOS, MAINNET).__enter__())
    path = _write(scratch / "lc.json", data)
    return [cli(*sync_args(_BEACON[0], HELIOS, "--lc-store", path, "--json"))]


NETWORKS = REPO_ROOT / "tests" / "fixtures" / "light-client" / "networks.json"


def _network(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    path = _write(scratch / "network.json", data)
    return [cli("lightclient", "sync", "--beacon", UNREACHABLE, "--trusted-root", ROOT,
                "--network", path)]


# ---- checks files (watch --config), devnet state ---------------------------------------------


CHECKS = REPO_ROOT / "examples" / "devnet-watch.toml"


def _checks(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    path = _write(scratch / "checks.toml", data)
    return [cli("watch", "--rpc", UNREACHABLE, "--config", path, "--from", 1, "--to", 2)]


def _manifest_seed(workdir: Path) -> Any:
    from tests.core.test_file_schemas import MANIFEST

    return MANIFEST


def _manifest(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    from recompute.devnet.lifecycle import read_manifest

    folder = scratch / "devnet"
    _write(folder / "manifest.json", data)
    return [call(lambda: read_manifest(folder))]


def _pid_file(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    """A devnet's ``anvil.pid``: what ``devnet down`` would signal must be one process, never
    0 (its own process group) or a negative number (a group, or every process)."""
    from recompute.devnet.lifecycle import running_pid

    folder = scratch / "devnet"
    _write(folder / "anvil.pid", data)

    def read() -> None:
        pid = running_pid(folder)
        if pid is not None and pid <= 1:
            raise AssertionError(f"running_pid read {pid!r}: a pid `down` must not signal")

    return [call(read)]


# ---- recipe parameter files (a Swarm Pack, a layer document) ---------------------------------


def _pack(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    """``sai/charter --param pack=FILE``: the pack read, then hashed as the recipe hashes it."""
    from recompute.recipes.sai_charter import load_pack, pack_digests

    path = _write(scratch / "pack.json", data)
    return [call(lambda: pack_digests(load_pack(path)))]


def _document(seed: Any, data: bytes, scratch: Path) -> list[Outcome]:
    """``amm/commitment --param document=FILE``: the recipe's plan up to its first reads."""
    from recompute.recipes.registry import get_recipe

    path = _write(scratch / "layer.json", data)
    recipe = get_recipe("amm/commitment")

    def plan() -> object:
        params = recipe.parse_params({"subject": "0x" + "11" * 20, "layer": "0",
                                      "document": str(path)})
        return next(recipe.plan(params, None))

    return [call(plan)]


PACK = {"version": 1, "prev": None, "specHash": "0x" + "ab" * 32,
        "objective": {"goal": "Prove lemma 3", "weight": 1.50, "\u00e9": "\u00fc",
                      "B": [1e2, True]},
        "commitment": {"allocation": "equal", "bell": "\u0007"}}
DOCUMENT = {"schema": "amm-layer/1", "layer": 0, "entries": [{"k": "a", "v": 1.25}, None],
            "note": "caf\u00e9"}


READERS = {r.name: r for r in [
    Reader("layout", _json_seed(LAYOUTS / "amm-registry.json"), json_variants, _layout),
    Reader("vector", _json_seed(VECTOR), json_variants, _vector),
    Reader("suite", _suite_seed, json_variants, _suite),
    Reader("sourcify", _json_seed(SOURCIFY / "metadata.json"), _sourcify_variants, _sourcify),
    Reader("etherscan", _json_seed(ETHERSCAN), json_variants, _etherscan),
    Reader("solc-output", _json_seed(SOLC_OUTPUT), json_variants, _solc_output),
    Reader("store", _store_seed, _store_variants, _store),
    Reader("lc-store", _lc_seed, json_variants, _lc_store),
    Reader("lc-store-synced", _lc_seed, json_variants, _lc_store_synced),
    Reader("network", lambda _: json.loads(NETWORKS.read_text())["mainnet"], json_variants,
           _network),
    Reader("checks", lambda _: tomllib.loads(CHECKS.read_text()), toml_variants, _checks),
    Reader("manifest", _manifest_seed, json_variants, _manifest),
    Reader("pid-file", lambda _: b"4242\n",
           lambda seed: st.one_of(byte_changes(seed), st.integers().map(lambda n: b"%d" % n),
                                  st.binary(max_size=30)), _pid_file),
    Reader("swarm-pack", lambda _: PACK, json_variants, _pack),
    Reader("layer-document", lambda _: DOCUMENT, json_variants, _document),
]}
