"""Agent Meditation Mechanism recipes (seed 000_9610cfd26b874827.txt, "AMM").

Pure derivations first (each cites the seed section it implements), then the recipes that
feed them proven storage. Storage names are the reference registry's
(``layouts/amm-registry.json``): ``heads``, ``checkpoints``, ``stateRoots``, ``policies``,
``policyEffectiveFroms``, ``floors``, ``demands``.
"""

from __future__ import annotations

from pathlib import Path

import rfc8785

from recompute.core.abiword import encode_static
from recompute.core.boundedjson import load_file
from recompute.core.errors import OptionError, UsageError
from recompute.core.keccak import keccak256
from recompute.recipes.framework import (
    BOOL,
    HEX,
    INT,
    TEXT,
    Derivation,
    Param,
    Reads,
    ReceiptsAt,
    Recipe,
    SplitRecipe,
    ViewCheck,
    enum,
    register,
)

# ---- AMM §Commitment format -----------------------------------------------------------------

TAG_LAYER_COMMITMENT = keccak256(b"AgentMeditationMechanism/LayerCommitment/v1")
TAG_STATE_ROOT = keccak256(b"AgentMeditationMechanism/StateRoot/v1")
LAYER_SCHEMAS = ("amm.layer.runtime/1", "amm.layer.memory-skills/1", "amm.layer.tasks-roles/1",
                 "amm.layer.cognition/1")


def jcs(document) -> bytes:
    """JCS(d): RFC 8785 canonical UTF-8 serialisation (rfc8785)."""
    return rfc8785.dumps(document)


def commitment_from_hashes(layer: int, schema_hash: bytes, content_hash: bytes,
                           salt: bytes) -> bytes:
    """keccak256(abi.encode(TAG_LAYER_COMMITMENT, uint8 layer, schemaHash, contentHash, salt))."""
    return keccak256(encode_static(
        ["bytes32", "uint8", "bytes32", "bytes32", "bytes32"],
        [TAG_LAYER_COMMITMENT, layer, schema_hash, content_hash, salt],
    ))


def layer_commitment(layer: int, schema: str, document, salt: bytes = bytes(32)) -> bytes:
    """The commitment to a layer state document: schemaHash = keccak256(schema), contentHash =
    keccak256(JCS(document))."""
    return commitment_from_hashes(layer, keccak256(schema.encode()), keccak256(jcs(document)),
                                  salt)


def compute_root(commitments) -> bytes:
    """root = keccak256(abi.encode(TAG_STATE_ROOT, c0, c1, c2, c3))."""
    if len(commitments) != 4:
        raise ValueError("a state root commits to exactly four layers")
    return keccak256(encode_static(["bytes32"] * 5, [TAG_STATE_ROOT, *commitments]))


# ---- AMM §Policy and floor, §Status derivation ---------------------------------------------

MAINTENANCE = ("NOT_ENROLLED", "UNSUPPORTED", "UNSCHEDULED", "FRESH", "DUE", "OVERDUE")
SIGNAL = ("NOT_ENROLLED", "NOT_TRACKED", "PRESENT", "SILENT")


def _min_nonzero(a: int, b: int) -> int:
    """The smaller of two values, a zero (none set) not counting; 0 if both are."""
    if a and b:
        return a if a < b else b
    return a or b


def effective_requirements(policy: dict, floor: dict) -> dict:
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


def layer_status(head: dict, requirements: dict, checkpoint: dict, demand: dict, layer: int,
                 now: int) -> tuple[str, int, bool]:
    """AMM §Status derivation: ``(status, deadline (0 when none), never_completed)``.

    anchor = lastCompletedAt, or the enrollment time when the layer never completed;
    deadline = anchor + maxInterval[layer], lowered to dueBy while a demand is outstanding;
    OVERDUE if clock() >= deadline, DUE if clock() + dueWindow >= deadline, else FRESH.
    """
    if not head["enrolled"]:
        return "NOT_ENROLLED", 0, False
    never = checkpoint["lastCompletedAt"] == 0
    bit = 1 << layer
    if not requirements["requiredLayers"] & bit:
        status = "UNSCHEDULED" if requirements["supportedLayers"] & bit else "UNSUPPORTED"
        return status, 0, never
    anchor = head["enrolledAt"] if never else checkpoint["lastCompletedAt"]
    deadline = anchor + requirements["maxInterval"][layer]
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


