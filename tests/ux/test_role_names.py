"""Derived values that are ERC-8447 reserved role ids show by name in `step`'s text (the JSON
keeps the ids): a reserved role id is keccak256("sai.role.<name>"), ERC-8447's reserved role
identifiers."""

from Crypto.Hash import keccak

from recompute.cli.human_format import plain


def role(name: str) -> str:
    return "0x" + keccak.new(digest_bits=256, data=f"sai.role.{name}".encode()).hexdigest()


def test_a_table_keyed_by_roles_names_them():
    assert plain({role("worker"): "1", role("coordinator"): "0"}) == "{worker: 1, coordinator: 0}"
    assert plain(role("bidder")) == f"{role('bidder')} (bidder)"


def test_other_ids_stay_as_they_are():
    other = "0x" + "ab" * 32
    assert plain({other: True}) == f"{{{other}: true}}" and plain(other) == other
