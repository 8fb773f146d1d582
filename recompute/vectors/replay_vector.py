"""Replaying a vector offline through the same runner a live step uses, and comparing outcomes."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recompute.core.anchor import aged, anchor_block
from recompute.core.clock import Clock
from recompute.core.errors import Unverifiable, UsageError
from recompute.core.keccak import keccak256
from recompute.core.prover import prove_account
from recompute.core.schema import ANY, Integer, ListOf, OneOf, Record, Text, check
from recompute.disk.whole_file import write_whole
from recompute.evaluator.job import step
from recompute.evaluator.job_record import normalise
from recompute.layout import parse_descriptor
from recompute.recipes import amm
from recompute.recipes.base import Recipe
from recompute.recipes.registry import get_recipe
from recompute.sources.replay import ReplaySource
from recompute.vectors.format import MalformedVector, check_vector_shape

# ---- replay -----------------------------------------------------------------------------------


def replay(vector: dict[str, Any], recipe_override: Recipe | None = None) -> dict[str, Any]:
    """Run a vector offline; returns ``{"verdict", "reason", "derived"|"account"…}``.

    A vector is outside data: content of the wrong shape (a missing key, a list where an object
    belongs, text that is not hex) raises :class:`MalformedVector`, one line, never a traceback.
    """
    name = vector.get("name") if isinstance(vector, dict) else None
    check_vector_shape(vector, name if isinstance(name, str) else "(unnamed)")
    try:
        return _replay(vector, recipe_override)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0][:160]
        raise MalformedVector(f"vector {vector.get('name')!r} is malformed: {what}") from None


def _replay(vector: dict[str, Any], recipe_override: Recipe | None = None) -> dict[str, Any]:
    kind = vector.get("kind")
    if kind == "pure":
        return replay_pure(vector)
    pinned = bytes.fromhex(vector["pinned_block_hash"][2:])
    try:
        # the recorded node answers are untrusted bytes like any node's: malformed ones make
        # the replay UNVERIFIABLE (rpc-malformed), exactly as they would live
        source = ReplaySource(vector["chain_id"], vector.get("headers", {}),
                              vector.get("proofs", []), vector.get("receipts", {}),
                              label=f"vector {vector.get('name')}")
        block = anchor_block([source], block_hash=pinned)
        # a vector is recorded data about a block pinned by hash: judged as asked, never
        # refused for its age, and its evidence names the clock: as of the block's own time
        # (docs/lightclient.md §Clock)
        block = aged(block, Clock(at=block.timestamp))
        if kind == "proof":
            slots = [int(s, 16) for s in vector["slots"]]
            account = prove_account(block, bytes.fromhex(vector["address"][2:]), slots)
            return {"verdict": "VERIFIED-GOOD", "reason": "ok", "account": account.to_json(),
                    "values": {f"0x{s:064x}": f"0x{v:064x}" for s, v in account.storage.items()}}
        if kind != "step":
            raise UsageError(f"vector {vector.get('name')}: unknown kind {kind!r}")
        layout_doc = vector["layout"]["descriptor"]
        layout = parse_descriptor(layout_doc,
                                  origin=f'vector {vector["name"]}: field "layout.descriptor"')
        digest = hashlib.sha256(layout.dumps().encode()).hexdigest()
        if digest != vector["layout"]["sha256"]:
            raise UsageError(f'vector {vector["name"]}: field "layout.sha256": the embedded '
                             f"layout's sha256 is "
                             f"{digest}, not the pinned {vector['layout']['sha256']}")
        what = f"vector {vector['name']}"
        try:
            recipe = recipe_override or get_recipe(vector["recipe"])
        except UsageError as exc:
            raise MalformedVector(f'{what}: field "recipe": {exc}') from None
        with tempfile.TemporaryDirectory() as tmp:
            params = _unembed_params(vector["params"], Path(tmp))
            try:
                parsed = recipe.parse_params(params)
            except UsageError as exc:
                raise MalformedVector(f'{what}: field "params": {exc}') from None
            try:
                recipe.parse_expect(vector.get("expect") or {}, "expect")
            except UsageError as exc:
                raise MalformedVector(f'{what}: field "expect": {exc}') from None
            outcome = step(recipe, parsed, block, bytes.fromhex(vector["address"][2:]), layout,
                           vector.get("expect") or {})
        return {"verdict": outcome.verdict.value, "reason": outcome.reason,
                "derived": outcome.evidence["derived"]}
    except Unverifiable as exc:
        return {"verdict": "UNVERIFIABLE", "reason": exc.reason}


def _unembed_params(params: dict[str, Any], tmp: Path) -> dict[str, str]:
    out = {}
    for key, value in params.items():
        if isinstance(value, dict) and "content" in value:
            path = tmp / Path(value.get("file") or key).name
            write_whole(path, value["content"])
            out[key] = str(path)
        else:
            out[key] = str(value)
    return out


def compare(vector: dict[str, Any], got: dict[str, Any]) -> str:
    """Empty when ``got`` reproduces the vector's expectation, else what differs."""
    expected = vector.get("expected")
    if not isinstance(expected, dict):
        return "the vector's 'expected' is not an object"
    diffs = []
    for key in sorted(set(expected) | {"verdict", "reason"}):
        if key in ("verdict", "reason"):
            if expected.get(key) != got.get(key):
                diffs.append(f"{key} {got.get(key)!r} (expected {expected.get(key)!r})")
        else:
            diffs += _differences(key, expected.get(key), got.get(key))
    return "; ".join(diffs)


