"""AMM maintenance and signal status (the AMM specification, AMM §Policy and floor,
§Status derivation, §Demand, §Pulse): the pure derivations, and the recipes
``amm/layer-status`` and ``amm/signal-status`` that feed them proven storage.

Their reads need no clock (the head, the current policy and the floor, then the layer's
checkpoint and demand); only the derivation is of the block's time.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from recompute.recipes.amm_registry import LAYER, LAYOUT, SUBJECT, layer_index
from recompute.recipes.base import Inputs, Recipe, SplitRecipe
from recompute.recipes.outputs import BOOL, TIME, enum
from recompute.recipes.plan import BlockClock, Derivation, Params, Reads, Request, Struct, ViewCheck
from recompute.recipes.registry import register

MAINTENANCE = ("NOT_ENROLLED", "UNSUPPORTED", "UNSCHEDULED", "FRESH", "DUE", "OVERDUE")
SIGNAL = ("NOT_ENROLLED", "NOT_TRACKED", "PRESENT", "SILENT")

# (head, requirements): the requirements None when the subject is not enrolled
Requirements = tuple[Struct, Struct | None]
# (head, requirements, checkpoint, demand): the last three None when the subject is not enrolled
LayerInputs = tuple[Struct, Struct | None, Struct | None, Struct | None]


# ---- AMM §Policy and floor, §Status derivation ---------------------------------------------


def _min_nonzero(a: int, b: int) -> int:
    """The smaller of two values, a zero (none set) not counting; 0 if both are."""
    if a and b:
        return a if a < b else b
    return a or b


def effective_requirements(policy: Struct, floor: Struct) -> dict[str, Any]:
    """AMM §Policy and floor: supportedLayers is the policy's; requiredLayers the union; per
    layer the smallest non-zero maxInterval among the policy's (if it requires the layer) and
    the floor's (if it requires it); pulseInterval the smallest non-zero; dueWindow the
    policy's."""
    required = policy["requiredLayers"] | floor["requiredLayers"]
    intervals = []
    for layer in range(4):
        bit = 1 << layer
        from_policy = policy["maxInterval"][layer] if policy["requiredLayers"] & bit else 0
        from_floor = floor["maxInterval"][layer] if floor["requiredLayers"] & bit else 0
        intervals.append(_min_nonzero(from_policy, from_floor))
    return {
        "supportedLayers": policy["supportedLayers"],
        "requiredLayers": required,
        "maxInterval": intervals,
        "pulseInterval": _min_nonzero(policy["pulseInterval"], floor["pulseInterval"]),
        "dueWindow": policy["dueWindow"],
    }


def layer_status(head: Struct, requirements: Struct, checkpoint: Struct, demand: Struct,
                 layer: int, now: int) -> tuple[str, int, bool]:
    """AMM §Status derivation: ``(status, deadline (0 when none), never_completed)``.

    anchor = lastCompletedAt, or the enrollment time when the layer never completed;
    deadline = anchor + maxInterval[layer], lowered to dueBy while a demand is outstanding;
    OVERDUE if clock() >= deadline, DUE if clock() + dueWindow >= deadline, else FRESH.
    """
    if not head["enrolled"]:
        return "NOT_ENROLLED", 0, False
    never: bool = checkpoint["lastCompletedAt"] == 0
    bit = 1 << layer
    if not requirements["requiredLayers"] & bit:
        status = "UNSCHEDULED" if requirements["supportedLayers"] & bit else "UNSUPPORTED"
        return status, 0, never
    anchor = head["enrolledAt"] if never else checkpoint["lastCompletedAt"]
    deadline: int = anchor + requirements["maxInterval"][layer]
    # AMM §Demand: an outstanding demand lowers the deadline (it never raises it); it is
    # outstanding until cleared, and the registry stores demandedAt = 0 once cleared.
    if demand["demandedAt"] != 0 and demand["dueBy"] < deadline:
        deadline = demand["dueBy"]
    deadline = min(deadline, 2**48 - 1)  # a uint48 timepoint (AMM §Clock)
    if now >= deadline:
        return "OVERDUE", deadline, never
    if now + requirements["dueWindow"] >= deadline:
        return "DUE", deadline, never
    return "FRESH", deadline, never


