"""What each named moment of the devnet is about: who, which recipe shows it, and its verdict.

``build`` attaches an ``about`` to every moment of the manifest::

    "amm.overdue": {"number": 26, "hash": "0x…", "timestamp": …,
                    "about": {"text": "…", "subject": "pulser", "layer": 0,
                              "recipe": "amm/layer-status", "contract": "AgentMeditationRegistry",
                              "layout": null, "params": {"subject": "0x…", "layer": "0"},
                              "verdict": "VERIFIED-BAD", "vector": "amm-layer-status-overdue"}}

so a newcomer can run ``recompute step RECIPE --rpc … --block-hash HASH --address A --param …``
(with ``--expect K=V`` for each pair of ``expect``, when there is one) at any moment and know
what to expect. ``verdict`` is worked out by hand from the specifications and
the history script (the module docstrings of ``history_*.py``); ``vector`` names the shipped
vector captured at that moment with that recipe and those parameters, when there is one. A
moment the histories name without an entry here is an error (``describe``), so every moment
says what it is about.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recompute.data import PACKS
from recompute.devnet.driver import HistoryError

GOOD, BAD = "VERIFIED-GOOD", "VERIFIED-BAD"
AMM, LYING_AMM = "AgentMeditationRegistry", "LyingMeditationRegistry"
SWARMS = "SwarmRegistry"

Manifest = dict[str, Any]  # the devnet's manifest (JSON)
About = dict[str, Any]  # a moment's description: text, recipe, params (a Resolver), verdict
Resolver = Callable[[Manifest], dict[str, str]]


def _amm(subject: str, recipe: str, verdict: str, text: str, layer: int | None = None,
         vector: str | None = None, **extra: object) -> About:
    lying = subject.startswith("lying")

    def params(m: Manifest) -> dict[str, str]:
        out = {"subject": m["amm"]["subjects"][subject]["address"].lower()}
        if layer is not None:
            out["layer"] = str(layer)
        for key, value in extra.items():
            out[key] = str(value(m) if callable(value) else value)
        return out
    return {"text": text, "subject": subject, **({"layer": layer} if layer is not None else {}),
            "recipe": recipe, "contract": LYING_AMM if lying else AMM,
            "layout": "amm-registry-lying" if lying else None, "params": params,
            "verdict": verdict, "vector": vector}


def _block(label: str) -> Callable[[Manifest], int]:
    return lambda m: m["moments"][label]["number"]


def _swarm(swarm: str, recipe: str, verdict: str, text: str, account: int | None = None,
           vector: str | None = None, registry: str = SWARMS,
           expect: dict[str, str] | None = None) -> About:
    def params(m: Manifest) -> dict[str, str]:
        entry = m["swarm"]["swarms"][swarm]
        out = {"swarm": entry["id"]}
        if recipe in ("sai/roster", "sai/revision"):
            out["from_block"] = str(entry["formed_block"])
        if account is not None:
            out["account"] = m["accounts"][account].lower()
        return out
    return {"text": text, "swarm": swarm,
            **({"account_index": account} if account is not None else {}),
            "recipe": recipe, "contract": registry, "layout": "swarm-registry",
            "params": params, **({"expect": expect} if expect else {}),
            "verdict": verdict, "vector": vector}


def _key(m: Manifest) -> str:
    key: str = m["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"]
    return key


def _envelope(m: Manifest) -> str:
    envelope: str = m["meters"]["headroom"]["envelopes"]["envelope-1"]["id"]
    return envelope


def _meter(meter: str, contract: str, verdict: str, text: str, shape: str | None = None,
           layout: str | None = None, vector: str | None = None,
           **params: Callable[[Manifest], object] | object) -> About:
    recipe = "8312/cap-conservation" if shape else "8312/aggregate-budget"

    def resolve(m: Manifest) -> dict[str, str]:
        out = {"shape": shape} if shape else {}
        for key, value in params.items():
            out[key] = str(value(m) if callable(value) else value)
        return out
    return {"text": text, "meter": meter, "recipe": recipe, "contract": contract,
            "layout": layout, "params": resolve, "verdict": verdict, "vector": vector}


def _tree(section: str) -> Callable[[Manifest], str]:
    return lambda m: m["meters"][section]["trees"]["tree-1"]["root_id"]


def _before_draws(m: Manifest) -> int:
    refused: int = m["moments"]["meter.draw-refused"]["number"]
    return refused - 20


def _rule_period(m: Manifest) -> int:
    period: int = m["meters"]["aggregate_lying"]["trees"]["tree-1"]["rule_period"]["period"]
    return period


_LS, _SS, _SR, _RC = "amm/layer-status", "amm/signal-status", "amm/state-root", "amm/restore-claim"
_AB, _LAB = "AggregateBudgetMeter", "LyingAggregateBudgetMeter"

ABOUT: dict[str, About] = {
    "amm.enrolled": _amm("example", _SR, GOOD, "four subjects enrolled; the worked example at "
                         "state version 1 with the seed's pre root"),
    "amm.operators-set": _amm("controlled", _SR, GOOD, "the controlled subject's report, pulse "
                              "and policy operators are set"),
    "amm.after-cycle-1": _amm("example", _SR, GOOD, "the seed's worked example recorded: "
                              "version 2, root 0x9918ebff…c3de",
                              vector="amm-state-root-worked-example"),
    "amm.partial": _amm("controlled", _LS, GOOD, "a PARTIAL cycle completes layers 0 and 1 "
                        "only; layer 0 is FRESH", layer=0),
    "amm.aborted": _amm("controlled", _LS, GOOD, "an ABORTED cycle that completed layer 2",
                        layer=2),
    "amm.failed": _amm("controlled", _LS, GOOD, "a FAILED cycle completes nothing: layer 3, "
                       "never completed, is judged from enrolment (FRESH)", layer=3),
    "amm.operator-pulsed": _amm("controlled", _SS, GOOD, "the pulse operator pulses: PRESENT"),
    "amm.false-restore": _amm("lying-example", _RC, BAD, "the lying registry registers a false "
                              "restore claim", vector="amm-restore-claim-false",
                              block=_block("amm.false-restore")),
    "amm.false-restore-rejected": _amm("example", _SR, GOOD, "the honest registry rejected the "
                                       "same record on chain: still version 2"),
    "amm.demanded": _amm("controlled", _LS, GOOD, "a demand lowers layer 0's deadline to its "
                         "dueBy 1762700000 (FRESH)", layer=0),
    "amm.demand-not-met": _amm("controlled", _LS, GOOD, "a completion that ended before "
                               "demandedAt leaves the demand outstanding", layer=1,
                               vector="amm-layer-status-demand-not-met"),
    "amm.demand-cleared": _amm("controlled", _LS, GOOD, "a completion at or after demandedAt "
                               "clears the demand", layer=1,
                               vector="amm-layer-status-demand-cleared"),
    "amm.operator-revoked": _amm("controlled", _SS, GOOD, "the controller revokes the pulse "
                                 "operator; the last report's signal is PRESENT"),
    "amm.silent-fresh": _amm("example", _SS, BAD, "the worked example's subject is SILENT "
                             "(and fresh)", vector="amm-signal-status-silent"),
    "amm.rollback": _amm("example", _RC, GOOD, "a rollback to version 1: a valid restore claim",
                         vector="amm-restore-claim-valid", block=_block("amm.rollback")),
    "amm.due": _amm("pulser", _LS, GOOD, "a subject that only pulses is DUE one hour before its "
                    "deadline", layer=0, vector="amm-layer-status-due"),
    "amm.overdue": _amm("pulser", _LS, BAD, "the same subject is OVERDUE at its deadline",
                        layer=0, vector="amm-layer-status-overdue"),
    "amm.present-overdue": _amm("pulser", _SS, GOOD, "a pulsing subject is PRESENT while "
                                "OVERDUE", vector="amm-signal-status-present"),
    "amm.interval-elapsed": _amm("controlled", _LS, BAD, "layer 3's policy-1 interval elapsed "
                                 "from enrolment: OVERDUE", layer=3,
                                 vector="amm-layer-status-interval-elapsed"),
    "amm.policy-lengthened": _amm("controlled", _LS, GOOD, "policy version 2 lengthens layer "
                                  "3's interval from its effective time: FRESH from the same "
                                  "anchor", layer=3, vector="amm-layer-status-policy-lengthened"),
    "amm.floor-set": _amm("controlled", _LS, GOOD, "the floor's shorter layer 3 interval "
                          "governs from its effective time", layer=3,
                          vector="amm-layer-status-floor-interval"),
    "amm.floor-holds": _amm("controlled", _SS, BAD, "a relaxed policy drops the pulse "
                            "interval, the floor's holds: SILENT",
                            vector="amm-signal-status-floor-pulse"),
    "amm.demand-outstanding": _amm("demanded", _LS, GOOD, "an outstanding demand lowers layer "
                                   "0's deadline", layer=0,
                                   vector="amm-layer-status-demand-lowers"),
    "amm.signal-window-ends": _amm("window", _SS, GOOD, "exactly lastSignalAt + pulseInterval: "
                                   "PRESENT", vector="amm-signal-status-window-ends"),
    "amm.signal-silent-by-one": _amm("window", _SS, BAD, "one second past the window: SILENT",
                                     vector="amm-signal-status-silent-by-one"),
    "amm.demand-overdue": _amm("demanded", _LS, BAD, "OVERDUE exactly at the demand's dueBy",
                               layer=0, vector="amm-layer-status-demand-overdue"),
    "amm.demand-not-raised": _amm("demanded", _LS, BAD, "a demand due later does not raise "
                                  "layer 1's deadline: OVERDUE", layer=1,
                                  vector="amm-layer-status-demand-not-raised"),
    "amm.lying-rollback": _amm("lying-example", _RC, GOOD, "a valid rollback to version 1 on "
                               "the lying registry", vector="amm-restore-claim-lying-rollback",
                               block=_block("amm.lying-rollback")),
    "amm.restore-no-advance": _amm("lying-example", _RC, GOOD, "a restore claim that changes "
                                   "nothing: both MUST checks hold and the honest registry "
                                   "accepts it; version_advanced is false",
                                   vector="amm-restore-claim-no-advance",
                                   block=_block("amm.restore-no-advance")),
    "amm.restore-equal-base": _amm("lying-example", _RC, BAD, "restoresVersion equal to the "
                                   "base version", vector="amm-restore-claim-equal-base",
                                   block=_block("amm.restore-equal-base")),
    "amm.restore-above-base": _amm("lying-example", _RC, BAD, "restoresVersion above the base "
                                   "version", vector="amm-restore-claim-above-base",
                                   block=_block("amm.restore-above-base")),
    "meter.reserved": _meter("reserved_confirmed", "ReservedConfirmedMeter", GOOD,
                             "reserved 700 + confirmed 0 <= cap 1000", "reserved-confirmed",
                             key=_key),
    "meter.confirmed": _meter("reserved_confirmed", "ReservedConfirmedMeter", GOOD,
                              "reserved 300 + confirmed 400 <= 1000", "reserved-confirmed",
                              key=_key),
    "meter.cancelled": _meter("reserved_confirmed", "ReservedConfirmedMeter", GOOD,
                              "a cancel: reserved 0 + confirmed 400", "reserved-confirmed",
                              key=_key),
    "meter.at-cap": _meter("reserved_confirmed", "ReservedConfirmedMeter", GOOD,
                           "reserved 600 + confirmed 400 == cap 1000", "reserved-confirmed",
                           vector="8312-cap-conservation-reserved-confirmed-at-cap", key=_key),
    "meter.reserve-refused": _meter("reserved_confirmed", "ReservedConfirmedMeter", GOOD,
                                    "a reservation past the cap refused on chain: still 1000",
                                    "reserved-confirmed", key=_key),
    "meter.confirmed-at-cap": _meter("reserved_confirmed", "ReservedConfirmedMeter", GOOD,
                                     "reserved 0 + confirmed 1000 == cap", "reserved-confirmed",
                                     key=_key),
    "meter.headroom-used": _meter("headroom", "HeadroomMeter", GOOD, "turnover 5500 of 8000 "
                                  "(the thread's struct:2:2:1)", "struct:2:2:1",
                                  vector="8312-cap-conservation-headroom-used", key=_envelope),
    "meter.headroom-at-cap": _meter("headroom", "HeadroomMeter", GOOD, "turnover 8000 of 8000",
                                    "struct:2:2:1",
                                    vector="8312-cap-conservation-headroom-at-cap",
                                    key=_envelope),
    "meter.mandate-used": _meter("mandate", "MandateMeter", GOOD, "(agent, principal 1): 2000 "
                                 "of 5000", "mandate", "meter-mandate",
                                 agent=lambda m: m["accounts"][4].lower(),
                                 principal=lambda m: m["accounts"][1].lower()),
    "meter.mandate-at-cap": _meter("mandate", "MandateMeter", GOOD, "(agent, principal 2): "
                                   "1000 of 1000", "mandate", "meter-mandate",
                                   vector="8312-cap-conservation-mandate-at-cap",
                                   agent=lambda m: m["accounts"][4].lower(),
                                   principal=lambda m: m["accounts"][2].lower()),
    "meter.draw-refused": _meter("aggregate", _AB, GOOD, "C's draw refused on chain: period 0 "
                                 "at 80 of 100", layout="meter-aggregate-budget",
                                 root=_tree("aggregate"), period=0, from_block=_before_draws),
    "meter.period-0": _meter("aggregate", _AB, GOOD, "period 0 at its cap: 40 + 40 + 20 == "
                             "100", layout="meter-aggregate-budget", root=_tree("aggregate"),
                             period=0, from_block=_before_draws),
    "meter.over-cap": _meter("aggregate_lying", _LAB, BAD, "the lying meter's overdraw: 120 > "
                             "100", layout="meter-aggregate-budget-lying",
                             vector="8312-aggregate-budget-over-cap",
                             root=_tree("aggregate_lying"), period=0, from_block=_before_draws),
    "meter.period-1": _meter("aggregate", _AB, GOOD, "period 1 opens (55); period 0 still at "
                             "its cap", layout="meter-aggregate-budget",
                             vector="8312-aggregate-budget-at-cap", root=_tree("aggregate"),
                             period=0, from_block=_before_draws),
    "meter.lying-at-cap": _meter("aggregate_lying", _LAB, GOOD, "50 + 50 == cap 100 in one "
                                 "period", layout="meter-aggregate-budget-lying",
                                 vector="8312-aggregate-budget-lying-at-cap",
                                 root=_tree("aggregate_lying"), period=_rule_period,
                                 from_block=_before_draws),
    "meter.one-above": _meter("aggregate_lying", _LAB, BAD, "an overdraw of 1: 101, one above "
                              "the cap", layout="meter-aggregate-budget-lying",
                              vector="8312-aggregate-budget-one-above",
                              root=_tree("aggregate_lying"), period=_rule_period,
                              from_block=_before_draws),
    "swarm.formed": _swarm("minimal", "sai/roster", BAD, "formed, nobody admitted yet"),
    "swarm.candidates": _swarm("minimal", "sai/member", BAD, "a candidate who applied but is not "
                               "admitted yet", account=3),
    "swarm.activated": _swarm("minimal", "sai/roster", GOOD, "activated on ROSTER_MET",
                              vector="sai-roster-met-activated"),
    "swarm.amended": _swarm("minimal", "sai/member", BAD, "a worker left in the amendment's "
                            "exit window", account=6),
    "swarm.concluded": _swarm("minimal", "sai/roster", GOOD, "concluded by the acceptance "
                              "authority; the roster still holds"),
    "swarm.dissolved": _swarm("minimal", "sai/revision", GOOD, "dissolved after the settlement "
                              "window; revision == the Changed events",
                              vector="sai-revision-consistent"),
    "swarm.suspended": _swarm("challenged", "sai/roster", BAD, "a worker challenged false; the "
                              "roster is lost", vector="sai-roster-lost-suspended"),
    "swarm.reinstated": _swarm("challenged", "sai/member", GOOD, "a true challenge reinstates "
                               "the worker", account=4),
    "swarm.resumed": _swarm("challenged", "sai/roster", GOOD, "anyone resumes: the roster "
                            "holds again"),
    "swarm.expelled": _swarm("challenged", "sai/member", BAD, "a worker expelled after the "
                             "ineligible grace", account=6),
    "swarm.select-advanced": _swarm("tender", "sai/member", GOOD, "a suspended bidder lazily "
                                    "NOT_CARRIED by SELECT (as --expect says)", account=6,
                                    expect={"status": "EXITED", "exit_reason": "NOT_CARRIED"},
                                    vector="sai-member-not-carried"),
    "swarm.substituted": _swarm("tender", "sai/member", GOOD, "a NOT_CARRIED bidder substituted "
                                "into the CLOSED phase", account=7),
    "swarm.inherit-advanced": _swarm("pipeline", "sai/roster", GOOD, "INHERIT keeps active, "
                                     "suspended and pending seats; two ACTIVE workers"),
    "swarm.inherit-completed": _swarm("pipeline", "sai/member", GOOD, "the pending verifier is "
                                      "admitted in the second phase", account=6),
    "swarm.lying-activated": _swarm("lying", "sai/roster", GOOD, "the lying registry's swarm "
                                    "activated", registry="LyingSwarmRegistry"),
    "swarm.roster-lies": _swarm("lying", "sai/roster", BAD, "storage: one worker below the "
                                "role's min; the cached views still say met",
                                registry="LyingSwarmRegistry"),
    "swarm.tender-dissolved": _swarm("tender", "sai/member", BAD, "dissolved after SELECT: the "
                                     "bidder stays NOT_CARRIED", account=6,
                                     vector="sai-member-tender-dissolved-not-carried"),
    "swarm.recruit-advanced": _swarm("recruit", "sai/roster", BAD, "a RECRUIT advance: nobody "
                                     "carried", vector="sai-roster-recruit-advanced"),
    "swarm.recruit-dissolved": _swarm("recruit", "sai/member", BAD, "dissolved after RECRUIT: "
                                      "a first-phase worker is NOT_CARRIED", account=3,
                                      vector="sai-member-recruit-dissolved"),
    "swarm.roles-short": _swarm("quorum", "sai/roster", BAD, "minMembers met, the coordinator "
                                "role short", vector="sai-roster-roles-short"),
    "swarm.quorum-met": _swarm("quorum", "sai/roster", GOOD, "every role and the total met",
                               vector="sai-roster-quorum-met"),
    "swarm.total-short": _swarm("quorum", "sai/roster", BAD, "every role met, the total short",
                                vector="sai-roster-total-short"),
    "swarm.aborted": _swarm("quorum", "sai/roster", BAD, "aborted before activation: every seat "
                            "SWARM_DISSOLVED", vector="sai-roster-aborted"),
}


def _variant(recipe: str, contract: str, layout: str | None, text: str,
             vector: str | None, who: dict[str, object], params: Resolver) -> About:
    """A moment of ``history_variants``: a lying variant's state no honest contract reaches."""
    return {"text": text, **who, "recipe": recipe, "contract": contract, "layout": layout,
            "params": params, "verdict": BAD, "vector": vector}


