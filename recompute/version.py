"""The package's version, in a module of its own so that the package's rooms read it without
importing the package face (recompute/__init__.py, which loads the public API on first use)."""

__version__ = "0.2.0"
