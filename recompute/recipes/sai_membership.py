"""ERC-8447 membership: a member's status with the lazy roster-wide exits (§6.1, §5.2, §7.2)
and the roster condition re-derived from member records (§6.5, §6.2, §12 counters), with the
recipes ``sai/member`` and ``sai/roster`` (the ERC-8447 specification).

Nothing here reads a view to decide: ``memberStatus`` / ``rosterMet`` are only set beside the
derived values under ``--compare-views``.
"""

from __future__ import annotations

from typing import Any

from recompute.core.errors import OptionError
from recompute.core.keccak import keccak256
from recompute.core.receipts import ProvenLog
from recompute.recipes.base import Recipe
from recompute.recipes.outputs import BOOL, HEX, INT, TABLE, TEXT, enum
from recompute.recipes.params import Param
from recompute.recipes.plan import (
    BlockClock,
    Derivation,
    Logs,
    Params,
    Plan,
    Reads,
    Struct,
    ViewCheck,
)
from recompute.recipes.registry import register
from recompute.recipes.sai_registry import (
    EXIT_REASON,
    LAYOUT,
    LAZY_FIELDS,
    LIFECYCLE,
    MEMBER_STATUS,
    RESERVED_ROLES,
    SUSPENSION_CAUSE,
    SWARM,
    enum_name,
    from_block,
    hex_word,
    record_fields,
    record_paths,
    swarm_base,
    swarm_topic,
)

_DISSOLVED = LIFECYCLE.index("DISSOLVED")
_NONE, _CANDIDATE, _ACTIVE, _SUSPENDED, _EXITED = range(5)

# §12 events the roster proves (topic0 = keccak256 of the signature)
MEMBER_ACTIVATED = keccak256(b"MemberActivated(bytes32,address,bytes32,uint32)")
SWARM_FORMED = keccak256(b"SwarmFormed(bytes32,address,bytes32,bytes32,bytes32,bytes32,string,"
                         b"bytes32,bytes32,bytes32)")


# ---- §5.2, §7.2 member status with the lazy roster-wide exits -------------------------------


def live_status(member: Struct, record: Struct) -> tuple[int, int]:
    """``(status, exitReason)`` of a seat as ``memberStatus`` must report it.

    §5.2: exits recorded for a whole roster at once — SWARM_DISSOLVED on abort and dissolve,
    NOT_CARRIED on an advance — MAY be derived lazily, and then MUST be reported. §7.2: the
    lazy NOT_CARRIED is evaluated from ``carriedPhase`` and the last phase entered through
    SELECT or RECRUIT (the reference's ``record.rosterPhase``). A seat stored NONE or EXITED is
    what it says (its explicit exit reason). A live seat (CANDIDATE, ACTIVE, SUSPENDED) whose
    ``carriedPhase`` is below ``rosterPhase`` was not carried; otherwise, in a DISSOLVED
    swarm, it exited with the swarm. NOT_CARRIED precedes SWARM_DISSOLVED because the advance
    came first (contracts/src/swarm/README.md, "Lazy precedence" — the specification orders
    neither).
    """
    status: int = member["status"]
    if status in (_NONE, _EXITED):
        return status, member["exitReason"]
    if member["carriedPhase"] < record["rosterPhase"]:
        return _EXITED, EXIT_REASON.index("NOT_CARRIED")
    if record["state"] == _DISSOLVED:
        return _EXITED, EXIT_REASON.index("SWARM_DISSOLVED")
    return status, 0


def member_view(member: Struct, record: Struct) -> dict[str, Any]:
    """The derived values of ``sai/member`` from the proven seat and swarm record."""
    status, reason = live_status(member, record)
    live = status in (_CANDIDATE, _ACTIVE, _SUSPENDED)
    role = bytes(member["roleId"])
    return {
        "status": enum_name(MEMBER_STATUS, status),
        "exit_reason": enum_name(EXIT_REASON, reason),
        # §6.1 SUSPENDED keeps the seat and the role; the cause only while SUSPENDED
        "suspension_cause": enum_name(SUSPENSION_CAUSE, member["suspensionCause"])
        if status == _SUSPENDED else "NONE",
        "role": hex_word(role) if status != _NONE else hex_word(bytes(32)),
        "role_name": RESERVED_ROLES.get(role) if status != _NONE else None,
        "stored_status": enum_name(MEMBER_STATUS, member["status"]),
        "lazy_exit": status == _EXITED and member["status"] != _EXITED,
        "live_seat": live,
        "swarm_state": enum_name(LIFECYCLE, record["state"]),
    }


