"""No two modules of the package share a file name (docs/design.md §Module map: a module is
named after what it holds, so two files called ``anchor.py`` in two folders would be two
things under one name). ``__init__.py`` and ``__main__.py`` are the only exceptions.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import recompute

PACKAGE = Path(recompute.__file__).parent


def _by_name(root: Path) -> dict[str, list[str]]:
    names: dict[str, list[str]] = defaultdict(list)
    for module in sorted(root.rglob("*.py")):
        if "__pycache__" not in module.parts and module.name not in {"__init__.py", "__main__.py"}:
            names[module.name].append(module.relative_to(root).as_posix())
    return dict(names)


def _shared(root: Path) -> dict[str, list[str]]:
    return {name: where for name, where in _by_name(root).items() if len(where) > 1}


def test_no_two_modules_share_a_file_name():
    assert _shared(PACKAGE) == {}


def test_the_check_sees_a_shared_name(tmp_path):
    for folder in ("core", "l2"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "anchor.py").write_text("")
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "core" / "mpt.py").write_text("")
    assert _shared(tmp_path) == {"anchor.py": ["core/anchor.py", "l2/anchor.py"]}
