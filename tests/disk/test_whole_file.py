"""Files recompute writes go only where meant (docs/watch.md §Files recompute writes): a
planted link beside or at a target is never written through unless the user named that very
path; a write is whole or not at all."""

from __future__ import annotations

import ast
import json
import stat
from pathlib import Path

import pytest

import recompute
from recompute.disk.whole_file import LinkRefused, WholeFile, open_log, write_whole
from recompute.watch.store import Store
from tests.cli import run_cli

PACKAGE = Path(recompute.__file__).resolve().parent


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    return victim


def _store(path: Path) -> Path:
    store = Store(path)
    store.put({"mode": "follow", "config_hash": "ab" * 32, "confirmations": 2,
               "checks": [{"name": "c", "healthy": "VERIFIED-GOOD", "since": 0}]})
    store.record_final([{"block": 5, "hash": "0x" + "05" * 32, "check": "c",
                         "verdict": "VERIFIED-GOOD", "reason": "ok", "final": True,
                         "healthy": True, "derived": {}, "evidence_digest": "cd" * 32}],
                       5, "0x" + "05" * 32)
    store.close()
    return path


def test_a_link_planted_at_the_old_partial_names_writes_nothing_through_it(tmp_path):
    victim = _victim(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    for name in (".report.html.partial", ".report.csv.partial"):
        (out / name).symlink_to(victim)
    done = run_cli("audit", "report", "--store", _store(tmp_path / "s.sqlite"),
                   "--html", out / "report.html", "--csv", out / "report.csv")
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious\n"
    for name in ("report.html", "report.csv"):
        assert not (out / name).is_symlink() and (out / name).stat().st_size > 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".report.csv.partial", ".report.html.partial", "report.csv", "report.html"]


def test_a_report_path_the_user_named_is_written_through_its_link(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    done = run_cli("audit", "report", "--store", _store(tmp_path / "s.sqlite"), "--csv", link)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and real.read_text().startswith("block,block_hash,check")


def test_a_link_not_named_is_refused_and_its_target_left_alone(tmp_path):
    victim = _victim(tmp_path)
    link = tmp_path / "manifest.json"
    link.symlink_to(victim)
    with pytest.raises(LinkRefused, match="is a symbolic link"):
        write_whole(link, "{}")
    assert victim.read_text() == "precious\n" and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "victim"]


def test_the_devnet_state_files_refuse_planted_links(tmp_path):
    from recompute.devnet.lifecycle import _write_manifest

    victim = _victim(tmp_path)
    state = tmp_path / "dn"
    state.mkdir()
    (state / "manifest.json.tmp").symlink_to(victim)  # the old fixed temporary name
    _write_manifest(state, {"port": 1})
    assert victim.read_text() == "precious\n"
    assert json.loads((state / "manifest.json").read_text()) == {"port": 1}
    (state / "manifest.json").unlink()
    (state / "manifest.json").symlink_to(victim)
    with pytest.raises(LinkRefused):
        _write_manifest(state, {"port": 2})
    assert victim.read_text() == "precious\n"
    (state / "anvil.log").symlink_to(victim)
    with pytest.raises(OSError):
        open_log(state / "anvil.log")
    assert victim.read_text() == "precious\n"


def test_the_lc_store_refuses_its_old_temporary_link(tmp_path, monkeypatch):
    import recompute.lightclient.persist as persist
    from recompute.cli import beacon_options

    victim = _victim(tmp_path)
    store = tmp_path / "lc.json"
    (tmp_path / "lc.json.tmp").symlink_to(victim)

    class Request:
        store_path = store
        trusted_root = b"\x11" * 32

    saved = {"what": "a store"}
    # the file write is what is tested, not the store's JSON
    monkeypatch.setattr(persist, "store_to_json", lambda _store, _root: saved)
    beacon_options.save_store(Request(), object())  # type: ignore[arg-type]
    assert victim.read_text() == "precious\n"
    assert json.loads(store.read_text()) == saved


def test_a_write_is_whole_or_not_at_all(tmp_path):
    target = tmp_path / "t.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), WholeFile(target) as out:
        out.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_a_new_file_gets_the_umask_mode_and_a_replaced_one_keeps_its_own(tmp_path):
    (tmp_path / "plain").write_text("x")  # what a plain open gives
    write_whole(tmp_path / "new", "x")
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == \
        stat.S_IMODE((tmp_path / "plain").stat().st_mode)
    kept = tmp_path / "kept"
    kept.write_text("x")
    kept.chmod(0o640)
    write_whole(kept, b"y")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_bytes() == b"y"


def test_no_module_writes_a_file_but_through_the_one_helper():
    """Every whole file is written by recompute/disk (a new writer elsewhere fails here)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "disk" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
            if name in ("write_text", "write_bytes") or (
                    name == "replace" and getattr(node.func, "value", None) is not None
                    and getattr(node.func.value, "id", "") == "os"):  # type: ignore[attr-defined]
                found.append(f"{where} {name}")
            elif name == "open" and any(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                        and set(a.value) & set("wax+") for a in node.args[1:]):
                found.append(f"{where} open for writing")
    assert found == []


def test_a_link_planted_in_the_devnet_state_folder_is_one_line(tmp_path):
    victim = _victim(tmp_path)
    state = tmp_path / "dn"
    state.mkdir()
    (state / "anvil.log").symlink_to(victim)
    done = run_cli("devnet", "up", "--state-dir", state, "--port", "1")
    assert done.returncode == 2, done.stderr
    assert victim.read_text() == "precious\n"
    assert done.stderr.count("\n") == 1 and "never through a link" in done.stderr, done.stderr
