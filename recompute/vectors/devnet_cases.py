"""The devnet vectors' cases: for each, the recipe, the named moment it is captured at, the
contract, layout and parameters (read from the devnet's manifest), and what it shows
(:data:`DEVNET_CASES`; ``recompute.vectors.catalog`` captures them).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recompute.core.jsontext import canonical_json
from recompute.data import PACKS
from recompute.disk.whole_file import write_whole

Manifest = dict[str, Any]  # the devnet's manifest (recompute devnet up)
FromManifest = Callable[[Manifest], Any]  # a parameter read from it


def _amm(name: str, recipe: str, moment: str, subject: str, description: str,
         registry: str = "AgentMeditationRegistry", **params: Any) -> dict[str, Any]:
    def resolve(manifest: Manifest) -> dict[str, str]:
        return {k: str(v(manifest)) if callable(v) else str(v) for k, v in {
            "subject": lambda m: m["amm"]["subjects"][subject]["address"].lower(),
            **params}.items()}
    return {"name": name, "recipe": recipe, "moment": moment, "contract": registry,
            "layout": "amm-registry-lying" if registry.startswith("Lying") else None,
            "params": resolve, "description": description}


DEVNET_CASES = [
    _amm("amm-layer-status-due", "amm/layer-status", "amm.due", "pulser",
         "a subject that only pulses is DUE one hour before its layer 0 deadline", layer=0),
    _amm("amm-layer-status-overdue", "amm/layer-status", "amm.overdue", "pulser",
         "the same subject is OVERDUE at its deadline: the predicate fails (BAD)", layer=0),
    _amm("amm-signal-status-silent", "amm/signal-status", "amm.silent-fresh", "example",
         "the worked example's subject is SILENT (and fresh): BAD"),
    _amm("amm-signal-status-present", "amm/signal-status", "amm.present-overdue", "pulser",
         "a pulsing subject is PRESENT (while overdue): GOOD"),
    _amm("amm-state-root-worked-example", "amm/state-root", "amm.after-cycle-1", "example",
         "after the seed's worked example: version 2, root 0x9918ebff…c3de, consistent"),
    _amm("amm-restore-claim-valid", "amm/restore-claim", "amm.rollback", "example",
         "a rollback to version 1: rootAt(1) is the post root (GOOD)",
         block=lambda m: m["moments"]["amm.rollback"]["number"]),
    _amm("amm-restore-claim-false", "amm/restore-claim", "amm.false-restore", "lying-example",
         "a false restore claim the lying registry accepted: rootAt(1) differs (BAD)",
         registry="LyingMeditationRegistry",
         block=lambda m: m["moments"]["amm.false-restore"]["number"]),
]


def _case(name: str, recipe: str, moment: str, contract: str, description: str,
          layout: str | None = None, expect: dict[str, str] | None = None,
          **params: Any) -> dict[str, Any]:
    def resolve(manifest: Manifest) -> dict[str, str]:
        return {k: str(v(manifest)) if callable(v) else str(v) for k, v in params.items()}
    return {"name": name, "recipe": recipe, "moment": moment, "contract": contract,
            "layout": layout, "params": resolve, "expect": expect or {},
            "description": description}


def _swarm(name: str) -> FromManifest:
    return lambda m: m["swarm"]["swarms"][name]["id"]


def _formed(name: str) -> FromManifest:
    return lambda m: m["swarm"]["swarms"][name]["formed_block"]


def _account(index: int) -> FromManifest:
    return lambda m: m["accounts"][index].lower()


def _before_draws(m: Manifest) -> int:
    return int(m["moments"]["meter.draw-refused"]["number"]) - 20


def _document(name: str, document: dict[str, Any]) -> Callable[[Manifest], Path]:
    """A disclosed document as a file parameter (the vector embeds its content)."""
    def write(_manifest: Manifest) -> Path:
        path = Path(tempfile.gettempdir()) / "recompute-vector-docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, canonical_json(document) + "\n")
        return path
    return write


PULSER_RUNTIME = {"schema": "amm.layer.runtime/1", "layer": 0, "subject": "pulser",
                  "revision": 0}

DEVNET_CASES += [
    _case("amm-commitment-disclosed-document", "amm/commitment", "amm.due",
          "AgentMeditationRegistry",
          "the pulser's disclosed layer 0 document and zero salt recompute to its commitment "
          "(GOOD)", subject=lambda m: m["amm"]["subjects"]["pulser"]["address"].lower(),
          layer=0, document=_document("pulser-layer-0.json", PULSER_RUNTIME)),
    _case("amm-commitment-altered-document", "amm/commitment", "amm.due",
          "AgentMeditationRegistry",
          "the same document with one field changed does not (BAD)",
          subject=lambda m: m["amm"]["subjects"]["pulser"]["address"].lower(), layer=0,
          document=_document("pulser-layer-0-altered.json", {**PULSER_RUNTIME, "revision": 1})),
    _case("8312-cap-conservation-headroom-at-cap", "8312/cap-conservation",
          "meter.headroom-at-cap", "HeadroomMeter",
          "the thread's struct:2:2:1 shape: turnover 8000 of 8000 (GOOD)",
          key=lambda m: m["meters"]["headroom"]["envelopes"]["envelope-1"]["id"],
          shape="struct:2:2:1"),
    _case("8312-cap-conservation-literal-cap-exceeded", "8312/cap-conservation",
          "meter.confirmed-at-cap", "ReservedConfirmedMeter",
          "reserved + confirmed = 1000 against a literal cap:999 (BAD)",
          key=lambda m: m["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"],
          shape="cap:999"),
    _case("8312-aggregate-budget-at-cap", "8312/aggregate-budget", "meter.period-1",
          "AggregateBudgetMeter",
          "period 0: draws 40 + 40 + 20 over three edges, the refused draw absent: 100 <= 100 "
          "and equal to spentRoot (GOOD)", layout="meter-aggregate-budget",
          root=lambda m: m["meters"]["aggregate"]["trees"]["tree-1"]["root_id"], period=0,
          from_block=_before_draws),
    _case("8312-aggregate-budget-over-cap", "8312/aggregate-budget", "meter.over-cap",
          "LyingAggregateBudgetMeter",
          "the lying meter's overdraw: 120 > 100 although each edge stayed under its cap (BAD)",
          layout="meter-aggregate-budget-lying",
          root=lambda m: m["meters"]["aggregate_lying"]["trees"]["tree-1"]["root_id"],
          period=0, from_block=_before_draws),
    _case("sai-roster-met-activated", "sai/roster", "swarm.activated", "SwarmRegistry",
          "a minimal gated swarm activated on ROSTER_MET (GOOD)", layout="swarm-registry",
          swarm=_swarm("minimal"), from_block=_formed("minimal")),
    _case("sai-roster-lost-suspended", "sai/roster", "swarm.suspended", "SwarmRegistry",
          "a worker challenged false and suspended: the roster is lost (BAD)",
          layout="swarm-registry", swarm=_swarm("challenged"),
          from_block=_formed("challenged")),
    _case("sai-member-not-carried", "sai/member", "swarm.select-advanced", "SwarmRegistry",
          "a suspended bidder lazily NOT_CARRIED by a SELECT advance", layout="swarm-registry",
          expect={"status": "EXITED", "exit_reason": "NOT_CARRIED"},
          swarm=_swarm("tender"), account=_account(6)),
    _case("sai-member-expelled-expected-active", "sai/member", "swarm.expelled",
          "SwarmRegistry", "--expect status=ACTIVE for an expelled member (BAD)",
          layout="swarm-registry", expect={"status": "ACTIVE"},
          swarm=_swarm("challenged"), account=_account(6)),
    _case("sai-charter-label-commitment", "sai/charter", "swarm.activated", "SwarmRegistry",
          "a disclosed pack that does not hash to the devnet swarm's charterHash (the devnet "
          "commits to labels, not packs): BAD", layout="swarm-registry",
          swarm=_swarm("minimal"), pack=PACKS / "pack-v1.json"),
    _case("sai-revision-consistent", "sai/revision", "swarm.dissolved", "SwarmRegistry",
          "the minimal swarm's revision equals the receipt-proven Changed events (GOOD)",
          layout="swarm-registry", swarm=_swarm("minimal"), from_block=_formed("minimal")),
]


# ---- the rule inventory's vectors (vectors/rules.json): each decides at least one rule ----------


def _subject(name: str) -> FromManifest:
    return lambda m: m["amm"]["subjects"][name]["address"].lower()


def _at(moment: str) -> FromManifest:
    return lambda m: m["moments"][moment]["number"]


def _lying_tree(m: Manifest) -> dict[str, Any]:
    tree: dict[str, Any] = m["meters"]["aggregate_lying"]["trees"]["tree-1"]
    return tree


def _c_draw_block(m: Manifest) -> int:
    draws = m["meters"]["aggregate"]["trees"]["tree-1"]["draws"]
    return int(next(d["block"] for d in draws if d["node"] == "C" and d["admitted"]))


_HONEST, _LYING = "AgentMeditationRegistry", "LyingMeditationRegistry"
_LAYER, _SIGNAL, _RESTORE = "amm/layer-status", "amm/signal-status", "amm/restore-claim"
_LYING_AB, _LYING_AB_LAYOUT = "LyingAggregateBudgetMeter", "meter-aggregate-budget-lying"
_SR = "swarm-registry"

RULE_CASES = [
    _case("amm-layer-status-not-enrolled", _LAYER, "amm.due", _HONEST,
          "the deployer never enrolled: NOT_ENROLLED (BAD)", subject=_account(0), layer=0),
    _case("amm-layer-status-unscheduled", _LAYER, "amm.demand-outstanding", _HONEST,
          "layer 2 is supported, not required: UNSCHEDULED (GOOD)", subject=_subject("demanded"),
          layer=2),
    _case("amm-layer-status-unsupported", _LAYER, "amm.demand-outstanding", _HONEST,
          "layer 3 is not in supportedLayers: UNSUPPORTED (BAD)", subject=_subject("demanded"),
          layer=3),
    _case("amm-layer-status-demand-lowers", _LAYER, "amm.demand-outstanding", _HONEST,
          "an outstanding demand lowers layer 0's deadline from enrolment + 86400 to its dueBy "
          "(FRESH, GOOD)", subject=_subject("demanded"), layer=0),
    _case("amm-layer-status-demand-overdue", _LAYER, "amm.demand-overdue", _HONEST,
          "OVERDUE exactly at the demand's dueBy (clock() >= deadline), BAD",
          subject=_subject("demanded"), layer=0),
    _case("amm-layer-status-demand-not-raised", _LAYER, "amm.demand-not-raised", _HONEST,
          "a demand due after the deadline does not raise it: OVERDUE at enrolment + 86400 (BAD)",
          subject=_subject("demanded"), layer=1),
    _case("amm-layer-status-demand-not-met", _LAYER, "amm.demand-not-met", _HONEST,
          "a completion that ended before demandedAt leaves the demand outstanding: deadline "
          "dueBy (FRESH, GOOD)", subject=_subject("controlled"), layer=1),
    _case("amm-layer-status-demand-cleared", _LAYER, "amm.demand-cleared", _HONEST,
          "a completion at or after demandedAt cleared the demand: deadline from the completion "
          "(FRESH, GOOD)", subject=_subject("controlled"), layer=1),
    _case("amm-layer-status-completion-anchor", _LAYER, "amm.present-overdue", _HONEST,
          "layer 0 judged from its last completion, not from enrolment (FRESH, GOOD)",
          subject=_subject("controlled"), layer=0),
    _case("amm-layer-status-interval-elapsed", _LAYER, "amm.interval-elapsed", _HONEST,
          "a never-completed layer 3 is OVERDUE at enrolment + its interval (BAD)",
          subject=_subject("controlled"), layer=3),
    _case("amm-layer-status-policy-lengthened", _LAYER, "amm.policy-lengthened", _HONEST,
          "policy version 2 lengthens layer 3's interval from its effective time: FRESH again "
          "from the same anchor (GOOD)", subject=_subject("controlled"), layer=3),
    _case("amm-layer-status-floor-interval", _LAYER, "amm.floor-set", _HONEST,
          "the floor's shorter interval governs from the floor's effective time (FRESH, GOOD)",
          subject=_subject("controlled"), layer=3),
    _case("amm-layer-status-floor-requires", _LAYER, "amm.demand-outstanding", _HONEST,
          "the relaxed policy drops layer 3, the floor still requires it: OVERDUE (BAD)",
          subject=_subject("controlled"), layer=3),
    _case("amm-signal-status-not-tracked", _SIGNAL, "amm.demand-outstanding", _HONEST,
          "no pulse interval in policy nor floor: NOT_TRACKED (GOOD)",
          subject=_subject("demanded")),
    _case("amm-signal-status-window-ends", _SIGNAL, "amm.signal-window-ends", _HONEST,
          "exactly lastSignalAt + pulseInterval: still PRESENT (GOOD)", subject=_subject("window")),
    _case("amm-signal-status-silent-by-one", _SIGNAL, "amm.signal-silent-by-one", _HONEST,
          "one second later: SILENT since the window's end (BAD)", subject=_subject("window")),
    _case("amm-signal-status-floor-pulse", _SIGNAL, "amm.floor-holds", _HONEST,
          "the policy tracks no pulse, the floor's 36000 does: SILENT (BAD)",
          subject=_subject("controlled")),
    _case("amm-restore-claim-no-claim", _RESTORE, "amm.after-cycle-1", _HONEST,
          "the worked example's record has restoresVersion 0: no claim (BAD)",
          subject=_subject("example"), block=_at("amm.after-cycle-1"), seq=1),
    _case("amm-restore-claim-lying-rollback", _RESTORE, "amm.lying-rollback", _LYING,
          "a rollback from version 3 to version 1's root: a valid claim (GOOD)",
          layout="amm-registry-lying", subject=_subject("lying-example"),
          block=_at("amm.lying-rollback")),
    _case("amm-restore-claim-no-advance", _RESTORE, "amm.restore-no-advance", _LYING,
          "restoresVersion 1 with no change: below the base version and rootAt(1) is the post "
          "root, as the honest registry checks; the version does not advance (GOOD, "
          "version_advanced false)", layout="amm-registry-lying", subject=_subject("lying-example"),
          block=_at("amm.restore-no-advance")),
    _case("amm-restore-claim-equal-base", _RESTORE, "amm.restore-equal-base", _LYING,
          "restoresVersion equal to the base version (BAD)", layout="amm-registry-lying",
          subject=_subject("lying-example"), block=_at("amm.restore-equal-base")),
    _case("amm-restore-claim-above-base", _RESTORE, "amm.restore-above-base", _LYING,
          "restoresVersion 5 above the base version 4: the version the record itself creates "
          "(BAD)", layout="amm-registry-lying", subject=_subject("lying-example"),
          block=_at("amm.restore-above-base")),
    _case("sai-member-tender-dissolved-not-carried", "sai/member", "swarm.tender-dissolved",
          "SwarmRegistry", "a bidder not carried by SELECT stays NOT_CARRIED after dissolution",
          layout=_SR, swarm=_swarm("tender"), account=_account(6)),
    _case("sai-member-tender-dissolved-carried", "sai/member", "swarm.tender-dissolved",
          "SwarmRegistry", "a carried worker exits SWARM_DISSOLVED", layout=_SR,
          swarm=_swarm("tender"), account=_account(4)),
    _case("sai-member-recruit-dissolved", "sai/member", "swarm.recruit-dissolved",
          "SwarmRegistry", "after a RECRUIT advance and dissolution a first-phase worker is "
          "NOT_CARRIED", layout=_SR, swarm=_swarm("recruit"), account=_account(3)),
    _case("sai-member-aborted", "sai/member", "swarm.aborted", "SwarmRegistry",
          "aborted before activation: the coordinator exits SWARM_DISSOLVED", layout=_SR,
          swarm=_swarm("quorum"), account=_account(6)),
    _case("sai-roster-roles-short", "sai/roster", "swarm.roles-short", "SwarmRegistry",
          "three ACTIVE workers meet minMembers 3, the coordinator role (min 1) is short (BAD)",
          layout=_SR, swarm=_swarm("quorum"), from_block=_formed("quorum")),
    _case("sai-roster-quorum-met", "sai/roster", "swarm.quorum-met", "SwarmRegistry",
          "four ACTIVE, every role at its min (GOOD)", layout=_SR, swarm=_swarm("quorum"),
          from_block=_formed("quorum")),
    _case("sai-roster-total-short", "sai/roster", "swarm.total-short", "SwarmRegistry",
          "every role at its min, two ACTIVE below minMembers 3 (BAD)", layout=_SR,
          swarm=_swarm("quorum"), from_block=_formed("quorum")),
    _case("sai-roster-recruit-advanced", "sai/roster", "swarm.recruit-advanced",
          "SwarmRegistry", "a RECRUIT advance leaves nobody carried: 0 ACTIVE (BAD)",
          layout=_SR, swarm=_swarm("recruit"), from_block=_formed("recruit")),
    _case("sai-roster-aborted", "sai/roster", "swarm.aborted", "SwarmRegistry",
          "aborted: every seat SWARM_DISSOLVED, 0 ACTIVE (BAD)", layout=_SR,
          swarm=_swarm("quorum"), from_block=_formed("quorum")),
    _case("8312-cap-conservation-literal-at-cap", "8312/cap-conservation", "meter.at-cap",
          "ReservedConfirmedMeter", "reserved 600 + confirmed 400 against cap:1000 (GOOD)",
          key=lambda m: m["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"],
          shape="cap:1000"),
    _case("8312-cap-conservation-literal-one-above", "8312/cap-conservation", "meter.at-cap",
          "ReservedConfirmedMeter", "reserved 600 + confirmed 400 against cap:999 (BAD)",
          key=lambda m: m["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"],
          shape="cap:999"),
    _case("8312-cap-conservation-reserved-confirmed-at-cap", "8312/cap-conservation",
          "meter.at-cap", "ReservedConfirmedMeter",
          "reserved 600 + confirmed 400 against the stored cap 1000 (GOOD)",
          key=lambda m: m["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"],
          shape="reserved-confirmed"),
    _case("8312-cap-conservation-headroom-used", "8312/cap-conservation", "meter.headroom-used",
          "HeadroomMeter", "struct:2:2:1: turnover 5500 of 8000 (GOOD)",
          key=lambda m: m["meters"]["headroom"]["envelopes"]["envelope-1"]["id"],
          shape="struct:2:2:1"),
    _case("8312-cap-conservation-headroom-named-at-cap", "8312/cap-conservation",
          "meter.headroom-at-cap", "HeadroomMeter", "shape headroom: 8000 of 8000 (GOOD)",
          layout="meter-headroom",
          key=lambda m: m["meters"]["headroom"]["envelopes"]["envelope-1"]["id"],
          shape="headroom"),
    _case("8312-cap-conservation-mandate-at-cap", "8312/cap-conservation",
          "meter.mandate-at-cap", "MandateMeter", "shape mandate: 1000 of 1000 (GOOD)",
          layout="meter-mandate", shape="mandate", agent=_account(4), principal=_account(2)),
    _case("8312-cap-conservation-aggregate-budget-at-cap", "8312/cap-conservation",
          "meter.lying-at-cap", _LYING_AB, "shape aggregate-budget: spentRoot 100 of 100 (GOOD)",
          layout=_LYING_AB_LAYOUT, key=lambda m: _lying_tree(m)["root_id"],
          shape="aggregate-budget", period=lambda m: _lying_tree(m)["rule_period"]["period"]),
    _case("8312-cap-conservation-aggregate-budget-one-above", "8312/cap-conservation",
          "meter.one-above", _LYING_AB, "shape aggregate-budget: spentRoot 101 of 100 (BAD)",
          layout=_LYING_AB_LAYOUT, key=lambda m: _lying_tree(m)["root_id"],
          shape="aggregate-budget", period=lambda m: _lying_tree(m)["rule_period"]["period"]),
    _case("8312-aggregate-budget-lying-at-cap", "8312/aggregate-budget", "meter.lying-at-cap",
          _LYING_AB, "draws 50 + 50 in one period: 100 <= 100 and equal to spentRoot (GOOD)",
          layout=_LYING_AB_LAYOUT, root=lambda m: _lying_tree(m)["root_id"],
          period=lambda m: _lying_tree(m)["rule_period"]["period"], from_block=_before_draws),
    _case("8312-aggregate-budget-one-above", "8312/aggregate-budget", "meter.one-above",
          _LYING_AB, "an overdraw of 1 past the cap: 101 > 100 (BAD)", layout=_LYING_AB_LAYOUT,
          root=lambda m: _lying_tree(m)["root_id"],
          period=lambda m: _lying_tree(m)["rule_period"]["period"], from_block=_before_draws),
    _case("8312-aggregate-budget-missing-draws", "8312/aggregate-budget", "meter.period-0",
          "AggregateBudgetMeter", "collected from C's draw on: the log says 20, spentRoot 100 "
          "(BAD)", layout="meter-aggregate-budget",
          root=lambda m: m["meters"]["aggregate"]["trees"]["tree-1"]["root_id"], period=0,
          from_block=_c_draw_block),
]



def _variant_cases() -> list[dict[str, Any]]:
    """The lying variants' moments (recompute/devnet/history_variants.py), each captured as
    its moment says (recipe, contract, layout, parameters), plus the struct:2:2:1 shape at the
    headroom one above its cap."""
    from recompute.devnet.moments import VARIANTS

    cases = [{"name": about["vector"], "recipe": about["recipe"], "moment": label,
              "contract": about["contract"], "layout": about["layout"],
              "params": about["params"], "expect": {},
              "description": about["text"] + " (BAD)"} for label, about in VARIANTS.items()
             if about["vector"]]
    cases.append(_case(
        "sai-charter-objective-differs", "sai/charter", "variant.charter-objective-differs",
        "SwarmRegistry", "a pack whose charter, commitment, specHash and version match the "
        "swarm's; its objective does not hash to the swarm's objectiveHash (BAD)",
        layout="swarm-registry", swarm=lambda m: m["variants"]["charter"]["swarm"],
        pack=PACKS / "pack-objective-differs.json"))
    cases.append(_case(
        "8312-cap-conservation-headroom-one-above", "8312/cap-conservation",
        "variant.headroom-one-above", "LyingHeadroomMeter",
        "the thread's struct:2:2:1 shape: turnover 8001 of 8000 (BAD)",
        key=lambda m: m["variants"]["meters"]["headroom"]["envelope"], shape="struct:2:2:1"))
    return cases


DEVNET_CASES += RULE_CASES + _variant_cases()
