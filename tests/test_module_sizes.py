"""The evaluator stays readable in pieces: no module of ``recompute/recipes/`` or
``recompute/watch/`` is over 500 lines (docs/design.md §Module map: one module per rule of
reuse, a job an auditor reads first)."""

from __future__ import annotations

from pathlib import Path

import recompute

PACKAGE = Path(recompute.__file__).parent
LIMIT = 500


def test_no_recipes_or_watch_module_is_over_500_lines():
    modules = sorted((PACKAGE / "recipes").glob("*.py")) + sorted((PACKAGE / "watch").glob("*.py"))
    assert len(modules) > 20  # both folders were found
    over = {m.relative_to(PACKAGE).as_posix(): n for m in modules
            if (n := len(m.read_text().splitlines())) > LIMIT}
    assert over == {}
