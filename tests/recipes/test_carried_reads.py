"""Reads carried to a later block while the contract's storageRoot is unchanged
(recompute.evaluator.carry.Carry): the verdict and evidence digest equal a fresh step's, the
evidence names the header the values were proven at, a changed root re-proves, and a node
that answers a later block with an earlier block's account proof is UNVERIFIABLE. Expected
values: the envelope's numbers sent in this test, and fresh steps on fresh sources. The records
kept for the carry are never altered once made: their fields hold no dict, list or set, and
what they hold is the same, container for container, after the blocks that carried them."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import pkgutil
import typing
from collections.abc import Mapping

import pytest

import recompute.evaluator
from recompute.core.anchor import anchor_block
from recompute.core.caching import memo_for
from recompute.core.errors import Unverifiable
from recompute.devnet.contracts import connect, deploy
from recompute.evaluator.digest import ReadGroup
from recompute.evaluator.job import Job, step, step_many
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource

CAP = "8312/cap-conservation"
KEY = "0x" + "ab" * 32
OTHER = "0x" + "cd" * 32  # a second envelope: portfolio 500, cap 400


@pytest.fixture()
def meter(anvil):
    w3 = connect(anvil.url)
    contract = deploy(w3, "HeadroomMeter")
    operator = w3.eth.accounts[3]
    tx = contract.functions.openEnvelope(bytes.fromhex(KEY[2:]), operator, 10_000,
                                         8000).transact({"from": w3.eth.accounts[1]})
    w3.eth.wait_for_transaction_receipt(tx)
    recipe = get_recipe(CAP)
    params = recipe.parse_params({"key": KEY, "shape": "headroom"})
    return w3, contract, operator, recipe, params, load_layout("meter-headroom")


class StaleAccount:
    """The real node, except that an account-only proof at ``block`` is the one of ``old``."""

    def __init__(self, source: LiveSource, block: bytes, old: bytes):
        self.source, self.block, self.old = source, block, old
        self.label = source.label

    def __getattr__(self, name):
        return getattr(self.source, name)

    def get_proof(self, address, slots, block_hash):
        if block_hash == self.block and not slots:
            return self.source.get_proof(address, slots, self.old)
        return self.source.get_proof(address, slots, block_hash)


def test_quiet_block_carries_then_a_write_reproves(meter, anvil):
    w3, contract, operator, recipe, params, layout = meter
    address = bytes.fromhex(contract.address[2:])
    source = LiveSource(anvil.url)
    first = anchor_block([source], block="latest")
    proven = step(recipe, params, first, address, layout)
    assert "carried" not in proven.evidence

    anvil.rpc("evm_mine")  # a block that does not touch the meter
    quiet = anchor_block([source], block="latest")
    carried = step(recipe, params, quiet, address, layout)
    fresh = step(recipe, params, anchor_block([LiveSource(anvil.url)], block=quiet.number),
                 address, layout)
    assert carried.evidence["evidence_digest"] == fresh.evidence["evidence_digest"]
    assert carried.evidence["derived"] == fresh.evidence["derived"] == {
        "aggregate": "0", "cap": "8000", "headroom": "8000", "within_cap": True}
    (entry,) = {e["header"]: e for e in carried.evidence["carried"]}.values()
    assert entry["header"] == "0x" + first.hash.hex() and entry["proven_at"] == first.number
    assert entry["storage_root"] == "0x" + w3.eth.get_proof(
        contract.address, [], quiet.number)["storageHash"].hex().removeprefix("0x")

    tx = contract.functions.recordTurnover(bytes.fromhex(KEY[2:]), 2500).transact(
        {"from": operator})
    w3.eth.wait_for_transaction_receipt(tx)
    written = anchor_block([source], block="latest")
    reproven = step(recipe, params, written, address, layout)
    assert "carried" not in reproven.evidence
    assert reproven.evidence["derived"]["aggregate"] == "2500"  # the turnover just recorded


def test_an_earlier_account_proof_for_a_later_block_is_unverifiable(meter, anvil):
    w3, contract, operator, recipe, params, layout = meter
    address = bytes.fromhex(contract.address[2:])
    live = LiveSource(anvil.url)
    first = anchor_block([live], block="latest")
    tx = contract.functions.recordTurnover(bytes.fromhex(KEY[2:]), 2500).transact(
        {"from": operator})
    w3.eth.wait_for_transaction_receipt(tx)
    later_hash = bytes.fromhex(w3.eth.get_block("latest")["hash"].hex().removeprefix("0x"))
    liar = StaleAccount(live, later_hash, first.hash)
    step(recipe, params, anchor_block([liar], block=first.number), address, layout)  # kept
    with pytest.raises(Unverifiable) as caught:
        step(recipe, params, anchor_block([liar], block_hash=later_hash), address, layout)
    assert caught.value.reason in ("invalid-proof", "rpc-inconsistent")


def _jobs_with_a_second_envelope(meter, keys: tuple[str, ...]) -> list[Job]:
    """Open envelope OTHER beside KEY on the meter; one headroom job per key of ``keys``."""
    w3, contract, operator, recipe, params, layout = meter
    tx = contract.functions.openEnvelope(bytes.fromhex(OTHER[2:]), operator, 500,
                                         400).transact({"from": w3.eth.accounts[1]})
    w3.eth.wait_for_transaction_receipt(tx)
    address = bytes.fromhex(contract.address[2:])
    return [Job(recipe, recipe.parse_params({"key": key, "shape": "headroom"}), address, layout)
            for key in keys]


def test_each_check_carries_only_the_paths_it_read(meter, anvil):
    """Two checks combined into one read of the meter (two envelopes): once carried, each
    check's evidence names the paths it read, not the other check's (the carried entry is
    that check's evidence, as its ``reads`` are)."""
    jobs = _jobs_with_a_second_envelope(meter, (KEY, OTHER))
    source = LiveSource(anvil.url)
    step_many(anchor_block([source], block="latest"), jobs)
    anvil.rpc("evm_mine")  # a block that does not touch the meter: the reads are carried
    outcomes = step_many(anchor_block([source], block="latest"), jobs)
    caps = [o.evidence["derived"]["cap"] for o in outcomes]
    assert caps == ["8000", "400"]  # the envelopes opened above
    for outcome, key in zip(outcomes, (KEY, OTHER), strict=True):
        read = {r["path"] for r in outcome.evidence["reads"]}
        carried = [p for e in outcome.evidence["carried"] for p in e["reads"]]
        assert carried and set(carried) == read, (key, carried, read)
        assert all(key[2:] in p for p in carried)  # its own envelope's paths only


def test_combined_and_carried_digests_are_the_definitions(meter, anvil):
    """Checks sharing a combined read (one of them twice) share its entries and their kept
    texts: at the block that proves them and at the block that carries them, each outcome's
    digest is sha256 of json.dumps of its own evidence's block, reads, logs and derived (the
    definition, docs/watch.md §Output)."""
    jobs = _jobs_with_a_second_envelope(meter, (KEY, OTHER, KEY))
    source = LiveSource(anvil.url)
    for _ in range(2):  # proven, then carried
        for outcome in step_many(anchor_block([source], block="latest"), jobs):
            evidence = json.loads(json.dumps(outcome.evidence))  # plain dicts and lists
            text = json.dumps({k: evidence[k] for k in ("block", "reads", "logs", "derived")},
                              sort_keys=True)
            assert evidence["reads"]
            assert outcome.evidence["evidence_digest"] == hashlib.sha256(
                text.encode()).hexdigest()
        anvil.rpc("evm_mine")


def test_carried_notes_name_the_block_their_values_were_proven_at(meter, anvil):
    """Block after block, the evidence's carried notes (kept with the values) name the block
    that proved them: the first one while the storage is the same, the block of the write
    after it, never a note kept from before the write. Expected values: the headers anchored
    here."""
    w3, contract, operator, recipe, params, layout = meter
    address = bytes.fromhex(contract.address[2:])
    source = LiveSource(anvil.url)

    def notes_at_next_block():
        anvil.rpc("evm_mine")  # a block that does not touch the meter
        outcome = step(recipe, params, anchor_block([source], block="latest"), address, layout)
        return outcome.evidence["carried"]

    first = anchor_block([source], block="latest")
    step(recipe, params, first, address, layout)
    one, two = notes_at_next_block(), notes_at_next_block()
    assert one == two and one
    for note in one:
        assert list(note) == ["reads", "contract", "storage_root", "proven_at", "header"]
        assert (note["header"], note["proven_at"]) == ("0x" + first.hash.hex(), first.number)

    tx = contract.functions.recordTurnover(bytes.fromhex(KEY[2:]), 2500).transact(
        {"from": operator})
    w3.eth.wait_for_transaction_receipt(tx)
    written = anchor_block([source], block="latest")
    assert "carried" not in step(recipe, params, written, address, layout).evidence
    after = notes_at_next_block()
    assert [n["reads"] for n in after] == [n["reads"] for n in one]
    assert {(n["header"], n["proven_at"]) for n in after} == {
        ("0x" + written.hash.hex(), written.number)}


# ---- the kept records are never altered once made -------------------------------------------

MUTABLE = (dict, list, set, bytearray)


def _frozen_records() -> list[type]:
    """Every frozen dataclass of the evaluator's modules."""
    found = []
    for info in pkgutil.iter_modules(recompute.evaluator.__path__):
        module = importlib.import_module(f"recompute.evaluator.{info.name}")
        for value in vars(module).values():
            if (isinstance(value, type) and value.__module__ == module.__name__
                    and dataclasses.is_dataclass(value)
                    and value.__dataclass_params__.frozen):  # type: ignore[attr-defined]
                found.append(value)
    return found


def test_frozen_records_declare_no_mutable_container():
    """A frozen record of the evaluator declares no dict, list or set field (a frozen
    dataclass holding one can still be written to through it): read-only mappings
    (``Mapping``, ``MappingProxyType``) and tuples instead."""
    records = _frozen_records()
    assert {r.__name__ for r in records} >= {"Kept", "Share", "CarriedNotes", "HandOut",
                                             "KeptPaths", "GroupRead", "KeptRound", "KeptTrace",
                                             "AnsweredWhole"}
    wrong = []
    for record in records:
        for name, hint in typing.get_type_hints(record).items():
            if typing.get_origin(hint) in MUTABLE or hint in MUTABLE:
                wrong.append(f"{record.__name__}.{name}: {hint}")
    assert wrong == []


def fingerprint(value: object, records: list[object]) -> object:
    """What a kept record holds, all the way down (every record met is added to
    ``records``): two fingerprints differ if anything in it was altered or replaced."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        records.append(value)
        return (type(value).__name__, id(value),
                [fingerprint(getattr(value, f.name), records)
                 for f in dataclasses.fields(value)])
    if isinstance(value, Mapping):
        return ("map", id(value), [(k, fingerprint(v, records)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return ("seq", id(value), [fingerprint(v, records) for v in value])
    return ("leaf", id(value), repr(value))


def test_kept_records_are_never_altered_once_made(meter, anvil):
    """Two checks of one combined read (two envelopes), proven at one block, then carried at
    three more: every record kept at the first block (the kept read, its shares, its
    hand-outs) is exactly what it was, down to the last container; no field of a frozen
    record holds a dict, list or set (a share's decoded value and a ReadGroup excepted: they
    are handed out as copies or written out, never altered)."""
    jobs = _jobs_with_a_second_envelope(meter, (KEY, OTHER))
    source = LiveSource(anvil.url)
    step_many(anchor_block([source], block="latest"), jobs)
    memo = memo_for(source, "carried-reads", 1)
    assert memo is not None

    def kept() -> tuple[list[object], list[object]]:
        records: list[object] = []
        held = [memo.get(key) for key in list(memo._items)]  # noqa: SLF001
        return [fingerprint(value, records) for value in held], records

    before, records = kept()
    names = {type(r).__name__ for r in records}
    assert {"Kept", "KeptPaths", "HandOut", "Share"} <= names, names
    carried = 0
    for _ in range(3):
        anvil.rpc("evm_mine")  # a block that does not touch the meter: the reads are carried
        outcomes = step_many(anchor_block([source], block="latest"), jobs)
        carried += sum(1 for o in outcomes if o.evidence.get("carried"))
    assert carried == 6  # every check carried at every block: the kept records were used
    after, records = kept()
    assert after == before
    for record in records:
        for f in dataclasses.fields(record):  # type: ignore[arg-type]
            value = getattr(record, f.name)
            if isinstance(value, MUTABLE) and not isinstance(value, ReadGroup):
                assert (type(record).__name__, f.name) == ("Share", "value"), (record, f.name)
