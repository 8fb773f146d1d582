"""Conformance vectors: capture a live step, replay it offline, pin it by hash, tamper with it.

A vector (``recompute-vector/1``, schema in ``vectors/schema.json``) holds everything the
verifier consumed and nothing else: the recipe and its parameters (file parameters embedded),
the layout descriptor with its sha256, the pinned block hash, every header as RLP, every
``eth_getProof`` answer, every block of receipts, and the expected verdict and derived
values. Replay runs the same runner a live ``step`` uses, with :class:`ReplaySource` as the
proof source. Kinds: ``step`` (a recipe), ``proof`` (``recompute proof``) and ``pure`` (a
specification computation with no chain).

A suite file (``suite.json``, the shape of the peer suite recompute-kit uses) pins each
vector file and the spec by sha256; a mismatch fails the suite before anything runs.
"""


from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recompute.core.boundedjson import MAX_BYTES
from recompute.core.errors import OptionError, UsageError
from recompute.core.jsontext import json_document
from recompute.core.schema import Boolean, Integer, ListOf, OneOf, Record, Text, check
from recompute.disk.whole_file import write_whole
from recompute.recipes.erc8312 import Draw, aggregate_budget, per_edge_max
from recompute.vectors.format import (
    SUITE_PROFILE,
    Result,
    check_vector_shape,
    load_json,
    sha256_file,
)
from recompute.vectors.replay_vector import compare, replay

# ---- suites, loading, verifying -----------------------------------------------------------------


# a pinned file: a relative path inside the suite's folder (no NUL, no lone surrogate: JSON's
# "\ud800" is a string no file name holds), and its sha256
_PINNED = Record({"path": Text(r"(?!/)(?!.*(?:^|/)\.\.(?:/|$))[^\x00\ud800-\udfff]{1,400}",
                               "a relative path inside the suite's folder"),
                  "sha256": Text(r"[0-9a-f]{64}", "a sha256 in hex")}, open=True)
SUITE_SHAPE = Record({"vectors": OneOf((ListOf(_PINNED), _PINNED),
                                       "a list of pinned files {path, sha256}")},
                     {"profile": Text(), "spec": _PINNED}, open=True)


@dataclass
class Suite:
    path: Path
    entries: list[Path]
    profile: str
    problems: list[str]


def read_suite(path: Path) -> Suite:
    """A suite.json: vector files and spec pinned by sha256 (hash mismatches become problems)."""
    suite = load_json(path)
    check(suite, SUITE_SHAPE, f"suite {path}")
    base = path.parent
    problems = []
    listed = suite["vectors"]
    listed = [listed] if isinstance(listed, dict) else listed
    pinned = list(listed) + ([suite["spec"]] if "spec" in suite else [])
    for entry in pinned:
        file = base / entry["path"]
        try:
            if file.is_file() and file.stat().st_size > MAX_BYTES:  # no vector is: not hashed
                problems.append(f"{entry['path']}: larger than {MAX_BYTES:,} bytes")
                continue
            digest = sha256_file(file) if file.is_file() else None
        except OSError as exc:
            problems.append(f"{entry['path']}: cannot read ({exc.strerror or exc})")
            continue
        if digest is None:
            problems.append(f"{entry['path']}: missing")
        elif digest != entry["sha256"]:
            problems.append(f"{entry['path']}: sha256 {digest} is not the pinned "
                            f"{entry['sha256']}")
    return Suite(path, [base / e["path"] for e in listed], str(suite.get("profile", "")),
                 problems)


NOT_VECTORS = ("suite.json", "schema.json", "rules.json")  # a vectors folder's other JSON


