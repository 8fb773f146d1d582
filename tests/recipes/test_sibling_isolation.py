"""Checks of one block that read the same path are combined into one read, but each gets a
value of its own: a recipe that alters what it was handed (a user's buggy recipe) cannot
change what a sibling check derives from the same proven slots. Expected values: the
envelope's cap sent to the meter in this test (8000)."""

from __future__ import annotations

from recompute.core.anchor import anchor_block
from recompute.devnet.contracts import connect, deploy
from recompute.evaluator.job import Job, step_many
from recompute.layout import load_layout
from recompute.recipe import Derivation, Reads, Recipe
from recompute.recipes.base import SplitRecipe
from recompute.sources.live import LiveSource

KEY = "0x" + "ab" * 32
PATH = f"cursorValues[{KEY}]"


class Scribbler(Recipe):
    """Reads the envelope's whole struct, then overwrites its cap in the value it was handed."""

    name = "test/scribbler"
    help = "alters its input"
    layout = "meter-headroom"

    def plan(self, p, clock):
        envelope = (yield Reads([PATH]))[PATH]
        envelope["maxCumulativeTurnover"] = 0
        envelope.clear()
        return Derivation(holds=True, derived={}, predicate="true")


class CapReader(Recipe):
    """Reads the same struct and reports the cap it holds."""

    name = "test/cap-reader"
    help = "reads the cap"
    layout = "meter-headroom"

    def plan(self, p, clock):
        envelope = (yield Reads([PATH]))[PATH]
        cap = envelope["maxCumulativeTurnover"]
        return Derivation(holds=cap == 8000, derived={"cap": cap}, predicate="cap == 8000")


def _meter_with_the_threads_envelope(anvil):
    """A HeadroomMeter on the anvil with the ERC-8312 thread's envelope opened (portfolio
    10000, cap 8000): its address and layout."""
    w3 = connect(anvil.url)
    meter = deploy(w3, "HeadroomMeter")
    tx = meter.functions.openEnvelope(bytes.fromhex(KEY[2:]), w3.eth.accounts[3], 10_000,
                                      8000).transact({"from": w3.eth.accounts[1]})
    w3.eth.wait_for_transaction_receipt(tx)
    layout = load_layout("meter-headroom")
    address = bytes.fromhex(meter.address[2:])
    return address, layout


def test_a_recipe_that_alters_its_input_does_not_reach_its_sibling(anvil):
    address, layout = _meter_with_the_threads_envelope(anvil)
    jobs = [Job(Scribbler(), {}, address, layout), Job(CapReader(), {}, address, layout)]
    source = LiveSource(anvil.url)
    for _ in range(2):  # proven at the first block, carried at the second
        scribbled, read = step_many(anchor_block([source], block="latest"), jobs)
        assert scribbled.verdict.value == "VERIFIED-GOOD"
        assert read.verdict.value == "VERIFIED-GOOD", read.detail
        assert read.evidence["derived"] == {"cap": "8000"}
        anvil.rpc("evm_mine")


PULSER_DEADLINE = 1762650024 + 86400  # tests/recipes/test_amm_devnet.py: enrolled + 86400


class DeepScribbler(Recipe):
    """Reads what amm/layer-status reads in its first two rounds, then alters the containers
    *inside* what it was handed: the policy's and the floor's maxInterval arrays."""

    name = "test/deep-scribbler"
    help = "alters nested values of its input"
    layout = "amm-registry"

    def plan(self, p, clock):
        subject = p["subject"]
        head = (yield Reads([f"heads[{subject}]"]))[f"heads[{subject}]"]
        policy, floor = f"policies[{subject}][{head['policyVersion']}]", f"floors[{subject}]"
        got = yield Reads([policy, floor])
        for value in (got[policy], got[floor]):
            value["maxInterval"][0] = 1
            value["maxInterval"].append(2)
        return Derivation(holds=True, derived={}, predicate="true")


