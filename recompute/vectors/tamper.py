"""Tamper mode: every data mutation of a vector must fail it; every plausible wrong method must
be told apart by at least one vector of its recipe."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from recompute.core.errors import UsageError
from recompute.core.jsontext import json_line
from recompute.recipes.base import Recipe
from recompute.recipes.registry import get_recipe
from recompute.vectors.replay_vector import compare, replay

# ---- tamper -------------------------------------------------------------------------------------


def _flip_hex(text: str) -> str:
    return text[:-1] + ("1" if text[-1] != "1" else "2")


def mutations(vector: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Ways to change a vector that must change its outcome."""
    def copy_of() -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json_line(vector))
        return copy

    if vector.get("kind") == "pure":
        v = copy_of()
        if _change_first_leaf(v["inputs"]):
            yield "an input changed", v
        return
    for i, proof in enumerate(vector.get("proofs", [])):
        v = copy_of()
        nodes = v["proofs"][i]["answer"]["accountProof"]
        nodes[-1] = _flip_hex(nodes[-1])
        yield f"proof {i}: a byte of the last account-proof node", v
        storage = proof["answer"].get("storageProof") or []
        for j, entry in enumerate(storage):
            if entry.get("proof"):
                v = copy_of()
                node = v["proofs"][i]["answer"]["storageProof"][j]["proof"]
                node[0] = _flip_hex(node[0])
                yield f"proof {i}: a byte of the first storage-proof node of slot {j}", v
                break
        for j, entry in enumerate(storage):
            v = copy_of()
            claimed = int(entry["value"], 16)
            v["proofs"][i]["answer"]["storageProof"][j]["value"] = hex(claimed + 1)
            yield f"proof {i}: the proven value of slot {j} claimed differently", v
            break
    for hash_text in list(vector.get("headers", {}))[:1]:
        v = copy_of()
        rlp_text = v["headers"][hash_text]
        v["headers"][hash_text] = rlp_text[:-2] + ("01" if rlp_text[-2:] != "01" else "02")
        yield "a header field (last RLP byte) changed", v
    for hash_text, receipts in vector.get("receipts", {}).items():
        for k, receipt in enumerate(receipts):
            if receipt.get("logs"):
                v = copy_of()
                log = v["receipts"][hash_text][k]["logs"][0]
                log["data"] = _flip_hex(log["data"]) if log["data"] != "0x" else "0x01"
                yield f"a log of receipt {k} in block {hash_text[:10]}…", v
                break
        break


def _change_first_leaf(node: Any) -> bool:
    """Change the first string or number inside ``node`` in place (depth first)."""
    items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
    for key, value in items:
        if isinstance(value, str) and value:
            node[key] = value[:-1] + ("1" if value[-1] != "1" else "2")
            return True
        if isinstance(value, int | float) and not isinstance(value, bool):
            node[key] = value + 1
            return True
        if isinstance(value, dict | list) and _change_first_leaf(value):
            return True
    return False


def tamper(vector: dict[str, Any]) -> list[tuple[str, bool]]:
    """Each data mutation of the vector and whether it made the vector fail (it must). A
    malformed vector (it already fails ``verify``) has no mutation to try."""
    if not isinstance(vector.get("expected"), dict) or \
            vector["expected"].get("verdict") == "UNVERIFIABLE":
        return []  # already unverifiable: mutations cannot be told apart from it
    try:
        variants = list(mutations(vector))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return []
    return [(label, _fails(vector, mutated)) for label, mutated in variants]


def _fails(vector: dict[str, Any], mutated: dict[str, Any],
           recipe_override: Recipe | None = None) -> bool:
    try:
        return bool(compare(vector, replay(mutated, recipe_override)))
    except UsageError:  # MalformedVector included
        return True


def method_mistakes(vector: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """``(recipe, mistake, told apart)`` for each wrong-but-plausible method of the vector's
    recipe. A method is pinned when at least one vector of the recipe tells it apart."""
    if vector.get("kind") != "step" or not isinstance(vector.get("recipe"), str):
        return []
    try:
        recipe = get_recipe(vector["recipe"])
    except UsageError:
        return []
    # imported here: the registered mistakes load the AMM and ERC-8447 recipes, which
    # `vectors verify` without --tamper and the library API need not
    from recompute.vectors.mistakes import mistakes_of
    return [(recipe.name, label, _fails(vector, vector, mistaken))
            for label, mistaken in mistakes_of(recipe).items()]


def tamper_all(vectors: list[dict[str, Any]]) -> list[str]:
    """Every mutation that did not make its vector fail, and every method no vector pins."""
    return tamper_counts(vectors).undetected


@dataclass
class TamperCounts:
    """What a tamper run tried and caught: data mutations (each must make its vector fail)
    and wrong methods (each must be told apart by at least one vector of its recipe)."""

    mutations: int = 0
    caught: int = 0
    methods: int = 0
    told_apart: int = 0
    undetected: list[str] = field(default_factory=list)


def tamper_counts(vectors: list[dict[str, Any]]) -> TamperCounts:
    counts = TamperCounts()
    pinned: dict[tuple[str, str], bool] = {}
    for vector in vectors:
        for label, detected in tamper(vector):
            counts.mutations += 1
            counts.caught += detected
            if not detected:
                counts.undetected.append(f"{vector.get('name')}: {label}")
        for recipe, label, detected in method_mistakes(vector):
            pinned[(recipe, label)] = pinned.get((recipe, label), False) or detected
    counts.methods = len(pinned)
    counts.told_apart = sum(pinned.values())
    counts.undetected += [f"{recipe}: method '{label}' gives the same outcome on every vector"
                          for (recipe, label), detected in sorted(pinned.items())
                          if not detected]
    return counts
