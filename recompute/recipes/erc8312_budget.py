"""ERC-8312 §5.1 aggregate-budget profile (the ERC-8312 specification and its discussion thread):
Σ of the admitted ``Drawn`` amounts of a (root, period) from receipt-proven logs, against the
proven cap and spentRoot, each draw keyed to its root period; the recipe
``8312/aggregate-budget``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from recompute.core.errors import OptionError
from recompute.core.keccak import keccak256
from recompute.core.receipts import ProvenLog
from recompute.recipes.base import Recipe
from recompute.recipes.erc8312_meters import LOG_BOUND, METER_BOUND, bytes32
from recompute.recipes.outputs import AMOUNT, BOOL, INT, TABLE
from recompute.recipes.params import Param
from recompute.recipes.plan import BlockClock, Derivation, Logs, Params, Plan, Reads, ViewCheck
from recompute.recipes.registry import register

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


def _metered(draws: Iterable[Draw], root: str | None, period: int | None) -> list[Draw]:
    """The draws that touch the one (root, period) meter: admitted, of that root and period
    (aggregate-budget-v0 spec, "Period-scoped": another period or root is a different meter)."""
    root = root.lower() if root is not None else None
    return [d for d in draws if d.admitted
            and (root is None or d.root.lower() == root)
            and (period is None or d.period == period)]


def aggregate_budget(draws: Iterable[Draw], cap: int, spent: int | None = None, *,
                     root: str | None = None, period: int | None = None) -> dict[str, Any]:
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


def per_edge_max(draws: Iterable[Draw], cap: int, *, root: str | None = None,
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


def key_to_root_period(draws: list[tuple[Draw, int]], length: int, anchor: int
                       ) -> tuple[list[Draw], list[dict[str, Any]]]:
    """ERC-8312 §5.1 thread, the keying rule: "Key the conserved meter to the root period,
    (rootId, rootPeriodIndex) and every draw in that root period hits the same meter no
    matter how the leaf's local epochs tile across it … Leaf epochs stay attribution (which
    local window a draw fell in); they are never the conservation key."

    ``draws`` are (draw, its block's timestamp). Each draw is counted in the root period of
    its block, whatever period its ``Drawn`` names; one whose named period is not its root
    period (a meter keyed to a leaf's local window) is a ``period-key-differs`` finding.
    Returns (the draws keyed to their root period, the findings)."""
    keyed: list[Draw] = []
    findings: list[dict[str, Any]] = []
    for draw, timestamp in draws:
        period = root_period(timestamp, length, anchor)
        if period != draw.period:
            findings.append({"finding": "period-key-differs", "node": draw.node,
                             "amount": draw.amount, "drawn_period": draw.period,
                             "root_period": period})
        if period is not None:
            keyed.append(Draw(draw.root, draw.node, period, draw.amount, draw.admitted))
    return keyed, findings


def decode_drawn(log: ProvenLog) -> Draw | None:
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
        "aggregate": AMOUNT,
        "spent_root": AMOUNT,
        "cap": AMOUNT,
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

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        root, period = p["root"], p["period"]
        if p["from_block"] > clock.number:
            raise OptionError("{param} from_block={first} is after the pinned block {number}",
                              ("param",), first=p["from_block"], number=clock.number)
        spent_path, cap_path = f"spentRoot[{root}][{period}]", f"cap[{root}]"
        length_path, anchor_path = f"periodLength[{root}]", f"periodAnchor[{root}]"
        got = yield Reads([spent_path, cap_path, length_path, anchor_path])
        # every Drawn of the root: which root period a draw belongs to is decided by its
        # block's clock and the write-once period fields, not by the period the meter names
        logs: list[ProvenLog] = yield Logs(DRAWN, p["from_block"],
                                           self.drawn_topics(root, period))
        timed: list[tuple[Draw, int]] = []
        findings: list[dict[str, Any]] = []
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

    def conserve(self, draws: list[Draw], cap: int, spent: int | None, root: str,
                 period: int) -> dict[str, Any]:
        return aggregate_budget(draws, cap, spent, root=root, period=period)

    def drawn_topics(self, root: str, period: int) -> tuple[bytes | None, ...]:
        return (bytes32(root),)

    def key(self, timed: list[tuple[Draw, int]], length: int, anchor: int
            ) -> tuple[list[Draw], list[dict[str, Any]]]:
        return key_to_root_period(timed, length, anchor)

    def mistakes(self) -> dict[str, Recipe]:
        return {"8312.aggregate-budget.root-sum": _PerEdgeAggregateBudget(),
                "8312.aggregate-budget.sum-equals-storage": _LogOnlyAggregateBudget(),
                "8312.aggregate-budget.period-scoped": _AllPeriodsAggregateBudget(),
                "8312.aggregate-budget.root-period-key": _LabelKeyedAggregateBudget()}

    def views(self, p: Params) -> list[ViewCheck]:
        """``withinCap(rootId, periodIndex)`` and ``remainingInPeriod`` (cap - spentRoot,
        clamped at 0) for the named period; the live ``remainingRoot`` is never asked."""
        args, types = (bytes32(p["root"]), p["period"]), ("bytes32", "uint256")
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

    def conserve(self, draws: list[Draw], cap: int, spent: int | None, root: str,
                 period: int) -> dict[str, Any]:
        result = aggregate_budget(draws, cap, spent, root=root, period=period)
        aggregate = max(result["per_node"].values(), default=0)
        within = per_edge_max(draws, cap, root=root, period=period)
        matches = None if spent is None else aggregate == spent
        return dict(result, aggregate=aggregate, within_cap=within,
                    sum_matches_storage=matches, holds=within and matches is not False)


class _LogOnlyAggregateBudget(AggregateBudget):
    """A mistake (``8312.aggregate-budget.sum-equals-storage``): the log sum against the cap,
    the proven spentRoot not compared."""

    def conserve(self, draws: list[Draw], cap: int, spent: int | None, root: str,
                 period: int) -> dict[str, Any]:
        return aggregate_budget(draws, cap, None, root=root, period=period)


class _AllPeriodsAggregateBudget(AggregateBudget):
    """A mistake (``8312.aggregate-budget.period-scoped``): every period's draws of the root
    summed against the one period's cap."""

    def conserve(self, draws: list[Draw], cap: int, spent: int | None, root: str,
                 period: int) -> dict[str, Any]:
        return aggregate_budget(draws, cap, spent, root=root, period=None)


class _LabelKeyedAggregateBudget(AggregateBudget):
    """A mistake (``8312.aggregate-budget.root-period-key``): the draws counted for a period
    are those whose Drawn names it, as the meter keyed them: a meter keyed to a leaf's local
    window (epoch-unaligned to the root period) spreads one root period's draws over several
    keys, and each key passes (the thread's epoch-unaligned counterexample)."""

    def key(self, timed: list[tuple[Draw, int]], length: int, anchor: int
            ) -> tuple[list[Draw], list[dict[str, Any]]]:
        return [draw for draw, _ in timed], []
