"""A split recipe's rounds kept per check across blocks (recompute.evaluator.kept_plans).

Pure tests of KeptPlan driven as step_many drives a plan (send the answer, get the next
request), with answers written here by hand, then the AMM registry on the devnet: one job run
block after block across policy changes, where the second round's path (the policy version)
depends on a first-round value that changes; every derived value equals the honest registry's
``layerStatus`` view at that block (eth_call: the contract, not this code)."""

from __future__ import annotations

import pytest

from recompute.core.anchor import anchor_block
from recompute.core.errors import UsageError
from recompute.evaluator.job import Job, step_many
from recompute.evaluator.kept_plans import MOST_ANSWERS, KeptPlan, PlanMemo
from recompute.layout import load_layout
from recompute.recipes.base import SplitRecipe
from recompute.recipes.plan import BlockClock, Derivation, Reads
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource
from tests.amm_view import layer_status_view


class Versioned(SplitRecipe):
    """Reads a head, then the entry its version names; derives the entry's limit and the
    clock. Counts how often its reads run."""

    name = "test/versioned"

    def __init__(self):
        self.runs = 0

    def reads(self, p):
        self.runs += 1
        head = (yield Reads(["head"]))["head"]
        path = f"entries[{head['version']}]"
        return head, (yield Reads([path]))[path]

    def derive(self, p, inputs, clock):
        head, entry = inputs
        return Derivation(entry["limit"] > clock.timestamp,
                          {"version": head["version"], "limit": entry["limit"],
                           "clock": clock.timestamp})


def run(plan: KeptPlan, answers: dict[str, dict]) -> tuple[list[list[str]], Derivation]:
    """Drive ``plan``; each request answered from ``answers`` (path -> value)."""
    asked, answer = [], None
    while True:
        try:
            request = plan.send(answer)
        except StopIteration as done:
            return asked, done.value
        asked.append(list(request.paths))
        answer = {p: answers[p] for p in request.paths}


def state(version: int, limits: dict[int, int]) -> dict:
    return {"head": {"version": version},
            **{f"entries[{v}]": {"limit": limit} for v, limit in limits.items()}}


def test_the_same_values_replay_the_rounds_and_derive_with_each_clock():
    recipe, memo = Versioned(), PlanMemo()
    values = state(1, {1: 150})
    for number, now in ((10, 100), (11, 120), (12, 200)):
        asked, derivation = run(KeptPlan(recipe, {}, BlockClock(number, now), memo), values)
        assert asked == [["head"], ["entries[1]"]]
        assert derivation.derived == {"version": 1, "limit": 150, "clock": now}
        assert derivation.holds is (150 > now)
    assert recipe.runs == 1  # the reads ran at the first block only


def test_a_changed_first_value_re_plans_the_second_round():
    recipe, memo = Versioned(), PlanMemo()
    run(KeptPlan(recipe, {}, BlockClock(1, 100), memo), state(1, {1: 150, 2: 300}))
    asked, derivation = run(KeptPlan(recipe, {}, BlockClock(2, 101), memo),
                            state(2, {1: 150, 2: 300}))
    assert asked == [["head"], ["entries[2]"]]  # the version the head now names
    assert derivation.derived["limit"] == 300
    # a changed second-round value (same path): the new value, not the kept one
    asked, derivation = run(KeptPlan(recipe, {}, BlockClock(3, 102), memo),
                            state(2, {1: 150, 2: 50}))
    assert asked == [["head"], ["entries[2]"]] and derivation.derived["limit"] == 50
    # back to the first values: kept, replayed
    runs = recipe.runs
    asked, derivation = run(KeptPlan(recipe, {}, BlockClock(4, 103), memo),
                            state(1, {1: 150, 2: 50}))
    assert asked == [["head"], ["entries[1]"]] and derivation.derived["limit"] == 150
    assert recipe.runs == runs


class Scribbler(Versioned):
    """Alters the head it was handed after reading it: to the version the next block has."""

    def reads(self, p):
        head = (yield Reads(["head"]))["head"]
        path = f"entries[{head['version']}]"
        head["version"] = 2
        return head, (yield Reads([path]))[path]


def test_what_a_recipe_alters_is_not_what_was_kept():
    """The answer is kept as it was given, not as the recipe left it: a plan that turned the
    version it was handed into the next block's version must not have its old round replayed
    for the next block's values (red when the kept answer is the one handed to the recipe)."""
    recipe, memo = Scribbler(), PlanMemo()
    handed = state(1, {1: 150, 2: 300})
    asked, _ = run(KeptPlan(recipe, {}, BlockClock(1, 100), memo), handed)
    assert asked == [["head"], ["entries[1]"]]
    assert handed["head"] == {"version": 1}  # the recipe altered a copy
    asked, derivation = run(KeptPlan(recipe, {}, BlockClock(2, 100), memo),
                            state(2, {1: 150, 2: 300}))
    assert asked == [["head"], ["entries[2]"]] and derivation.derived["limit"] == 300


class Overwriter(Versioned):
    """A derivation that tries to alter its inputs."""

    def derive(self, p, inputs, clock):
        head, entry = inputs
        limit = entry["limit"]
        try:
            entry["limit"] = 0
        except TypeError:
            pass
        return Derivation(True, {"limit": limit})


def test_a_derivation_cannot_alter_the_inputs_of_a_later_block():
    recipe, memo = Overwriter(), PlanMemo()
    for number in (1, 2, 3):
        _, derivation = run(KeptPlan(recipe, {}, BlockClock(number, 100), memo), state(1, {1: 150}))
        assert derivation.derived == {"limit": 150}


