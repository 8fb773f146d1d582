"""Conformance vectors: capture a live step, replay it offline, pin it by hash, tamper with it.

A vector (``recompute-vector/1``, schema in ``vectors/schema.json``) holds everything the
verifier consumed and nothing else: the recipe and its parameters (file parameters embedded),
the layout descriptor with its sha256, the pinned block hash, every header as RLP, every
``eth_getProof`` answer, every block of receipts, and the expected verdict and derived
values. Replay runs the same runner a live ``step`` uses, with :class:`ReplaySource` as the
proof source. Kinds: ``step`` (a recipe), ``proof`` (``recompute proof``) and ``pure`` (a
seed computation with no chain).

A suite file (``suite.json``, the shape of the peer suite recompute-kit uses) pins each
vector file and the spec by sha256; a mismatch fails the suite before anything runs.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recompute.anchor import anchor_block
from recompute.errors import Unverifiable, UsageError
from recompute.layout import parse_descriptor
from recompute.prover import prove_account
from recompute.recipe import get_recipe
from recompute.runner import normalise, step
from recompute.source import LiveSource
from recompute.vector_source import CaptureSource, ReplaySource

FORMAT = "recompute-vector/1"
SUITE_PROFILE = "recompute-vectors.v1"


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def dumps(vector: dict) -> str:
    """The one serialisation of a vector: sorted keys, 1-space indent, trailing newline."""
    return json.dumps(vector, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


# ---- capture ----------------------------------------------------------------------------------


def capture_step(recipe_name: str, params: dict[str, str], address: str, layout_name: str | None,
                 rpc: str, block_hash: bytes, expect: dict[str, str], name: str,
                 description: str = "", recipe_paths: list[str] | None = None) -> dict:
    """Run a step live against ``rpc`` at the pinned ``block_hash`` and record it."""
    from recompute.cli.options import parse_address
    from recompute.layout import load_layout

    recipe = get_recipe(recipe_name, recipe_paths)
    layout = load_layout(layout_name or recipe.layout)
    parsed = recipe.parse_params(params)
    source = CaptureSource(LiveSource(rpc))
    vector: dict[str, Any] = {
        "format": FORMAT,
        "kind": "step",
        "name": name,
        "description": description,
        "recipe": recipe.name,
        "params": _embed_params(recipe, params),
        "address": address.lower(),
        "layout": {"name": layout.name, "sha256": hashlib.sha256(layout.dumps().encode())
                   .hexdigest(), "descriptor": json.loads(layout.dumps())},
        "expect": dict(expect),
        "pinned_block_hash": "0x" + block_hash.hex(),
    }
    try:
        block = anchor_block([source], block_hash=block_hash)
        outcome = step(recipe, parsed, block, parse_address(address), layout, expect)
        expected = {"verdict": outcome.verdict.value, "reason": outcome.reason,
                    "derived": outcome.evidence["derived"]}
    except Unverifiable as exc:
        expected = {"verdict": "UNVERIFIABLE", "reason": exc.reason}
    vector.update(_record(source))
    vector["expected"] = expected
    return vector


def capture_proof(address: str, slots: list[int], rpc: str, block_hash: bytes, name: str,
                  description: str = "") -> dict:
    """Record a ``recompute proof`` (account + slots) live."""
    source = CaptureSource(LiveSource(rpc))
    vector: dict[str, Any] = {"format": FORMAT, "kind": "proof", "name": name,
                              "description": description, "address": address.lower(),
                              "slots": [f"0x{s:064x}" for s in slots],
                              "pinned_block_hash": "0x" + block_hash.hex()}
    try:
        block = anchor_block([source], block_hash=block_hash)
        account = prove_account(block, bytes.fromhex(address[2:]), slots)
        expected = {"verdict": "VERIFIED-GOOD", "reason": "ok", "account": account.to_json(),
                    "values": {f"0x{s:064x}": f"0x{v:064x}" for s, v in account.storage.items()}}
    except Unverifiable as exc:
        expected = {"verdict": "UNVERIFIABLE", "reason": exc.reason}
    vector.update(_record(source))
    vector["expected"] = expected
    return vector


def _record(source: CaptureSource) -> dict:
    return {"chain_id": source.chain_id(), "headers": dict(sorted(source.headers.items())),
            "proofs": source.proofs, "receipts": dict(sorted(source.receipts.items()))}


def _embed_params(recipe, params: dict[str, str]) -> dict:
    kinds = {p.name: p.kind for p in recipe.params}
    out = {}
    for key, text in sorted(params.items()):
        if kinds.get(key) == "file":
            path = Path(text)
            out[key] = {"file": path.name, "content": path.read_text()}
        else:
            out[key] = text
    return out


# ---- replay -----------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    passed: bool
    detail: str = ""


class MalformedVector(UsageError):
    """A vector whose content does not have the shape of its kind."""


def replay(vector: dict, recipe_override=None) -> dict:
    """Run a vector offline; returns ``{"verdict", "reason", "derived"|"account"…}``.

    A vector is outside data: content of the wrong shape (a missing key, a list where an object
    belongs, text that is not hex) raises :class:`MalformedVector`, one line, never a traceback.
    """
    try:
        return _replay(vector, recipe_override)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0][:160]
        raise MalformedVector(f"vector {vector.get('name')!r} is malformed: {what}") from None


def _replay(vector: dict, recipe_override=None) -> dict:
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
        if kind == "proof":
            slots = [int(s, 16) for s in vector["slots"]]
            account = prove_account(block, bytes.fromhex(vector["address"][2:]), slots)
            return {"verdict": "VERIFIED-GOOD", "reason": "ok", "account": account.to_json(),
                    "values": {f"0x{s:064x}": f"0x{v:064x}" for s, v in account.storage.items()}}
        if kind != "step":
            raise UsageError(f"vector {vector.get('name')}: unknown kind {kind!r}")
        layout_doc = vector["layout"]["descriptor"]
        layout = parse_descriptor(layout_doc, origin=f"vector {vector['name']}")
        digest = hashlib.sha256(layout.dumps().encode()).hexdigest()
        if digest != vector["layout"]["sha256"]:
            raise UsageError(f"vector {vector['name']}: the embedded layout's sha256 is "
                             f"{digest}, not the pinned {vector['layout']['sha256']}")
        recipe = recipe_override or get_recipe(vector["recipe"])
        with tempfile.TemporaryDirectory() as tmp:
            params = _unembed_params(vector["params"], Path(tmp))
            parsed = recipe.parse_params(params)
            outcome = step(recipe, parsed, block, bytes.fromhex(vector["address"][2:]), layout,
                           vector.get("expect") or {})
        return {"verdict": outcome.verdict.value, "reason": outcome.reason,
                "derived": outcome.evidence["derived"]}
    except Unverifiable as exc:
        return {"verdict": "UNVERIFIABLE", "reason": exc.reason}


def _unembed_params(params: dict, tmp: Path) -> dict[str, str]:
    out = {}
    for key, value in params.items():
        if isinstance(value, dict) and "content" in value:
            path = tmp / Path(value.get("file") or key).name
            path.write_text(value["content"])
            out[key] = str(path)
        else:
            out[key] = str(value)
    return out


def compare(vector: dict, got: dict) -> str:
    """Empty when ``got`` reproduces the vector's expectation, else what differs."""
    expected = vector.get("expected")
    if not isinstance(expected, dict):
        return "the vector's 'expected' is not an object"
    diffs = []
    for key in sorted(set(expected) | {"verdict", "reason"}):
        if key in ("verdict", "reason"):
            if expected.get(key) != got.get(key):
                diffs.append(f"{key} {got.get(key)!r} (expected {expected.get(key)!r})")
        elif normalise(expected.get(key)) != normalise(got.get(key)):
            diffs.append(f"{key} differs")
    return "; ".join(diffs)


