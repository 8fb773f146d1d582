"""The trust-critical folders (docs/repository.md: code on the way from a node's bytes to a
verdict) are the same in the repository page's table and in the folders' own opening lines:
a folder is marked in both or in neither. Expected: the folders on that way by the trust flow
(docs/design.md §Trust flow): the anchors, checkers, decoding, derivations and evaluator."""

from __future__ import annotations

import ast
import re

from tests import REPO_ROOT

PACKAGE = REPO_ROOT / "recompute"
ON_THE_WAY = {"core", "lightclient", "layout", "recipes", "evaluator", "l2"}


def _marked_in_the_table() -> set[str]:
    text = (REPO_ROOT / "docs" / "repository.md").read_text()
    rows = re.findall(r"^\| `recompute/([a-z0-9_]+)/` \| (.*) \|$", text, re.MULTILINE)
    assert len(rows) >= 10  # every folder of the package has its row
    return {folder for folder, holds in rows if holds.startswith("trust-critical")}


def _marked_in_the_folder() -> set[str]:
    marked = set()
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        first = doc.split("\n\n")[0]  # the opening paragraph
        if "trust-critical" in first:
            marked.add(init.parent.name)
    return marked


def test_the_table_and_the_folders_name_the_same_trust_critical_folders():
    assert _marked_in_the_table() == ON_THE_WAY
    assert _marked_in_the_folder() == ON_THE_WAY
