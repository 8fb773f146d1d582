"""ERC-8312 (Bounded Agent Actions) recipes (the ERC-8312 specification and its discussion thread):
the area's face. ``recompute.recipes.registry.BUNDLED_AREAS`` names this module for the
``8312/`` recipes: importing it registers both, from :mod:`~recompute.recipes.erc8312_cap`
(cap conservation) and :mod:`~recompute.recipes.erc8312_budget` (the aggregate-budget
profile); :mod:`~recompute.recipes.erc8312_meters` holds what a meter's verdict covers.

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
  :class:`~recompute.recipes.plan.Slots`
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

from recompute.recipes.erc8312_budget import (
    DRAWN,
    AggregateBudget,
    Draw,
    aggregate_budget,
    decode_drawn,
    key_to_root_period,
    per_edge_max,
    root_period,
)
from recompute.recipes.erc8312_cap import (
    NAMED_SHAPES,
    CapConservation,
    Shape,
    cap_conservation,
    cap_slots,
    parse_shape,
    struct_slots,
)
from recompute.recipes.erc8312_meters import LOG_BOUND, METER_BOUND, WORD

__all__ = [
    "DRAWN", "LOG_BOUND", "METER_BOUND", "NAMED_SHAPES", "WORD", "AggregateBudget",
    "CapConservation", "Draw", "Shape", "aggregate_budget", "cap_conservation", "cap_slots",
    "decode_drawn", "key_to_root_period", "parse_shape", "per_edge_max", "root_period",
    "struct_slots",
]
