"""What an ERC-8312 meter's verdict covers (the ERC-8312 specification and its discussion thread),
shared by the cap-conservation and aggregate-budget recipes: the bounds an ``aggregate <= cap``
verdict states, and the word and key arithmetic of a meter's storage."""

from __future__ import annotations

WORD = 1 << 256

# What an aggregate <= cap verdict does not prove (ERC-8312 thread on §5.1: "it asserts
# Σ metered draws ≤ cap only over draws routed through the meter — non-bypassability is the
# substrate obligation the profile states, not something the recompute proves"; §5.3).
METER_BOUND = ("covers only what this meter counted: a draw that bypasses the meter (a path "
               "that moves value without advancing it) is not seen; non-bypassability is the "
               "substrate's obligation (ERC-8312 §5.3), not proven here")
LOG_BOUND = ("the log half (Drawn) was read from receipts proven against each block's "
             "receiptsRoot: it needs a node that keeps receipts; a storage proof alone "
             "verifies from any node that kept the state")


def bytes32(text: str) -> bytes:
    """A parsed ``bytes32`` parameter (0x + 64 hex digits) as the 32 bytes it names."""
    return bytes.fromhex(text[2:])
