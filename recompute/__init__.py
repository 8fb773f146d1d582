"""recompute: re-derive what agent registries claim from storage proofs rooted in pinned headers."""

__version__ = "0.1.0"
