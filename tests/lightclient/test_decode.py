"""The beacon-API decoders on junk: whatever a node sends, the only errors out of them are
Unverifiable (rpc-malformed) or UsageError, never a KeyError, TypeError, ValueError, ..."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompute.lightclient import (
    MAINNET,
    decode_bootstrap,
    decode_finality_update,
    decode_optimistic_update,
    decode_update,
    decode_updates,
    minimal_network,
)
from recompute.lightclient.failures import Unverifiable, UsageError
from recompute.sources.beacon import parse_bounded_json
from tests.lightclient.data import load, root

HELIOS = "helios-mainnet-capella"
DOCUMENTS = {
    "bootstrap": (decode_bootstrap, load(HELIOS, "bootstrap.json")),
    "update": (decode_update, load(HELIOS, "updates.json")[1]),
    "finality": (decode_finality_update, load(HELIOS, "finality.json")),
    "optimistic": (decode_optimistic_update, load(HELIOS, "optimistic.json")),
}
ELECTRA = ("spec-tests-minimal", "electra", "light_client_sync")
MINIMAL = minimal_network(load(*ELECTRA, "config.json"),
                          root(load(*ELECTRA, "meta.json")["genesis_validators_root"]))

junk = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(["0x", "0x00", "0x" + "ab" * 32, "0x" + "ab" * 48, "0x" + "ab" * 96,
                       "18446744073709551616", "1" * 21, "007", "-1", " 1", "0xZZ", "١٢"]),
    lambda children: st.lists(children, max_size=6)
    | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=20,
)


def paths(value, prefix=()):
    """Every path into a JSON document (dict keys and list indices)."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            yield from paths(item, (*prefix, index))


PATHS = {name: list(paths(document)) for name, (_, document) in DOCUMENTS.items()}


def decode_only_fails_cleanly(decode, document, network=MAINNET):
    try:
        decode(document, network)
    except (Unverifiable, UsageError) as error:
        assert "\n" not in str(error)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(DOCUMENTS)), data=st.data(), value=junk)
def test_junk_in_any_field(name, data, value):
    decode, original = DOCUMENTS[name]
    path = data.draw(st.sampled_from(PATHS[name]))
    document = copy.deepcopy(original)
    if not path:
        document = value
    else:
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    decode_only_fails_cleanly(decode, document)


@settings(max_examples=200, deadline=None)
@given(value=junk)
def test_junk_documents(value):
    for decode, _ in DOCUMENTS.values():
        decode_only_fails_cleanly(decode, value)
        decode_only_fails_cleanly(decode, {"version": "capella", "data": value})
        decode_only_fails_cleanly(decode, {"version": "electra", "data": value}, MINIMAL)
    try:
        decode_updates(value, MAINNET, 4)
    except Unverifiable:
        pass


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_junk_bytes_as_json(raw):
    try:
        parse_bounded_json(raw, "test")
    except Unverifiable as error:
        assert error.reason == "rpc-malformed"


def test_json_bounds():
    deep = b"[" * 40 + b"]" * 40
    for raw, message in ((deep, "nested deeper"), (b'{"a": 1, "a": 2}', "duplicate"),
                         (b"[NaN]", "NaN"), (b"\xff", "not JSON"), (b"", "not JSON")):
        try:
            parse_bounded_json(raw, "where")
        except Unverifiable as error:
            assert error.reason == "rpc-malformed" and message in error.detail
        else:
            raise AssertionError(raw)
    # brackets inside strings do not count; escaped quotes do not end a string
    assert parse_bounded_json(b'{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"[[["}', "w") == {
        "a": '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["[[['}


def test_the_real_documents_decode():
    for decode, document in DOCUMENTS.values():
        decode(document, MAINNET)
    assert len(decode_updates(load(HELIOS, "updates.json"), MAINNET, 6)) == 6
    try:
        decode_updates(load(HELIOS, "updates.json"), MAINNET, 5)
    except Unverifiable as error:
        assert "asked for at most 5" in error.detail
    else:
        raise AssertionError("more updates than asked for were accepted")
