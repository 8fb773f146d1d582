"""The data the package carries: bundled layouts, the shipped vector suite, the fixture chain,
the reference contracts' compiled artifacts (docs/design.md §Module map).

Everything is found in this package's own folder, so an installed wheel finds it exactly as a
checkout does; nothing walks up the file tree. That folder is the one
``importlib.resources.files(__name__)`` names for a package on disk (the only kind a
:class:`~pathlib.Path` can name; tests/core/test_cold_imports.py checks they agree), taken from
``__file__`` so that a cold command does not import importlib.resources (with tempfile, shutil
and zipfile: README §Performance). In a checkout the top-level ``layouts/``, ``vectors/`` and
``contracts/artifacts`` are links to these folders.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).parent


def data_path(*parts: str) -> Path:
    """The path of a bundled file or folder (``data_path("layouts", "amm-registry.json")``)."""
    return _HERE.joinpath(*parts)


LAYOUTS = data_path("layouts")
VECTORS = data_path("vectors")
FIXTURE_CHAIN = data_path("fixtures", "execution-apis")
PACKS = data_path("fixtures")
ARTIFACTS = data_path("artifacts")