def test_answers_kept_per_round_are_bounded():
    recipe, memo = Versioned(), PlanMemo()
    for version in range(MOST_ANSWERS + 5):
        asked, _ = run(KeptPlan(recipe, {}, BlockClock(version, 100), memo),
                       state(version, {version: 500}))
        assert asked == [["head"], [f"entries[{version}]"]]
    assert len(memo.first.next) == MOST_ANSWERS


class Drifting(Versioned):
    """Reads that depend on something besides the parameters and the values (a bug)."""

    def reads(self, p):
        self.runs += 1
        head = (yield Reads(["head", "other"] if self.runs > 1 else ["head"]))["head"]
        path = f"entries[{head['version']}]"
        return head, (yield Reads([path]))[path]


def test_reads_that_do_not_replay_are_a_usage_error():
    recipe, memo = Drifting(), PlanMemo()
    run(KeptPlan(recipe, {}, BlockClock(1, 100), memo), state(1, {1: 150}))
    values = {**state(2, {2: 150}), "other": {}}
    with pytest.raises(UsageError, match="test/versioned: its reads asked for other values"):
        run(KeptPlan(recipe, {}, BlockClock(2, 100), memo), values)


def test_one_job_across_policy_versions_is_the_registry_view_at_each_block(devnet):
    """The controlled subject's policy goes from version 1 to 2 (layer 3's interval
    lengthened) to 3 (layer 3 dropped, the floor still requiring it): head.policyVersion, a
    first-round value, names the second round's path. One job per layer, run at every block
    of that stretch (its rounds kept from block to block, as in a watch, and at a block whose
    storageRoot is the last one's, answered whole from the kept reads), derives what the
    registry's own view says at each block, reads the policy version the head names, and has
    the evidence digest of a fresh step (its own source and job: everything proven); a block
    answered from kept reads names the header they were proven at."""
    node, manifest = devnet
    recipe = get_recipe("amm/layer-status")
    registry = manifest["contracts"]["AgentMeditationRegistry"]
    address, layout = bytes.fromhex(registry[2:]), load_layout(recipe.layout)
    subject = manifest["amm"]["subjects"]["controlled"]["address"]
    params = [{"subject": subject, "layer": layer} for layer in range(4)]
    jobs = [Job(recipe, p, address, layout) for p in params]
    moments = manifest["moments"]
    first = moments["amm.enrolled"]["number"]  # quiet blocks (clock only) among the writes
    last = moments["amm.floor-holds"]["number"]
    source = LiveSource(node.url)
    versions, carried = set(), 0
    quiet = 0
    for number in list(range(first, last + 1)) * 2:  # and again: the kept rounds, re-planned
        block = anchor_block([source], block=number)
        fresh = step_many(anchor_block([LiveSource(node.url)], block=number),
                          [Job(recipe, p, address, layout) for p in params])
        for layer, outcome in enumerate(step_many(block, jobs)):
            evidence = outcome.evidence
            derived = evidence["derived"]
            assert {k: derived[k] for k in ("status", "deadline", "never_completed")} == \
                layer_status_view(node.url, registry, subject, layer, number), (number, layer)
            assert evidence["evidence_digest"] == fresh[layer].evidence["evidence_digest"]
            assert evidence["reads"] == fresh[layer].evidence["reads"]
            read = {e["path"].split(".")[0] for e in evidence["reads"]}
            versions.update(p for p in read if p.startswith("policies["))
            if evidence["proof_requests"] == 0:  # every round's reads carried, each named
                assert len(evidence["carried"]) == fresh[layer].evidence["proof_requests"]
                quiet += 1
            for note in evidence.get("carried", ()):
                assert note["proven_at"] <= number
                assert note["header"] == "0x" + anchor_block(
                    [source], block=note["proven_at"]).hash.hex()
                carried += 1
    assert len(versions) == 3  # policies[subject][1], [2] and [3] were each read
    assert carried > 0 and quiet > 0


class HeadThenEarlier(SplitRecipe):
    """Reads the subject's head at the pinned block, then at an earlier block."""

    name = "test/head-then-earlier"

    def reads(self, p):
        path = f"heads[{p['subject']}]"
        now = (yield Reads([path]))[path]
        return now, (yield Reads([path], block=p["earlier"]))[path]

    def derive(self, p, inputs, clock):
        now, earlier = inputs
        return Derivation(True, {"now": now["policyVersion"], "then": earlier["policyVersion"]})


def test_a_round_read_at_an_earlier_block_is_read_at_every_block(devnet):
    """Only a job whose every round was answered from kept reads at the pinned block is
    answered whole at the next block: a round read at an earlier block is still read (its
    entries in the evidence, as a fresh step lists them), block after block."""
    node, manifest = devnet
    registry = manifest["contracts"]["AgentMeditationRegistry"]
    address, layout = bytes.fromhex(registry[2:]), load_layout("amm-registry")
    params = {"subject": manifest["amm"]["subjects"]["controlled"]["address"],
              "earlier": manifest["moments"]["amm.enrolled"]["number"]}
    job = Job(HeadThenEarlier(), params, address, layout)
    source = LiveSource(node.url)
    for number in range(params["earlier"] + 1, manifest["moments"]["amm.floor-holds"]["number"]):
        (outcome,) = step_many(anchor_block([source], block=number), [job])
        (fresh,) = step_many(anchor_block([LiveSource(node.url)], block=number),
                             [Job(HeadThenEarlier(), params, address, layout)])
        assert outcome.evidence["reads"] == fresh.evidence["reads"]
        assert any(e.get("block") == params["earlier"] for e in outcome.evidence["reads"])
        assert outcome.evidence["derived"] == fresh.evidence["derived"]
