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

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from recompute.core.errors import UsageError
from recompute.recipes.erc8312 import Draw, aggregate_budget, per_edge_max
from recompute.vectors.format import (
    MalformedVector,
    Result,
    check_vector_shape,
    load_json,
    sha256_file,
)
from recompute.vectors.replay import compare, replay

# ---- suites, loading, verifying -----------------------------------------------------------------


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

    document = load_json(path)
    for vector in document.get("vectors", []):
        draws = [Draw(root=e["rootId"], node=e["edge"], period=e["periodIndex"],
                      amount=int(e["amount"]), admitted=e["admitted"]) for e in vector["log"]]
        yield vector, draws, int(vector["cap"]), {"root": vector["rootId"],
                                                  "period": vector["periodIndex"]}


def peer_method_pinned(path: Path) -> bool:
    """True when some aggregate_budget.v0 vector tells the per-edge method apart."""

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