def _differences(where: str, expected: Any, got: Any) -> list[str]:
    """Which values differ, each as ``where got (expected …)``, down into objects."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out = []
        for key in sorted(set(expected) | set(got), key=str):
            if key not in got:
                out.append(f"{where}.{key} missing (expected {_short(expected[key])})")
            elif key not in expected:
                out.append(f"{where}.{key} {_short(got[key])} (not expected)")
            else:
                out += _differences(f"{where}.{key}", expected[key], got[key])
        return out
    if normalise(expected) != normalise(got):
        return [f"{where} {_short(got)} (expected {_short(expected)})"]
    return []


def _short(value: Any) -> str:
    text = normalise(value)
    return text if len(text) <= 80 else text[:77] + "..."


# ---- pure vectors -----------------------------------------------------------------------------


def _pure_functions() -> dict[str, Callable[..., Any]]:

    def domain_tag(text: str) -> str:
        return "0x" + keccak256(text.encode()).hex()

    def jcs_keccak(document: Any) -> dict[str, Any]:
        canonical = amm.jcs(document)
        return {"canonical": canonical.decode(), "keccak256": "0x" + keccak256(canonical).hex()}

    def layer_commitment_from_hashes(layer: int, schema_hash: str, content_hash: str,
                                     salt: str) -> str:
        return "0x" + amm.commitment_from_hashes(
            layer, bytes.fromhex(schema_hash[2:]), bytes.fromhex(content_hash[2:]),
            bytes.fromhex(salt[2:])).hex()

    def state_root(commitments: list[str]) -> str:
        return "0x" + amm.compute_root([bytes.fromhex(c[2:]) for c in commitments]).hex()

    def interface_id(signatures: list[str]) -> str:
        value = 0
        for signature in signatures:
            value ^= int.from_bytes(keccak256(signature.encode())[:4], "big")
        return f"0x{value:08x}"

    return {"keccak256-text": domain_tag, "amm.jcs": jcs_keccak,
            "amm.layer-commitment": layer_commitment_from_hashes, "amm.state-root": state_root,
            "erc165.interface-id": interface_id}


_BYTES32 = Text(r"0x[0-9a-fA-F]{64}", "0x and 32 bytes in hex")
PURE_INPUTS = {  # each pure function's inputs, checked field by field before it runs
    "keccak256-text": Record({"text": Text()}),
    "amm.jcs": Record({"document": ANY}),
    "amm.layer-commitment": Record({
        "layer": OneOf((Integer(0, 256), Text(r"[0-9]{1,3}", "a uint8")), "a uint8"),
        "schema_hash": _BYTES32, "content_hash": _BYTES32, "salt": _BYTES32}),
    "amm.state-root": Record({"commitments": ListOf(_BYTES32)}),
    "erc165.interface-id": Record({"signatures": ListOf(Text())}),
}


def replay_pure(vector: dict[str, Any]) -> dict[str, Any]:
    functions = _pure_functions()
    name = vector.get("function")
    what = f"vector {vector.get('name')}"
    if name not in functions:
        raise MalformedVector(f'{what}: field "function": unknown pure function '
                              f"{str(name)[:60]!r} (known: {', '.join(functions)})")
    inputs = vector.get("inputs", {})
    check(inputs, PURE_INPUTS[name], f'{what}: field "inputs"', MalformedVector)
    try:
        output = functions[name](**inputs)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:  # e.g. JCS's range
        raise MalformedVector(f'{what}: field "inputs": {name} refuses them '
                              f"({str(exc).splitlines()[0][:120]})") from None
    holds = normalise(output) == normalise(vector["expected"].get("output"))
    return {"verdict": "VERIFIED-GOOD" if holds else "VERIFIED-BAD",
            "reason": "ok" if holds else "predicate-failed", "output": output}
