"""Conformance vectors (docs/design.md §Vectors): the format, capture, offline replay, suites
pinned by sha256, and tamper mode. The names below are the package's public surface."""

from recompute.vectors.capture import capture_proof, capture_step
from recompute.vectors.format import (
    FORMAT,
    SUITE_PROFILE,
    MalformedVector,
    Result,
    check_vector_shape,
    dumps,
    load_json,
    sha256_file,
)
from recompute.vectors.replay_vector import compare, replay, replay_pure
from recompute.vectors.suite import (
    Suite,
    find_suites,
    peer_method_pinned,
    read_suite,
    verify_file,
    verify_paths,
)
from recompute.vectors.tamper import (
    TamperCounts,
    method_mistakes,
    mutations,
    tamper,
    tamper_all,
    tamper_counts,
)

__all__ = [
    "FORMAT", "SUITE_PROFILE", "MalformedVector", "Result", "Suite", "capture_proof",
    "capture_step", "check_vector_shape", "compare", "dumps", "find_suites", "load_json",
    "method_mistakes", "mutations", "peer_method_pinned", "read_suite", "replay", "replay_pure",
    "sha256_file", "tamper", "tamper_all", "tamper_counts", "TamperCounts", "verify_file",
    "verify_paths",
]
