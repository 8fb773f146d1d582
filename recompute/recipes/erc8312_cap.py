"""ERC-8312 cap conservation (the ERC-8312 specification and its thread: "aggregate <= cap,
provable from public state"): the storage shapes of a cursor, the invariant, and the recipe
``8312/cap-conservation`` (its shapes are described in :mod:`recompute.recipes.erc8312`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from recompute.core.errors import OptionError, UsageError
from recompute.layout.slots import mapping_slot, offset_slot
from recompute.recipes.base import Recipe
from recompute.recipes.erc8312_meters import METER_BOUND, WORD, bytes32
from recompute.recipes.outputs import AMOUNT, BOOL
from recompute.recipes.params import Param
from recompute.recipes.plan import BlockClock, Derivation, Params, Plan, Reads, Slots, ViewCheck
from recompute.recipes.registry import register


@dataclass(frozen=True)
class Shape:
    """A parsed ``--param shape=``: ``kind`` is ``cap``, ``struct``, ``reserved-confirmed``,
    ``headroom``, ``mandate`` or ``aggregate-budget``; ``cap`` the literal cap of ``cap:N``;
    ``slot``, ``aggregate`` and ``cap_offset`` the S, A and C of ``struct:S:A:C``."""

    kind: str
    cap: int | None = None
    slot: int | None = None
    aggregate: int | None = None
    cap_offset: int | None = None


NAMED_SHAPES = ("reserved-confirmed", "headroom", "mandate", "aggregate-budget")
_NUMBER = r"(0x[0-9a-fA-F]+|[0-9]+)"


def parse_shape(text: str) -> Shape:
    """``cap:N``, ``struct:S:A:C`` (thread's recipe forms) or a named shape; UsageError else."""
    text = (text or "").strip()
    if text in NAMED_SHAPES:
        return Shape(text)
    if m := re.fullmatch(rf"cap:{_NUMBER}", text):
        cap = int(m[1], 0)
        if cap >= WORD:
            raise OptionError("{param} shape={text}: the cap does not fit in a uint256",
                              ("param",), text=text)
        return Shape("cap", cap=cap)
    if m := re.fullmatch(rf"struct:{_NUMBER}:{_NUMBER}:{_NUMBER}", text):
        s, a, c = (int(g, 0) for g in m.groups())
        if s >= WORD or a >= WORD or c >= WORD:
            raise OptionError("{param} shape={text}: S, A and C are uint256 slot numbers",
                              ("param",), text=text)
        return Shape("struct", slot=s, aggregate=a, cap_offset=c)
    raise OptionError(
        "{param} shape={text!r} is not cap:N, struct:S:A:C or one of {named} (ERC-8312 thread, "
        "8312/cap-conservation)", ("param",), text=text, named=", ".join(NAMED_SHAPES))


def cap_slots(key: bytes) -> tuple[int, int]:
    """``cap:N``: (reserved[key] at mapping slot 0, confirmed[key] at mapping slot 1)."""
    return mapping_slot(key, 0), mapping_slot(key, 1)


def struct_slots(key: bytes, shape: Shape) -> tuple[int, int]:
    """``struct:S:A:C``: (base+A, base+C) with base = keccak256(key ‖ uint256(S)), mod 2**256
    as the EVM adds slot numbers."""
    if shape.slot is None or shape.aggregate is None or shape.cap_offset is None:
        raise ValueError(f"shape {shape.kind} is not struct:S:A:C")
    base = mapping_slot(key, shape.slot)
    return offset_slot(base, shape.aggregate), offset_slot(base, shape.cap_offset)


def cap_conservation(aggregate: int, cap: int) -> dict[str, Any]:
    """The cap-conservation invariant: ``aggregate <= cap``; headroom = cap - aggregate (negative
    when a meter is over its cap, so the excess shows)."""
    return {"aggregate": aggregate, "cap": cap, "headroom": cap - aggregate,
            "within_cap": aggregate <= cap}


@register
class CapConservation(Recipe):
    name = "8312/cap-conservation"
    outputs = {
        "aggregate": AMOUNT,
        "cap": AMOUNT,
        "headroom": AMOUNT,
        "within_cap": BOOL,
    }
    help = "aggregate <= cap of one ERC-8312 cursor, from proven storage (cap:N, struct:S:A:C…)."
    section = "ERC-8312 thread: cap conservation, struct:S:A:C, RAMS mandate counter"
    # the thread's command line: recompute-step 8312/cap-conservation RPC ADDRESS KEY SHAPE
    positional = ("key", "shape")
    params = (
        Param("key", "bytes32", "the cursor / envelope key (not for shape=mandate)",
              required=False),
        Param("shape", "str", "cap:N | struct:S:A:C | reserved-confirmed | headroom (with "
              "the layout meter-headroom) | mandate (with the layout meter-mandate) | "
              "aggregate-budget (with the layout meter-aggregate-budget)"),
        Param("agent", "address", "shape=mandate: the mandate's agent", required=False),
        Param("principal", "address", "shape=mandate: the mandate's principal",
              required=False),
        Param("period", "uint", "shape=aggregate-budget: the period index (key = the rootId)",
              required=False),
    )
    layout = "meter-reserved-confirmed"

    def parse_params(self, given: dict[str, str]) -> Params:
        parsed = super().parse_params(given)
        self._check(parsed)  # a usage error before any node is asked
        return parsed

    def _check(self, p: Params) -> Shape:
        shape = parse_shape(p["shape"])
        if shape.kind == "mandate":
            if p["agent"] is None or p["principal"] is None:
                raise OptionError("shape=mandate needs {param} agent=… and {param} principal=… "
                                  "(a RAMS mandate is keyed (agent, principal))", ("param",))
            if p["key"] is not None:
                raise UsageError("shape=mandate takes agent and principal, not a key")
        else:
            if p["key"] is None:
                raise OptionError("shape={shape} needs {param} key=<bytes32>", ("param",),
                                  shape=p["shape"])
            if p["agent"] is not None or p["principal"] is not None:
                raise UsageError("agent and principal are parameters of shape=mandate only")
        if (shape.kind == "aggregate-budget") != (p["period"] is not None):
            raise OptionError("shape=aggregate-budget needs {param} period=N (and key = the "
                              "rootId); period belongs to that shape only", ("param",))
        return shape

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        shape = self._check(p)
        key = p["key"]
        if shape.kind == "cap":
            if shape.cap is None:
                raise ValueError("shape cap:N without its N")
            reserved, confirmed = cap_slots(bytes32(key))
            got = yield Slots([reserved, confirmed])
            # StatefulBound: the aggregate is reserved + confirmed (thread, first post).
            result = self.conserve(self.stateful(got[reserved], got[confirmed]), shape.cap)
        elif shape.kind == "struct":
            aggregate, cap = self.struct_slots(bytes32(key), shape)
            got = yield Slots([aggregate, cap])
            result = self.conserve(got[aggregate], got[cap])
        elif shape.kind == "reserved-confirmed":
            paths = [f"reserved[{key}]", f"confirmed[{key}]", f"cap[{key}]"]
            got = yield Reads(paths)
            result = self.conserve(self.stateful(got[paths[0]], got[paths[1]]), got[paths[2]])
        elif shape.kind == "headroom":
            paths = [f"cursorValues[{key}].cumulativeTurnover",
                     f"cursorValues[{key}].maxCumulativeTurnover"]
            got = yield Reads(paths)
            result = self.conserve(got[paths[0]], got[paths[1]])
        elif shape.kind == "aggregate-budget":
            # §5.1: spentRoot[rootId][periodIndex] is the one conserved meter, cap[rootId] its
            # bound (with --layout meter-aggregate-budget or -lying)
            paths = [f"spentRoot[{key}][{p['period']}]", f"cap[{key}]"]
            got = yield Reads(paths)
            result = self.conserve(got[paths[0]], got[paths[1]])
        else:  # mandate
            base = f"mandates[{p['agent']}][{p['principal']}]"
            paths = [f"{base}.cumulativeUsed", f"{base}.maxCumulativeValue"]
            got = yield Reads(paths)
            result = self.conserve(got[paths[0]], got[paths[1]])
        return Derivation(
            holds=result["within_cap"],
            derived=result,
            predicate="aggregate <= cap, both proven from storage"
                      + (" (cap the literal of cap:N)" if shape.kind == "cap" else ""),
            failed="" if result["within_cap"] else
                   f"aggregate {result['aggregate']} > cap {result['cap']} (over by "
                   f"{-result['headroom']}); healthy means aggregate <= cap",
            bounds=[METER_BOUND],
        )

    def conserve(self, aggregate: int, cap: int) -> dict[str, Any]:
        return cap_conservation(aggregate, cap)

    def stateful(self, reserved: int, confirmed: int) -> int:
        return reserved + confirmed

    def struct_slots(self, key: bytes, shape: Shape) -> tuple[int, int]:
        return struct_slots(key, shape)

    def mistakes(self) -> dict[str, Recipe]:
        return {
            "8312.cap.inclusive": _StrictCap(),
            "8312.cap.reserved-plus-confirmed": _ConfirmedOnly(),
            "8312.cap.struct-offsets": _SwappedOffsets(),
            "8312.cap.one-above-named-shapes": _ClampedHeadroom(),
        }

    def views(self, p: Params) -> list[ViewCheck]:
        """The reference meters' own answers: ``withinCap`` and ``remaining`` (clamped at 0),
        and for the struct shapes the thread's ``cursorSummary(envelopeId)`` accessor
        ("I re-derived remaining = 8000 − 0 = 8000, matching the contract's own
        remainingTurnover"). For ``cap:N`` the meter answers against its own stored cap, so
        a literal N other than that cap disagrees by design."""
        shape = self._check(p)

        def remaining(derived: dict[str, Any]) -> int:
            headroom: int = derived["headroom"]
            return max(headroom, 0)

        if shape.kind == "mandate":
            args, types = (p["agent"], p["principal"]), ("address", "address")
            return [
                ViewCheck("withinCap(address,address)", args, types, ("bool",),
                          lambda r, d: {"within_cap": (r[0], d["within_cap"])}),
                ViewCheck("remaining(address,address)", args, types, ("uint256",),
                          lambda r, d: {"remaining": (r[0], remaining(d))}),
            ]
        if shape.kind == "aggregate-budget":
            args, types = (bytes32(p["key"]), p["period"]), ("bytes32", "uint256")
            return [
                ViewCheck("withinCap(bytes32,uint256)", args, types, ("bool",),
                          lambda r, d: {"within_cap": (r[0], d["within_cap"])}),
                ViewCheck("remainingInPeriod(bytes32,uint256)", args, types, ("uint256",),
                          lambda r, d: {"remaining": (r[0], remaining(d))}),
            ]
        key = (bytes32(p["key"]),)
        checks = [ViewCheck("withinCap(bytes32)", key, ("bytes32",), ("bool",),
                            lambda r, d: {"within_cap": (r[0], d["within_cap"])})]
        if shape.kind in ("struct", "headroom"):
            checks.append(ViewCheck(
                "cursorSummary(bytes32)", key, ("bytes32",),
                ("uint256", "uint256", "uint256", "uint256", "bool"),
                lambda r, d: {"aggregate": (r[1], d["aggregate"]), "cap": (r[2], d["cap"]),
                              "remaining": (r[3], remaining(d))}))
        else:
            checks.append(ViewCheck("remaining(bytes32)", key, ("bytes32",), ("uint256",),
                                    lambda r, d: {"remaining": (r[0], remaining(d))}))
        return checks


class _StrictCap(CapConservation):
    """A mistake (vectors/rules.json ``8312.cap.inclusive``): aggregate < cap."""

    def conserve(self, aggregate: int, cap: int) -> dict[str, Any]:
        return dict(cap_conservation(aggregate, cap), within_cap=aggregate < cap)


class _ConfirmedOnly(CapConservation):
    """A mistake (``8312.cap.reserved-plus-confirmed``): reservations left out."""

    def stateful(self, reserved: int, confirmed: int) -> int:
        return confirmed


class _ClampedHeadroom(CapConservation):
    """A mistake (``8312.cap.one-above-named-shapes``): the bound judged from the headroom as
    the meters' ``remaining()`` answers it, clamped at 0, so never below zero: a cursor above
    its cap reads as exactly at it."""

    def conserve(self, aggregate: int, cap: int) -> dict[str, Any]:
        out = cap_conservation(aggregate, cap)
        clamped = max(out["headroom"], 0)
        return dict(out, headroom=clamped, within_cap=clamped >= 0)


class _SwappedOffsets(CapConservation):
    """A mistake (``8312.cap.struct-offsets``): struct:S:A:C read as struct:S:C:A."""

    def struct_slots(self, key: bytes, shape: Shape) -> tuple[int, int]:
        aggregate, cap = struct_slots(key, shape)
        return cap, aggregate
