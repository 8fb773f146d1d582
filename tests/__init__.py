"""The test suite. ``REPO_ROOT`` is the checkout the tests run from (tests only: the package
never looks for its checkout)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
