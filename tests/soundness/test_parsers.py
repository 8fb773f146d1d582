"""Crashes: hypothesis feeds every parser of outside input (node answers, CLI values,
checks.toml) and asserts the one clean failure each promises, never a traceback. Node answers
are the real go-ethereum ones of the bundled execution-apis chain with any part replaced by any
JSON; CLI values run through ``recompute.cli.main`` in-process."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recompute.cli import main
from recompute.core.anchor import anchor_block
from recompute.core.clock import Clock
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.header import Header
from recompute.core.prover import verify_account_proof
from recompute.core.receipts import verify_receipts
from recompute.sources.fixture_node import FixtureNode
from recompute.sources.live import LiveSource
from recompute.watch.config import load_config
from tests.core.fixturedata import CONTRACT, FIXTURES, exchanges

# the recorded chain (execution-apis fixtures) is judged as of its head block's time
# (block 54, timestamp 540): recorded data names its clock (docs/lightclient.md §Clock)
RECORDED = Clock(at=540)

PROPERTY = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
CLI = settings(max_examples=50, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=20)
    | st.sampled_from(["0x", "0x00", "0x80", "0xc0", "0x" + "ab" * 32, "0x1", "latest"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20)


@pytest.fixture(scope="module")
def real():
    with FixtureNode(FIXTURES) as node:
        block = anchor_block([LiveSource(node.url)], block="latest", clock=RECORDED)
    proof = next(r["result"] for n, _, r in exchanges("eth_getProof")
                 if n == "get-account-proof-with-storage.io")
    receipts = next(r["result"] for n, _, r in exchanges("eth_getBlockReceipts")
                    if n == "get-block-receipts-latest.io")
    header = next(r["result"] for n, _, r in exchanges("eth_getBlockByNumber")
                  if isinstance(r.get("result"), dict))
    return block, proof, receipts, header


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _replace(value, path, new):
    if not path:
        return new
    out = copy.deepcopy(value)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return out


@st.composite
def mutated(draw, original):
    paths = list(_paths(original))
    return _replace(original, draw(st.sampled_from(paths)), draw(JSON))


@PROPERTY
@given(data=st.data())
def test_any_proof_answer_verifies_or_is_unverifiable(real, data):
    block, proof, _, _ = real
    answer = data.draw(mutated(proof))
    try:
        verify_account_proof(block, bytes.fromhex(CONTRACT[2:]), [0], answer)
    except Unverifiable:
        pass


def test_a_proof_node_that_is_a_list_or_object_is_invalid(real):
    block, proof, _, _ = real
    for node in ([], {}, ["0x00"], {"a": 1}):
        answer = _replace(proof, ("accountProof", 0), node)
        with pytest.raises(Unverifiable) as caught:
            verify_account_proof(block, bytes.fromhex(CONTRACT[2:]), [0], answer)
        assert caught.value.reason == "invalid-proof"


@PROPERTY
@given(data=st.data())
def test_any_receipts_answer_verifies_or_is_unverifiable(real, data):
    block, _, receipts, _ = real
    try:
        verify_receipts(block, data.draw(mutated(receipts)))
    except Unverifiable:
        pass


@PROPERTY
@given(data=st.data())
def test_any_header_answer_parses_or_is_unverifiable(real, data):
    _, _, _, header = real
    try:
        Header.from_rpc(data.draw(mutated(header)))
    except Unverifiable:
        pass


# ---- CLI values ------------------------------------------------------------------------------

DEAD = "http://127.0.0.1:9"  # nothing listens there: a valid command ends rpc-unreachable (2)
ODD = st.one_of(st.text(max_size=30), st.sampled_from([
    "²", "٣", "9" * 5000, "0x" + "f" * 5000, "-1", "0x", "http://[::1", "latest", "1e3", " 7 ",
    "0X10", "\x00", "=", "a=b=c"]))


def _exit(capsys, args) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(args)
    return done.value.code, capsys.readouterr().err


@pytest.mark.parametrize("args", [
    ["proof", "--rpc", DEAD, "--block", "1", "--address", "0x" + "11" * 20, "--slot", "²"],
    ["proof", "--rpc", DEAD, "--block", "٣", "--address", "0x" + "11" * 20],
    ["proof", "--rpc", DEAD, "--block", "1", "--address", "0x" + "11" * 20, "--slot", "9" * 5000],
    ["proof", "--rpc", "http://[::1", "--block", "1", "--address", "0x" + "11" * 20],
    ["read", "--rpc", DEAD, "--block", "1", "--address", "0x" + "11" * 20, "--layout",
     "meter-aggregate-budget", f"cap[{'9' * 5000}]"],
])
def test_the_crashes_of_the_issue_are_usage_errors(capsys, args):
    code, err = _exit(capsys, args)
    assert code == 64, err
    assert err.count("\n") == 1 and "Traceback" not in err


@CLI
@given(option=st.sampled_from(["--slot", "--block", "--address", "--rpc", "--block-hash",
                               "--quorum", "--checkpoint", "--expect"]), value=ODD)
def test_any_value_of_a_proof_option_is_a_clean_exit(capsys, option, value):
    base = {"--rpc": DEAD, "--block": "1", "--address": "0x" + "11" * 20}
    base[option] = value
    args = ["proof"] + [x for pair in base.items() for x in pair]
    code, err = _exit(capsys, args)
    assert code in (2, 64), err
    assert "Traceback" not in err and "internal error" not in err


@CLI
@given(key=st.sampled_from(["subject", "layer", "nothing"]), value=ODD,
       expect=st.sampled_from(["status", "deadline", "never_completed", "x"]), wanted=ODD)
def test_any_param_or_expect_of_step_is_a_clean_exit(capsys, key, value, expect, wanted):
    args = ["step", "amm/layer-status", "--rpc", DEAD, "--block", "1", "--address",
            "0x" + "11" * 20, "--param", f"{key}={value}", "--expect", f"{expect}={wanted}"]
    code, err = _exit(capsys, args)
    assert code in (2, 64), err
    assert "Traceback" not in err and "internal error" not in err


# ---- checks.toml -----------------------------------------------------------------------------

TOML_PIECES = st.sampled_from([
    "[[check]]\n", 'name = "a"\n', 'recipe = "8312/cap-conservation"\n',
    'address = "0x' + "11" * 20 + '"\n', "params = { shape = \"cap:1\", key = \"0x01\" }\n",
    "expect = { within_cap = 1 }\n", "since = -1\n", "a = [[[[[[[[1]]]]]]]]\n",
    "recipes = 7\n", "healthy = \"MAYBE\"\n", "x = 1" + "0" * 5000 + "\n", "[check]\n",
    "layout = 3\n"])


@CLI
@given(st.one_of(st.binary(max_size=200),
                 st.lists(TOML_PIECES, max_size=8).map(lambda p: "".join(p).encode())))
def test_any_checks_toml_loads_or_is_one_usage_error(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("toml") / "checks.toml"
    path.write_bytes(content)
    try:
        load_config(path)
    except UsageError as exc:
        assert "\n" not in str(exc)


def test_a_binary_or_deep_checks_toml_is_one_usage_error(tmp_path):
    for content in (bytes(range(256)), b"a = " + b"[" * 100_000):
        path = tmp_path / "checks.toml"
        path.write_bytes(content)
        with pytest.raises(UsageError):
            load_config(path)


@pytest.mark.parametrize("transactions", [[1], [{"nohash": 1}], [["0x00"]], ["0x12"]])
def test_a_blocks_transactions_that_are_not_hashes_are_rpc_malformed(transactions):
    """eth_getBlockReceipts refused, the fallback reads the block's transactions: a node that
    lists something else than hashes (or objects with one) is malformed, not a crash."""
    from recompute.core.receipts import prove_receipts

    class NoBlockReceipts(LiveSource):
        def block_receipts(self, block_hash):
            raise Unverifiable("rpc-error", "method not found")

        def block_by_hash(self, block_hash):
            block = super().block_by_hash(block_hash)
            return dict(block, transactions=transactions) if block else block

    with FixtureNode(FIXTURES) as node:
        block = anchor_block([NoBlockReceipts(node.url)], block="latest", clock=RECORDED)
        with pytest.raises(Unverifiable) as caught:
            prove_receipts(block)
    assert caught.value.reason == "rpc-malformed"
