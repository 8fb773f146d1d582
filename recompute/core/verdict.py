"""Verdicts, exit codes and reason codes (docs/design.md §Verdicts; vocabulary of recompute-kit)."""

from __future__ import annotations

from enum import StrEnum

EXIT_GOOD = 0
EXIT_BAD = 1
EXIT_UNVERIFIABLE = 2
EXIT_USAGE = 64
EXIT_INTERNAL = 70  # an unexpected exception: a bug (BSD sysexits EX_SOFTWARE)


class Verdict(StrEnum):
    GOOD = "VERIFIED-GOOD"
    BAD = "VERIFIED-BAD"
    UNVERIFIABLE = "UNVERIFIABLE"

    @property
    def exit_code(self) -> int:
        return {Verdict.GOOD: EXIT_GOOD, Verdict.BAD: EXIT_BAD}.get(self, EXIT_UNVERIFIABLE)


class Reason(StrEnum):
    """Reason codes (README §Trust model, reason table). GOOD/BAD carry one too (``ok``,
    ``predicate-failed``); UNVERIFIABLE always carries one of the others. Each member's
    :attr:`description` is the table's meaning column."""

    OK = "ok", "every input proven to a pinned header and the predicate holds"
    PREDICATE_FAILED = ("predicate-failed",
                        "every input proven to a pinned header and the predicate fails")
    RPC_UNREACHABLE = ("rpc-unreachable",
                       "the node could not be reached (connection refused, timeout)")
    RPC_ERROR = "rpc-error", "the node answered with a JSON-RPC error"
    RPC_MALFORMED = ("rpc-malformed",
                     "the node's answer is not well-formed (bad JSON, bad hex, missing fields)")
    BLOCK_UNKNOWN = "block-unknown", "the node does not know the requested block"
    STATE_UNAVAILABLE = ("state-unavailable",
                         "the node no longer has the state of that block (pruned history)")
    INVALID_PROOF = "invalid-proof", "a Merkle-Patricia proof does not root in the pinned header"
    HEADER_MISMATCH = "header-mismatch", "the header does not hash to the pinned hash"
    ANCHOR_DISAGREEMENT = ("anchor-disagreement",
                           "the endpoints of a quorum returned different block hashes")
    QUORUM_NOT_MET = "quorum-not-met", "fewer endpoints than the quorum answered"
    RPC_INCONSISTENT = ("rpc-inconsistent",
                        "a value the node claims differs from what its own proof shows")
    RECEIPTS_MISMATCH = ("receipts-mismatch",
                         "the receipts do not rebuild to the header's receiptsRoot")
    RECEIPTS_UNAVAILABLE = ("receipts-unavailable",
                            "the node no longer keeps that block's receipts (pruned history)")
    SEGMENT_FAILED = ("segment-failed",
                      "a range audit's segment kept failing on its workers: never evaluated")
    NO_CONTRACT = ("no-contract",
                   "the recipe's contract is proven absent or without code at that block")
    INVALID_CONSENSUS_PROOF = (
        "invalid-consensus-proof",
        "a beacon light-client proof (sync-committee signature, participation or Merkle branch)"
        " does not verify")
    STALE_ANCHOR = ("stale-anchor",
                    "the block reached by a tag or the light client is older than the clock "
                    "allows (the maximum anchor age), or the trusted root is older than the "
                    "weak-subjectivity period")
    HISTORY_UNREACHABLE = (
        "history-unreachable",
        "the block's hash is not in the history storage contract (EIP-2935) of any state a hop "
        "reaches (a chain or block before Prague), and the header walk was not allowed")
    HISTORY_CONTRACT_MISMATCH = (
        "history-contract-mismatch",
        "the account at the history storage contract's address does not hold the EIP-2935 "
        "code: its storage proves no block hash")
    FUTURE_HEAD = ("future-head",
                   "a head's timestamp is later than the clock plus the allowed clock drift")

    # An L2 block pinned through L1 (the op-stack anchor: docs/l2.md)
    OUTPUT_ROOT_MISMATCH = ("output-root-mismatch",
                            "the L2 node's block (hash, state root, message-passer storage "
                            "root) does not hash to the game's proven root claim")
    L2_HEADER_MISMATCH = ("l2-header-mismatch",
                          "the L2 node's header does not hash to the block hash the output "
                          "root names")
    GAME_UNRECORDED = ("game-unrecorded",
                       "the dispute game factory's proven storage does not record that game")
    CLONE_CODE_MISMATCH = ("clone-code-mismatch",
                           "the code served for a contract does not hash to its proven code "
                           "hash, or is not the factory's game clone")
    UNKNOWN_CONTRACT_VERSION = ("unknown-contract-version",
                                "an L1 system contract's code is no implementation version "
                                "recompute knows, nor its implementation address a listed "
                                "standard one it has a layout for (refused, never guessed)")
    L1_NETWORK_MISMATCH = ("l1-network-mismatch",
                           "a standard implementation address is listed for another L1 "
                           "network than the anchored L1 block's, or the preset's L1 network "
                           "is not the anchored block's")
    L2_BLOCK_UNPROPOSED = ("l2-block-unproposed",
                           "the L2 block is above the newest usable dispute game's L2 block "
                           "(or the AnchorStateRegistry's anchor root's)")
    GAME_NOT_FINAL = ("game-not-final",
                      "the dispute game is unresolved or within its finality delay, and that "
                      "tier was not asked for")
    GAME_CHALLENGER_WINS = ("game-challenger-wins",
                            "the dispute game resolved CHALLENGER_WINS: its root claim is wrong")
    GAME_BLACKLISTED = ("game-blacklisted",
                        "the portal (or the AnchorStateRegistry) blacklists the dispute game")
    GAME_RETIRED = ("game-retired",
                    "the dispute game was created before the respected game type was last set "
                    "(or at or before the AnchorStateRegistry's retirement timestamp)")
    GAME_TYPE_NOT_RESPECTED = ("game-type-not-respected",
                               "the dispute game is not of the type the portal respects")

    description: str

    def __new__(cls, value: str, description: str) -> Reason:
        member = str.__new__(cls, value)
        member._value_ = value
        member.description = description
        return member


# The same table as a mapping, for callers that look a code up by its text.
REASONS: dict[str, str] = {reason.value: reason.description for reason in Reason}
