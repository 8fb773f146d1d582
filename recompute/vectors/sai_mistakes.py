"""Wrong-but-plausible methods of the ERC-8447 recipes, one per rule of ``vectors/rules.json``.

Each breaks exactly one rule (the rule id names it); ``tests/vectors/test_rule_coverage.py``
checks that a shipped vector tells each apart. None of them is registered as a recipe: they are
registered by recipe name beside the tamper mode (:mod:`recompute.vectors.mistakes`).
"""

from __future__ import annotations

from typing import Any

from recompute.core.jsontext import jcs
from recompute.core.keccak import keccak256
from recompute.recipes.base import Recipe
from recompute.recipes.plan import Struct
from recompute.recipes.sai_charter import Charter, charter_check
from recompute.recipes.sai_membership import Member, Roster, member_view, roster_from_records
from recompute.recipes.sai_registry import LIFECYCLE
from recompute.recipes.sai_revision import Revision

_ACTIVE_STATE, _DISSOLVED = LIFECYCLE.index("ACTIVE"), LIFECYCLE.index("DISSOLVED")
_ACTIVE_SEAT, _SUSPENDED_SEAT = 2, 3


def _never_not_carried(record: Struct) -> dict[str, Any]:
    return dict(record, rosterPhase=0)


def _never_dissolved(record: Struct) -> dict[str, Any]:
    return dict(record, state=_ACTIVE_STATE if record["state"] == _DISSOLVED else record["state"])


class _MemberMistake(Member):
    def __init__(self, rule: str):
        self._rule = rule

    def view(self, member: Struct, record: Struct) -> dict[str, Any]:
        if self._rule == "not-carried":
            return member_view(member, _never_not_carried(record))
        if self._rule == "dissolved":
            return member_view(member, _never_dissolved(record))
        # "precedence": SWARM_DISSOLVED decided before NOT_CARRIED
        if record["state"] == _DISSOLVED:
            return member_view(member, _never_not_carried(record))
        return member_view(member, record)


def member_mistakes() -> dict[str, Recipe]:
    return {"sai.member.lazy-not-carried": _MemberMistake("not-carried"),
            "sai.member.lazy-swarm-dissolved": _MemberMistake("dissolved"),
            "sai.member.not-carried-precedes-dissolved": _MemberMistake("precedence")}


class _RosterMistake(Roster):
    def __init__(self, rule: str):
        self._rule = rule

    def roster(self, record: Struct, min_members: int, roles: list[Struct],
               members: dict[str, Struct], stored: Struct) -> dict[str, Any]:
        if self._rule == "total":
            min_members = 0
        elif self._rule == "roles":
            roles = [dict(r, min=0) for r in roles]
        elif self._rule == "active-only":
            members = {a: dict(m, status=_ACTIVE_SEAT if m["status"] == _SUSPENDED_SEAT
                               else m["status"]) for a, m in members.items()}
        else:  # "lazy": the stored statuses, no lazy exit
            members = {a: dict(m, carriedPhase=max(m["carriedPhase"], record["rosterPhase"]))
                       for a, m in members.items()}
            record = _never_dissolved(record)
        return roster_from_records(record, min_members, roles, members, stored)


def roster_mistakes() -> dict[str, Recipe]:
    return {"sai.roster.min-members": _RosterMistake("total"),
            "sai.roster.role-min": _RosterMistake("roles"),
            "sai.roster.only-active-count": _RosterMistake("active-only"),
            "sai.roster.lazy-statuses": _RosterMistake("lazy")}


class _IncreasedOnly(Revision):
    """The revision judged by its increase alone: the receipt-proven Changed events neither
    counted against it nor checked in sequence (§5.4 asks one Changed per revision)."""

    def judge(self, result: Struct) -> tuple[bool, bool]:
        return result["increased"], result["increased"]


def revision_mistakes() -> dict[str, Recipe]:
    return {"sai.revision.one-per-change": _IncreasedOnly()}


class _KeccakCharter(Charter):
    def check(self, pack: dict[str, Any], record: Struct, objective_hash: bytes
              ) -> dict[str, Any]:
        out = charter_check(pack, record, objective_hash)
        out["charter_hash"] = keccak256(jcs(pack))
        out["charter_matches"] = out["charter_hash"] == out["proven_charter_hash"]
        return out


class _CharterHashOnly(Charter):
    """The pack judged by its charterHash alone: the objective, commitment, specHash and version
    members not compared (§4.1 requires each)."""

    def check(self, pack: dict[str, Any], record: Struct, objective_hash: bytes
              ) -> dict[str, Any]:
        out = charter_check(pack, record, objective_hash)
        return dict(out, objective_matches=True, commitment_matches=True,
                    spec_hash_matches=True, version_matches=True)


def charter_mistakes() -> dict[str, Recipe]:
    return {"sai.charter.sha256-jcs": _KeccakCharter(),
            "sai.charter.member-hashes": _CharterHashOnly()}
