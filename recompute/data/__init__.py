"""The data the package carries: bundled layouts, the shipped vector suite, the fixture chain,
the reference contracts' compiled artifacts (docs/design.md §Module map).

Everything is found through :mod:`importlib.resources` from this package, so an installed wheel
finds it exactly as a checkout does; nothing walks up the file tree. In a checkout the top-level
``layouts/``, ``vectors/`` and ``contracts/artifacts`` are links to these folders.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def data_path(*parts: str) -> Path:
    """The path of a bundled file or folder (``data_path("layouts", "amm-registry.json")``)."""
    return Path(str(files(__name__).joinpath(*parts)))


LAYOUTS = data_path("layouts")
VECTORS = data_path("vectors")
FIXTURE_CHAIN = data_path("fixtures", "execution-apis")
PACKS = data_path("fixtures")
ARTIFACTS = data_path("artifacts")
