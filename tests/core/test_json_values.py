"""The values bound of outside JSON (recompute.core.boundedjson.value_count, MAX_VALUES): a
document with more values than the bound fails before a single value is built (the 64 MiB
``[{},{},…]`` answer, 22 million dicts, was parsed whole before its ids were checked: 1.75 GB
for one answer), never below the count a parser would build. Expected counts come from the
parsed structure (json.loads), independently of the byte scan; and the node-answer budget
(recompute.sources.answer_budget) that makes concurrent large answers take turns."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompute.core import boundedjson
from recompute.core.boundedjson import MAX_VALUES, loads, value_count
from recompute.core.errors import Unverifiable
from recompute.sources.answer_budget import SMALL_BYTES, SMALL_VALUES, AnswerShare
from recompute.sources.live import LiveSource
from tests.rpcproxy import RpcProxy

# Strings full of what the scan must see through: commas, brackets, quotes, escapes.
tricky = st.text(alphabet=st.sampled_from(',[]{}"\\ab\u00e9'), max_size=10)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky, inner, max_size=4),
    max_leaves=30,
)


def built(value) -> int:
    """The values json.loads builds: this one and every one inside it (keys not counted)."""
    if isinstance(value, list):
        return 1 + sum(map(built, value))
    if isinstance(value, dict):
        return 1 + sum(map(built, value.values()))
    return 1


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from([0, 1, 10**9]))
def test_the_count_is_never_below_what_a_parser_builds(value, limit):
    text = json.dumps(value, ensure_ascii=False)
    assert value_count(text, limit) >= built(value)
    assert value_count(text.encode(), limit) >= built(value)


def empties(value) -> int:
    """Empty lists and objects: the scan counts each one value more than it holds."""
    inner = value if isinstance(value, list) else (
        list(value.values()) if isinstance(value, dict) else None)
    if inner is None:
        return 0
    return (not inner) + sum(map(empties, inner))


@settings(max_examples=300, deadline=None)
@given(values)
def test_the_count_is_exact_but_for_empty_containers(value):
    text = json.dumps(value)
    assert value_count(text, 0) == built(value) + empties(value)


def test_commas_and_brackets_in_strings_are_not_counted():
    text = json.dumps(["a,b,[{,", "\\\",,,", {"k,": "{,["}])
    assert value_count(text, 0) == 5  # the list, two strings, the object and its value
    assert loads(text, "x", ValueError, max_values=5) == json.loads(text)
    with pytest.raises(ValueError, match="more than 4 values"):
        loads(text, "x", ValueError, max_values=4)


class CountingJson:
    """``json`` as recompute.core.boundedjson sees it, counting what it parses."""

    JSONDecodeError = json.JSONDecodeError

    def __init__(self) -> None:
        self.parsed: list[int] = []

    def loads(self, data, **options):
        self.parsed.append(len(data))
        return json.loads(data, **options)


def test_a_million_objects_under_the_byte_cap_are_never_built(monkeypatch):
    bomb = b"[" + b",".join([b"{}"] * (MAX_VALUES // 2 + 1)) + b"]"  # 3 MB, 1,000,001 dicts
    spy = CountingJson()
    monkeypatch.setattr(boundedjson, "json", spy)
    with pytest.raises(ValueError, match="JSON of more than 2,000,000 values"):
        loads(bomb, "the answer", ValueError)
    assert spy.parsed == []
    assert loads(b"[{}, {}]", "x", ValueError) == [{}, {}]
    assert spy.parsed == [8]


def test_a_node_answering_a_batch_with_a_million_objects_is_rpc_malformed_unparsed(
        module_anvil, monkeypatch):
    """The attack on the wire: after the endpoint took a batch, its next batch answer is
    ``[{},{},…]`` over the bound (ids not checked yet: nothing of it may be built)."""
    spy = CountingJson()
    monkeypatch.setattr(boundedjson, "json", spy)
    with RpcProxy(module_anvil.url, batch_rewrite=lambda replies: [{}] * (MAX_VALUES // 2 + 1)
                  ) as proxy:
        source = LiveSource(proxy.url)
        source.client.batches = True
        with pytest.raises(Unverifiable) as raised:
            source.blocks_by_number([0, 1])
    assert raised.value.reason == "rpc-malformed"
    assert "JSON of more than 2,000,000 values" in raised.value.detail
    assert spy.parsed == []  # never parsed


def test_large_answers_take_turns_small_ones_do_not():
    large = b"[" + b",".join([b"0"] * SMALL_VALUES) + b"]"
    assert len(large) < SMALL_BYTES  # large by its values, not its bytes
    small = b"[" + b",".join([b"0"] * (SMALL_VALUES - 2)) + b"]"
    holding, done = threading.Event(), threading.Event()

    def first():
        with AnswerShare(1.0) as share:
            share.parse(large)
            holding.set()
            done.wait(30)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert holding.wait(30)
        with AnswerShare(0.05) as other:
            other.parse(small)  # small: at once, beside the large one
            assert not other.large
            with pytest.raises(TimeoutError):  # large: waits for its turn, bounded
                other.parse(large)
            with pytest.raises(TimeoutError):  # large by bytes, while being read
                other.read(SMALL_BYTES + 1, 0.0)
    finally:
        done.set()
        thread.join(30)
    with AnswerShare(0.05) as after:  # the turn was given back
        after.parse(large)
        assert after.large


def _big_locals(error: BaseException) -> list[str]:
    """Locals over 1 MB of bytes kept by ``error``'s traceback frames (and its context's)."""
    found = []
    while error is not None:
        tb = error.__traceback__
        while tb is not None:
            found += [f"{tb.tb_frame.f_code.co_name}: {name}"
                      for name, value in tb.tb_frame.f_locals.items()
                      if isinstance(value, bytes | bytearray) and len(value) > 1 << 20]
            tb = tb.tb_next
        error = error.__context__
    return found


@pytest.mark.parametrize("batched", [True, False])
def test_a_refused_answer_is_not_kept_alive_by_its_error(module_anvil, batched):
    """A kept error (an outcome, a line's reason) must not keep the answer it refused: its
    traceback's frames hold their locals, and a run keeps many errors (64 MiB each)."""
    bomb = [{}] * (MAX_VALUES // 2 + 1)
    with RpcProxy(module_anvil.url, lambda method, params, reply: bomb,
                  batch_rewrite=lambda replies: bomb) as proxy:
        source = LiveSource(proxy.url)
        source.client.batches = True
        with pytest.raises(Unverifiable) as raised:
            if batched:
                source.blocks_by_number([0, 1])
            else:
                source.block_number()
    assert raised.value.reason == "rpc-malformed"
    assert _big_locals(raised.value) == []