def test_nested_containers_are_not_shared_with_a_sibling_nor_kept(devnet):
    """The AMM registry's policy and floor hold arrays: a check that alters an array inside
    the struct it was handed must not change the deadline a sibling derives (AMM §Policy and
    floor: the pulser's layer 0 every 86400 s), at the block or when the reads are carried."""
    from recompute.recipes.registry import get_recipe

    node, manifest = devnet
    layout = load_layout("amm-registry")
    address = bytes.fromhex(manifest["contracts"]["AgentMeditationRegistry"][2:])
    params = {"subject": manifest["amm"]["subjects"]["pulser"]["address"], "layer": 0}
    jobs = [Job(DeepScribbler(), params, address, layout),
            Job(get_recipe("amm/layer-status"), params, address, layout)]
    source = LiveSource(node.url)
    for _ in range(2):  # proven, then carried from the kept values (same source, same root)
        block = anchor_block([source], block_hash=bytes.fromhex(
            manifest["moments"]["amm.due"]["hash"][2:]))
        scribbled, status = step_many(block, jobs)
        assert scribbled.verdict.value == "VERIFIED-GOOD"
        assert status.evidence["derived"]["deadline"] == str(PULSER_DEADLINE)
        assert status.evidence["derived"]["status"] == "DUE"


class Twice(Recipe):
    """Asks the same path twice in one request (then two distinct paths, the usual pair)."""

    name = "test/twice"
    help = "asks a path twice"
    layout = "meter-headroom"

    def plan(self, p, clock):
        got = yield Reads([PATH, PATH])
        cap = got[PATH]["maxCumulativeTurnover"]
        other = f"cursorValues[0x{'cd' * 32}]"
        pair = yield Reads([PATH, other])
        return Derivation(holds=cap == 8000, derived={"cap": cap, "keys": len(pair)},
                          predicate="cap == 8000")


def test_a_path_asked_twice_is_read_and_listed_once(anvil):
    """In a combined read, a check that names one path twice in a request gets it once: its
    evidence lists the path's slots once per request (two here), as a check that names it
    once lists them once (CapReader beside it), at the block it is proven and at the next,
    where it is carried."""
    address, layout = _meter_with_the_threads_envelope(anvil)
    jobs = [Job(Twice(), {}, address, layout), Job(CapReader(), {}, address, layout)]
    source = LiveSource(anvil.url)
    for carried in (False, True):
        twice, once = step_many(anchor_block([source], block="latest"), jobs)
        assert twice.verdict.value == "VERIFIED-GOOD", twice.detail
        assert twice.evidence["derived"] == {"cap": "8000", "keys": "2"}
        mine = [r for r in twice.evidence["reads"] if r["path"].startswith(PATH)]
        assert mine == once.evidence["reads"] * 2 and mine
        if carried:
            assert [c["reads"] for c in twice.evidence["carried"]] == [
                [PATH], [PATH, f"cursorValues[0x{'cd' * 32}]"]]
        anvil.rpc("evm_mine")


class SplitScribbler(SplitRecipe):
    """A split recipe (its rounds kept across blocks, handed the kept values uncopied by the
    combined read) whose reads overwrite and empty the struct they were handed."""

    name = "test/split-scribbler"
    help = "alters its input"
    layout = "meter-headroom"

    def reads(self, p):
        envelope = (yield Reads([PATH]))[PATH]
        cap = envelope["maxCumulativeTurnover"]
        envelope["maxCumulativeTurnover"] = 0
        envelope.clear()
        return cap

    def derive(self, p, inputs, clock):
        return Derivation(holds=True, derived={"cap": inputs}, predicate="true")


def test_a_kept_plan_hands_its_recipe_a_copy_of_the_shared_values(anvil):
    """A split recipe's plan gets the combined read's kept values themselves (it hands its
    recipe a copy): what the recipe alters reaches neither the sibling that read the same
    struct, nor a later block, proven, carried or replayed from the kept rounds."""
    address, layout = _meter_with_the_threads_envelope(anvil)
    jobs = [Job(SplitScribbler(), {}, address, layout), Job(CapReader(), {}, address, layout)]
    source = LiveSource(anvil.url)
    for _ in range(3):  # proven; carried and replayed; again
        scribbled, read = step_many(anchor_block([source], block="latest"), jobs)
        assert scribbled.evidence["derived"] == {"cap": "8000"}
        assert read.verdict.value == "VERIFIED-GOOD", read.detail
        assert read.evidence["derived"] == {"cap": "8000"}
        anvil.rpc("evm_mine")
