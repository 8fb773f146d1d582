"""The rule inventory's coverage, measured and written (``vectors/rules.json``, README table).

For every rule of ``rules.json`` with a mistaken method (``mistakes_of(recipe)[rule id]``: its
own and those registered beside the tamper mode), the shipped step vectors of its recipe are
replayed with that method; each vector whose outcome changes is listed under the rule, as
deciding the ``verdict`` or only a ``derived`` value.
The README's coverage table is rewritten from the same lists. ``make vectors`` runs this after
the vectors are rebuilt; ``tests/vectors/test_rule_coverage.py`` re-measures and compares.

Only the lists are written: a rule's id, seed, section, sentence and mistake are the
inventory's own text (copied from the specifications), and ``hand_computed`` holds outcomes worked
out by hand, never by this code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recompute.core.jsontext import json_document
from recompute.data import VECTORS
from recompute.disk.whole_file import write_whole
from recompute.recipes.registry import load_recipes
from recompute.vectors import load_json
from recompute.vectors.mistakes import mistakes_of
from recompute.vectors.replay_vector import replay
from recompute.vectors.tamper import _fails

TABLE_HEAD = ("| rule | seed section | decides the verdict | decides a derived value |\n"
              "|---|---|---|---|\n")


def suite_vectors(directory: Path = VECTORS) -> dict[str, dict[str, Any]]:
    """Every vector the suite pins, by name."""
    entries = json.loads((directory / "suite.json").read_text())["vectors"]
    return {v["name"]: v for v in (load_json(directory / e["path"]) for e in entries)}


def decided(rule: dict[str, Any], suite: dict[str, dict[str, Any]],
            recipes: dict[str, Any]) -> list[dict[str, Any]]:
    """The vectors ``rule``'s mistaken method fails, each with what it decides (by name)."""
    mistaken = mistakes_of(recipes[rule["recipe"]])[rule["id"]]
    out = []
    for name, vector in sorted(suite.items()):
        if vector.get("recipe") != rule["recipe"] or \
                vector["expected"]["verdict"] == "UNVERIFIABLE":
            continue
        if not _fails(vector, vector, mistaken):
            continue
        got = replay(vector, mistaken)
        on_verdict = got["verdict"] != vector["expected"]["verdict"]
        out.append({"name": name, "decides": "verdict" if on_verdict else "derived"})
    return out


def table(rules: list[dict[str, Any]]) -> str:
    """The README's coverage table."""
    rows = []
    for r in rules:
        if r.get("reason"):
            verdict, derived = "—", f"no vector can: {r['reason']}"
        else:
            verdict = ", ".join(v["name"] for v in r["vectors"] if v["decides"] == "verdict")
            derived = ", ".join(v["name"] for v in r["vectors"] if v["decides"] == "derived")
        rows.append(f"| `{r['id']}` | {r['section']} | {verdict or '—'} | {derived or '—'} |\n")
    return TABLE_HEAD + "".join(rows)


def rewrite(directory: Path = VECTORS) -> list[str]:
    """Measure every rule, rewrite rules.json's lists and the README table; returns the ids of
    rules that decide nothing (none, when the inventory is complete)."""
    path = directory / "rules.json"
    inventory = json.loads(path.read_text())
    suite, recipes = suite_vectors(directory), load_recipes()
    undecided = []
    for rule in inventory["rules"]:
        if rule["id"] in mistakes_of(recipes[rule["recipe"]]):
            rule["vectors"] = decided(rule, suite, recipes)
        if not rule["vectors"]:
            undecided.append(rule["id"])
    write_whole(path, json_document(inventory, indent=1, ascii=False) + "\n")
    readme = directory / "README.md"
    text = readme.read_text()
    start = text.index(TABLE_HEAD)
    end = text.find("\n\n", start)
    end = len(text) if end < 0 else end + 1
    write_whole(readme, text[:start] + table(inventory["rules"]) + text[end:])
    return undecided


def main() -> None:  # `make vectors`, after the catalog
    from recompute.vectors.catalog import write_suite

    undecided = rewrite()
    files = [VECTORS / e["path"]
             for e in json.loads((VECTORS / "suite.json").read_text())["vectors"]]
    write_suite(VECTORS, files)  # the README is pinned by the suite: pin the new table
    print(f"rules.json and the README table rewritten; undecided: {', '.join(undecided) or 'none'}")


if __name__ == "__main__":
    main()
