"""Swarm AI Framework recipes (ERC-8447, "SAI"): the area's face.

``recompute.recipes.registry.BUNDLED_AREAS`` names this module for the ``sai/`` recipes:
importing it registers all four. Each concept of the specification has its module, pure derivations
first (each citing the specification section it implements), then the recipes that feed them proven
storage and receipt-proven events:

- :mod:`~recompute.recipes.sai_registry`: the reference registry's record, the §5.1/§6.1
  enums, the swarm parameter;
- :mod:`~recompute.recipes.sai_membership`: §6.1 member status with the lazy exits of
  §5.2/§7.2 (``sai/member``) and the §6.5 roster condition (``sai/roster``);
- :mod:`~recompute.recipes.sai_revision`: the §5.4 revision log (``sai/revision``);
- :mod:`~recompute.recipes.sai_charter`: the §4.1 charter hashes (``sai/charter``).

Nothing here reads a view to decide: ``memberStatus`` / ``rosterMet`` / ``getSwarm`` are only
set beside the derived values under ``--compare-views``. The mistaken methods
``vectors verify --tamper`` runs live beside it (``recompute/vectors/sai_mistakes.py``).
"""

from __future__ import annotations

from recompute.recipes.sai_charter import (
    Charter,
    charter_check,
    jcs_sha256,
    load_pack,
    pack_digests,
)
from recompute.recipes.sai_membership import (
    MEMBER_ACTIVATED,
    SWARM_FORMED,
    Member,
    Roster,
    live_status,
    member_view,
    roster_from_records,
)
from recompute.recipes.sai_registry import (
    CHARTER_FIELDS,
    EXIT_REASON,
    LAYOUT,
    LAZY_FIELDS,
    LIFECYCLE,
    MEMBER_STATUS,
    RESERVED_ROLES,
    SUSPENSION_CAUSE,
    SWARM,
    SWARM_TUPLE,
    enum_name,
)
from recompute.recipes.sai_revision import CHANGED, Revision, revision_check

__all__ = [
    "CHANGED", "CHARTER_FIELDS", "EXIT_REASON", "LAYOUT", "LAZY_FIELDS", "LIFECYCLE",
    "MEMBER_ACTIVATED", "MEMBER_STATUS", "RESERVED_ROLES", "SUSPENSION_CAUSE", "SWARM",
    "SWARM_FORMED", "SWARM_TUPLE", "Charter", "Member", "Revision", "Roster", "charter_check",
    "enum_name", "jcs_sha256", "live_status", "load_pack", "member_view", "pack_digests",
    "revision_check", "roster_from_records",
]
