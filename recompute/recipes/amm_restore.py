"""AMM restore claims (the AMM specification, AMM §Cycle records "Restore claim",
§Layer checkpoints, §Events): a proven CycleRecorded event's ``restoresVersion`` checked
against the proven roots, the recipe ``amm/restore-claim``."""

from __future__ import annotations

from typing import Any

from recompute.core.errors import OptionError
from recompute.core.keccak import keccak256
from recompute.core.receipts import ProvenLog
from recompute.recipes.amm_commitments import compute_root
from recompute.recipes.amm_registry import LAYOUT, SUBJECT
from recompute.recipes.base import Recipe
from recompute.recipes.outputs import BOOL, HEX, INT
from recompute.recipes.params import Param
from recompute.recipes.plan import BlockClock, Derivation, Params, Plan, Reads, ReceiptsAt, Struct
from recompute.recipes.registry import register

CYCLE_REPORT = ("(uint64,bytes32,bytes32[4],uint8,uint8,uint16,uint8,uint8,uint32,uint48,uint48,"
                "uint48,uint64,bytes32,string)")
CYCLE_RECORDED = keccak256(
    f"CycleRecorded(address,uint64,uint64,uint64,{CYCLE_REPORT},uint8,uint48,address)".encode()
)
RESTORE_CHECKS = ("restores_earlier_version", "root_at_restored_matches", "root_at_new_matches")


def decode_cycle_recorded(log: ProvenLog) -> dict[str, Any]:
    """The CycleRecorded event (AMM §Events) of a proven log."""
    from eth_abi.abi import decode as abi_decode  # dynamic tuple: imported only where needed

    base, new, report, changed, recorded_at, submitter = abi_decode(
        ["uint64", "uint64", CYCLE_REPORT, "uint8", "uint48", "address"], log.data)
    return {
        "subject": "0x" + log.topics[1][12:].hex(),
        "seq": int.from_bytes(log.topics[2], "big"),
        "base_version": base,
        "new_version": new,
        "post_commitments": list(report[2]),
        "restores_version": report[12],
        "changed_layers": changed,
        "recorded_at": recorded_at,
        "submitter": submitter.lower(),
    }


def restore_claim(record: Struct, root_at_restored: bytes, root_at_new: bytes
                  ) -> dict[str, Any]:
    """AMM §Cycle records, rule "Restore claim" (what the registry MUST check: a non-zero
    ``restoresVersion`` "is smaller than the current state version and rootAt(restoresVersion)
    equals the root of postCommitments"), and AMM §Layer checkpoints ("The registry MUST keep
    the root of every state version"): the version the record left holds the post root.

    ``version_advanced`` is reported beside the checks, never one of them (docs/design.md
    §Verdicts follow the normative text): "Rollback is a cycle like any other: … the state
    version advances" describes a rollback that changes state; a restore claim whose post
    state is the current state changes no layer, so "a cycle that changes nothing does not
    advance it" (AMM §Layer checkpoints), and the registry accepts it."""
    post_root = compute_root(record["post_commitments"])
    checks = {
        "restores_earlier_version": 0 < record["restores_version"] < record["base_version"],
        "root_at_restored_matches": root_at_restored == post_root,
        "root_at_new_matches": root_at_new == post_root,
    }
    return {"post_root": post_root, "version_advanced": version_advanced(record), **checks}


def version_advanced(record: Struct) -> bool:
    """AMM §Layer checkpoints: the state version advances (by one, AMM §Cycle records "On
    acceptance") only when at least one layer commitment changes. A derived fact of the
    record, not a condition of its restore claim."""
    return bool(record["new_version"] == record["base_version"] + 1)


