"""A vector's every field is checked for its type before replay (vectors/schema.json): a
malformed field is one line naming the file and the field, never a pass and never exit 70."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from recompute.data import VECTORS
from recompute.vectors import dumps, verify_file
from tests.mutations import DELETE, JUNK, at, mutated, places
from tests.soundness.test_vectors_check import run

PURE = "pure/amm-jcs-row-1.json"
PROOF = "geth/geth-account-proof-with-storage.json"
STEP = "devnet/8312-aggregate-budget-at-cap.json"


def _write(tmp_path: Path, vector: dict, name: str = "x.json") -> Path:
    path = tmp_path / name
    path.write_text(dumps(vector))
    return path


@pytest.mark.parametrize("source", [PURE, PROOF, STEP])
def test_a_name_that_is_a_list_fails_naming_the_field(capsys, tmp_path, source):
    vector = json.loads((VECTORS / source).read_text())
    vector["name"] = ["x"]
    path = _write(tmp_path, vector)
    code, out, err = run(capsys, "vectors", "verify", str(path))
    assert code == 1 and not err  # a malformed vector is a failed one (the run goes on)
    assert f'FAIL {path}: vector {path}: field "name": expected a string, got a list' in out
    assert out.strip().endswith("0 passed, 1 failed")


@pytest.mark.parametrize("field,value,needle", [
    ("description", 5, 'field "description": expected a string, got 5'),
    ("proofs", {}, 'field "proofs": expected a list, got an object'),
    ("headers", [], 'field "headers": expected an object, got a list'),
    ("slots", ["0x1"], 'field "slots[0]": expected a 0x hash of 32 bytes, got \'0x1\''),
    ("chain_id", "1", 'field "chain_id": expected an integer'),
    ("extra", 1, 'field "extra": unknown field'),
])
def test_each_field_is_checked_for_its_type(tmp_path, field, value, needle):
    vector = json.loads((VECTORS / PROOF).read_text())
    vector[field] = value
    result = verify_file(_write(tmp_path, vector))
    assert not result.passed and needle in result.detail, result.detail


def test_a_proof_entry_of_the_wrong_shape_names_its_place(tmp_path):
    vector = json.loads((VECTORS / PROOF).read_text())
    vector["proofs"][0]["block_hash"] = 7
    result = verify_file(_write(tmp_path, vector))
    assert not result.passed
    assert 'field "proofs[0].block_hash": expected a 0x hash of 32 bytes, got 7' in result.detail


# ---- any one-field mutation: a result naming the field, or the file's own result ------------


LABELS = {("description",), ("name",), ("layout", "name"), ("chain_id",)}


@pytest.mark.parametrize("source", [PURE, PROOF, STEP])
def test_any_single_field_mutation_names_the_field_or_keeps_the_result(tmp_path_factory,
                                                                         source):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    original = json.loads((VECTORS / source).read_text())
    fields = sorted(places(original), key=str)

    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow],
              database=None)
    @given(place=st.sampled_from(fields), value=st.sampled_from(JUNK))
    def check(place, value):
        vector = mutated(original, place, value)
        path = tmp_path_factory.mktemp("m") / "m.json"
        path.write_text(json.dumps(vector))
        result = verify_file(path)
        top = str(place[0])
        if result.passed:
            # only an immaterial change passes: a label (the description, the names, the chain
            # id: no proof commits to it) given a value of its type, or something expected
            # dropped (suite.json pins a vector's bytes against that)
            assert place in LABELS and type(value) is type(at(original, place)) \
                or place[:1] == ("expected",) and value == DELETE \
                or value == DELETE and at(original, place) in ([], {}) \
                or vector == original, (place, value)
            return
        detail = result.detail
        named = f'field "{top}' in detail or f"lacks {top}" in detail
        deep = "nested deeper than" in detail  # refused before parsing: no field yet
        # a value of the right type but another meaning: the replay's outcome differs
        semantic = "(expected" in detail or "(not expected)" in detail
        assert named or deep or semantic, (place, value, detail)

    check()


def test_a_mutated_vector_never_exits_70(capsys, tmp_path):
    original = json.loads((VECTORS / PROOF).read_text())
    for place in sorted(places(original), key=str)[:40]:
        for value in (["x"], {}, None, DELETE):
            path = _write(tmp_path, mutated(original, place, value))
            code, _, err = run(capsys, "vectors", "verify", str(path))
            assert code in (0, 1) and "internal error" not in err, (place, value, err)


@pytest.mark.parametrize("suite,needle", [
    ({"profile": "recompute-vectors.v1", "vectors": [{"path": ["x"], "sha256": "0" * 64}]},
     'field "vectors[0].path": expected a relative path inside the suite\'s folder, got a list'),
    ({"profile": "recompute-vectors.v1", "vectors": [{"path": "../x.json", "sha256": "0" * 64}]},
     'field "vectors[0].path": expected a relative path'),
    ({"profile": "recompute-vectors.v1", "vectors": 3},
     'field "vectors": expected a list of pinned files {path, sha256}, got 3'),
])
def test_a_malformed_suite_names_the_field(capsys, tmp_path, suite, needle):
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    code, out, err = run(capsys, "vectors", "verify", str(tmp_path))
    assert code == 1 and needle in out and "internal error" not in err, out + err
    code, out, err = run(capsys, "vectors", "add", "--suite", str(tmp_path / "suite.json"),
                         str(VECTORS / PURE))
    assert code == 64 and needle in err and "\n" not in err.strip(), err


def test_a_malformed_peer_vector_names_the_field(capsys, tmp_path):
    peer = VECTORS / "recompute-kit" / "aggregate-budget-v0"
    document = json.loads((peer / "aggregate-budget-v0.vectors.json").read_text())
    document["vectors"][0]["log"][0]["amount"] = ["1200"]
    (tmp_path / "v.json").write_text(json.dumps(document))
    (tmp_path / "suite.json").write_text(json.dumps({
        "profile": "aggregate_budget.v0",
        "vectors": {"path": "v.json", "sha256": hashlib.sha256(
            (tmp_path / "v.json").read_bytes()).hexdigest()}}))
    code, out, _ = run(capsys, "vectors", "verify", str(tmp_path / "suite.json"))
    assert code == 1
    assert 'field "vectors[0].log[0].amount": expected a decimal integer in a string, got a list' \
        in out


def test_any_single_field_mutation_of_the_peer_vectors_is_results_or_one_line(tmp_path):
    from recompute.vectors.suite import PROFILE_HANDLERS
    from tests.core.test_file_schemas import holds

    peer = VECTORS / "recompute-kit" / "aggregate-budget-v0" / "aggregate-budget-v0.vectors.json"
    handler = PROFILE_HANDLERS["aggregate_budget.v0"]

    def read(document):
        path = tmp_path / "peer.json"
        path.write_text(json.dumps(document))
        assert all(result.passed in (True, False) for result in handler(path))

    holds(json.loads(peer.read_text()), 4, read, "nested deeper")
