"""The storage-layout engine, trust-critical: descriptors, paths, slot derivation, read
planning, decoding.

Pure (docs/design.md §Trust flow: "a layout never hashes a proof"): nothing here
talks to a node. :func:`resolve` says where a path lives and how that was derived;
:class:`ReadPlan` says which slots it needs, round by round, and decodes the words it is
handed.
"""

from recompute.layout.decode import InvalidUtf8, StorageMismatch
from recompute.layout.descriptor import (
    FORMAT,
    Layout,
    bundled_layouts,
    import_layout,
    load_layout,
    parse_descriptor,
)
from recompute.layout.paths import parse_path
from recompute.layout.reader import IndexOutOfBounds, ReadPlan, ReadResult, read_all
from recompute.layout.resolve import BoundCheck, Location, Step, resolve

__all__ = [
    "FORMAT", "BoundCheck", "IndexOutOfBounds", "InvalidUtf8", "Layout", "Location",
    "ReadPlan", "ReadResult", "Step", "StorageMismatch", "bundled_layouts", "import_layout",
    "load_layout", "parse_descriptor", "parse_path", "read_all", "resolve",
]
