// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {SwarmRegistry} from "../SwarmRegistry.sol";
import {SAITypes} from "../SAITypes.sol";

/// @title LyingRevisionSwarmRegistry — a swarm registry that skips one emit (test double).
/// @notice ERC-8447 §5.4: "Every state-changing call MUST increment the swarm's revision and emit
///         Changed(swarmId, revision, selector, by) after its own events." This variant accepts and
///         does exactly what SwarmRegistry does (inherited) except that `leave` increments the
///         revision without emitting Changed. A verifier that counts the receipt-proven Changed
///         events against the revision proven from storage (sai/revision) catches it.
contract LyingRevisionSwarmRegistry is SwarmRegistry {
    function _changed(bytes32 swarmId) internal override {
        if (msg.sig != this.leave.selector) {
            super._changed(swarmId);
            return;
        }
        SAITypes.Swarm storage r = swarmData[swarmId].record;
        ++r.revision; // the lie: no Changed for this revision
    }
}