def signal_status(head: dict, requirements: dict, now: int) -> tuple[str, int, int]:
    """AMM §Status derivation: ``(status, lastSignalAt, silentSince)``; SILENT when clock()
    exceeds lastSignalAt + pulseInterval, and silentSince is that end of the expected window
    (the seed: "the timepoint at which the signal became silent"); 0 unless SILENT."""
    if not head["enrolled"]:
        return "NOT_ENROLLED", 0, 0
    last = head["lastSignalAt"]
    interval = requirements["pulseInterval"]
    if interval == 0:
        return "NOT_TRACKED", last, 0
    end = last + interval
    if now > end:
        return "SILENT", last, min(end, 2**48 - 1)
    return "PRESENT", last, 0


# ---- reads shared by the status recipes ----------------------------------------------------


def _requirements_reads(subject: str, recipe: _StatusRecipe | None = None):
    """Generator: head, then the current policy version and the floor (two rounds).

    ``recipe`` supplies the three steps a rule of the seed fixes (whether the subject is
    enrolled, which policy version is current, how policy and floor combine), so that a
    mistaken method (``mistakes()``) can change exactly one of them."""
    recipe = recipe or _StatusRecipe()
    head = (yield Reads([f"heads[{subject}]"]))[f"heads[{subject}]"]
    if not recipe.is_enrolled(head):
        return head, None
    policy_path = f"policies[{subject}][{recipe.policy_version(head)}]"
    got = yield Reads([policy_path, f"floors[{subject}]"])
    return head, recipe.combine(got[policy_path], got[f"floors[{subject}]"])


class _StatusRecipe(SplitRecipe):
    """The steps of AMM §Policy and floor shared by the status recipes (their reads need no
    clock: only the derivation, AMM §Status derivation, is of the block's time)."""

    def is_enrolled(self, head: dict) -> bool:
        return bool(head["enrolled"])  # AMM §Status derivation: NOT_ENROLLED otherwise

    def policy_version(self, head: dict) -> int:
        return head["policyVersion"]  # the current version (AMM §Policy and floor)

    def combine(self, policy: dict, floor: dict) -> dict:
        return effective_requirements(policy, floor)


SUBJECT = Param("subject", "address", "the enrolled subject")
LAYER = Param("layer", "uint", "layer index 0..3 (AMM §Layers)")


def _layer(p: dict) -> int:
    if not 0 <= p["layer"] <= 3:
        raise OptionError("{param} layer={layer}: a layer index is 0..3 (AMM §Layers)",
                          ("param",), layer=p["layer"])
    return p["layer"]


@register
class LayerStatus(_StatusRecipe):
    name = "amm/layer-status"
    outputs = {
        "status": enum(*MAINTENANCE),
        "deadline": INT,
        "never_completed": BOOL,
        "clock": INT,
    }
    help = "Maintenance status of one layer (FRESH/DUE/OVERDUE…) from proven storage."
    section = "AMM §Status derivation, §Policy and floor, §Demand"
    params = (SUBJECT, LAYER)
    layout = "amm-registry"

    def reads(self, p):
        """(head, requirements, checkpoint, demand); the last three None when unenrolled."""
        subject, layer = p["subject"], _layer(p)
        head, requirements = yield from _requirements_reads(subject, self)
        if requirements is None:
            return head, None, None, None
        cp = f"checkpoints[{subject}][{layer}]"
        dm = f"demands[{subject}][{layer}]"
        got = yield Reads([cp, dm])
        return head, requirements, got[cp], got[dm]

    def derive(self, p, inputs, clock):
        head, requirements, checkpoint, demand = inputs
        layer = _layer(p)
        if requirements is None:
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

    def status(self, head, requirements, checkpoint, demand, layer, now):
        return layer_status(head, requirements, checkpoint, demand, layer, now)

    def mistakes(self):
        return {"amm.pulse.no-deadline-change": _PulseAnchoredStatus()}

    def views(self, p):
        def compare(returned, derived):
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

    def status(self, head, requirements, checkpoint, demand, layer, now):
        moved = dict(checkpoint, lastCompletedAt=max(head["lastSignalAt"],
                                                     checkpoint["lastCompletedAt"]))
        return layer_status(head, requirements, moved, demand, layer, now)


