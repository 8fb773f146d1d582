"""`recompute layout import|show|slot` through the real entry point (recompute.cli.main)."""

from __future__ import annotations

import json

import pytest
from eth_hash.auto import keccak

from recompute.cli import main

from .conftest import ALICE, STANDARD_OUTPUT, ZOO_ARTIFACT, ZOO_CONTRACT, artifact, solc_slot


def run(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out, err = capsys.readouterr()
    return done.value.code, out, err


@pytest.fixture
def zoo_file(tmp_path, capsys):
    path = tmp_path / "zoo.json"
    code, _, err = run(capsys, "layout", "import", str(ZOO_ARTIFACT), "-o", str(path))
    assert code == 0, err
    return path


def test_import_twice_is_byte_identical(tmp_path, capsys, zoo_file):
    again = tmp_path / "again.json"
    code, _, err = run(capsys, "layout", "import", str(STANDARD_OUTPUT), "--contract",
                       ZOO_CONTRACT, "--compiler", artifact()["compiler"]["version"],
                       "-o", str(again))
    assert code == 0
    assert f"wrote {again}: {ZOO_CONTRACT}, 59 state variables" in err
    assert again.read_bytes() == zoo_file.read_bytes()
    code, out, _ = run(capsys, "layout", "import", str(ZOO_ARTIFACT), "-o", "-")
    assert code == 0 and out.encode() == zoo_file.read_bytes()


def test_show_lists_every_variable_where_solc_put_it(capsys, zoo_file):
    code, out, _ = run(capsys, "layout", "show", str(zoo_file))
    assert code == 0
    rows = [line.split(None, 4) for line in out.splitlines()[2:]]
    solc = artifact()["storageLayout"]
    assert len(rows) == len(solc["storage"])
    for row, var in zip(rows, solc["storage"], strict=True):
        t = solc["types"][var["type"]]
        assert row[:4] == [var["slot"], str(var["offset"]), t["numberOfBytes"], var["label"]]
        assert row[4].strip() == t["label"]


def test_slot_json_gives_the_hand_computed_slot(capsys, zoo_file):
    code, out, _ = run(capsys, "layout", "slot", str(zoo_file), f"balances[{ALICE}]", "--json")
    assert code == 0
    doc = json.loads(out)
    expected = keccak(bytes.fromhex(ALICE[2:]).rjust(32, b"\0")
                      + solc_slot("balances").to_bytes(32, "big"))
    assert doc["slot"] == "0x" + expected.hex()
    assert (doc["offset"], doc["size"], doc["type"]) == (0, 32, "uint256")
    assert [s["op"] for s in doc["steps"]] == ["variable", "mapping", "value"]


def test_slot_text_explains_the_read_time_bound(capsys, zoo_file):
    code, out, _ = run(capsys, "layout", "slot", str(zoo_file), "nums[1]")
    assert code == 0
    assert "checked against the proven length at read time" in out
    data = int.from_bytes(keccak(solc_slot("nums").to_bytes(32, "big")), "big")
    assert f"slot    0x{data + 1:064x}" in out


@pytest.mark.parametrize("argv,message", [
    (["layout", "slot", "{zoo}", "nums[1"], "bad path 'nums[1': expected ']'"),
    (["layout", "slot", "{zoo}", "nope"], "unknown variable 'nope'"),
    (["layout", "slot", "{zoo}", "smallArr[9]"], "out of bounds for uint8[5] (length 5)"),
    (["layout", "slot", "{zoo}", "balances[1]"], "address key must be 0x followed by 40"),
    (["layout", "show", "{tmp}/missing.json"], "missing.json: no such file"),
    (["layout", "show", "{tmp}/broken.json"], "not a recompute-layout/1 descriptor"),
    (["layout", "show", "no-such-bundled-name"], "no bundled layout 'no-such-bundled-name'"),
    (["layout", "import", str(STANDARD_OUTPUT), "-o", "{tmp}/x.json"],
     "several contracts have a storage layout"),
    (["layout", "import", str(ZOO_ARTIFACT)], "Missing option '-o'"),
])
def test_errors_are_one_line_and_exit_64(tmp_path, capsys, zoo_file, argv, message):
    (tmp_path / "broken.json").write_text('{"format": "other"}')
    argv = [a.format(zoo=zoo_file, tmp=tmp_path) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 64
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err + out


def test_import_into_a_folder_that_does_not_exist_creates_it(tmp_path, capsys):
    out = tmp_path / "not" / "yet" / "zoo.json"
    code, _, err = run(capsys, "layout", "import", str(ZOO_ARTIFACT), "-o", str(out))
    assert code == 0, err
    solc = json.loads(ZOO_ARTIFACT.read_text())["storageLayout"]
    assert json.loads(out.read_text())["storage"] == solc["storage"]
