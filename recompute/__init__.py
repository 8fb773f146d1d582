"""recompute: re-derive what agent registries claim from storage proofs rooted in pinned headers.

The public library API (:mod:`recompute.api`) is importable from here; it loads on first use, so
that the command line, which imports this package first, starts without it.
"""

from __future__ import annotations

import importlib
from typing import Any

from recompute.version import __version__

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:  # PEP 562: lazy public API
    if name.startswith("__"):
        raise AttributeError(name)
    api = importlib.import_module("recompute.api")
    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module 'recompute' has no attribute {name!r}")


def __dir__() -> list[str]:
    api = importlib.import_module("recompute.api")
    return sorted([*globals(), *api.__all__])