@register
class SignalStatus(_StatusRecipe):
    name = "amm/signal-status"
    outputs = {
        "status": enum(*SIGNAL),
        "last_signal_at": INT,
        "silent_since": INT,
        "clock": INT,
    }
    help = "Activity signal status (PRESENT/SILENT…) from proven storage."
    section = "AMM §Status derivation, §Pulse"
    params = (SUBJECT,)
    layout = "amm-registry"

    def reads(self, p):
        """(head, requirements); requirements None when unenrolled."""
        return (yield from _requirements_reads(p["subject"], self))

    def derive(self, p, inputs, clock):
        head, requirements = inputs
        status, last, silent = self.signal(head, requirements or {}, clock.timestamp)
        return Derivation(
            holds=status in ("PRESENT", "NOT_TRACKED"),
            derived={"status": status, "last_signal_at": last, "silent_since": silent,
                     "clock": clock.timestamp},
            predicate="the subject is not SILENT (nor unenrolled)",
            failed=_status_failed(status, ("PRESENT", "NOT_TRACKED"), "SILENT"),
        )

    def signal(self, head, requirements, now):
        return signal_status(head, requirements, now)


    def views(self, p):
        def compare(returned, derived):
            return {
                "status": (SIGNAL[returned[0]], derived["status"]),
                "last_signal_at": (returned[1], derived["last_signal_at"]),
                "silent_since": (returned[2], derived["silent_since"]),
            }
        return [ViewCheck("signalStatus(address)", (p["subject"],), ("address",),
                          ("uint8", "uint48", "uint48"), compare)]


@register
class StateRoot(Recipe):
    name = "amm/state-root"
    outputs = {
        "state_version": INT,
        "root": HEX,
        "computed_root": HEX,
        "root_at_version": HEX,
        "root_consistent": BOOL,
    }
    help = "head.root == computeRoot(c0..c3) and rootAt(stateVersion) == head.root."
    section = "AMM §Commitment format, §Layer checkpoints and state versions"
    params = (SUBJECT,)
    layout = "amm-registry"

    def plan(self, p, clock):
        subject = p["subject"]
        head = (yield Reads([f"heads[{subject}]"]))[f"heads[{subject}]"]
        if not head["enrolled"]:
            return Derivation(False, {"enrolled": False}, "the subject is enrolled",
                              failed=f"{subject} is not enrolled; healthy means enrolled")
        at = f"stateRoots[{subject}][{self.root_version(head)}]"
        got = yield Reads([f"checkpoints[{subject}]", at])
        commitments = [cp["commitment"] for cp in got[f"checkpoints[{subject}]"]]
        computed = self.root(commitments)
        root_at = got[at]
        holds = head["root"] == computed == root_at
        return Derivation(
            holds=holds,
            derived={"state_version": head["stateVersion"], "root": head["root"],
                     "computed_root": computed, "root_at_version": root_at,
                     "root_consistent": holds},
            predicate="head.root == computeRoot(c0..c3) == rootAt(stateVersion)",
            failed="" if holds else _roots_failed(head["root"], computed, root_at,
                                                  self.root_version(head)),
        )

    def root(self, commitments) -> bytes:
        return compute_root(commitments)

    def root_version(self, head: dict) -> int:
        return head["stateVersion"]


    def views(self, p):
        head = ("(bool,address,uint8,uint32,uint32,uint64,uint64,bytes32,uint48,uint48,"
                "uint48)")
        return [ViewCheck("headOf(address)", (p["subject"],), ("address",), (head,),
                          lambda r, d: {"root": (r[0][7], d.get("root")),
                                        "state_version": (r[0][5], d.get("state_version"))})]


CYCLE_REPORT = ("(uint64,bytes32,bytes32[4],uint8,uint8,uint16,uint8,uint8,uint32,uint48,uint48,"
                "uint48,uint64,bytes32,string)")
CYCLE_RECORDED = keccak256(
    f"CycleRecorded(address,uint64,uint64,uint64,{CYCLE_REPORT},uint8,uint48,address)".encode()
)


def decode_cycle_recorded(log) -> dict:
    """The CycleRecorded event (AMM §Events) of a proven log."""
    from eth_abi import decode as abi_decode  # dynamic tuple: imported only where needed

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


def restore_claim(record: dict, root_at_restored: bytes, root_at_new: bytes) -> dict:
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


RESTORE_CHECKS = ("restores_earlier_version", "root_at_restored_matches", "root_at_new_matches")


