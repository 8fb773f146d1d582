"""Conformance vectors: the shipped suite replays offline, tampering is caught, hashes pin it,
and capture is byte-for-byte reproducible."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recompute.vectors import dumps, load_json, replay, tamper_all
from recompute.vectors.catalog import (
    VECTORS,
    devnet_vectors,
    geth_vectors,
    pure_vectors,
    write_suite,
)

ROOT = Path(__file__).resolve().parents[2]


def verify(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "recompute", "vectors", "verify", *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_the_shipped_vectors_pass_offline():
    result = verify("vectors/")
    assert result.returncode == 0, result.stdout + result.stderr
    last = result.stdout.strip().splitlines()[-1]
    ours = len(json.loads((VECTORS / "suite.json").read_text())["vectors"])
    peer = len(load_json(VECTORS / "recompute-kit" / "aggregate-budget-v0" /
                         "aggregate-budget-v0.vectors.json")["vectors"])
    assert peer == 7  # the thread: "7 hash-pinned vectors"
    assert last == f"{ours + peer} passed, 0 failed"
    assert "PASS aggregate-budget-v0/fanout-exceeds-root-cap" in result.stdout
    # every recipe family and kind is represented, each verdict a step can give
    verdicts = {load_json(VECTORS / e["path"])["expected"]["verdict"]
                for e in json.loads((VECTORS / "suite.json").read_text())["vectors"]}
    assert verdicts == {"VERIFIED-GOOD", "VERIFIED-BAD", "UNVERIFIABLE"}


def test_tamper_detects_every_mutation():
    result = verify("--tamper", "vectors/")
    assert result.returncode == 0, result.stdout
    tried = re.search(r"^tamper: (\d+) data mutation\(s\) tried, (\d+) caught; (\d+) wrong "
                      r"method\(s\) tried, (\d+) told apart; 0 not detected$", result.stdout,
                      re.M)
    assert tried, result.stdout
    mutations, caught, methods, told = map(int, tried.groups())
    assert mutations == caught > 0 and methods == told > 0  # what was tried, all caught
    assert result.stdout.splitlines()[-1].endswith(" passed, 0 failed, 0 not detected by tamper")


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "vectors"
    shutil.copytree(VECTORS, target)
    return target


def test_a_changed_byte_fails_the_suites_hash_check(tmp_path):
    copy = _copy(tmp_path)
    victim = copy / "geth" / "geth-account-proof-with-storage.json"
    data = bytearray(victim.read_bytes())
    data[-3] = ord(" ") if data[-3] != ord(" ") else ord("\t")  # whitespace: same JSON value
    victim.write_bytes(bytes(data))
    result = verify(str(copy))
    assert result.returncode == 1
    assert "hash check: geth/geth-account-proof-with-storage.json: sha256" in result.stdout
    assert result.stdout.strip().endswith("1 failed")


def test_an_edited_expected_verdict_fails(tmp_path):
    copy = _copy(tmp_path)
    victim = copy / "devnet" / "amm-layer-status-overdue.json"
    vector = json.loads(victim.read_text())
    assert vector["expected"]["verdict"] == "VERIFIED-BAD"
    vector["expected"]["verdict"] = "VERIFIED-GOOD"
    victim.write_text(dumps(vector))
    files = [copy / e["path"] for e in json.loads((copy / "suite.json").read_text())["vectors"]]
    write_suite(copy, files)  # re-pin, so only the replay can catch the edit
    result = verify(str(copy))
    assert result.returncode == 1
    # named by the file to open and fix (its name is the vector's)
    assert f"FAIL {victim}: verdict 'VERIFIED-BAD'" in result.stdout


def test_a_folder_of_failing_vectors_names_each_failure_by_its_file(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    victims = []
    for name in ("amm-layer-status-overdue", "amm-layer-status-due"):
        vector = load_json(VECTORS / "devnet" / f"{name}.json")
        vector["expected"]["verdict"] = "VERIFIED-" + (
            "GOOD" if vector["expected"]["verdict"] == "VERIFIED-BAD" else "BAD")
        victims.append(folder / f"copy-of-{name}.json")  # the file name is not the vector's
        victims[-1].write_text(dumps(vector))
    result = verify(str(folder))
    assert result.returncode == 1
    fails = [line for line in result.stdout.splitlines() if line.startswith("FAIL ")]
    assert len(fails) == 2
    for victim in victims:
        assert sum(line.startswith(f"FAIL {victim} (") for line in fails) == 1, fails


def test_add_creates_a_suite_that_does_not_exist_yet(tmp_path):
    import hashlib

    folder = tmp_path / "suite-to-be"
    folder.mkdir()
    source = next(iter(sorted((VECTORS / "pure").glob("*.json"))))
    shutil.copy(source, folder / source.name)
    suite = folder / "suite.json"
    added = subprocess.run([sys.executable, "-m", "recompute", "vectors", "add",
                            str(folder / source.name), "--suite", str(suite)],
                           capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert added.returncode == 0, added.stdout + added.stderr
    document = json.loads(suite.read_text())
    assert document["profile"] == "recompute-vectors.v1"
    assert document["vectors"] == [{"path": source.name, "sha256": hashlib.sha256(
        source.read_bytes()).hexdigest()}]
    again = verify(str(folder))
    assert again.returncode == 0, again.stdout
    assert again.stdout.strip().splitlines()[-1] == "1 passed, 0 failed"


def test_every_recipe_has_a_devnet_vector():
    from recompute.recipes.registry import BUNDLED_AREAS, load_recipes

    covered = {load_json(p)["recipe"] for p in (VECTORS / "devnet").glob("*.json")}
    # the bundled recipes: a user recipe module another test loaded in this process (the
    # differential's probes) registers names of its own area
    assert covered == {name for name in load_recipes() if name.split("/")[0] in BUNDLED_AREAS}


def test_a_method_no_vector_tells_apart_is_reported():
    restore = [load_json(p) for p in sorted((VECTORS / "devnet").glob("amm-restore-claim-*"))]
    assert tamper_all(restore) == []
    valid = load_json(VECTORS / "devnet" / "amm-restore-claim-valid.json")
    # a valid claim alone (restoresVersion 1 < base 2, rootAt(1) the post root, the version
    # advanced) agrees with every mistaken method of the recipe: each rule is left unpinned
    lonely = tamper_all([valid])
    assert lonely == [f"amm/restore-claim: method '{rule}' gives the same outcome on every vector"
                      for rule in sorted(["amm.restore.root-matches",
                                          "amm.restore.zero-is-no-claim",
                                          "amm.restore.below-current-version",
                                          "amm.restore.equal-base-version",
                                          "amm.restore.root-at-new-version",
                                          "amm.restore.version-advances"])]


def test_pure_and_geth_vectors_are_rebuilt_byte_for_byte():
    for vector in pure_vectors() + geth_vectors():
        group = "pure" if vector["kind"] == "pure" else "geth"
        assert dumps(vector) == (VECTORS / group / f"{vector['name']}.json").read_text()


def test_devnet_capture_is_reproducible_and_round_trips(devnet):
    node, manifest = devnet
    first = devnet_vectors(node.url, manifest)
    second = devnet_vectors(node.url, manifest)
    assert [dumps(v) for v in first] == [dumps(v) for v in second]  # capture twice: same bytes
    for vector in first:
        committed = VECTORS / "devnet" / f"{vector['name']}.json"
        assert dumps(vector) == committed.read_text(), vector["name"]
        got = replay(vector)
        assert got["verdict"] == vector["expected"]["verdict"]  # capture -> verify round trip


@pytest.mark.parametrize("content,needle", [
    ("{", "not JSON"),
    ('{"format": "other"}', "not a recompute-vector/1 vector"),
    ('{"format": "recompute-vector/1", "kind": "step"}', "the vector lacks recipe"),
    ('[1, 2]', "not a JSON object"),
])
def test_malformed_vectors_are_one_failed_line(tmp_path, content, needle):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = verify(str(bad))  # a malformed file is a failed vector, not exit 64
    assert result.returncode == 1 and needle in result.stdout
    assert result.stdout.strip().endswith("0 passed, 1 failed")
    assert "Traceback" not in result.stderr


def _mutate(node, path: list, value):
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _paths(node, prefix=()):
    """Every (path, leaf) of a JSON document, depth first."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        here = (*prefix, key)
        yield here, value
        if isinstance(value, dict | list):
            yield from _paths(value, here)


@pytest.mark.parametrize("name", ["devnet/amm-restore-claim-valid.json",
                                  "geth/geth-account-proof-with-storage.json",
                                  "pure/amm-jcs-row-1.json"])
def test_malformed_vector_content_never_verifies_nor_crashes(name):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from recompute.vectors import MalformedVector, compare

    original = load_json(VECTORS / name)
    places = [p for p, _ in _paths(original) if p[0] not in ("description", "name")]
    junk = st.sampled_from([None, 7, "0xzz", "", [], {}, "0x" + "00" * 32, True])

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(place=st.sampled_from(places), value=junk)
    def check(place, value):
        vector = json.loads(json.dumps(original))
        _mutate(vector, list(place), value)
        if vector == original:
            return
        try:
            got = replay(vector)
        except MalformedVector:
            return  # refused as malformed: fine
        except Exception as exc:  # the CLI turns UsageError into one line; nothing else
            from recompute.core.errors import UsageError

            assert isinstance(exc, UsageError), repr(exc)
            return
        # a replay that ran: if the mutated vector still passes, its outcome must be the
        # original's (the change was immaterial); a change can never make a vector pass with
        # another outcome
        if not compare(vector, got):
            assert not compare(original, got), (place, value, got)

    check()
