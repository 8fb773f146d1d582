"""The path parser and the resolver's user errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recompute.core.errors import UsageError
from recompute.layout import ReadPlan, parse_path, resolve
from recompute.layout.paths import IndexStep, MemberStep

from .conftest import ALICE


def test_parse_chained_path():
    p = parse_path('swarms[7].members[0xAbC0000000000000000000000000000000000001].note')
    assert p.root == "swarms"
    kinds = [type(s) for s in p.steps]
    assert kinds == [IndexStep, MemberStep, IndexStep, MemberStep]
    assert p.steps[0].key.number == 7
    assert p.steps[2].key.digits == "abc0000000000000000000000000000000000001"
    assert p.steps[3].name == "note"


def test_parse_keys():
    p = parse_path('m[-128][0x][ "a \\"q\\" \\\\ é" ][true][false][00]')
    keys = [s.key for s in p.steps]
    assert (keys[0].kind, keys[0].number) == ("int", -128)
    assert (keys[1].kind, keys[1].digits, keys[1].number) == ("hex", "", None)
    assert keys[2].data == 'a "q" \\ é'.encode()
    assert keys[3].flag is True and keys[4].flag is False
    assert keys[5].number == 0


ERRORS = [
    ("", r"empty path"),
    ("1abc", r"expected a variable name, found '1' at column 1"),
    ("a.", r"expected a member name after '.', found the end at column 3"),
    ("a..b", r"expected a member name after '.', found '\.' at column 3"),
    ("a[", r"expected a key .* found the end at column 3"),
    ("a[1", r"expected '\]', found the end at column 4"),
    ("a[1 2]", r"expected '\]', found '2' at column 5"),
    ("a[-]", r"expected digits after '-' at column 4"),
    ("a[foo]", r"'foo' is not a key .* at column 3"),
    ('a["x]', r"unterminated string at column 3"),
    ('a["\\n"]', r"only \\\" and \\\\ escapes are allowed in strings at column 4"),
    ("a b", r"expected '\.' or '\[', found ' ' at column 2"),
    ("a]", r"expected '\.' or '\[', found '\]' at column 2"),
]


@pytest.mark.parametrize("text,message", ERRORS)
def test_parse_errors_point_at_the_column(text, message):
    with pytest.raises(UsageError, match=message):
        parse_path(text)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=40))
def test_parser_only_ever_raises_usage_errors(text):
    try:
        p = parse_path(text)
    except UsageError as exc:
        assert "\n" not in str(exc)
        return
    assert p.prefix(len(p.steps)).replace(" ", "") == text.replace(" ", "").replace("\t", "")


_ident = st.from_regex(r"[A-Za-z_$][A-Za-z0-9_$]{0,8}", fullmatch=True)
_key = st.one_of(
    st.integers(-(2**255), 2**256).map(str),
    st.binary(max_size=33).map(lambda b: "0x" + b.hex()),
    st.text(max_size=6).map(lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.sampled_from(["true", "false"]),
)
_step = st.one_of(_ident.map(lambda s: "." + s), _key.map(lambda k: f"[{k}]"))


@settings(max_examples=300, deadline=None)
@given(_ident, st.lists(_step, max_size=5))
def test_valid_paths_parse_back_to_their_text(root, steps):
    text = root + "".join(steps)
    try:
        p = parse_path(text)
    except UsageError as exc:  # only lone surrogates in strings are not UTF-8
        assert "UTF-8" in str(exc)
        return
    assert p.root == root
    assert p.prefix(len(p.steps)) == text
    assert len(p.steps) == len(steps)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='abcdefgmnorsuy[]."0x123-\\ lengthbalances', max_size=30))
def test_resolver_only_ever_raises_usage_errors(zoo_layout, text):
    try:
        resolve(zoo_layout, text)
    except UsageError:
        pass


RESOLVE_ERRORS = [
    ("nosuch", r"unknown variable 'nosuch' in .*LayoutZoo \(variables: baseSmall, baseFlag"),
    ("outer.nope", r"struct LayoutZoo.Outer has no member 'nope' at column 6 "
                   r"\(members: inner, tag, trio, blob\)"),
    ("neg8.x", r"neg8 is a int8 and has no member 'x'"),
    ("smallArr.length", r"has no member 'length' .*only dynamic arrays, bytes and string"),
    ("nums.length.x", r"nothing can follow \.length"),
    ("balances.x", r"balances is a mapping; index it with \[key\]"),
    ("neg8[0]", r"neg8 is a int8 and cannot be indexed"),
    ("longStr[0]", r"longStr is a string and cannot be indexed"),
    ("smallArr[5]", r"index 5 at column 10 is out of bounds for uint8\[5\] \(length 5\)"),
    ("grid[1][3]", r"index 3 .* out of bounds for uint16\[3\] \(length 3\)"),
    ("nums[-1]", r"index -1 at column 6 into uint256\[\] must be a non-negative number"),
    ('nums["a"]', r"must be a non-negative number"),
    (f"nums[{2**256}]", r"exceeds 2\*\*256"),
    ("balances[0x1234]", r"address key must be 0x followed by 40 hex digits"),
    ("balances[1]", r"address key must be 0x followed by 40 hex digits"),
    ("byUint[-1]", r"key -1 at column 8: out of range for uint256"),
    (f"byUint[{2**256}]", r"out of range for uint256"),
    ('byUint["1"]', r"a uint256 key must be a number"),
    ("byInt8[128]", r"key 128 at column 8: out of range for int8"),
    ("byInt8[-129]", r"out of range for int8"),
    ("byU16[65536]", r"out of range for uint16"),
    ("byB4[0xcafe]", r"bytes4 key must be 0x followed by 8 hex digits"),
    ('byB4["toolong"]', r"or a string of at most 4 bytes"),
    ("byBool[2]", r"a bool key must be true or false"),
    ("byString[0x41]", r'a string key must be quoted \("\.\.\."\)'),
    ("byBytes[0x123]", r"a bytes key must be 0x-hex with an even number of digits"),
    ("byPhase[256]", r"out of range for enum LayoutZoo.Phase"),
    ("byPrice[-7]", r'user-defined value type .* add "underlying"'),
    (f"byContract[{ALICE}1]", r"must be 0x followed by 40 hex digits"),
]


@pytest.mark.parametrize("path,message", RESOLVE_ERRORS)
def test_resolve_errors_are_specific(zoo_layout, path, message):
    with pytest.raises(UsageError, match=message) as err:
        resolve(zoo_layout, path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("path", ["balances", f"allowance[{ALICE}]", "swarms[7].members"])
def test_reading_a_mapping_without_a_key_is_refused(zoo_layout, path):
    with pytest.raises(UsageError, match=r"is a mapping .* name a key: path\[key\]"):
        ReadPlan(zoo_layout, ["neg8", path])
