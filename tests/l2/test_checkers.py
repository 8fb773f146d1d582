"""The op-stack anchor's pure checkers: clone bytes, implementation identity, tiers, slots."""

from __future__ import annotations

import json

import pytest

from recompute.core.errors import Unverifiable
from recompute.core.keccak import keccak256
from recompute.l2.clone import CloneError, parse_clone
from recompute.l2.finality import SystemFacts, tier_of
from recompute.l2.game import IMPLEMENTATION_SLOT, GameFacts, GameId, GameStatus, game_uuid
from recompute.l2.output_root import OutputRootPreimage
from recompute.l2.versions import UnknownVersion, identify, load_table
from tests.l2.op_stack_artifacts import PACKAGE, build
from tests.l2.op_stack_pair import runtime, with_immutables

# The runtime code of a clone that contracts-bedrock 0.17.3's DisputeGameFactory.create made on
# anvil (game type 0, implementation 0x1111…11, rootClaim 0xaa…aa, extraData = 1234 as a word):
# recorded with eth_getCode; its creator is anvil's first account and l1Head the parent hash.
REAL_CLONE = bytes.fromhex(
    "36602c57343d527f9e4ac34f21c619cefc926c8bd93b54bf5a39c7ab2127a895af1cc0691d7e3dff593da1005b"
    "363d3d373d3d3d3d610076806062363936013d7311111111111111111111111111111111111111115af43d3d93"
    "803e606057fd5bf3f39fd6e51aad88f6f4ce6ab8827279cfffb92266aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa9004a87207322e3e371cafe6bf4e759dba35d1b437d2dc065af8e4286c52"
    "eecb00000000000000000000000000000000000000000000000000000000000004d20076")


def test_a_real_clone_gives_its_arguments():
    clone = parse_clone(REAL_CLONE)
    assert clone.implementation == bytes.fromhex("11" * 20)
    assert clone.creator == bytes.fromhex("f39fd6e51aad88f6f4ce6ab8827279cfffb92266")
    assert clone.root_claim == bytes.fromhex("aa" * 32)
    assert clone.l2_block_number == 1234


@pytest.mark.parametrize("tamper", [
    lambda c: c[:-1],  # one byte short
    lambda c: c + b"\0",  # one byte more
    lambda c: c[:-2] + (0x77).to_bytes(2, "big"),  # the trailing length differs
    lambda c: c[:10] + b"\xfe" + c[11:],  # the proxy changed
    lambda c: c[:55] + b"\x00" + c[56:],  # the length the proxy pushes differs
    lambda c: b"",
    lambda c: c[:98] + (2).to_bytes(2, "big"),  # no arguments at all
])
def test_code_of_another_shape_is_not_a_clone(tamper):
    with pytest.raises(CloneError):
        parse_clone(tamper(REAL_CLONE))


def test_a_clone_without_a_block_number_word_is_refused_when_it_is_asked():
    code = REAL_CLONE[:-34] + REAL_CLONE[-4:-2]  # extra data cut to two bytes
    code = code[:-2] + (len(code) - 98 + 2).to_bytes(2, "big")
    code = code[:54] + code[-2:] + code[56:]
    with pytest.raises(CloneError):
        _ = parse_clone(code).l2_block_number


def test_the_bundled_version_table_is_the_package_artifacts():
    if not PACKAGE.exists():
        pytest.skip("node_modules/@eth-optimism/contracts-bedrock is not installed")
    from recompute.data import data_path

    assert json.loads(data_path("l2", "op-stack-versions.json").read_text()) == build()


def test_real_code_with_its_immutables_is_identified_and_they_are_read():
    code = with_immutables(runtime("OptimismPortal2"), "OptimismPortal2",
                           {"DISPUTE_GAME_FINALITY_DELAY_SECONDS": 302400,
                            "PROOF_MATURITY_DELAY_SECONDS": 604800})
    found = identify(code, "portal", load_table())
    assert found.implementation.label == "OptimismPortal2 3.10.0"
    assert found.immutables == {"DISPUTE_GAME_FINALITY_DELAY_SECONDS": 302400,
                                "PROOF_MATURITY_DELAY_SECONDS": 604800}
    assert found.implementation.variable("respectedGameType").slot == 59


def test_code_differing_by_one_byte_or_of_another_role_is_unknown():
    table = load_table()
    code = runtime("OptimismPortal2")
    with pytest.raises(UnknownVersion, match="OptimismPortal2 3.10.0"):
        identify(code[:100] + bytes([code[100] ^ 1]) + code[101:], "portal", table)
    with pytest.raises(UnknownVersion):
        identify(code, "factory", table)


