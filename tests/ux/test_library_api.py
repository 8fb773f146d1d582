"""The library API as a user calls it (docs/library.md): addresses, hashes, keys and slots as 0x
strings or bytes, recipe parameters as text or typed values, a malformed one a ValueError naming
the argument; the recipe author's slot helpers from ``recompute.recipe``.

Independent expectations: the devnet manifest (each moment's recipe, parameters and verdict; the
meter's cap and reservations; the swarms' role ids), values read back from the chain at the slots
the helpers give, and slots computed here by hand from the solc docs' formulas with
pycryptodome's Keccak (another implementation than recompute's).
"""

from __future__ import annotations

import pytest
from Crypto.Hash import keccak as cryptodome_keccak

import recompute
from recompute import (
    Clock,
    LiveSource,
    Verdict,
    anchor_block,
    get_recipe,
    prove_account,
    read,
    step,
)
from recompute.recipe import array_element_slot, keccak256, mapping_slot, struct_member_slot


def hand_keccak(data: bytes) -> int:
    return int.from_bytes(cryptodome_keccak.new(digest_bits=256, data=data).digest(), "big")


@pytest.fixture(scope="module")
def chain(devnet):
    node, manifest = devnet
    # the devnet's history is dated: its head is judged as of its own time (docs/lightclient.md
    # §Clock), as a user does with --at
    at = int(LiveSource(node.url).block_by_number("latest")["timestamp"], 16)
    return node, manifest, anchor_block([LiveSource(node.url)], block="latest",
                                        clock=Clock(at=at))


def meter(manifest) -> tuple[str, dict]:
    return (manifest["contracts"]["ReservedConfirmedMeter"],
            manifest["meters"]["reserved_confirmed"])


def test_a_moment_steps_with_its_manifest_parameters_as_text_or_typed(chain):
    node, manifest, _ = chain
    moment = manifest["moments"]["amm.overdue"]
    about = moment["about"]
    address = manifest["contracts"][about["contract"]]
    pinned = anchor_block([LiveSource(node.url)], block=moment["number"],
                          block_hash=moment["hash"])  # a 0x string
    as_text = step(about["recipe"], about["params"], pinned, address)  # names, strings
    assert as_text.verdict is Verdict(about["verdict"])
    typed = step(get_recipe(about["recipe"]),
                 {"subject": bytes.fromhex(about["params"]["subject"][2:]),
                  "layer": int(about["params"]["layer"])},
                 pinned, bytes.fromhex(address[2:]))
    hexed = step(about["recipe"], {"subject": about["params"]["subject"].upper().replace(
        "0X", "0x"), "layer": "0x0"}, pinned, address.lower())
    assert typed.evidence["evidence_digest"] == as_text.evidence["evidence_digest"] == \
        hexed.evidence["evidence_digest"]


def test_derived_values_come_back_as_their_json_types(chain):
    """`Outcome.derived`: an int as an int, a bool as a bool; the evidence keeps the decimal
    text its digest hashes (docs/library.md). Expected: the AMM moment's deadline is an integer
    of the specification's (a timestamp), never_completed a bool."""
    node, manifest, _ = chain
    moment = manifest["moments"]["amm.overdue"]
    about = moment["about"]
    pinned = anchor_block([LiveSource(node.url)], block=moment["number"],
                          block_hash=moment["hash"])
    outcome = step(about["recipe"], about["params"], pinned,
                   manifest["contracts"][about["contract"]])
    derived, written = outcome.derived, outcome.evidence["derived"]
    assert set(derived) == set(written) == {"status", "deadline", "never_completed", "clock"}
    assert type(derived["deadline"]) is int and type(derived["clock"]) is int
    assert derived["clock"] == int(LiveSource(node.url).block_by_hash(
        bytes.fromhex(moment["hash"][2:]))["timestamp"], 16)  # the block's own time
    assert type(derived["never_completed"]) is bool and derived["status"] == "OVERDUE"
    assert written["deadline"] == str(derived["deadline"])  # the evidence: decimal text