# ---- pure vectors -----------------------------------------------------------------------------


def _pure_functions() -> dict[str, Callable[..., Any]]:
    from recipes import amm
    from recompute.keccak import keccak256

    def domain_tag(text: str) -> str:
        return "0x" + keccak256(text.encode()).hex()

    def jcs_keccak(document) -> dict:
        canonical = amm.jcs(document)
        return {"canonical": canonical.decode(), "keccak256": "0x" + keccak256(canonical).hex()}

    def layer_commitment_from_hashes(layer, schema_hash, content_hash, salt) -> str:
        return "0x" + amm.commitment_from_hashes(
            layer, bytes.fromhex(schema_hash[2:]), bytes.fromhex(content_hash[2:]),
            bytes.fromhex(salt[2:])).hex()

    def state_root(commitments) -> str:
        return "0x" + amm.compute_root([bytes.fromhex(c[2:]) for c in commitments]).hex()

    def interface_id(signatures) -> str:
        value = 0
        for signature in signatures:
            value ^= int.from_bytes(keccak256(signature.encode())[:4], "big")
        return f"0x{value:08x}"

    return {"keccak256-text": domain_tag, "amm.jcs": jcs_keccak,
            "amm.layer-commitment": layer_commitment_from_hashes, "amm.state-root": state_root,
            "erc165.interface-id": interface_id}