def test_an_immutable_with_two_values_is_refused():
    entry = next(e for e in load_table() if e.name == "OptimismPortal2")
    (start, length), *_ = entry.immutables["DISPUTE_GAME_FINALITY_DELAY_SECONDS"]
    code = bytearray(runtime("OptimismPortal2"))
    code[start + length - 1] = 9  # one of its two places only
    with pytest.raises(UnknownVersion, match="different values"):
        identify(bytes(code), "portal", load_table())


def test_slots_and_words():
    # EIP-1967's implementation slot, as the EIP states it
    assert IMPLEMENTATION_SLOT == int(
        "360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc", 16)
    packed = 1 << 224 | 1700000000 << 160 | int("ab" * 20, 16)
    assert GameId.unpack(packed) == GameId(1, 1700000000, bytes.fromhex("ab" * 20))
    # abi.encode(uint32 0, bytes32 0x11…, bytes 32-byte word 5), hashed by hand
    encoded = bytes(32) + b"\x11" * 32 + (0x60).to_bytes(32, "big") + (32).to_bytes(32, "big") \
        + (5).to_bytes(32, "big")
    assert game_uuid(0, b"\x11" * 32, (5).to_bytes(32, "big")) == keccak256(encoded)


def _game(**changes) -> GameFacts:
    fields = dict(address=b"\x01" * 20, index=0, game_type=0, root_claim=b"\0" * 32,
                  l1_head=b"\0" * 32, l2_block_number=10, created_at=1000, resolved_at=5000,
                  status=GameStatus.DEFENDER_WINS, blacklisted=False, implementation="x")
    return GameFacts(**{**fields, **changes})


SYSTEM = SystemFacts(respected_game_type=0, respected_since=900, finality_delay=100)


def test_tiers_follow_the_portal_rules_at_the_delay_boundary():
    # the portal: final when block.timestamp - resolvedAt > the delay (strictly)
    assert tier_of(_game(), SYSTEM, 5101, "final") == "final"
    with pytest.raises(Unverifiable) as caught:
        tier_of(_game(), SYSTEM, 5100, "final")
    assert caught.value.reason == "game-not-final"
    assert tier_of(_game(), SYSTEM, 5100, "resolved") == "resolved"
    assert tier_of(_game(), SYSTEM, 5100, "proposed") == "resolved"
    unresolved = _game(status=GameStatus.IN_PROGRESS, resolved_at=0)
    assert tier_of(unresolved, SYSTEM, 9999, "proposed") == "proposed"
    for accept in ("final", "resolved"):
        with pytest.raises(Unverifiable, match="IN_PROGRESS"):
            tier_of(unresolved, SYSTEM, 9999, accept)


@pytest.mark.parametrize(("changes", "reason"), [
    ({"blacklisted": True}, "game-blacklisted"),
    ({"status": GameStatus.CHALLENGER_WINS}, "game-challenger-wins"),
    ({"game_type": 1}, "game-type-not-respected"),
    ({"created_at": 899}, "game-retired"),
])
def test_refusals_whatever_tier_is_asked(changes, reason):
    for accept in ("final", "resolved", "proposed"):
        with pytest.raises(Unverifiable) as caught:
            tier_of(_game(**changes), SYSTEM, 10**9, accept)
        assert caught.value.reason == reason


def test_a_preimage_is_four_words_of_version_zero():
    data = bytes(32) + b"\x01" * 32 + b"\x02" * 32 + b"\x03" * 32
    assert OutputRootPreimage.decode(data).encode() == data
    with pytest.raises(ValueError, match="version"):
        OutputRootPreimage.decode(b"\x01" + data[1:])
    with pytest.raises(ValueError, match="bytes"):
        OutputRootPreimage.decode(data[:-1])


def test_presets_hold_the_registry_portal_addresses():
    from recompute.l2.presets import load_presets

    presets = load_presets()
    assert sorted(presets) == ["base", "base-sepolia", "op-mainnet", "op-sepolia"]
    # OptimismPortalProxy of superchain/configs/sepolia/base.toml (superchain-registry)
    assert presets["base-sepolia"].portal.hex() == "49f53e41452c74589e85ca1677426ba426459e85"
    assert presets["base-sepolia"].l2_chain_id == 84532
    assert all("superchain-registry" in preset.source for preset in presets.values())
