"""Decode LayoutZoo's storage at a pinned block and compare with its own getters.

Slots come from proven eth_getProof answers at the pinned block (conftest.storage_source); the
oracle is the contract's getter through ``eth_call`` at the same block. After the pin the
contract's state changes again (setup() runs twice), so reading the wrong block fails.
"""

from __future__ import annotations

import json

import pytest
from eth_hash.auto import keccak
from web3.exceptions import ContractLogicError

from recompute.core.errors import UsageError
from recompute.layout import IndexOutOfBounds, InvalidUtf8, ReadPlan, parse_descriptor

from .conftest import ALICE, BOB, solc_slot

ROOT = "0x" + keccak(b"root").hex()


def _from_abi(param: dict, value):
    """A getter's ABI-decoded value in the engine's representation (addresses lowercase,
    structs as dicts named by the ABI's component names, arrays as lists)."""
    t = param["type"]
    if t.endswith("]"):
        inner = dict(param, type=t[: t.rindex("[")])
        return [_from_abi(inner, v) for v in value]
    if t == "tuple":
        return {c["name"]: _from_abi(c, v) for c, v in zip(param["components"], value,
                                                            strict=True)}
    if t == "address":
        return value.lower()
    if t == "bytes" or t.startswith("bytes"):
        return bytes(value)
    return value


class Oracle:
    def __init__(self, zoo):
        self.zoo = zoo
        self.abi = {e["name"]: e for e in zoo.contract.abi if e.get("type") == "function"}

    def __call__(self, name: str, *args):
        raw = self.zoo.contract.functions[name](*args).call(block_identifier=self.zoo.block)
        outputs = self.abi[name]["outputs"]
        if len(outputs) == 1:
            return _from_abi(outputs[0], raw)
        return {o["name"]: _from_abi(o, v) for o, v in zip(outputs, raw, strict=True)}