def find_suites(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """(suite files, loose vector files) named by ``paths``: a folder gives every suite.json
    under it and every other ``*.json`` file (listed in a suite or not: the caller tells)."""
    suites, loose = [], []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            suites += sorted(path.rglob("suite.json"))
            loose += sorted(p for p in path.rglob("*.json") if p.name not in NOT_VECTORS)
        elif path.name == "suite.json":
            suites.append(path)
        elif path.exists():
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


_UINT = Text(r"[0-9]{1,78}", "a decimal integer in a string")
_PERIOD = Integer(0, 1 << 64)
PEER_SHAPE = Record({"vectors": ListOf(Record({
    "name": Text(r"[^\x00-\x1f\x7f]{1,200}", "a string"),
    "rootId": Text(), "periodIndex": _PERIOD, "cap": _UINT,
    "log": ListOf(Record({"rootId": Text(), "edge": Text(), "periodIndex": _PERIOD,
                          "amount": _UINT, "admitted": Boolean()}, open=True)),
    "expected": Record({"admittedSum": _UINT, "conserves": Boolean()}, open=True)},
    open=True))}, open=True)  # aggregate_budget.v0 (trustless-ai/recompute-kit)


def _peer_vectors(path: Path) -> Iterator[tuple[dict[str, Any], list[Draw], int, dict[str, Any]]]:

    document = load_json(path)
    check(document, PEER_SHAPE, f"peer vectors {path}")
    for vector in document["vectors"]:
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
    """Every suite and every vector file named or found: a file no suite lists is verified too,
    and its result says it is unlisted; a malformed file is a failed result, never the end of
    the run."""
    suites, loose = find_suites(paths)
    results: list[Result] = []
    listed: set[Path] = set()
    for suite_path in suites:
        try:
            suite = read_suite(suite_path)
        except UsageError as exc:
            results.append(Result(str(suite_path), False, str(exc)))
            continue
        listed |= {entry.resolve() for entry in suite.entries}
        if suite.problems:
            results += [Result(f"{suite_path}", False, "hash check: " + p) for p in suite.problems]
            continue
        handler = PROFILE_HANDLERS.get(suite.profile)
        for entry in suite.entries:
            if handler is not None:
                try:
                    results += list(handler(entry))
                except UsageError as exc:  # a field out of shape: the line names it
                    results.append(Result(str(entry), False, str(exc)))
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    results.append(Result(str(entry), False, f"malformed: {str(exc)[:160]}"))
            else:
                results.append(verify_file(entry))
    for path in dict.fromkeys(loose):
        if path.resolve() in listed:
            continue
        result = verify_file(path)
        if suites or Path(path).parent.joinpath("suite.json").is_file():
            result.listed = False
        results.append(result)
    return results


def verify_file(path: Path) -> Result:
    """One vector file replayed; anything wrong with the file is this result's failure."""
    try:
        vector = load_json(path)
        check_vector_shape(vector, path)
        got = replay(vector)
    except UsageError as exc:  # MalformedVector included
        return Result(Path(path).stem, False, str(exc), file=str(path))
    diff = compare(vector, got)
    name = vector.get("name", Path(path).stem)
    return Result(name if isinstance(name, str) else Path(path).stem, not diff, diff,
                  file=str(path))


def add_to_suite(files: list[Path], suite_path: Path | None = None) -> tuple[Path, list[str]]:
    """Pin vector files into a suite.json (the one in the first file's folder or above, unless
    given): each must be a well-formed vector that replays to its expectation; an entry already
    there gets its new sha256. Returns (the suite, the paths added or re-pinned)."""
    files = [Path(f) for f in files]
    named = suite_path is not None  # given by the user (a link given is written through)
    if suite_path is None:
        suite_path = _nearest_suite(files[0])
        document = load_json(suite_path)
    elif not suite_path.exists():  # a new suite: created once every file verifies
        document = {"profile": SUITE_PROFILE, "vectors": []}
    else:
        document = load_json(suite_path)
    check(document, SUITE_SHAPE, f"suite {suite_path}")
    if document.get("profile") != SUITE_PROFILE or not isinstance(document.get("vectors"), list):
        raise UsageError(f"{suite_path}: not a {SUITE_PROFILE} suite")
    base = suite_path.parent.resolve()
    entries = {e["path"]: e for e in document["vectors"] if isinstance(e, dict) and "path" in e}
    pinned = []
    for file in files:
        try:
            relative = file.resolve().relative_to(base).as_posix()
        except ValueError:
            raise UsageError(f"{file}: not inside the suite's folder {base}") from None
        result = verify_file(file)
        if not result.passed:
            raise UsageError(f"{file}: does not verify ({result.detail}); fix it before pinning")
        entries[relative] = {"path": relative, "sha256": sha256_file(file)}
        pinned.append(relative)
    document["vectors"] = [entries[k] for k in sorted(entries)]
    suite_path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(suite_path, json_document(document, indent=1) + "\n", named=named)
    return suite_path, pinned


def _nearest_suite(file: Path) -> Path:
    for folder in file.resolve().parents:
        if (folder / "suite.json").is_file():
            return folder / "suite.json"
    raise OptionError("{file}: no suite.json in its folder or above; give {suite} PATH (a new "
                      "one is created)", ("suite",), file=file)