def signal_status(head: Struct, requirements: Struct, now: int) -> tuple[str, int, int]:
    """AMM §Status derivation: ``(status, lastSignalAt, silentSince)``; SILENT when clock()
    exceeds lastSignalAt + pulseInterval, and silentSince is that end of the expected window
    (the specification: "the timepoint at which the signal became silent"); 0 unless SILENT."""
    if not head["enrolled"]:
        return "NOT_ENROLLED", 0, 0
    last: int = head["lastSignalAt"]
    interval: int = requirements["pulseInterval"]
    if interval == 0:
        return "NOT_TRACKED", last, 0
    end = last + interval
    if now > end:
        return "SILENT", last, min(end, 2**48 - 1)
    return "PRESENT", last, 0


def _status_failed(status: str, healthy: tuple[str, ...], bad: str) -> str:
    """"status is OVERDUE; healthy means not OVERDUE" (AMM §Status derivation)."""
    if status in healthy:
        return ""
    if status == bad:
        return f"status is {status}; healthy means not {bad}"
    return f"status is {status}; healthy means {', '.join(healthy[:-1])} or {healthy[-1]}"


# ---- reads shared by the status recipes ----------------------------------------------------


def _requirements_reads(subject: str, recipe: _StatusRecipe[Any] | None = None
                        ) -> Generator[Request, Any, Requirements]:
    """Generator: head, then the current policy version and the floor (two rounds).

    ``recipe`` supplies the three steps a rule of the specification fixes (whether the subject is
    enrolled, which policy version is current, how policy and floor combine), so that a
    mistaken method (``vectors verify --tamper``) can change exactly one of them."""
    recipe = recipe or _StatusRecipe()
    head: Struct = (yield Reads([f"heads[{subject}]"]))[f"heads[{subject}]"]
    if not recipe.is_enrolled(head):
        return head, None
    policy_path = f"policies[{subject}][{recipe.policy_version(head)}]"
    got = yield Reads([policy_path, f"floors[{subject}]"])
    return head, recipe.combine(got[policy_path], got[f"floors[{subject}]"])


class _StatusRecipe(SplitRecipe[Inputs]):
    """The steps of AMM §Policy and floor shared by the status recipes (their reads need no
    clock: only the derivation, AMM §Status derivation, is of the block's time)."""

    def is_enrolled(self, head: Struct) -> bool:
        return bool(head["enrolled"])  # AMM §Status derivation: NOT_ENROLLED otherwise

    def policy_version(self, head: Struct) -> int:
        version: int = head["policyVersion"]  # the current version (AMM §Policy and floor)
        return version

    def combine(self, policy: Struct, floor: Struct) -> Struct:
        return effective_requirements(policy, floor)