def replay_pure(vector: dict) -> dict:
    functions = _pure_functions()
    name = vector.get("function")
    if name not in functions:
        raise UsageError(f"vector {vector.get('name')}: unknown pure function {name!r} "
                         f"(known: {', '.join(functions)})")
    inputs = vector.get("inputs", {})
    output = functions[name](**inputs)
    holds = normalise(output) == normalise(vector["expected"].get("output"))
    return {"verdict": "VERIFIED-GOOD" if holds else "VERIFIED-BAD",
            "reason": "ok" if holds else "predicate-failed", "output": output}


# ---- suites, loading, verifying -----------------------------------------------------------------


def load_json(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a JSON object")
    return data


def check_vector_shape(vector: dict, path: Path) -> None:
    if vector.get("format") != FORMAT:
        raise UsageError(f"{path}: not a {FORMAT} vector (format {vector.get('format')!r})")
    required = {"step": ("recipe", "params", "address", "layout", "pinned_block_hash", "headers",
                         "proofs", "receipts", "chain_id", "expected"),
                "proof": ("address", "slots", "pinned_block_hash", "headers", "proofs",
                          "chain_id", "expected"),
                "pure": ("function", "inputs", "expected")}.get(vector.get("kind"))
    if required is None:
        raise UsageError(f"{path}: unknown vector kind {vector.get('kind')!r}")
    missing = [key for key in required if key not in vector]
    if missing:
        raise UsageError(f"{path}: the vector lacks {', '.join(missing)}")
    expected = vector["expected"]
    if not isinstance(expected, dict) or expected.get("verdict") not in (
            "VERIFIED-GOOD", "VERIFIED-BAD", "UNVERIFIABLE"):
        raise UsageError(f"{path}: 'expected' must be an object with a verdict of "
                         "VERIFIED-GOOD, VERIFIED-BAD or UNVERIFIABLE")


@dataclass
class Suite:
    path: Path
    entries: list[Path]
    profile: str
    problems: list[str]


def read_suite(path: Path) -> Suite:
    """A suite.json: vector files and spec pinned by sha256 (hash mismatches become problems)."""
    suite = load_json(path)
    base = path.parent
    problems = []
    listed = suite.get("vectors")
    listed = [listed] if isinstance(listed, dict) else listed
    if not isinstance(listed, list) or not listed:
        raise UsageError(f"{path}: 'vectors' lists no file")
    pinned = list(listed) + ([suite["spec"]] if isinstance(suite.get("spec"), dict) else [])
    for entry in pinned:
        if not isinstance(entry, dict) or "path" not in entry or "sha256" not in entry:
            raise UsageError(f"{path}: every pinned file needs 'path' and 'sha256'")
        file = base / entry["path"]
        if not file.is_file():
            problems.append(f"{entry['path']}: missing")
        elif sha256_file(file) != entry["sha256"]:
            problems.append(f"{entry['path']}: sha256 {sha256_file(file)} is not the pinned "
                            f"{entry['sha256']}")
    return Suite(path, [base / e["path"] for e in listed], str(suite.get("profile", "")),
                 problems)


def find_suites(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """(suite files, loose vector files) named by ``paths`` (folders are searched)."""
    suites, loose = [], []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            suites += sorted(path.rglob("suite.json"))
        elif path.name == "suite.json":
            suites.append(path)
        elif path.is_file():
            loose.append(path)
        else:
            raise UsageError(f"{path}: no such file or folder")
    return suites, loose


def _aggregate_budget_v0(path: Path) -> Iterator[Result]:
    """The peer suite trustless-ai/recompute-kit aggregate_budget.v0, replayed with the very
    derivation ``8312/aggregate-budget`` uses (its log entries are the draws; expected
    ``admittedSum`` is our aggregate, ``conserves`` our within_cap)."""
    from recipes.erc8312 import aggregate_budget

    for vector, draws, cap, meter in _peer_vectors(path):
        got = aggregate_budget(draws, cap, **meter)
        expected = vector["expected"]
        diff = []
        if str(got["aggregate"]) != str(expected["admittedSum"]):
            diff.append(f"admittedSum {got['aggregate']} (expected {expected['admittedSum']})")
        if got["within_cap"] is not expected["conserves"]:
            diff.append(f"conserves {got['within_cap']} (expected {expected['conserves']})")
        yield Result(f"aggregate-budget-v0/{vector['name']}", not diff, "; ".join(diff))


def _peer_vectors(path: Path):
    from recipes.erc8312 import Draw

    document = load_json(path)
    for vector in document.get("vectors", []):
        draws = [Draw(root=e["rootId"], node=e["edge"], period=e["periodIndex"],
                      amount=int(e["amount"]), admitted=e["admitted"]) for e in vector["log"]]
        yield vector, draws, int(vector["cap"]), {"root": vector["rootId"],
                                                  "period": vector["periodIndex"]}


def peer_method_pinned(path: Path) -> bool:
    """True when some aggregate_budget.v0 vector tells the per-edge method apart."""
    from recipes.erc8312 import per_edge_max

    return any(per_edge_max(draws, cap, **meter) is not vector["expected"]["conserves"]
               for vector, draws, cap, meter in _peer_vectors(path))


PROFILE_HANDLERS: dict[str, Callable[[Path], Iterator[Result]]] = {
    "aggregate_budget.v0": _aggregate_budget_v0,
}


def verify_paths(paths: list[Path]) -> list[Result]:
    suites, loose = find_suites(paths)
    results: list[Result] = []
    for suite_path in suites:
        suite = read_suite(suite_path)
        if suite.problems:
            results += [Result(f"{suite_path}", False, "hash check: " + p) for p in suite.problems]
            continue
        handler = PROFILE_HANDLERS.get(suite.profile)
        for entry in suite.entries:
            if handler is not None:
                results += list(handler(entry))
            else:
                results.append(verify_file(entry))
    for path in loose:
        results.append(verify_file(path))
    return results


def verify_file(path: Path) -> Result:
    vector = load_json(path)
    check_vector_shape(vector, path)
    try:
        got = replay(vector)
    except MalformedVector as exc:
        return Result(vector.get("name", path.stem), False, str(exc))
    diff = compare(vector, got)
    return Result(vector.get("name", path.stem), not diff, diff)


# ---- tamper -------------------------------------------------------------------------------------


def _flip_hex(text: str) -> str:
    return text[:-1] + ("1" if text[-1] != "1" else "2")


def mutations(vector: dict) -> Iterator[tuple[str, dict]]:
    """Ways to change a vector that must change its outcome."""
    def copy_of():
        return json.loads(json.dumps(vector))

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


def _change_first_leaf(node) -> bool:
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


def tamper(vector: dict) -> list[tuple[str, bool]]:
    """Each data mutation of the vector and whether it made the vector fail (it must)."""
    if not isinstance(vector.get("expected"), dict) or \
            vector["expected"].get("verdict") == "UNVERIFIABLE":
        return []  # already unverifiable: mutations cannot be told apart from it
    return [(label, _fails(vector, mutated)) for label, mutated in mutations(vector)]


def _fails(vector: dict, mutated: dict, recipe_override=None) -> bool:
    try:
        return bool(compare(vector, replay(mutated, recipe_override)))
    except MalformedVector:
        return True


def method_mistakes(vector: dict) -> list[tuple[str, str, bool]]:
    """``(recipe, mistake, told apart)`` for each wrong-but-plausible method of the vector's
    recipe. A method is pinned when at least one vector of the recipe tells it apart."""
    if vector.get("kind") != "step":
        return []
    recipe = get_recipe(vector["recipe"])
    return [(recipe.name, label, _fails(vector, vector, mistaken))
            for label, mistaken in recipe.mistakes().items()]


def tamper_all(vectors: list[dict]) -> list[str]:
    """Every mutation that did not make its vector fail, and every method no vector pins."""
    undetected = []
    pinned: dict[tuple[str, str], bool] = {}
    for vector in vectors:
        for label, detected in tamper(vector):
            if not detected:
                undetected.append(f"{vector.get('name')}: {label}")
        for recipe, label, detected in method_mistakes(vector):
            pinned[(recipe, label)] = pinned.get((recipe, label), False) or detected
    undetected += [f"{recipe}: method '{label}' gives the same outcome on every vector"
                   for (recipe, label), detected in sorted(pinned.items()) if not detected]
    return undetected