def test_read_takes_the_address_as_text_or_bytes(chain):
    _, manifest, block = chain
    address, meters = meter(manifest)
    key = meters["keys"]["key-1"]
    for given in (address, address.lower(), bytes.fromhex(address[2:])):
        (result,) = read(block, given, recompute.load_layout("meter-reserved-confirmed"),
                         [f"cap[{key['key']}]"])
        assert result.value == key["cap"]


def test_malformed_arguments_are_value_errors_naming_the_argument(chain):
    _, manifest, block = chain
    address, meters = meter(manifest)
    layout = recompute.load_layout("meter-reserved-confirmed")
    cases = [
        (lambda: read(block, "0x1234", layout, ["reservationCount"]), "address"),
        (lambda: read(block, b"\x01" * 19, layout, ["reservationCount"]), "address"),
        (lambda: read(block, 12, layout, ["reservationCount"]), "address"),
        (lambda: prove_account(block, address, ["0xzz"]), "slots[0]"),
        (lambda: prove_account(block, address, [1 << 256]), "slots[0]"),
        (lambda: anchor_block([LiveSource("http://127.0.0.1:9")], block_hash="0xab"),
         "block_hash"),
        (lambda: step("amm/layer-status", {"subject": address, "layer": "two"}, block,
                      address), "params['layer']"),
        (lambda: step("amm/layer-status", {"subject": "0xabc", "layer": 0}, block, address),
         "params['subject']"),
        (lambda: step("amm/layer-status", {"subject": address, "layer": True}, block,
                      address), "params['layer']"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError) as raised:
            call()
        assert str(raised.value).startswith(name), (name, str(raised.value))
        assert isinstance(raised.value, recompute.UsageError)  # the CLI's exit 64 as before


def test_the_slot_helpers_find_the_meters_values(chain):
    _, manifest, block = chain
    address, meters = meter(manifest)
    key = meters["keys"]["key-1"]
    r1 = meters["reservations"]["r1"]
    cap = mapping_slot(key["key"], 2)  # cap: mapping(bytes32 => uint256) at slot 2
    assert cap == hand_keccak(bytes.fromhex(key["key"][2:]) + (2).to_bytes(32, "big"))
    reserver = mapping_slot(key["reservers"][0], mapping_slot(bytes.fromhex(key["key"][2:]), 4))
    amount = struct_member_slot(mapping_slot(r1["id"], 5), 2)  # Reservation.amount at +2
    account = prove_account(block, address, [cap, hex(reserver), amount.to_bytes(32, "big")])
    assert account.storage[cap] == key["cap"]
    assert account.storage[reserver] == 1  # isReserver[key][reserver] = true
    assert account.storage[amount] == r1["amount"]
    assert keccak256(b"") == bytes.fromhex(
        "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")


def test_the_array_helper_finds_a_swarms_roles(chain):
    _, manifest, block = chain
    swarm = manifest["swarm"]["swarms"]["challenged"]
    # swarmData: mapping(bytes32 => SwarmData) at slot 2; .spec at +22; .spec.roles at +0:
    # RoleSpec[] whose elements take 2 slots, roleId first (recompute layout show swarm-registry)
    roles = struct_member_slot(mapping_slot(swarm["id"], 2), 22)
    first, second = array_element_slot(roles, 0, 2), array_element_slot(roles, 1, 2)
    data = hand_keccak(roles.to_bytes(32, "big"))
    assert (first, second) == (data, (data + 2) % (1 << 256))
    account = prove_account(block, manifest["contracts"]["SwarmRegistry"], [roles])
    length = account.storage[roles]
    ids = [array_element_slot(roles, i, 2) for i in range(length)]
    values = prove_account(block, manifest["contracts"]["SwarmRegistry"], ids).storage
    found = {f"0x{values[s]:064x}" for s in ids}
    assert {m["role_id"] for m in swarm["members"]} <= found
    assert found <= set(manifest["swarm"]["roles"].values())
