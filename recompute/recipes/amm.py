"""Agent Meditation Mechanism recipes ("AMM"): the area's face.

``recompute.recipes.registry.BUNDLED_AREAS`` names this module for the ``amm/`` recipes:
importing it registers all five. Each concept of the specification has its module, pure derivations
first (each citing the specification section it implements), then the recipes that feed them proven
storage:

- :mod:`~recompute.recipes.amm_registry`: the reference registry's parameters (subject, layer);
- :mod:`~recompute.recipes.amm_commitments`: AMM §Commitment format, §Layer checkpoints and
  state versions (``amm/state-root``, ``amm/commitment``);
- :mod:`~recompute.recipes.amm_status`: AMM §Policy and floor, §Status derivation, §Demand,
  §Pulse (``amm/layer-status``, ``amm/signal-status``);
- :mod:`~recompute.recipes.amm_restore`: AMM §Cycle records, the restore claim
  (``amm/restore-claim``).

The mistaken methods ``vectors verify --tamper`` runs live beside it
(``recompute/vectors/amm_mistakes.py``); the recipes never import them.
"""

from __future__ import annotations

from recompute.core.jsontext import jcs
from recompute.recipes.amm_commitments import (
    LAYER_SCHEMAS,
    TAG_LAYER_COMMITMENT,
    TAG_STATE_ROOT,
    Commitment,
    StateRoot,
    commitment_from_hashes,
    compute_root,
    layer_commitment,
)
from recompute.recipes.amm_registry import LAYER, SUBJECT
from recompute.recipes.amm_restore import (
    CYCLE_RECORDED,
    CYCLE_REPORT,
    RESTORE_CHECKS,
    RestoreClaim,
    decode_cycle_recorded,
    restore_claim,
    version_advanced,
)
from recompute.recipes.amm_status import (
    MAINTENANCE,
    SIGNAL,
    LayerStatus,
    SignalStatus,
    effective_requirements,
    layer_status,
    signal_status,
)

__all__ = [
    "CYCLE_RECORDED", "CYCLE_REPORT", "LAYER", "LAYER_SCHEMAS", "MAINTENANCE", "RESTORE_CHECKS",
    "SIGNAL", "SUBJECT", "TAG_LAYER_COMMITMENT", "TAG_STATE_ROOT", "Commitment", "LayerStatus",
    "RestoreClaim", "SignalStatus", "StateRoot", "commitment_from_hashes", "compute_root",
    "decode_cycle_recorded", "effective_requirements", "jcs", "layer_commitment",
    "layer_status", "restore_claim", "signal_status", "version_advanced",
]