# ---- §6.5 roster condition from member records ----------------------------------------------


def roster_from_records(record: Struct, min_members: int, roles: list[Struct],
                        members: dict[str, Struct], stored: Struct) -> dict[str, Any]:
    """§6.5 rosterMet re-derived from the member records, and the counters checked.

    ``members`` maps every account with a receipt-proven admission (MemberActivated) to its
    proven seat; any seat that is ACTIVE or SUSPENDED was ACTIVE once (§6.2 completion emits
    MemberActivated; suspension and SELECT act on ACTIVE members only, §6.3, §6.4, §7.2), so
    the set covers every seat that can count. Statuses are the lazy ones (§5.2, §7.2).
    rosterMet (§6.5): ACTIVE members >= minMembers and, per role of the spec, ACTIVE members
    of that role >= its ``min``; "only ACTIVE members count".

    ``stored`` is ``{"roster": rosterCounts[g], "roles": {roleId: roleCounts[g][roleId]}}``
    with ``g = record.rosterPhase``. §12: the counters count seats "as the lazy rules of
    Section 5.2 report them", so in a DISSOLVED swarm they are zero whatever the slots still
    hold (the reference leaves them, contracts/src/swarm/README.md §Storage). Candidates are
    not compared: an account that never completed admission has no MemberActivated event.
    """
    active = {hex_word(r["roleId"]): 0 for r in roles}
    suspended = dict.fromkeys(active, 0)
    for member in members.values():
        status, _ = live_status(member, record)
        role = hex_word(member["roleId"])
        if status == _ACTIVE:
            active[role] = active.get(role, 0) + 1
        elif status == _SUSPENDED:
            suspended[role] = suspended.get(role, 0) + 1
    total_active, total_suspended = sum(active.values()), sum(suspended.values())
    roles_met = {hex_word(r["roleId"]): active[hex_word(r["roleId"])] >= r["min"] for r in roles}
    roster_met = total_active >= min_members and all(roles_met.values())

    dissolved = record["state"] == _DISSOLVED
    gen = record["rosterPhase"]

    def reported(word: int) -> int:
        return 0 if dissolved else word

    findings: list[dict[str, Any]] = []

    def check(counter: str, stored_word: int, from_records: int) -> None:
        if reported(stored_word) != from_records:
            findings.append({"finding": "counter-disagrees", "counter": counter,
                             "stored": reported(stored_word), "records": from_records})

    check(f"rosterCounts[{gen}].active", stored["roster"]["active"], total_active)
    check(f"rosterCounts[{gen}].suspended", stored["roster"]["suspended"], total_suspended)
    for role_id, count in stored["roles"].items():
        check(f"roleCounts[{gen}][{role_id}].active", count["active"], active.get(role_id, 0))
        check(f"roleCounts[{gen}][{role_id}].suspended", count["suspended"],
              suspended.get(role_id, 0))
    return {
        "roster_met": roster_met,
        "active": total_active,
        "suspended": total_suspended,
        "active_by_role": active,
        "roles_met": roles_met,
        "min_members": min_members,
        "counters_agree": not findings,
        "findings": findings,
    }


# ---- the recipes ----------------------------------------------------------------------------


@register
class Member(Recipe):
    name = "sai/member"
    outputs = {
        "status": enum(*MEMBER_STATUS),
        "exit_reason": enum(*EXIT_REASON),
        "suspension_cause": enum(*SUSPENSION_CAUSE),
        "role": HEX,
        "role_name": TEXT,
        "stored_status": enum(*MEMBER_STATUS),
        "lazy_exit": BOOL,
        "live_seat": BOOL,
        "swarm_state": enum(*LIFECYCLE),
    }
    help = "A member's status and exit reason, lazy NOT_CARRIED / SWARM_DISSOLVED derived."
    section = "ERC-8447 §6.1, §5.2 (lazy exits), §7.2 (NOT_CARRIED)"
    params = (SWARM, Param("account", "address", "the member's account"))
    layout = LAYOUT

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        base = swarm_base(p)
        seat = f"{base}.members[{p['account']}]"
        got = yield Reads([*record_paths(base, LAZY_FIELDS), seat])
        derived = self.view(got[seat], record_fields(got, base, LAZY_FIELDS))
        return Derivation(
            holds=derived["status"] == "ACTIVE",
            derived=derived,
            predicate="the member is ACTIVE (stored status with the lazy exits of §5.2/§7.2)",
            failed="" if derived["status"] == "ACTIVE" else
                   f"status is {derived['status']}; healthy means ACTIVE",
        )

    def view(self, member: Struct, record: Struct) -> dict[str, Any]:
        return member_view(member, record)

    def views(self, p: Params) -> list[ViewCheck]:
        def compare(returned: tuple[Any, ...], derived: dict[str, Any]
                    ) -> dict[str, tuple[Any, Any]]:
            return {"status": (enum_name(MEMBER_STATUS, returned[0]), derived["status"]),
                    "exit_reason": (enum_name(EXIT_REASON, returned[1]),
                                    derived["exit_reason"])}
        return [ViewCheck("memberStatus(bytes32,address)", (swarm_topic(p), p["account"]),
                          ("bytes32", "address"), ("uint8", "uint8"), compare)]


