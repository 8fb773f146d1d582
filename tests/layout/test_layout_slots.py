"""Slot arithmetic against an independent computation: keccak of hand-built preimages.

Base slots are read straight from solc's storageLayout in the artifact (solc_slot); the
member offsets are worked out by hand from solc's packing rules and written as literals.
"""

from __future__ import annotations

import pytest
from eth_hash.auto import keccak

from recompute.layout import resolve

from .conftest import ALICE, BOB, solc_slot


def h(*parts: bytes) -> int:
    return int.from_bytes(keccak(b"".join(parts)), "big")


def pad(n: int) -> bytes:
    return (n % (1 << 256)).to_bytes(32, "big")


def addr(a: str) -> bytes:
    return bytes.fromhex(a[2:]).rjust(32, b"\0")


ROOT = keccak(b"root")


def cases():
    s = solc_slot
    sw = h(pad(7), pad(s("swarms")))          # swarms[7]
    alice_member = h(addr(ALICE), pad(sw + 1))  # .members (member slot 1) [ALICE]
    jag = h(pad(s("jagged")))
    return [
        # (path, slot, offset, size)
        (f"balances[{ALICE}]", h(addr(ALICE), pad(s("balances"))), 0, 32),
        (f"allowance[{ALICE}][3]", h(pad(3), pad(h(addr(ALICE), pad(s("allowance"))))), 0, 8),
        (f"spentRoot[0x{ROOT.hex()}][2026]",
         h(pad(2026), pad(h(ROOT, pad(s("spentRoot"))))), 0, 1),
        ("byInt8[-128]", h(b"\xff" * 31 + b"\x80", pad(s("byInt8"))), 0, 32),
        ("byInt128[-2]", h(b"\xff" * 31 + b"\xfe", pad(s("byInt128"))), 0, 32),
        ("byB4[0xcafebabe]", h(bytes.fromhex("cafebabe") + b"\0" * 28, pad(s("byB4"))), 0, 2),
        ('byB4["ab"]', h(b"ab" + b"\0" * 30, pad(s("byB4"))), 0, 2),
        ("byBool[true]", h(pad(1), pad(s("byBool"))), 0, 1),
        ('byString["hello"]', h(b"hello", pad(s("byString"))), 0, 32),
        ('byString[""]', h(pad(s("byString"))), 0, 32),
        ("byBytes[0xbeef]", h(b"\xbe\xef", pad(s("byBytes"))), 0, 32),
        ("byPhase[3]", h(pad(3), pad(s("byPhase"))), 0, 4),
        (f"byContract[{BOB}]", h(addr(BOB), pad(s("byContract"))), 0, 1),
        ("nums[1]", h(pad(s("nums"))) + 1, 0, 32),
        ("bytesLike[33]", h(pad(s("bytesLike"))) + 1, 1, 1),    # 32 uint8 per slot
        ("jagged[2][8]", h(pad(jag + 2)) + 1, 0, 4),             # 8 uint32 per slot
        ("signedList[1]", h(pad(s("signedList"))), 16, 16),      # 2 int128 per slot
        ("packedList[2].e", h(pad(s("packedList"))) + 2, 24, 8),  # a1 b2 c1 d20 e8
        ("u64Arr[5]", s("u64Arr") + 1, 8, 8),
        ("grid[1][2]", s("grid") + 1, 4, 2),
        ("selectors[8]", s("selectors") + 1, 0, 4),
        ("packedPair[1].d", s("packedPair") + 1, 4, 20),
        (f"checkpoints[{ALICE}][2].lastCompletedAt",
         h(addr(ALICE), pad(s("checkpoints"))) + 4, 6, 6),       # Checkpoint = 2 slots
        (f"checkpoints[{ALICE}][2].root", h(addr(ALICE), pad(s("checkpoints"))) + 5, 0, 32),
        ("swarms[7].phase", sw, 8, 1),
        ("swarms[7].roster[1]", h(pad(sw + 2)) + 1, 0, 20),
        ("swarms[7].history[1].delta", sw + 3 + 2, 12, 16),
        ("swarms[7].name", sw + 7, 0, 32),
        (f"swarms[7].members[{ALICE}].account", alice_member, 9, 20),  # status1 joinedAt8
        (f"swarms[7].members[{ALICE}].scores[2]", h(pad(alice_member + 2)) + 2, 0, 32),
        # Outer = inner(1 slot) tag(1) trio(3 slots: Inner is a struct) blob(1) = 6 slots
        (f"deep[1][{BOB}][1].trio[2].y",
         h(pad(h(addr(BOB), pad(h(pad(1), pad(s("deep"))))))) + 6 + 2 + 2, 4, 4),
        ('tags["red"][1]', h(pad(h(b"red", pad(s("tags")))) ) + 1, 0, 32),
        ("outer.blob", s("outer") + 5, 0, 32),
        ("longStr.length", s("longStr"), 0, 32),
    ]


@pytest.mark.parametrize("case", range(len(cases())))
def test_slot_offset_size(zoo_layout, case):
    path, slot, offset, size = cases()[case]
    loc = resolve(zoo_layout, path)
    assert (loc.slot, loc.offset, loc.size) == (slot % (1 << 256), offset, size), path


def test_mapping_step_carries_the_preimage(zoo_layout):
    loc = resolve(zoo_layout, 'byString["hello"]')
    step = next(s for s in loc.steps if s.op == "mapping")
    base = solc_slot("byString")
    assert step.data["preimage"] == "0x" + (b"hello" + pad(base)).hex()
    assert step.data["slot"] == f"0x{h(b'hello', pad(base)):064x}"
    assert "keccak256(key ‖ pad32(slot))" in step.text


def test_dynamic_index_is_bound_checked_at_read_time(zoo_layout):
    loc = resolve(zoo_layout, f"swarms[7].members[{ALICE}].scores[2]")
    sw = h(pad(7), pad(solc_slot("swarms")))
    member = h(addr(ALICE), pad(sw + 1))
    (check,) = loc.checks
    assert check.length_slot == member + 2 and check.index == 2
    assert [s.op for s in loc.steps] == ["variable", "mapping", "member", "mapping", "member",
                                         "array-data", "index", "value"]
