"""Vectors that check what they hold: every vector file found is verified (listed
in suite.json or not, unlisted ones said so), ``vectors add`` pins files, a failing vector says
which value differs, and one malformed file is a failed vector, not the end of the run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from recompute.cli import main
from recompute.data import VECTORS
from recompute.vectors import dumps

GOOD = "devnet/8312-aggregate-budget-at-cap.json"


def run(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


@pytest.fixture
def folder(tmp_path) -> Path:
    """A suite of one good vector, as `vectors add` makes it."""
    target = tmp_path / "suite"
    target.mkdir()
    shutil.copy(VECTORS / GOOD, target / "good.json")
    (target / "suite.json").write_text(json.dumps({"profile": "recompute-vectors.v1",
                                                   "vectors": []}, indent=1) + "\n")
    return target


def _wrong(folder: Path, name: str = "wrong.json") -> Path:
    vector = json.loads((folder / "good.json").read_text())
    vector["name"] = "deliberately-wrong"
    vector["expected"]["derived"]["aggregate"] = "99"
    path = folder / name
    path.write_text(dumps(vector))
    return path


def test_a_folder_of_unlisted_wrong_vectors_fails_and_says_unlisted(capsys, folder):
    _wrong(folder)
    code, out, _ = run(capsys, "vectors", "verify", str(folder))
    assert code == 1
    # named by its file (the one to open), then by the vector's own name
    assert f"FAIL {folder / 'wrong.json'} (deliberately-wrong) (unlisted" in out
    assert "PASS 8312-aggregate-budget-at-cap (unlisted" in out
    assert out.strip().endswith("1 passed, 1 failed")


def test_a_failing_vector_says_which_value_differs(capsys, folder):
    _wrong(folder)
    _, out, _ = run(capsys, "vectors", "verify", str(folder / "wrong.json"))
    assert "derived.aggregate 100 (expected 99)" in out


def test_vectors_add_pins_and_refuses_a_vector_that_does_not_verify(capsys, folder):
    code, out, _ = run(capsys, "vectors", "add", str(folder / "good.json"))
    assert code == 0 and "pinned good.json" in out
    suite = json.loads((folder / "suite.json").read_text())
    assert [e["path"] for e in suite["vectors"]] == ["good.json"]
    code, out, _ = run(capsys, "vectors", "verify", str(folder))
    assert code == 0 and "unlisted" not in out and out.strip().endswith("1 passed, 0 failed")
    code, _, err = run(capsys, "vectors", "add", str(_wrong(folder)))
    assert code == 64 and "does not verify" in err


@pytest.mark.parametrize("content", [b"{", b"[" * 200_000, b"\xff\x00", b'{"format": 1}'])
def test_one_malformed_file_is_one_failed_vector_and_the_run_goes_on(capsys, folder, content):
    (folder / "bad.json").write_bytes(content)
    code, out, _ = run(capsys, "vectors", "verify", str(folder))
    assert code == 1
    assert f"FAIL {folder / 'bad.json'} (unlisted" in out
    assert "PASS 8312-aggregate-budget-at-cap" in out
    code, out, err = run(capsys, "vectors", "verify", "--tamper", str(folder))
    assert code == 1 and "internal error" not in err


def test_a_vector_whose_chain_id_is_not_an_integer_fails(capsys, folder):
    vector = json.loads((folder / "good.json").read_text())
    vector["chain_id"] = "31337"
    (folder / "good.json").write_text(dumps(vector))
    code, out, _ = run(capsys, "vectors", "verify", str(folder / "good.json"))
    assert code == 1 and 'field "chain_id": expected an integer from 0 to 2**64 - 1' in out


def test_proc_self_mem_is_one_failed_line(capsys):
    code, out, err = run(capsys, "vectors", "verify", "/proc/self/mem")
    assert code == 1 and "FAIL /proc/self/mem: " in out and not err


def test_any_file_is_a_result_never_an_exception(tmp_path_factory):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from recompute.vectors import verify_file

    original = json.loads((VECTORS / GOOD).read_text())
    keys = sorted(original)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.one_of(
        st.binary(max_size=100),
        st.fixed_dictionaries({}, optional={k: st.none() | st.integers() | st.text(max_size=5)
                                            | st.just(original[k]) for k in keys})
        .map(lambda d: json.dumps(d).encode())))
    def check(content):
        path = tmp_path_factory.mktemp("v") / "x.json"
        path.write_bytes(content)
        result = verify_file(path)
        assert result.passed in (True, False)

    check()
