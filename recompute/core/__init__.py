"""The trust core, trust-critical (docs/design.md §Trust flow): hex parsing, keccak, headers,
anchors, the Merkle-Patricia proof walker, the account/storage prover, receipts. No I/O: every
byte it checks arrives through the :class:`recompute.core.source.ProofSource` protocol."""
