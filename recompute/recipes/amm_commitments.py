"""AMM layer commitments and state roots (the AMM specification, AMM §Commitment format,
§Layer checkpoints and state versions): the pure hashes, and the two recipes that set them
beside proven storage, ``amm/state-root`` and ``amm/commitment``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recompute.core.abiword import encode_static
from recompute.core.boundedjson import load_file
from recompute.core.errors import UsageError
from recompute.core.jsontext import jcs  # JCS(d): RFC 8785 canonical UTF-8 serialisation
from recompute.core.keccak import keccak256
from recompute.recipes.amm_registry import LAYER, LAYOUT, SUBJECT, layer_index
from recompute.recipes.base import Recipe
from recompute.recipes.outputs import BOOL, HEX, INT, TEXT
from recompute.recipes.params import Param
from recompute.recipes.plan import BlockClock, Derivation, Params, Plan, Reads, Struct, ViewCheck
from recompute.recipes.registry import register

# ---- AMM §Commitment format -----------------------------------------------------------------

TAG_LAYER_COMMITMENT = keccak256(b"AgentMeditationMechanism/LayerCommitment/v1")
TAG_STATE_ROOT = keccak256(b"AgentMeditationMechanism/StateRoot/v1")
LAYER_SCHEMAS = ("amm.layer.runtime/1", "amm.layer.memory-skills/1", "amm.layer.tasks-roles/1",
                 "amm.layer.cognition/1")



def commitment_from_hashes(layer: int, schema_hash: bytes, content_hash: bytes,
                           salt: bytes) -> bytes:
    """keccak256(abi.encode(TAG_LAYER_COMMITMENT, uint8 layer, schemaHash, contentHash, salt))."""
    return keccak256(encode_static(
        ["bytes32", "uint8", "bytes32", "bytes32", "bytes32"],
        [TAG_LAYER_COMMITMENT, layer, schema_hash, content_hash, salt],
    ))


def layer_commitment(layer: int, schema: str, document: Any, salt: bytes = bytes(32)) -> bytes:
    """The commitment to a layer state document: schemaHash = keccak256(schema), contentHash =
    keccak256(JCS(document))."""
    return commitment_from_hashes(layer, keccak256(schema.encode()), keccak256(jcs(document)),
                                  salt)


def compute_root(commitments: Sequence[bytes]) -> bytes:
    """root = keccak256(abi.encode(TAG_STATE_ROOT, c0, c1, c2, c3))."""
    if len(commitments) != 4:
        raise ValueError("a state root commits to exactly four layers")
    return keccak256(encode_static(["bytes32"] * 5, [TAG_STATE_ROOT, *commitments]))


# ---- the recipes ----------------------------------------------------------------------------


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
    layout = LAYOUT

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        subject = p["subject"]
        head: Struct = (yield Reads([f"heads[{subject}]"]))[f"heads[{subject}]"]
        if not head["enrolled"]:
            return Derivation(False, {"enrolled": False}, "the subject is enrolled",
                              failed=f"{subject} is not enrolled; healthy means enrolled")
        at = f"stateRoots[{subject}][{self.root_version(head)}]"
        got = yield Reads([f"checkpoints[{subject}]", at])
        commitments = [cp["commitment"] for cp in got[f"checkpoints[{subject}]"]]
        computed = self.root(commitments)
        root_at: bytes = got[at]
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

    def root(self, commitments: Sequence[bytes]) -> bytes:
        return compute_root(commitments)

    def root_version(self, head: Struct) -> int:
        version: int = head["stateVersion"]
        return version

    def views(self, p: Params) -> list[ViewCheck]:
        head = ("(bool,address,uint8,uint32,uint32,uint64,uint64,bytes32,uint48,uint48,"
                "uint48)")
        return [ViewCheck("headOf(address)", (p["subject"],), ("address",), (head,),
                          lambda r, d: {"root": (r[0][7], d.get("root")),
                                        "state_version": (r[0][5], d.get("state_version"))})]


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
    layout = LAYOUT

    def plan(self, p: Params, clock: BlockClock) -> Plan:
        subject, layer = p["subject"], layer_index(p)
        document = _load_document(p["document"])
        schema = document.get("schema") if isinstance(document, dict) else None
        if not isinstance(schema, str) or document.get("layer") != layer:
            raise UsageError(
                f"{p['document']}: a layer state document has a string 'schema' and "
                f"'layer': {layer} (AMM §Commitment format)"
            )
        computed = self.commitment(layer, schema, document, bytes.fromhex(p["salt"][2:]))
        path = f"checkpoints[{subject}][{layer}]"
        proven: bytes = (yield Reads([path]))[path]["commitment"]
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

    def commitment(self, layer: int, schema: str, document: Any, salt: bytes) -> bytes:
        return layer_commitment(layer, schema, document, salt)


def _roots_failed(root: bytes, computed: bytes, root_at: bytes, version: int) -> str:
    """Which of head.root == computeRoot(c0..c3) == rootAt(stateVersion) failed."""
    failed = []
    if root != computed:
        failed.append(f"head.root 0x{root.hex()} != computeRoot(c0..c3) 0x{computed.hex()}")
    if computed != root_at:
        failed.append(f"rootAt({version}) 0x{root_at.hex()} != computeRoot(c0..c3) "
                      f"0x{computed.hex()}")
    return "; ".join(failed) + "; healthy means all three are equal"


def _load_document(path: Path) -> Any:
    """A layer document file: bounded JSON that JCS can canonicalise (I-JSON numbers, RFC 8785
    §3.2.2.3), or one UsageError line naming the file."""
    document = load_file(path, str(path), UsageError)
    try:
        jcs(document)
    except (ValueError, TypeError) as exc:  # what RFC 8785 refuses (jsontext.jcs)
        raise UsageError(f"{path}: JCS (RFC 8785) cannot canonicalise it: "
                         f"{' '.join(str(exc).split())[:120]}") from None
    return document