def version_advanced(record: dict) -> bool:
    """AMM §Layer checkpoints: the state version advances (by one, AMM §Cycle records "On
    acceptance") only when at least one layer commitment changes. A derived fact of the
    record, not a condition of its restore claim."""
    return record["new_version"] == record["base_version"] + 1


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
    layout = "amm-registry"

    def plan(self, p, clock):
        subject = p["subject"]
        logs = yield ReceiptsAt(p["block"])
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

    def has_claim(self, record: dict) -> bool:
        return record["restores_version"] != 0  # AMM §Cycle records: "non-zero"

    def checks(self, record: dict, root_at_restored: bytes, root_at_new: bytes) -> dict:
        return restore_claim(record, root_at_restored, root_at_new)

    def mistakes(self):
        return {"amm.restore.root-matches": _VersionOnlyRestoreClaim()}


class _VersionOnlyRestoreClaim(RestoreClaim):
    """A wrong-but-plausible method: checking only that restoresVersion is an earlier version,
    not that its root is the post root (AMM §Cycle records requires both)."""

    def plan(self, p, clock):
        derivation = yield from super().plan(p, clock)
        derived = derivation.derived
        if "base_version" in derived:
            holds = 0 < int(derived["restores_version"]) < int(derived["base_version"])
            derived["restore_claim_valid"] = holds
            derivation.holds = holds
            derivation.failed = "" if holds else "restoresVersion is not an earlier version"
        return derivation


@register
class Commitment(Recipe):
    name = "amm/commitment"
    outputs = {
        "computed_commitment": HEX,
        "proven_commitment": HEX,
        "matches": BOOL,
        "schema": TEXT,
    }
    help = "A layer document (JCS) and salt recompute to the proven checkpoint commitment."
    section = "AMM §Commitment format"
    params = (SUBJECT, LAYER, Param("document", "file", "the layer state document (JSON)"),
              Param("salt", "bytes32", "the disclosed salt", default="0x" + "00" * 32,
                    required=False))
    layout = "amm-registry"

    def plan(self, p, clock):
        subject, layer = p["subject"], _layer(p)
        document = _load_document(p["document"])
        schema = document.get("schema") if isinstance(document, dict) else None
        if not isinstance(schema, str) or document.get("layer") != layer:
            raise UsageError(
                f"{p['document']}: a layer state document has a string 'schema' and "
                f"'layer': {layer} (AMM §Commitment format)"
            )
        computed = self.commitment(layer, schema, document, bytes.fromhex(p["salt"][2:]))
        path = f"checkpoints[{subject}][{layer}]"
        proven = (yield Reads([path]))[path]["commitment"]
        return Derivation(
            holds=computed == proven,
            derived={"computed_commitment": computed, "proven_commitment": proven,
                     "schema": schema, "matches": computed == proven},
            predicate="keccak256(abi.encode(TAG, layer, keccak256(schema), keccak256(JCS(doc)),"
                      " salt)) == the proven checkpoint commitment",
            failed="" if computed == proven else
                   f"the document and salt commit to 0x{computed.hex()}, the proven checkpoint "
                   f"commitment is 0x{proven.hex()}; healthy means they are equal",
        )

    def commitment(self, layer, schema, document, salt) -> bytes:
        return layer_commitment(layer, schema, document, salt)



def _status_failed(status: str, healthy: tuple[str, ...], bad: str) -> str:
    """"status is OVERDUE; healthy means not OVERDUE" (AMM §Status derivation)."""
    if status in healthy:
        return ""
    if status == bad:
        return f"status is {status}; healthy means not {bad}"
    return f"status is {status}; healthy means {', '.join(healthy[:-1])} or {healthy[-1]}"


def _roots_failed(root: bytes, computed: bytes, root_at: bytes, version: int) -> str:
    """Which of head.root == computeRoot(c0..c3) == rootAt(stateVersion) failed."""
    failed = []
    if root != computed:
        failed.append(f"head.root 0x{root.hex()} != computeRoot(c0..c3) 0x{computed.hex()}")
    if computed != root_at:
        failed.append(f"rootAt({version}) 0x{root_at.hex()} != computeRoot(c0..c3) "
                      f"0x{computed.hex()}")
    return "; ".join(failed) + "; healthy means all three are equal"


def _restore_failed(record: dict, checks: dict, root_at_restored: bytes,
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


def _load_document(path: Path):
    """A layer document file: bounded JSON that JCS can canonicalise (I-JSON numbers, RFC 8785
    §3.2.2.3), or one UsageError line naming the file."""
    document = load_file(path, str(path), UsageError)
    try:
        jcs(document)
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as exc:
        raise UsageError(f"{path}: JCS (RFC 8785) cannot canonicalise it: "
                         f"{' '.join(str(exc).split())[:120]}") from None
    return document
