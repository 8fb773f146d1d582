"""ERC-8447 §4.1 charter, objective and commitment hashes: a Swarm Pack against the proven
record, the recipe ``sai/charter`` (the ERC-8447 specification)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from recompute.core.boundedjson import load_file
from recompute.core.errors import UsageError
from recompute.core.jsontext import jcs
from recompute.recipes.base import Recipe
from recompute.recipes.outputs import BOOL, HEX, INT
from recompute.recipes.params import Param
from recompute.recipes.plan import BlockClock, Derivation, Params, Plan, Reads, Struct, ViewCheck
from recompute.recipes.registry import register
from recompute.recipes.sai_registry import (
    CHARTER_AT,
    CHARTER_FIELDS,
    LAYOUT,
    SWARM,
    SWARM_TUPLE,
    record_fields,
    record_paths,
    swarm_base,
    swarm_topic,
)


def jcs_sha256(value: Any) -> bytes:
    """SHA-256 of the RFC 8785 (JCS) canonical form (§4.1) of a JSON value."""
    try:
        return hashlib.sha256(jcs(value)).digest()
    except (ValueError, TypeError) as exc:  # what RFC 8785 refuses (jsontext.jcs)
        raise UsageError(f"the pack cannot be canonicalised (RFC 8785): {exc}") from None


def pack_digests(pack: dict[str, Any]) -> dict[str, bytes | None]:
    """§4.1: ``charterHash = sha256(JCS(pack))``; ``objectiveHash = sha256(JCS(pack.objective))``;
    ``commitmentHash = sha256(JCS(pack.commitment))``, or zero when the pack has no such
    member. ``objective_hash`` is None when the pack has no objective (it then matches nothing).
    """
    return {
        "charter_hash": jcs_sha256(pack),
        "objective_hash": jcs_sha256(pack["objective"]) if "objective" in pack else None,
        "commitment_hash": jcs_sha256(pack["commitment"]) if "commitment" in pack
        else bytes(32),
    }


def _digest_member(text: object) -> bytes | None:
    """A 32-byte digest written in a pack: ``0x``-hex, or ``<alg>:`` + 64 hex (§4.1 writes
    SHA-256 digests as ``sha256:``; the spec hash is a keccak, the specification does not say how
    it is written, so both spellings are accepted)."""
    if not isinstance(text, str):
        return None
    m = re.fullmatch(r"(?:0x|[a-z0-9-]+:)?([0-9a-fA-F]{64})", text)
    return bytes.fromhex(m.group(1)) if m else None


def charter_check(pack: dict[str, Any], record: Struct, objective_hash: bytes
                  ) -> dict[str, Any]:
    """§4.1 a pack against the proven record: the three hashes, and the pack's ``specHash``
    and ``version`` members (which MUST equal the on-chain specHash and charterVersion)."""
    digests = pack_digests(pack)
    proven_charter = bytes(record["charterHash"])
    proven_commitment = bytes(record["commitmentHash"])
    spec = _digest_member(pack.get("specHash"))
    version = pack.get("version")
    return {
        "charter_hash": digests["charter_hash"],
        "proven_charter_hash": proven_charter,
        "charter_matches": digests["charter_hash"] == proven_charter,
        "objective_hash": digests["objective_hash"],
        "proven_objective_hash": bytes(objective_hash),
        "objective_matches": digests["objective_hash"] == bytes(objective_hash),
        "commitment_hash": digests["commitment_hash"],
        "proven_commitment_hash": proven_commitment,
        "commitment_matches": digests["commitment_hash"] == proven_commitment,
        "spec_hash_matches": spec == bytes(record["specHash"]),
        # exactly an int: a JSON true is no version
        "version_matches": type(version) is int and version == record["charterVersion"],
        "charter_version": record["charterVersion"],
    }


def load_pack(path: Path) -> dict[str, Any]:
    """A Swarm Pack root object; duplicate member names are refused (RFC 8785 §3.1 works on
    I-JSON, where names are unique, and a silently dropped duplicate would change the hash)."""
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        names = [k for k, _ in pairs]
        if len(set(names)) != len(names):
            dup = next(k for k in names if names.count(k) > 1)
            raise UsageError(f"{path}: member {dup!r} appears twice (I-JSON, RFC 8785 §3.1)")
        return dict(pairs)

    pack = load_file(path, str(path), UsageError, object_pairs_hook=no_duplicates)
    if not isinstance(pack, dict):
        raise UsageError(f"{path}: a Swarm Pack's root is a JSON object (§4.1)")
    try:  # refused here, where the file is named, rather than when it is hashed
        jcs(pack)
    except (ValueError, TypeError) as exc:  # what RFC 8785 refuses (jsontext.jcs)
        raise UsageError(f"{path}: JCS (RFC 8785) cannot canonicalise it: "
                         f"{' '.join(str(exc).split())[:120]}") from None
    return pack


@register
class Charter(Recipe):
    name = "sai/charter"
    outputs = {
        "charter_hash": HEX,
        "proven_charter_hash": HEX,
        "charter_matches": BOOL,
        "objective_hash": HEX,
        "proven_objective_hash": HEX,
        "objective_matches": BOOL,
        "commitment_hash": HEX,
        "proven_commitment_hash": HEX,
        "commitment_matches": BOOL,
        "spec_hash_matches": BOOL,
        "charter_version": INT,
        "version_matches": BOOL,
    }
    help = "A Swarm Pack hashes (sha256 of JCS) to the proven charter/objective/commitment."
    section = "ERC-8447 §4.1"
    params = (SWARM, Param("pack", "file", "the Swarm Pack root object (JSON)"))
    layout = LAYOUT

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        pack = load_pack(p["pack"])
        base = swarm_base(p)
        obj = f"{base}.objective.objectiveHash"
        got = yield Reads([*record_paths(base, CHARTER_FIELDS), obj])
        result = self.check(pack, record_fields(got, base, CHARTER_FIELDS), got[obj])
        holds = all(result[k] for k in ("charter_matches", "objective_matches",
                                        "commitment_matches", "spec_hash_matches",
                                        "version_matches"))
        return Derivation(
            holds=holds,
            derived=result,
            predicate="sha256(JCS(pack)) == charterHash, sha256(JCS(objective)) == "
                      "objectiveHash, sha256(JCS(commitment)) (or zero) == commitmentHash, "
                      "pack.specHash == specHash and pack.version == charterVersion (§4.1)",
        )

    def check(self, pack: dict[str, Any], record: Struct, objective_hash: bytes
              ) -> dict[str, Any]:
        return charter_check(pack, record, objective_hash)

    def views(self, p: Params) -> list[ViewCheck]:
        return [ViewCheck("getSwarm(bytes32)", (swarm_topic(p),), ("bytes32",), (SWARM_TUPLE,),
                          lambda r, d: {"proven_charter_hash": (r[0][CHARTER_AT],
                                                                d["proven_charter_hash"])})]