def _u(value: int, bits: int) -> bytes:
    return (value % (1 << bits)).to_bytes(bits // 8, "big")


# (path, expected value computed from getters through eth_call at the pinned block)
CASES = [
    # value types, packed into shared slots
    ("baseSmall", lambda o: o("baseSmall")),
    ("baseFlag", lambda o: o("baseFlag")),
    ("baseOwner", lambda o: o("baseOwner")),
    ("baseMid", lambda o: o("baseMid")),
    ("neg8", lambda o: o("neg8")),
    ("neg128", lambda o: o("neg128")),
    ("u64", lambda o: o("u64")),
    ("flag", lambda o: o("flag")),
    ("phase", lambda o: o("phase")),
    ("sel4", lambda o: o("sel4")),
    ("owner", lambda o: o("owner")),
    ("b32", lambda o: o("b32")),
    ("b20", lambda o: o("b20")),
    ("zooRef", lambda o: o("zooRef")),
    # external function: 24 bytes = address ‖ selector (fnParts returns both)
    ("fnVar", lambda o: bytes.fromhex(_fn_parts(o)[0][2:]) + _fn_parts(o)[1]),
    ("big", lambda o: o("big")),
    ("price", lambda o: _u(o("price"), 64)),  # UDVT without "underlying": raw bytes
    ("u128Max", lambda o: o("u128Max")),
    # bytes and string, short and long form
    ("shortStr", lambda o: o("shortStr")),
    ("str31", lambda o: o("str31")),
    ("str32", lambda o: o("str32")),
    ("longStr", lambda o: o("longStr")),
    ("emptyStr", lambda o: o("emptyStr")),
    ("shortBytes", lambda o: o("shortBytes")),
    ("longBytes", lambda o: o("longBytes")),
    ("badUtf8", lambda o: o("badUtf8Bytes")),
    ("longStr.length", lambda o: len(o("longStr").encode())),
    ("str31.length", lambda o: len(o("str31").encode())),
    ("str32.length", lambda o: len(o("str32").encode())),
    ("longBytes.length", lambda o: len(o("longBytes"))),
    # static arrays, packed and nested
    ("smallArr", lambda o: o("getSmallArr")),
    ("smallArr[3]", lambda o: o("getSmallArr")[3]),
    ("u64Arr", lambda o: o("getU64Arr")),
    ("u64Arr[5]", lambda o: o("getU64Arr")[5]),
    ("grid", lambda o: o("getGrid")),
    ("grid[1][2]", lambda o: o("getGrid")[1][2]),
    ("packedPair", lambda o: o("getPackedPair")),
    ("packedPair[1].b", lambda o: o("getPackedPair")[1]["b"]),
    ("selectors", lambda o: o("getSelectors")),
    ("selectors[8]", lambda o: o("getSelectors")[8]),
    # dynamic arrays
    ("nums", lambda o: o("getNums")),
    ("nums[1]", lambda o: o("getNums")[1]),
    ("nums.length", lambda o: len(o("getNums"))),
    ("bytesLike", lambda o: o("getBytesLike")),
    ("bytesLike[33]", lambda o: o("getBytesLike")[33]),
    ("names", lambda o: o("getNames")),
    ("names[1]", lambda o: o("getNames")[1]),
    ("jagged", lambda o: o("getJagged")),
    ("jagged[1]", lambda o: o("getJagged")[1]),
    ("jagged[2][8]", lambda o: o("getJagged")[2][8]),
    ("packedList", lambda o: o("getPackedList")),
    ("packedList[2].d", lambda o: o("getPackedList")[2]["d"]),
    ("signedList", lambda o: o("getSignedList")),
    ("signedList[2]", lambda o: o("getSignedList")[2]),
    # mappings, one per key kind
    (f"balances[{ALICE}]", lambda o: o("balances", ALICE)),
    (f"balances[{BOB}]", lambda o: o("balances", BOB)),
    ("byUint[42]", lambda o: o("byUint", 42)),
    ("byUint[0x2a]", lambda o: o("byUint", 42)),
    ("byInt8[-128]", lambda o: o("byInt8", -128)),
    ("byInt8[7]", lambda o: o("byInt8", 7)),
    ("byInt128[-2]", lambda o: o("byInt128", -2)),
    (f"byB32[{ROOT}]", lambda o: o("byB32", bytes.fromhex(ROOT[2:]))),
    ("byB4[0xcafebabe]", lambda o: o("byB4", bytes.fromhex("cafebabe"))),
    ("byBool[true]", lambda o: o("byBool", True)),
    ("byBool[false]", lambda o: o("byBool", False)),
    ('byString["hello"]', lambda o: o("byString", "hello")),
    ('byString[""]', lambda o: o("byString", "")),
    ('byString["a string key that is longer than thirty-two bytes"]',
     lambda o: o("byString", "a string key that is longer than thirty-two bytes")),
    ("byBytes[0xbeef]", lambda o: o("byBytes", bytes.fromhex("beef"))),
    ("byBytes[0x]", lambda o: o("byBytes", b"")),
    ("byPhase[3]", lambda o: o("byPhase", 3)),
    ("byU16[65535]", lambda o: o("byU16", 65535)),
    # nested mappings and chains
    (f"allowance[{ALICE}][3]", lambda o: o("allowance", ALICE, 3)),
    (f"allowance[{BOB}][{(1 << 256) - 1}]", lambda o: o("allowance", BOB, (1 << 256) - 1)),
    (f"spentRoot[{ROOT}][2026]", lambda o: o("spentRoot", bytes.fromhex(ROOT[2:]), 2026)),
    (f"checkpoints[{ALICE}][2]", lambda o: o("checkpoints", ALICE, 2)),
    (f"checkpoints[{ALICE}][2].lastCompletedAt",
     lambda o: o("checkpoints", ALICE, 2)["lastCompletedAt"]),
    (f"checkpoints[{ALICE}][3].delta", lambda o: o("checkpoints", ALICE, 3)["delta"]),
    (f"packedLists[{BOB}][1]", lambda o: o("packedLists", BOB, 1)),
    (f"packedLists[{BOB}].length", lambda o: o("packedListsLength", BOB)),
    ("swarms[7].roster", lambda o: o("swarmRoster", 7)),
    ("swarms[7].history", lambda o: o("swarmHistory", 7)),
    ("swarms[7].name", lambda o: _swarm_head(o)[2]),
    ("swarms[7].phase", lambda o: _swarm_head(o)[1]),
    (f"swarms[7].members[{ALICE}]", lambda o: o("swarmMember", 7, ALICE)),
    (f"swarms[7].members[{BOB}].note", lambda o: o("swarmMember", 7, BOB)["note"]),
    (f"swarms[7].members[{ALICE}].scores[2]", lambda o: o("swarmMember", 7, ALICE)["scores"][2]),
    (f"deep[1][{BOB}]", lambda o: o("deepItems", 1, BOB)),
    (f"deep[1][{BOB}][0].trio[2].y", lambda o: o("deepItems", 1, BOB)[0]["trio"][2]["y"]),
    ('tags["red"]', lambda o: o("tagsOf", "red")),
    ('tags["red"][1]', lambda o: o("tagsOf", "red")[1]),
    ("outer", lambda o: o("getOuter")),
    ("outer.blob", lambda o: o("getOuter")["blob"]),
]


def _fn_parts(o):
    raw = o.zoo.contract.functions.fnParts().call(block_identifier=o.zoo.block)
    return raw[0].lower(), bytes(raw[1])


def _swarm_head(o):
    return o.zoo.contract.functions.swarmHead(7).call(block_identifier=o.zoo.block)


@pytest.fixture(scope="module")
def read_together(zoo, zoo_layout):
    """Every case path in ONE plan; records each round's question."""
    plan = ReadPlan(zoo_layout, [p for p, _ in CASES])
    asked: list[set[int]] = []
    while slots := plan.next_round():
        asked.append(slots)
        plan.feed(zoo.source(slots))
    return {r.path: r for r in plan.results()}, asked


@pytest.mark.parametrize("path,expected", CASES, ids=[p[:60] for p, _ in CASES])
def test_value_matches_getter(zoo, read_together, path, expected):
    results, _ = read_together
    assert results[path].value == expected(Oracle(zoo))


def test_rounds_ask_each_slot_once(read_together):
    _, asked = read_together
    # 1: every statically known slot and every length; 2: elements of whole dynamic arrays
    # and data of long strings found in round 1; 3: long strings inside those elements.
    assert len(asked) == 3
    seen: set[int] = set()
    for slots in asked:
        assert not slots & seen
        seen |= slots


def test_invalid_utf8_string_is_flagged(read_together):
    results, _ = read_together
    value = results["badUtf8"].value
    assert isinstance(value, InvalidUtf8)
    assert results["badUtf8"].to_json()["value"] == {"hex": "0x41ff42c3", "invalid_utf8": True}


def test_json_forms(zoo, read_together):
    results, _ = read_together
    o = Oracle(zoo)
    assert results["neg128"].to_json()["value"] == str(o("neg128"))
    assert results["flag"].to_json()["value"] is True
    assert results["baseOwner"].to_json()["value"] == o("baseOwner")  # lowercase 0x-hex
    assert results["sel4"].to_json()["value"] == "0xdeadbeef"
    assert results["phase"].to_json()["value"] == "2"
    packed = results["packedPair"].to_json()["value"]
    assert packed[0]["b"] == "-300" and packed[1]["c"] is False
    # the slots of a packed value: just its own slot, as 32-byte hex
    assert results["neg8"].to_json()["slots"] == ["0x" + "00" * 32]
    json.dumps([r.to_json() for r in results.values()])  # everything is JSON-serialisable


def test_udvt_with_stated_underlying_decodes_signed(zoo, zoo_layout):
    doc = json.loads(zoo_layout.dumps())
    udvt = next(k for k in doc["types"] if k.startswith("t_userDefinedValueType(LayoutZooPrice)"))
    doc["types"][udvt]["underlying"] = "t_int64"
    layout = parse_descriptor(doc, "edited")
    plan = ReadPlan(layout, ["price", "byPrice[-7]"])
    while slots := plan.next_round():
        plan.feed(zoo.source(slots))
    price, by_price = plan.results()
    o = Oracle(zoo)
    assert price.value == o("price") == -42
    assert by_price.value == o("byPrice", -7) == 77


def test_udvt_key_without_underlying_is_refused(zoo_layout):
    with pytest.raises(UsageError, match=r'add "underlying"'):
        ReadPlan(zoo_layout, ["byPrice[-7]"])


def _read(zoo, layout, paths):
    plan = ReadPlan(layout, paths)
    while slots := plan.next_round():
        plan.feed(zoo.source(slots))
    return plan.results()


def test_index_at_proven_length_is_refused_like_the_getter(zoo, zoo_layout):
    o = Oracle(zoo)
    length = len(o("getNums"))
    with pytest.raises(IndexOutOfBounds) as err:
        _read(zoo, zoo_layout, [f"nums[{length}]"])
    assert err.value.length == length == 3
    assert "proven length of nums is 3" in str(err.value)
    # the public getter of an empty per-key array reverts; the engine refuses with length 0
    with pytest.raises(ContractLogicError):
        zoo.contract.functions.packedLists(ALICE, 0).call(block_identifier=zoo.block)
    with pytest.raises(IndexOutOfBounds) as err:
        _read(zoo, zoo_layout, [f"packedLists[{ALICE}][0]"])
    assert err.value.length == 0


def test_pinned_block_differs_from_latest(zoo, zoo_layout):
    # setup() ran again after the pin: the latest nums has 6 elements, the pinned one 3.
    latest = zoo.contract.functions.getNums().call()
    assert len(latest) == 6
    (res,) = _read(zoo, zoo_layout, ["nums.length"])
    assert res.value == 3


def test_hand_computed_slots_hold_the_getter_values(zoo):
    """Independent slot arithmetic (keccak of hand-built preimages) against the chain."""
    o = Oracle(zoo)

    def word(slot: int) -> int:
        return zoo.source([slot])[slot]

    # balances[ALICE]: keccak256(pad32(alice) ‖ pad32(slot))
    slot = int.from_bytes(keccak(bytes.fromhex(ALICE[2:]).rjust(32, b"\0")
                                 + solc_slot("balances").to_bytes(32, "big")), "big")
    assert word(slot) == o("balances", ALICE) == 1000
    # nums[1]: keccak256(pad32(slot)) + 1
    data = int.from_bytes(keccak(solc_slot("nums").to_bytes(32, "big")), "big")
    assert word(data + 1) == o("getNums")[1]
    # byInt8[-128]: the key sign-extended to 32 bytes
    key = ((-128) % (1 << 256)).to_bytes(32, "big")
    slot = int.from_bytes(keccak(key + solc_slot("byInt8").to_bytes(32, "big")), "big")
    assert word(slot) == (-1) % (1 << 256)
    # longStr: word = 2·len + 1, data at keccak256(slot)
    n = len(o("longStr").encode())
    assert word(solc_slot("longStr")) == 2 * n + 1
    first = int.from_bytes(keccak(solc_slot("longStr").to_bytes(32, "big")), "big")
    assert word(first).to_bytes(32, "big") == o("longStr").encode()[:32]
    # str31 is short: data left-aligned, 2·31 in the lowest byte
    w = word(solc_slot("str31")).to_bytes(32, "big")
    assert w[:31] == o("str31").encode() and w[31] == 62