@register
class Roster(Recipe):
    """§6.5 rosterMet from member records, the member set from receipt-proven admissions.

    Storage does not hold the block a swarm was formed in (``record.formedAt`` is a
    timestamp), so the scan starts at ``from_block``; the swarm's SwarmFormed event must be
    among the proven events, or the set of admitted accounts could be incomplete and the
    recipe refuses (a usage error naming the problem) rather than under-count.
    """

    name = "sai/roster"
    outputs = {
        "roster_met": BOOL,
        "active": INT,
        "suspended": INT,
        "active_by_role": TABLE,
        "roles_met": TABLE,
        "min_members": INT,
        "counters_agree": BOOL,
        "findings": TABLE,
        "formation_block": INT,
        "members_seen": INT,
        "roster_generation": INT,
        "swarm_state": enum(*LIFECYCLE),
    }
    help = "rosterMet re-derived from proven member records; stored counters checked."
    section = "ERC-8447 §6.5, §6.2 (admission), §5.2/§7.2 (lazy exits), §12 (counters)"
    params = (SWARM, Param("from_block", "uint", "a block at or before the swarm's formation "
                           "(the admission events are scanned from there)"))
    layout = LAYOUT

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        base, topic = swarm_base(p), swarm_topic(p)
        start = from_block(p, clock)
        min_path, roles_path = f"{base}.spec.minMembers", f"{base}.spec.roles"
        got = yield Reads([*record_paths(base, LAZY_FIELDS), min_path, roles_path])
        record, roles = record_fields(got, base, LAZY_FIELDS), got[roles_path]
        formed: list[ProvenLog] = yield Logs(SWARM_FORMED, start, (topic,))
        if record["state"] != 0 and not formed:
            raise OptionError(
                "no SwarmFormed event of {swarm} from block {start} on: the swarm was formed "
                "earlier, so admissions before block {start} would be missed; give {param} "
                "from_block at or before its formation", ("param",), swarm=p["swarm"],
                start=start)
        admitted: list[ProvenLog] = yield Logs(MEMBER_ACTIVATED, start, (topic,))
        accounts = sorted({"0x" + log.topics[2][12:].hex() for log in admitted})
        gen = record["rosterPhase"]
        paths = {a: f"{base}.members[{a}]" for a in accounts}
        role_paths = {hex_word(r["roleId"]): f"{base}.roleCounts[{gen}][{hex_word(r['roleId'])}]"
                      for r in roles}
        count_path = f"{base}.rosterCounts[{gen}]"
        seats = yield Reads([*paths.values(), *role_paths.values(), count_path])
        result = self.roster(
            record, got[min_path], roles, {a: seats[path] for a, path in paths.items()},
            {"roster": seats[count_path],
             "roles": {rid: seats[path] for rid, path in role_paths.items()}})
        findings = result.pop("findings")
        result.update({
            "members_seen": len(accounts),
            "formation_block": formed[0].block_number if formed else None,
            "swarm_state": enum_name(LIFECYCLE, record["state"]),
            "roster_generation": gen,
        })
        return Derivation(
            holds=result["roster_met"],
            derived=result,
            predicate="ACTIVE members (from proven records) >= minMembers and, per role, "
                      ">= the role's min (§6.5)",
            findings=findings,
        )

    def roster(self, record: Struct, min_members: int, roles: list[Struct],
               members: dict[str, Struct], stored: Struct) -> dict[str, Any]:
        return roster_from_records(record, min_members, roles, members, stored)

    def views(self, p: Params) -> list[ViewCheck]:
        return [ViewCheck("rosterMet(bytes32)", (swarm_topic(p),), ("bytes32",), ("bool",),
                          lambda r, d: {"roster_met": (r[0], d["roster_met"])})]
