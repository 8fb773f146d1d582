"""The fuzz harness over every file recompute reads (docs/fuzzing.md).

Each reader of :mod:`tests.fuzz.readers` is a valid seed file and the command that reads it;
:mod:`tests.fuzz.inputs` turns a seed into hostile variants (a field of another type, huge or
deep, NaN and Infinity, a duplicate key, the text cut short, bytes that are not UTF-8, a page of
an SQLite file overwritten). Every variant must end in a verdict or one usage line: exit 0, 1, 2
or 64 (64: one line on stderr), no traceback, within a time bound. ``test_fuzz.py`` runs a small,
deterministic number per reader in the test suite; ``python -m tests.fuzz`` runs for minutes.
"""
