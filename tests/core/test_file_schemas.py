"""Every file the command line reads has one validator that checks each field's type before
use: any single-field mutation of a valid file (a value of another type, a deletion, a huge
value, deep nesting) is one UsageError line naming the field (exit 64), or a valid file; never
another exception (exit 70). Vectors and suites: tests/vectors/test_vector_schema.py."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompute.cli import main
from recompute.core.errors import UsageError
from recompute.data import LAYOUTS
from tests import REPO_ROOT
from tests.mutations import JUNK, mutated, names, places

SETTINGS = settings(max_examples=150, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def _refused_naming_the_field(error: UsageError, place: tuple, *more: str) -> bool:
    text = str(error)
    return "\n" not in text and any(name in text for name in (*names(place), *more))


def holds(original, depth: int, read, *more: str, values=JUNK) -> None:
    """For any one field of ``original`` mutated, ``read`` (of the mutated document) returns,
    or raises a one-line UsageError naming the field (or one of ``more``)."""
    fields = sorted(places(original, depth), key=str)

    @SETTINGS
    @given(place=st.sampled_from(fields), value=st.sampled_from(values))
    def check(place, value):
        try:
            read(mutated(original, place, value))
        except UsageError as error:
            assert _refused_naming_the_field(error, place, *more), (place, error)

    check()


def _written(path: Path, document) -> Path:
    path.write_text(json.dumps(document))
    return path


# ---- layout descriptors --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["amm-registry", "meter-aggregate-budget"])
def test_a_mutated_layout_is_a_layout_or_one_line_naming_the_field(tmp_path, name):
    from recompute.layout import Layout, load_layout

    original = json.loads((LAYOUTS / f"{name}.json").read_text())
    # an emptied `types` is named by the first variable that needs one
    holds(original, 4, lambda doc: isinstance(load_layout(_written(tmp_path / "l.json", doc)),
                                               Layout) or pytest.fail("not a layout"),
          "storage[", "nested deeper")


# ---- checks.toml ---------------------------------------------------------------------------


EXAMPLE = REPO_ROOT / "examples" / "devnet-watch.toml"


def test_a_mutated_checks_file_is_checks_or_one_line_naming_the_field():
    from recompute.watch.config import parse_config

    original = tomllib.loads(EXAMPLE.read_text())

    def read(document):
        assert len(parse_config(document, EXAMPLE)) == len(document["check"])

    # a check is named by its name, or by its index when the name is what is wrong
    holds(original, 4, read, "check #", "[[check]]",
          values=[v for v in JUNK if v is not None])  # TOML has no null


@pytest.mark.parametrize("line", [
    'layout = "' + "x" * 5000 + '"',
    'layout = "a\\u0000b.json"',
    'params = { subject = [1, [2]] }',
    "since = 1e400",
])
def test_a_checks_file_with_an_odd_value_exits_64(capsys, tmp_path, line):
    path = tmp_path / "checks.toml"
    path.write_text(f'[[check]]\nname = "x"\nrecipe = "amm/layer-status"\n'
                    f'address = "0x5FbDB2315678afecb367f032d93F642f64180aa3"\n{line}\n')
    with pytest.raises(SystemExit) as done:
        main(["watch", "--rpc", "http://127.0.0.1:9", "--config", str(path)])
    err = capsys.readouterr().err
    assert done.value.code == 64 and len(err.strip().splitlines()) == 1, err


# ---- devnet manifests ----------------------------------------------------------------------


MANIFEST = {
    "format": "recompute-devnet/1", "rpc": "http://127.0.0.1:8545", "chain_id": 31337,
    "genesis_timestamp": 1762700000, "port": 8545, "state_dir": "/tmp/x",
    "accounts": ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"],
    "contracts": {"AgentMeditationRegistry": "0x5FbDB2315678afecb367f032d93F642f64180aa3"},
    "moments": {"amm.enrolled": {"number": 6, "hash": "0x" + "ab" * 32, "timestamp": 1,
                                 "about": {"recipe": "amm/layer-status", "text": "t",
                                           "verdict": "VERIFIED-GOOD"}}},
    "beacon": {"url": "http://127.0.0.1:5052", "trusted_root": "0x" + "cd" * 32},
    "amm": {"subjects": {}},
}


def test_a_mutated_manifest_is_a_manifest_or_one_line_naming_the_field(tmp_path):
    from recompute.devnet.lifecycle import read_manifest

    def read(document):
        _written(tmp_path / "manifest.json", document)
        assert isinstance(read_manifest(tmp_path), dict)

    holds(MANIFEST, 4, read, "nested deeper")


def test_a_manifest_whose_moments_are_a_list_is_one_line(tmp_path):
    from recompute.devnet.lifecycle import read_manifest

    (tmp_path / "manifest.json").write_text(json.dumps({**MANIFEST, "moments": ["x"]}))
    with pytest.raises(UsageError) as caught:
        read_manifest(tmp_path)
    assert str(caught.value) == (f'devnet manifest {tmp_path / "manifest.json"}: field '
                                 '"moments": expected an object, got a list')


# ---- light-client network files ------------------------------------------------------------


def test_a_mutated_network_file_is_a_network_or_one_line_naming_the_field(tmp_path):
    from recompute.lightclient import Network, load_network

    networks = json.loads((REPO_ROOT / "tests/fixtures/light-client/networks.json").read_text())
    holds(networks["mainnet"], 3,
          lambda doc: isinstance(load_network(_written(tmp_path / "net.json", doc)), Network)
          or pytest.fail("not a network"), "fork", "nested deeper")


def test_a_network_file_nested_deep_is_one_line(tmp_path):
    from recompute.lightclient import load_network

    path = tmp_path / "net.json"
    path.write_bytes(b"[" * 500_000)
    with pytest.raises(UsageError, match="nested deeper than 64"):
        load_network(path)


def test_an_lc_store_nested_deep_is_one_line(capsys, tmp_path):
    store = tmp_path / "lc.json"
    store.write_bytes(b"[" * 500_000)
    with pytest.raises(SystemExit) as done:
        main(["lightclient", "sync", "--beacon", "http://127.0.0.1:9", "--trusted-root",
              "0x" + "11" * 32, "--lc-store", str(store)])
    err = capsys.readouterr().err
    assert done.value.code == 64 and "nested deeper than 64" in err, err


def test_a_layout_name_that_cannot_be_a_file_is_one_line():
    from recompute.layout import load_layout

    for name in ("x" * 5000, "a\x00b"):
        with pytest.raises(UsageError, match="no bundled layout"):
            load_layout(name)
    with pytest.raises(UsageError, match="a\x00b.json"):  # one line, whatever it says
        load_layout(Path("a\x00b.json"))




@pytest.mark.parametrize("value,got", [
    (10**5000, "got an integer of 16610 bits"), ("a\nb", "got 'a\\nb'"), (["x"], "got a list"),
    (None, "got null"), ({"k": 1}, "got an object"), (1.5, "got 1.5"),
], ids=["huge", "newline", "list", "null", "object", "float"])
def test_a_wrong_value_is_described_on_one_line(value, got):
    from recompute.core.schema import Integer, Record, check

    with pytest.raises(UsageError) as caught:
        check({"n": value}, Record({"n": Integer()}), "f.json")
    assert str(caught.value) == f'f.json: field "n": expected an integer from 0 to 2**64 - 1, {got}'
