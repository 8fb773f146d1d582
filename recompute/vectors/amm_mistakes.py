"""Wrong-but-plausible methods of the AMM recipes, one per rule of ``vectors/rules.json``.

Each mistake breaks exactly one rule of the specification (the rule id names it) and otherwise
derives as the recipe does; ``vectors verify --tamper`` and ``tests/vectors/test_rule_coverage.py``
check that at least one shipped vector tells each apart. None of them is registered as a recipe:
they are registered by recipe name beside the tamper mode (:mod:`recompute.vectors.mistakes`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from recompute.core.abiword import encode_static as abi_encode
from recompute.core.jsontext import canonical_json
from recompute.core.keccak import keccak256
from recompute.recipes.amm_commitments import TAG_LAYER_COMMITMENT, Commitment, StateRoot
from recompute.recipes.amm_restore import RestoreClaim, restore_claim
from recompute.recipes.amm_status import (
    LayerStatus,
    SignalStatus,
    effective_requirements,
    layer_status,
    signal_status,
)
from recompute.recipes.base import Recipe
from recompute.recipes.plan import Struct

# the steps a mistake may change (AMM §Status derivation, §Policy and floor)
Inputs = tuple[Struct, Struct, Struct, Struct]  # head, requirements, checkpoint, demand
InputStep = Callable[[Struct, Struct, Struct, Struct, int], Inputs]
LayerAnswer = tuple[str, int, bool]  # status, deadline, never completed
OutputStep = Callable[[LayerAnswer, int, Struct], LayerAnswer]
CombineStep = Callable[[Struct, Struct], Struct]
SignalAnswer = tuple[str, int, int]  # status, lastSignalAt, silentSince
SignalStep = Callable[[Struct, Struct, int], SignalAnswer]

_FAR = 2**47  # an interval that never decides a deadline below a demand's dueBy


class _LayerMistake(LayerStatus):
    """layer_status with its inputs or its answer changed, or one policy step changed."""

    def __init__(self, inputs: InputStep | None = None, output: OutputStep | None = None,
                 combine: CombineStep | None = None, version: bool = False,
                 enrolled: bool = False):
        self._inputs, self._output = inputs, output
        self._combine, self._version, self._enrolled = combine, version, enrolled

    def status(self, head: Struct, requirements: Struct, checkpoint: Struct, demand: Struct,
               layer: int, now: int) -> LayerAnswer:
        if self._enrolled:
            head = dict(head, enrolled=True)
        if self._inputs:
            head, requirements, checkpoint, demand = self._inputs(
                head, requirements, checkpoint, demand, layer)
        out = layer_status(head, requirements, checkpoint, demand, layer, now)
        return self._output(out, now, requirements) if self._output else out

    def is_enrolled(self, head: Struct) -> bool:
        return True if self._enrolled else super().is_enrolled(head)

    def policy_version(self, head: Struct) -> int:
        return 1 if self._version else super().policy_version(head)

    def combine(self, policy: Struct, floor: Struct) -> Struct:
        return self._combine(policy, floor) if self._combine else super().combine(policy, floor)


def _policy_required_only(policy: Struct, floor: Struct) -> Struct:
    return dict(effective_requirements(policy, floor), requiredLayers=policy["requiredLayers"])


def _policy_interval_first(policy: Struct, floor: Struct) -> Struct:
    """The policy's interval wherever the policy requires the layer, the floor's elsewhere."""
    out = effective_requirements(policy, floor)
    out["maxInterval"] = [
        policy["maxInterval"][i] if policy["requiredLayers"] & (1 << i)
        else floor["maxInterval"][i] if floor["requiredLayers"] & (1 << i) else 0
        for i in range(4)]
    return out


def _policy_pulse_only(policy: Struct, floor: Struct) -> Struct:
    return dict(effective_requirements(policy, floor), pulseInterval=policy["pulseInterval"])


def _swap_unscheduled(out: LayerAnswer, now: int, requirements: Struct) -> LayerAnswer:
    swap = {"UNSCHEDULED": "UNSUPPORTED", "UNSUPPORTED": "UNSCHEDULED"}
    return (swap.get(out[0], out[0]), *out[1:])


def _overdue_after_deadline(out: LayerAnswer, now: int, requirements: Struct) -> LayerAnswer:
    status, deadline, never = out
    if status == "OVERDUE" and now == deadline:
        return ("DUE" if now + requirements["dueWindow"] >= deadline else "FRESH"), deadline, never
    return out


def _no_due_window(out: LayerAnswer, now: int, requirements: Struct) -> LayerAnswer:
    return ("FRESH" if out[0] == "DUE" else out[0]), *out[1:]


def _anchor_at_enrolment(head: Struct, requirements: Struct, checkpoint: Struct, demand: Struct,
                         layer: int) -> Inputs:
    if checkpoint["lastCompletedAt"]:
        checkpoint = dict(checkpoint, lastCompletedAt=head["enrolledAt"])
    return head, requirements, checkpoint, demand


def _never_completed_from_zero(head: Struct, requirements: Struct, checkpoint: Struct,
                               demand: Struct, layer: int) -> Inputs:
    return dict(head, enrolledAt=0), requirements, checkpoint, demand


def _ignore_demand(head: Struct, requirements: Struct, checkpoint: Struct, demand: Struct,
                   layer: int) -> Inputs:
    return head, requirements, checkpoint, dict(demand, demandedAt=0)


def _demand_replaces_deadline(head: Struct, requirements: Struct, checkpoint: Struct,
                              demand: Struct, layer: int) -> Inputs:
    if demand["demandedAt"] and requirements.get("maxInterval"):
        intervals = list(requirements["maxInterval"])
        intervals[layer] = _FAR
        requirements = dict(requirements, maxInterval=intervals)
    return head, requirements, checkpoint, demand


def _cleared_demand_applies(head: Struct, requirements: Struct, checkpoint: Struct,
                            demand: Struct, layer: int) -> Inputs:
    return head, requirements, checkpoint, dict(demand, demandedAt=demand["demandedAt"] or 1)


def layer_status_mistakes() -> dict[str, Recipe]:
    return {
        "amm.status.not-enrolled": _LayerMistake(enrolled=True),
        "amm.status.unscheduled-or-unsupported": _LayerMistake(output=_swap_unscheduled),
        "amm.status.never-completed-anchor": _LayerMistake(inputs=_never_completed_from_zero),
        "amm.status.completion-anchor": _LayerMistake(inputs=_anchor_at_enrolment),
        "amm.status.overdue-at-deadline": _LayerMistake(output=_overdue_after_deadline),
        "amm.status.due-window": _LayerMistake(output=_no_due_window),
        "amm.demand.lowers-deadline": _LayerMistake(inputs=_ignore_demand),
        "amm.demand.never-raises": _LayerMistake(inputs=_demand_replaces_deadline),
        "amm.demand.outstanding-only": _LayerMistake(inputs=_cleared_demand_applies),
        "amm.policy.required-union": _LayerMistake(combine=_policy_required_only),
        "amm.policy.interval-smallest": _LayerMistake(combine=_policy_interval_first),
        "amm.policy.current-version": _LayerMistake(version=True),
    }


class _SignalMistake(SignalStatus):
    def __init__(self, signal: SignalStep | None = None, combine: CombineStep | None = None):
        self._signal, self._combine = signal, combine

    def signal(self, head: Struct, requirements: Struct, now: int) -> SignalAnswer:
        return self._signal(head, requirements, now) if self._signal \
            else signal_status(head, requirements, now)

    def combine(self, policy: Struct, floor: Struct) -> Struct:
        return self._combine(policy, floor) if self._combine else super().combine(policy, floor)


def _zero_interval_present(head: Struct, requirements: Struct, now: int) -> SignalAnswer:
    out = signal_status(head, requirements, now)
    return ("PRESENT", *out[1:]) if out[0] == "NOT_TRACKED" else out


def _silent_at_window_end(head: Struct, requirements: Struct, now: int) -> SignalAnswer:
    out = signal_status(head, requirements, now)
    interval = requirements.get("pulseInterval", 0)
    if out[0] == "PRESENT" and now == head["lastSignalAt"] + interval:
        return "SILENT", out[1], now
    return out


def _silent_since_now(head: Struct, requirements: Struct, now: int) -> SignalAnswer:
    out = signal_status(head, requirements, now)
    return (out[0], out[1], now) if out[0] == "SILENT" else out


def signal_status_mistakes() -> dict[str, Recipe]:
    return {
        "amm.signal.not-tracked": _SignalMistake(signal=_zero_interval_present),
        "amm.signal.silent-exceeds": _SignalMistake(signal=_silent_at_window_end),
        "amm.signal.silent-since": _SignalMistake(signal=_silent_since_now),
        "amm.policy.pulse-interval-smallest": _SignalMistake(combine=_policy_pulse_only),
    }


class _UntaggedRoot(StateRoot):
    def root(self, commitments: Sequence[bytes]) -> bytes:
        return keccak256(abi_encode(["bytes32"] * 4, list(commitments)))


class _PreviousVersionRoot(StateRoot):
    def root_version(self, head: Struct) -> int:
        return max(super().root_version(head) - 1, 0)


def state_root_mistakes() -> dict[str, Recipe]:
    return {"amm.root.tagged-encoding": _UntaggedRoot(),
            "amm.root.root-at-state-version": _PreviousVersionRoot()}


class _ZeroIsAClaim(RestoreClaim):
    def has_claim(self, record: Struct) -> bool:
        return True


class _ChecksWithout(RestoreClaim):
    """restore_claim with one step changed: a check dropped (always true), the version bound
    made inclusive (``"equal-base"``: restoresVersion <= the base version), or the derived
    ``version_advanced`` reported true whatever the record did."""

    def __init__(self, dropped: str):
        self._dropped = dropped

    def checks(self, record: Struct, root_at_restored: bytes, root_at_new: bytes
               ) -> dict[str, Any]:
        out = restore_claim(record, root_at_restored, root_at_new)
        rv = record["restores_version"]
        if self._dropped == "restores_earlier_version":
            out[self._dropped] = rv > 0
        elif self._dropped == "equal-base":
            out["restores_earlier_version"] = 0 < rv <= record["base_version"]
        else:
            out[self._dropped] = True
        return out


def restore_claim_mistakes() -> dict[str, Recipe]:
    return {
        "amm.restore.zero-is-no-claim": _ZeroIsAClaim(),
        "amm.restore.below-current-version": _ChecksWithout("restores_earlier_version"),
        "amm.restore.equal-base-version": _ChecksWithout("equal-base"),
        "amm.restore.version-advances": _ChecksWithout("version_advanced"),
        "amm.restore.root-at-new-version": _ChecksWithout("root_at_new_matches"),
    }


class _SortedJsonCommitment(Commitment):
    """contentHash over ``json.dumps(sort_keys=True)`` (sorted but not RFC 8785 canonical)."""

    def commitment(self, layer: int, schema: str, document: Any, salt: bytes) -> bytes:
        content = keccak256(canonical_json(document).encode())
        return keccak256(abi_encode(["bytes32", "uint8", "bytes32", "bytes32", "bytes32"],
                                    [TAG_LAYER_COMMITMENT, layer, keccak256(schema.encode()),
                                     content, salt]))


def commitment_mistakes() -> dict[str, Recipe]:
    return {"amm.commitment.jcs": _SortedJsonCommitment()}