@register
class RestoreClaim(Recipe):
    name = "amm/restore-claim"
    outputs = {
        "seq": INT,
        "restores_version": INT,
        "base_version": INT,
        "new_version": INT,
        "post_root": HEX,
        "root_at_restored": HEX,
        "root_at_new": HEX,
        "version_advanced": BOOL,
        "restore_claim_valid": BOOL,
    }
    help = "A cycle record's restoresVersion: rootAt(restoresVersion) is the post root."
    section = "AMM §Cycle records (Restore claim), §Events"
    params = (SUBJECT, Param("block", "uint", "the block holding the report's transaction"),
              Param("seq", "uint", "the record's sequence number (default: the only record "
                    "with a restore claim in that block)", required=False))
    layout = LAYOUT

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        subject = p["subject"]
        logs: list[ProvenLog] = yield ReceiptsAt(p["block"])
        records = [decode_cycle_recorded(log) for log in logs
                   if log.topics and log.topics[0] == CYCLE_RECORDED
                   and "0x" + log.topics[1][12:].hex() == subject]
        if p["seq"] is not None:
            records = [r for r in records if r["seq"] == p["seq"]]
        else:
            records = [r for r in records if r["restores_version"] != 0]
        if len(records) != 1:
            raise OptionError(
                "block {block} holds {count} matching CycleRecorded event(s) for {subject} with "
                "a restore claim; name one with {param} seq=N", ("param",), block=p["block"],
                count=len(records), subject=subject)
        record = records[0]
        if not self.has_claim(record):
            return Derivation(False, {"restores_version": 0, "seq": record["seq"]},
                              "the record carries a restore claim",
                              failed=f"record {record['seq']} has restoresVersion 0 (no restore "
                                     "claim); healthy means a restore claim that holds")
        restored = f"stateRoots[{subject}][{record['restores_version']}]"
        new = f"stateRoots[{subject}][{record['new_version']}]"
        got = yield Reads([restored, new])
        checks = self.checks(record, got[restored], got[new])
        holds = all(checks[name] for name in RESTORE_CHECKS)
        findings = []
        if not checks["version_advanced"]:
            # AMM §Layer checkpoints: "a cycle that changes nothing does not advance it"; a
            # fact about the record, reported, not a reason to call the claim false
            findings.append({"finding": "version-not-advanced",
                             "detail": f"record {record['seq']} changed no layer: the state "
                                       f"version stays {record['new_version']}"})
        return Derivation(
            holds=holds,
            derived={"seq": record["seq"], "restores_version": record["restores_version"],
                     "base_version": record["base_version"],
                     "new_version": record["new_version"], "post_root": checks["post_root"],
                     "root_at_restored": got[restored], "root_at_new": got[new],
                     "version_advanced": checks["version_advanced"],
                     "restore_claim_valid": holds},
            predicate="restoresVersion < the version before the record, rootAt(restoresVersion)"
                      " == computeRoot(postCommitments), and the version the record left holds "
                      "that root",
            findings=findings,
            failed="" if holds else _restore_failed(record, checks, got[restored], got[new]),
        )

    def has_claim(self, record: Struct) -> bool:
        return bool(record["restores_version"] != 0)  # AMM §Cycle records: "non-zero"

    def checks(self, record: Struct, root_at_restored: bytes, root_at_new: bytes
               ) -> dict[str, Any]:
        return restore_claim(record, root_at_restored, root_at_new)

    def mistakes(self) -> dict[str, Recipe]:
        return {"amm.restore.root-matches": _VersionOnlyRestoreClaim()}


class _VersionOnlyRestoreClaim(RestoreClaim):
    """A wrong-but-plausible method: checking only that restoresVersion is an earlier version,
    not that its root is the post root (AMM §Cycle records requires both)."""

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        derivation = yield from super().plan(p, clock)
        derived = derivation.derived
        if "base_version" in derived:
            holds = 0 < int(derived["restores_version"]) < int(derived["base_version"])
            derived["restore_claim_valid"] = holds
            derivation.holds = holds
            derivation.failed = "" if holds else "restoresVersion is not an earlier version"
        return derivation


def _restore_failed(record: Struct, checks: Struct, root_at_restored: bytes,
                    root_at_new: bytes) -> str:
    """Which condition of AMM §Cycle records (Restore claim) failed, with what was found."""
    post = "0x" + checks["post_root"].hex()
    said = {
        "restores_earlier_version": f"restoresVersion {record['restores_version']} is not "
                                    f"between 0 and the base version {record['base_version']}",
        "root_at_restored_matches": f"rootAt({record['restores_version']}) is "
                                    f"0x{root_at_restored.hex()}, not the post root {post}",
        "root_at_new_matches": f"rootAt({record['new_version']}) is 0x{root_at_new.hex()}, not "
                               f"the post root {post}",
    }
    failed = [said[name] for name in RESTORE_CHECKS if not checks[name]]
    return f"record {record['seq']}: " + "; ".join(failed)