@register
class LayerStatus(_StatusRecipe[LayerInputs]):
    name = "amm/layer-status"
    outputs = {
        "status": enum(*MAINTENANCE),
        "deadline": TIME,
        "never_completed": BOOL,
        "clock": TIME,
    }
    help = "Maintenance status of one layer (FRESH/DUE/OVERDUE…) from proven storage."
    section = "AMM §Status derivation, §Policy and floor, §Demand"
    params = (SUBJECT, LAYER)
    layout = LAYOUT

    def reads(self, p: Params) -> Generator[Request, Any, LayerInputs]:
        """(head, requirements, checkpoint, demand); the last three None when unenrolled."""
        subject, layer = p["subject"], layer_index(p)
        head, requirements = yield from _requirements_reads(subject, self)
        if requirements is None:
            return head, None, None, None
        cp = f"checkpoints[{subject}][{layer}]"
        dm = f"demands[{subject}][{layer}]"
        got = yield Reads([cp, dm])
        return head, requirements, got[cp], got[dm]

    def derive(self, p: Params, inputs: LayerInputs, clock: BlockClock) -> Derivation:
        head, requirements, checkpoint, demand = inputs
        layer = layer_index(p)
        if requirements is None or checkpoint is None or demand is None:
            status, deadline, never = layer_status(head, {}, {}, {}, layer, clock.timestamp)
        else:
            status, deadline, never = self.status(head, requirements, checkpoint, demand, layer,
                                                  clock.timestamp)
        return Derivation(
            holds=status in ("FRESH", "DUE", "UNSCHEDULED"),
            derived={"status": status, "deadline": deadline, "never_completed": never,
                     "clock": clock.timestamp},
            predicate="the layer is not OVERDUE (nor unsupported, nor the subject unenrolled)",
            failed=_status_failed(status, ("FRESH", "DUE", "UNSCHEDULED"), "OVERDUE"),
        )

    def status(self, head: Struct, requirements: Struct, checkpoint: Struct, demand: Struct,
               layer: int, now: int) -> tuple[str, int, bool]:
        return layer_status(head, requirements, checkpoint, demand, layer, now)

    def mistakes(self) -> dict[str, Recipe]:
        return {"amm.pulse.no-deadline-change": _PulseAnchoredStatus()}

    def views(self, p: Params) -> list[ViewCheck]:
        def compare(returned: tuple[Any, ...], derived: dict[str, Any]
                    ) -> dict[str, tuple[Any, Any]]:
            return {
                "status": (MAINTENANCE[returned[0]], derived["status"]),
                "deadline": (returned[1], derived["deadline"]),
                "never_completed": (returned[2], derived["never_completed"]),
            }
        return [ViewCheck("layerStatus(address,uint8)", (p["subject"], p["layer"]),
                          ("address", "uint8"), ("uint8", "uint48", "bool"), compare)]


class _PulseAnchoredStatus(LayerStatus):
    """A wrong-but-plausible method: treating activity as maintenance. AMM §Pulse says a pulse
    MUST NOT change any deadline; vectors must tell this method apart."""

    def status(self, head: Struct, requirements: Struct, checkpoint: Struct, demand: Struct,
               layer: int, now: int) -> tuple[str, int, bool]:
        moved = dict(checkpoint, lastCompletedAt=max(head["lastSignalAt"],
                                                     checkpoint["lastCompletedAt"]))
        return layer_status(head, requirements, moved, demand, layer, now)


@register
class SignalStatus(_StatusRecipe[Requirements]):
    name = "amm/signal-status"
    outputs = {
        "status": enum(*SIGNAL),
        "last_signal_at": TIME,
        "silent_since": TIME,
        "clock": TIME,
    }
    help = "Activity signal status (PRESENT/SILENT…) from proven storage."
    section = "AMM §Status derivation, §Pulse"
    params = (SUBJECT,)
    layout = LAYOUT

    def reads(self, p: Params) -> Generator[Request, Any, Requirements]:
        """(head, requirements); requirements None when unenrolled."""
        return (yield from _requirements_reads(p["subject"], self))

    def derive(self, p: Params, inputs: Requirements, clock: BlockClock) -> Derivation:
        head, requirements = inputs
        status, last, silent = self.signal(head, requirements or {}, clock.timestamp)
        return Derivation(
            holds=status in ("PRESENT", "NOT_TRACKED"),
            derived={"status": status, "last_signal_at": last, "silent_since": silent,
                     "clock": clock.timestamp},
            predicate="the subject is not SILENT (nor unenrolled)",
            failed=_status_failed(status, ("PRESENT", "NOT_TRACKED"), "SILENT"),
        )

    def signal(self, head: Struct, requirements: Struct, now: int) -> tuple[str, int, int]:
        return signal_status(head, requirements, now)

    def views(self, p: Params) -> list[ViewCheck]:
        def compare(returned: tuple[Any, ...], derived: dict[str, Any]
                    ) -> dict[str, tuple[Any, Any]]:
            return {
                "status": (SIGNAL[returned[0]], derived["status"]),
                "last_signal_at": (returned[1], derived["last_signal_at"]),
                "silent_since": (returned[2], derived["silent_since"]),
            }
        return [ViewCheck("signalStatus(address)", (p["subject"],), ("address",),
                          ("uint8", "uint48", "uint48"), compare)]