def _variants(m: Manifest) -> dict[str, Any]:
    variants: dict[str, Any] = m["variants"]
    return variants


def _one_above_key(kind: str, shape: str) -> Resolver:
    def params(m: Manifest) -> dict[str, str]:
        entry = _variants(m)["meters"][kind]
        if kind == "mandate":
            return {"shape": shape, "agent": entry["agent"].lower(),
                    "principal": entry["principal"].lower()}
        return {"key": entry["key" if kind == "reserved_confirmed" else "envelope"],
                "shape": shape}
    return params


VARIANTS: dict[str, About] = {
    "variant.amm-root-not-kept": _variant(
        _RC, "LyingRootMeditationRegistry", None,
        "a rollback to version 1 whose new version's root the registry did not keep: "
        "rootAt(3) is zero, not the post root", "amm-restore-claim-root-not-kept",
        {"subject": "variant-example"},
        lambda m: {"subject": _variants(m)["amm"]["subject"].lower(),
                   "block": str(_variants(m)["amm"]["rollback"]["block"])}),
    "variant.rc-one-above": _variant(
        "8312/cap-conservation", "LyingReservedConfirmedMeter", None,
        "reserved 1001 + confirmed 0 over the cap 1000 (the write without the cap check)",
        "8312-cap-conservation-reserved-confirmed-one-above", {"meter": "reserved_confirmed"},
        _one_above_key("reserved_confirmed", "reserved-confirmed")),
    "variant.headroom-one-above": _variant(
        "8312/cap-conservation", "LyingHeadroomMeter",
        "meter-headroom", "cumulativeTurnover 8001 over maxCumulativeTurnover 8000",
        "8312-cap-conservation-headroom-named-one-above", {"meter": "headroom"},
        _one_above_key("headroom", "headroom")),
    "variant.mandate-one-above": _variant(
        "8312/cap-conservation", "LyingMandateMeter",
        "meter-mandate", "cumulativeUsed 1001 over maxCumulativeValue 1000",
        "8312-cap-conservation-mandate-one-above", {"meter": "mandate"},
        _one_above_key("mandate", "mandate")),
    "variant.epoch-unaligned": _variant(
        "8312/aggregate-budget", "LyingLeafEpochMeter",
        "meter-aggregate-budget", "a leaf whose local windows do not tile the root period "
        "draws its allocation 100 in two of them within root period 0: 200 > cap 100",
        "8312-aggregate-budget-epoch-unaligned", {"meter": "leaf_epochs"},
        lambda m: {"root": _variants(m)["leaf_epochs"]["root_id"], "period": "0",
                   "from_block": str(_variants(m)["leaf_epochs"]["draws"][0]["block"])}),
    "variant.charter-objective-differs": _variant(
        "sai/charter", "SwarmRegistry", "swarm-registry", "a swarm committed to a pack's "
        "charter and commitment hashes, its specHash and version, but to an objective hash "
        "of its own: only the objective differs", None, {"swarm": "charter"},
        lambda m: {"swarm": _variants(m)["charter"]["swarm"],
                   "pack": str(PACKS / _variants(m)["charter"]["pack"])}),
    "variant.revision-unannounced": _variant(
        "sai/revision", "LyingRevisionSwarmRegistry", "swarm-registry", "a leave that "
        "increments the revision without emitting Changed: the revision runs one past the "
        "Changed events", "sai-revision-unannounced", {"swarm": "revision"},
        lambda m: {"swarm": _variants(m)["revision"]["swarm"],
                   "from_block": str(_variants(m)["revision"]["formed_block"])}),
}
ABOUT.update(VARIANTS)


def describe(manifest: Manifest) -> None:
    """Attach ``about`` (with its parameters resolved against ``manifest``) to every moment."""
    missing = sorted(set(manifest["moments"]) - set(ABOUT))
    if missing:
        raise HistoryError(f"moment(s) without a description in devnet/moments.py: {missing}")
    for label, moment in manifest["moments"].items():
        about = dict(ABOUT[label])
        about["params"] = about["params"](manifest)
        moment["about"] = about
