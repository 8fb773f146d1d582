// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {AgentMeditationRegistry} from "../amm/AgentMeditationRegistry.sol";

/// @title LyingRootMeditationRegistry — an AMM registry that skips one write (test double).
/// @notice AMM §Layer checkpoints: "The registry MUST keep the root of every state version
///         (rootAt)"; §Cycle records, on acceptance: "increments the state version and stores the
///         new root". This variant accepts exactly what the honest registry accepts (every check
///         of `report` is inherited) and skips storing the new version's root: rootAt(newVersion)
///         stays zero. The head's root and the checkpoints are the honest ones, so a verifier that
///         compares rootAt(newVersion) with computeRoot(postCommitments) (amm/restore-claim) or
///         head.root with rootAt(stateVersion) (amm/state-root) catches it.
contract LyingRootMeditationRegistry is AgentMeditationRegistry {
    function _applyReport(
        address subject,
        Head storage h,
        LayerCheckpoint[4] storage cps,
        CycleReport calldata r,
        bytes32 postRoot
    ) internal override returns (uint64 seq) {
        uint64 baseVersion = h.stateVersion;
        seq = super._applyReport(subject, h, cps, r, postRoot);
        if (h.stateVersion != baseVersion) {
            delete stateRoots[subject][h.stateVersion]; // the lie: the new root is not kept
        }
    }
}
