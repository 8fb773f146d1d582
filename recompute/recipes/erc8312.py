"""ERC-8312 (Bounded Agent Actions) recipes (seed 003_abed18a0ba624aab.txt, the ERC-8312 thread).

Two recipes, one invariant, ``aggregate <= cap``, recomputed from proven state only:

- ``8312/cap-conservation``: the aggregate and the cap of one cursor read from storage with
  ``eth_getProof`` (thread: "aggregate <= cap, provable from public state"; "both read from
  storage via eth_getProof against the stateRoot, so the cap isn't taken from cursorSummary's
  view either"). Storage shapes (``--param shape=``):

  ``cap:N``          StatefulBound: ``reserved[key]`` (mapping at slot 0) + ``confirmed[key]``
                     (mapping at slot 1) against the literal cap N (thread: "The recipe now takes
                     either a literal cap (StatefulBound's reserved+confirmed) or that struct
                     layout, one invariant behind both").
  ``struct:S:A:C``   a struct in a mapping at slot S keyed by the bytes32 key: base =
                     keccak256(key ‖ uint256(S)), aggregate at base+A, cap at base+C (thread:
                     "struct:S:A:C = cursorValues at mapping-slot 2, aggregate =
                     cumulativeTurnover (+2), cap = maxCumulativeTurnover (+1)").

  Both are raw-slot shapes: the slots are computed here and proven as
  :class:`~recompute.recipes.framework.Slots`
  (evidence paths ``slot:0x…``), so they work on any contract
  with no layout, as the thread's ``recompute-step 8312/cap-conservation RPC ADDRESS KEY
  struct:2:2:1`` does. The named shapes read the same quantities through layout paths of the
  bundled reference layouts (the plan cannot see which layout the runner holds, so the shape
  names the layout it needs):

  ``reserved-confirmed``  ``reserved[key] + confirmed[key] <= cap[key]`` (the stored cap;
                          layout ``meter-reserved-confirmed``, the recipe's default);
  ``headroom``            ``cursorValues[key].cumulativeTurnover <= .maxCumulativeTurnover``
                          (``--layout meter-headroom``);
  ``mandate``             ``mandates[agent][principal].cumulativeUsed <= .maxCumulativeValue``
                          with ``--param agent=… --param principal=…`` and no key (thread,
                          ERC-8226 RAMS: "keyed (agent, principal) … cumulativeUsed and
                          maxCumulativeValue are public storage"; ``--layout meter-mandate``).

- ``8312/aggregate-budget``: ERC-8312 §5.1 aggregate-budget profile. Σ of the admitted
  ``Drawn(rootId, nodeId, periodIndex, amount)`` amounts for (root, period), from logs proven
  against receiptsRoot, must be <= the proven ``cap[root]`` and equal to the proven
  ``spentRoot[root][period]`` (thread: "The profile carries both halves and requires them to
  agree. Endpoint is spentRoot[rootId][p], one eth_getProof. Path is Drawn(…) on every
  admitted draw"). Attribution per node is evidence, never the conserved quantity (thread:
  "Edge attribution is for the breakdown … never for the conservation itself").

Pinning (thread, babyblueviper1 / blockbird on rollovers): every read is at the one anchored
block and the period is a stored mapping key named by the caller, never derived from a live
clock (``currentPeriod``/``remainingRoot`` are not used).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from recompute.core.errors import OptionError, UsageError
from recompute.core.keccak import keccak256
from recompute.layout.slots import mapping_slot, offset_slot
from recompute.recipes.framework import (
    BOOL,
    INT,
    TABLE,
    Derivation,
    Logs,
    Param,
    Reads,
    Recipe,
    Slots,
    ViewCheck,
    register,
)

WORD = 1 << 256

# What an aggregate <= cap verdict does not prove (ERC-8312 thread on §5.1: "it asserts
# Σ metered draws ≤ cap only over draws routed through the meter — non-bypassability is the
# substrate obligation the profile states, not something the recompute proves"; §5.3).
METER_BOUND = ("covers only what this meter counted: a draw that bypasses the meter (a path "
               "that moves value without advancing it) is not seen; non-bypassability is the "
               "substrate's obligation (ERC-8312 §5.3), not proven here")
LOG_BOUND = ("the log half (Drawn) was read from receipts proven against each block's "
             "receiptsRoot: it needs a node that keeps receipts; a storage proof alone "
             "verifies from any node that kept the state")

# ---- cap conservation (ERC-8312 thread: "aggregate <= cap, provable from public state") ------


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
    base = mapping_slot(key, shape.slot)
    return offset_slot(base, shape.aggregate), offset_slot(base, shape.cap_offset)


def cap_conservation(aggregate: int, cap: int) -> dict:
    """The cap-conservation invariant: ``aggregate <= cap``; headroom = cap - aggregate (negative
    when a meter is over its cap, so the excess shows)."""
    return {"aggregate": aggregate, "cap": cap, "headroom": cap - aggregate,
            "within_cap": aggregate <= cap}


def _bytes32(text: str) -> bytes:
    return bytes.fromhex(text[2:])


@register
class CapConservation(Recipe):
    name = "8312/cap-conservation"
    outputs = {
        "aggregate": INT,
        "cap": INT,
        "headroom": INT,
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

    def parse_params(self, given):
        parsed = super().parse_params(given)
        self._check(parsed)  # a usage error before any node is asked
        return parsed

    def _check(self, p: dict) -> Shape:
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

    def plan(self, p, clock):
        shape = self._check(p)
        key = p["key"]
        if shape.kind == "cap":
            reserved, confirmed = cap_slots(_bytes32(key))
            got = yield Slots([reserved, confirmed])
            # StatefulBound: the aggregate is reserved + confirmed (thread, first post).
            result = self.conserve(self.stateful(got[reserved], got[confirmed]), shape.cap)
        elif shape.kind == "struct":
            aggregate, cap = self.struct_slots(_bytes32(key), shape)
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

    def conserve(self, aggregate: int, cap: int) -> dict:
        return cap_conservation(aggregate, cap)

    def stateful(self, reserved: int, confirmed: int) -> int:
        return reserved + confirmed

    def struct_slots(self, key: bytes, shape: Shape) -> tuple[int, int]:
        return struct_slots(key, shape)

    def mistakes(self):
        return {
            "8312.cap.inclusive": _StrictCap(),
            "8312.cap.reserved-plus-confirmed": _ConfirmedOnly(),
            "8312.cap.struct-offsets": _SwappedOffsets(),
            "8312.cap.one-above-named-shapes": _ClampedHeadroom(),
        }

    def views(self, p):
        """The reference meters' own answers: ``withinCap`` and ``remaining`` (clamped at 0),
        and for the struct shapes the thread's ``cursorSummary(envelopeId)`` accessor
        ("I re-derived remaining = 8000 − 0 = 8000, matching the contract's own
        remainingTurnover"). For ``cap:N`` the meter answers against its own stored cap, so
        a literal N other than that cap disagrees by design."""
        shape = self._check(p)

        def remaining(derived):
            return max(derived["headroom"], 0)

        if shape.kind == "mandate":
            args, types = (p["agent"], p["principal"]), ("address", "address")
            return [
                ViewCheck("withinCap(address,address)", args, types, ("bool",),
                          lambda r, d: {"within_cap": (r[0], d["within_cap"])}),
                ViewCheck("remaining(address,address)", args, types, ("uint256",),
                          lambda r, d: {"remaining": (r[0], remaining(d))}),
            ]
        if shape.kind == "aggregate-budget":
            args, types = (_bytes32(p["key"]), p["period"]), ("bytes32", "uint256")
            return [
                ViewCheck("withinCap(bytes32,uint256)", args, types, ("bool",),
                          lambda r, d: {"within_cap": (r[0], d["within_cap"])}),
                ViewCheck("remainingInPeriod(bytes32,uint256)", args, types, ("uint256",),
                          lambda r, d: {"remaining": (r[0], remaining(d))}),
            ]
        key = (_bytes32(p["key"]),)
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

    def conserve(self, aggregate, cap):
        return dict(cap_conservation(aggregate, cap), within_cap=aggregate < cap)


class _ConfirmedOnly(CapConservation):
    """A mistake (``8312.cap.reserved-plus-confirmed``): reservations left out."""

    def stateful(self, reserved, confirmed):
        return confirmed


class _ClampedHeadroom(CapConservation):
    """A mistake (``8312.cap.one-above-named-shapes``): the bound judged from the headroom as
    the meters' ``remaining()`` answers it, clamped at 0, so never below zero: a cursor above
    its cap reads as exactly at it."""

    def conserve(self, aggregate, cap):
        out = cap_conservation(aggregate, cap)
        clamped = max(out["headroom"], 0)
        return dict(out, headroom=clamped, within_cap=clamped >= 0)


class _SwappedOffsets(CapConservation):
    """A mistake (``8312.cap.struct-offsets``): struct:S:A:C read as struct:S:C:A."""

    def struct_slots(self, key, shape):
        aggregate, cap = struct_slots(key, shape)
        return cap, aggregate


# ---- ERC-8312 §5.1 aggregate-budget profile -------------------------------------------------

# §5.1: "Drawn(rootId, nodeId, periodIndex, amount) on every admitted draw"; the reference
# meter indexes rootId, nodeId and periodIndex (AggregateBudgetMeter.sol), amount is the data.
DRAWN = keccak256(b"Drawn(bytes32,bytes32,uint256,uint256)")


@dataclass(frozen=True)
class Draw:
    """One draw of the log: ``root`` (0x-hex rootId), ``node`` (the attribution label: a nodeId
    in hex, or a peer vector's edge name), ``period``, ``amount``, and whether it was admitted
    (aggregate-budget-v0 spec: "Admission is the gate")."""

    root: str
    node: str
    period: int
    amount: int
    admitted: bool = True


def _metered(draws, root: str | None, period: int | None) -> list[Draw]:
    """The draws that touch the one (root, period) meter: admitted, of that root and period
    (aggregate-budget-v0 spec, "Period-scoped": another period or root is a different meter)."""
    root = root.lower() if root is not None else None
    return [d for d in draws if d.admitted
            and (root is None or d.root.lower() == root)
            and (period is None or d.period == period)]


def aggregate_budget(draws, cap: int, spent: int | None = None, *, root: str | None = None,
                     period: int | None = None) -> dict:
    """ERC-8312 §5.1, recomputed from the log (aggregate-budget-v0 spec, "The predicate")::

        admittedSum = Σ { e.amount : e ∈ log ∧ e.rootId = rootId ∧ e.periodIndex = periodIndex
                                     ∧ e.admitted }
        conserves   = admittedSum ≤ cap

    and, when the proven ``spentRoot[root][period]`` is given, the two halves must agree
    (thread: "either it emitted a Drawn and sits in the sum, or the slot contradicts the log
    set"). ``per_node`` is attribution only ("labels on the draws, not the conserved
    quantity"). ``holds`` = within_cap and (no storage given or the sum matches it).
    """
    metered = _metered(draws, root, period)
    total = sum(d.amount for d in metered)
    per_node: dict[str, int] = {}
    for d in metered:
        per_node[d.node] = per_node.get(d.node, 0) + d.amount
    within = total <= cap
    matches = None if spent is None else total == spent
    return {"aggregate": total, "spent_root": spent, "cap": cap, "within_cap": within,
            "sum_matches_storage": matches, "draws": len(metered), "per_node": per_node,
            "holds": within and matches is not False}


def per_edge_max(draws, cap: int, *, root: str | None = None,
                 period: int | None = None) -> bool:
    """DELIBERATELY WRONG (kept to show that the peer vectors pin the method): each node's own
    sum <= cap, i.e. a per-edge counter treated as the conserved aggregate. The thread: "A
    per-edge counter treated as the conserved aggregate is the non-conformant counterexample
    … exactly what a fan-out / re-delegation can spin up fresh copies of to walk past the root
    cap"; aggregate-budget-v0's ``fanout-exceeds-root-cap`` is the vector it gets wrong. Never
    used by a recipe."""
    subtotals: dict[str, int] = {}
    for d in _metered(draws, root, period):
        subtotals[d.node] = subtotals.get(d.node, 0) + d.amount
    return all(total <= cap for total in subtotals.values())


def root_period(timestamp: int, length: int, anchor: int) -> int | None:
    """The root period a block's timestamp falls in, from the root's write-once periodLength
    and periodAnchor (the reference meter's ``periodAt``): 0 when the length is 0, else
    (timestamp - anchor) // length; None before the anchor (no period: the reference meter
    refuses such a draw)."""
    if length == 0:
        return 0
    if timestamp < anchor:
        return None
    return (timestamp - anchor) // length


def key_to_root_period(draws: list[tuple[Draw, int]], length: int, anchor: int):
    """ERC-8312 §5.1 thread, the keying rule: "Key the conserved meter to the root period,
    (rootId, rootPeriodIndex) and every draw in that root period hits the same meter no
    matter how the leaf's local epochs tile across it … Leaf epochs stay attribution (which
    local window a draw fell in); they are never the conservation key."

    ``draws`` are (draw, its block's timestamp). Each draw is counted in the root period of
    its block, whatever period its ``Drawn`` names; one whose named period is not its root
    period (a meter keyed to a leaf's local window) is a ``period-key-differs`` finding.
    Returns (the draws keyed to their root period, the findings)."""
    keyed, findings = [], []
    for draw, timestamp in draws:
        period = root_period(timestamp, length, anchor)
        if period != draw.period:
            findings.append({"finding": "period-key-differs", "node": draw.node,
                             "amount": draw.amount, "drawn_period": draw.period,
                             "root_period": period})
        if period is not None:
            keyed.append(Draw(draw.root, draw.node, period, draw.amount, draw.admitted))
    return keyed, findings


def decode_drawn(log) -> Draw | None:
    """A proven ``Drawn`` log as a :class:`Draw`; None when its shape is not the reference
    event's (three indexed topics and one uint256 of data). A log exists only for a transaction
    that succeeded (a reverted draw's receipt carries no logs), so every decoded draw was
    admitted."""
    if len(log.topics) != 4 or log.topics[0] != DRAWN or len(log.data) != 32:
        return None
    return Draw(root="0x" + log.topics[1].hex(), node="0x" + log.topics[2].hex(),
                period=int.from_bytes(log.topics[3], "big"),
                amount=int.from_bytes(log.data, "big"))


@register
class AggregateBudget(Recipe):
    name = "8312/aggregate-budget"
    outputs = {
        "aggregate": INT,
        "spent_root": INT,
        "cap": INT,
        "within_cap": BOOL,
        "sum_matches_storage": BOOL,
        "per_node": TABLE,
        "draws": INT,
        "period_keys_agree": BOOL,
    }
    help = "Σ admitted Drawn for (root, period) <= cap and == spentRoot (ERC-8312 §5.1)."
    section = "ERC-8312 §5.1 aggregate-budget profile; recompute-kit aggregate-budget-v0"
    params = (
        Param("root", "bytes32", "the tree's rootId"),
        Param("period", "uint", "the period index (a stored key, never derived from a clock)"),
        Param("from_block", "uint", "the first block to collect Drawn logs from (at or before "
              "the root's first draw)"),
    )
    layout = "meter-aggregate-budget"

    def plan(self, p, clock):
        root, period = p["root"], p["period"]
        if p["from_block"] > clock.number:
            raise OptionError("{param} from_block={first} is after the pinned block {number}",
                              ("param",), first=p["from_block"], number=clock.number)
        spent_path, cap_path = f"spentRoot[{root}][{period}]", f"cap[{root}]"
        length_path, anchor_path = f"periodLength[{root}]", f"periodAnchor[{root}]"
        got = yield Reads([spent_path, cap_path, length_path, anchor_path])
        # every Drawn of the root: which root period a draw belongs to is decided by its
        # block's clock and the write-once period fields, not by the period the meter names
        logs = yield Logs(DRAWN, p["from_block"], self.drawn_topics(root, period))
        timed, findings = [], []
        for log in logs:
            draw = decode_drawn(log)
            if draw is None:
                findings.append({"finding": "malformed-drawn", "block": log.block_number,
                                 "log_index": log.log_index})
            else:
                timed.append((draw, log.block_timestamp))
        draws, mislabelled = self.key(timed, got[length_path], got[anchor_path])
        findings += mislabelled
        result = self.conserve(draws, got[cap_path], got[spent_path], root, period)
        result["period_keys_agree"] = not mislabelled
        holds = result.pop("holds") and not mislabelled
        if result["cap"] == 0:
            # The reference createRoot refuses cap 0, so a zero cap means no such root.
            findings.append({"finding": "no-cap", "detail": f"cap[{root}] is 0: no such root"})
        return Derivation(
            holds=holds,
            derived=result,
            predicate="Σ admitted Drawn(root, ·, ·).amount of the root period's blocks <= "
                      "cap[root] and == spentRoot[root][period], every draw keyed to its root "
                      "period",
            findings=findings,
            bounds=[METER_BOUND, LOG_BOUND],
        )

    def conserve(self, draws, cap, spent, root, period) -> dict:
        return aggregate_budget(draws, cap, spent, root=root, period=period)

    def drawn_topics(self, root: str, period: int) -> tuple:
        return (_bytes32(root),)

    def key(self, timed, length: int, anchor: int):
        return key_to_root_period(timed, length, anchor)

    def mistakes(self):
        return {"8312.aggregate-budget.root-sum": _PerEdgeAggregateBudget(),
                "8312.aggregate-budget.sum-equals-storage": _LogOnlyAggregateBudget(),
                "8312.aggregate-budget.period-scoped": _AllPeriodsAggregateBudget(),
                "8312.aggregate-budget.root-period-key": _LabelKeyedAggregateBudget()}

    def views(self, p):
        """``withinCap(rootId, periodIndex)`` and ``remainingInPeriod`` (cap - spentRoot,
        clamped at 0) for the named period; the live ``remainingRoot`` is never asked."""
        args, types = (_bytes32(p["root"]), p["period"]), ("bytes32", "uint256")
        return [
            ViewCheck("withinCap(bytes32,uint256)", args, types, ("bool",),
                      lambda r, d: {"within_cap": (r[0], d["within_cap"])}),
            ViewCheck("remainingInPeriod(bytes32,uint256)", args, types, ("uint256",),
                      lambda r, d: {"remaining": (r[0], max(d["cap"] - d["spent_root"], 0))}),
        ]


class _PerEdgeAggregateBudget(AggregateBudget):
    """A wrong-but-plausible method (never registered): recompute-kit's ``--tamper`` method,
    the largest per-node subtotal reported as the aggregate and :func:`per_edge_max` as the
    verdict (thread: "a per-edge counter treated as the aggregate is the counterexample, not
    an alternative representation"). Vectors must tell it apart."""

    def conserve(self, draws, cap, spent, root, period) -> dict:
        result = aggregate_budget(draws, cap, spent, root=root, period=period)
        aggregate = max(result["per_node"].values(), default=0)
        within = per_edge_max(draws, cap, root=root, period=period)
        matches = None if spent is None else aggregate == spent
        return dict(result, aggregate=aggregate, within_cap=within,
                    sum_matches_storage=matches, holds=within and matches is not False)


class _LogOnlyAggregateBudget(AggregateBudget):
    """A mistake (``8312.aggregate-budget.sum-equals-storage``): the log sum against the cap,
    the proven spentRoot not compared."""

    def conserve(self, draws, cap, spent, root, period):
        return aggregate_budget(draws, cap, None, root=root, period=period)


class _AllPeriodsAggregateBudget(AggregateBudget):
    """A mistake (``8312.aggregate-budget.period-scoped``): every period's draws of the root
    summed against the one period's cap."""

    def conserve(self, draws, cap, spent, root, period):
        return aggregate_budget(draws, cap, spent, root=root, period=None)


class _LabelKeyedAggregateBudget(AggregateBudget):
    """A mistake (``8312.aggregate-budget.root-period-key``): the draws counted for a period
    are those whose Drawn names it, as the meter keyed them: a meter keyed to a leaf's local
    window (epoch-unaligned to the root period) spreads one root period's draws over several
    keys, and each key passes (the thread's epoch-unaligned counterexample)."""

    def key(self, timed, length, anchor):
        return [draw for draw, _ in timed], []
