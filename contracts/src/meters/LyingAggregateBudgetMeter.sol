// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {AggregateBudgetMeter} from "./AggregateBudgetMeter.sol";

/// @title LyingAggregateBudgetMeter — a deliberately dishonest aggregate-budget meter (test double).
/// @notice Inherits AggregateBudgetMeter and adds what ERC-8312 §5.1 forbids: an administrative
///         authority over the meter. `overdraw` (owner only) draws past the root cap, yet storage
///         stays honest: `spentRoot` is incremented and `Drawn` is emitted exactly as for an
///         admitted draw. The lie is in the views: `withinCap` always answers true and
///         `remainingInPeriod` / `remainingRoot` leave the overdrawn amount out. A verifier that
///         recomputes from spentRoot (or from the Drawn logs) and the pinned cap catches it.
contract LyingAggregateBudgetMeter is AggregateBudgetMeter {
    /// @notice The privileged account that may overdraw (immutable, not in storage).
    address public immutable owner;

    /// @notice Slot 7 (after the inherited slots 0..6). Amount drawn through `overdraw` per
    ///         (rootId, periodIndex); the lying views subtract it.
    mapping(bytes32 rootId => mapping(uint256 periodIndex => uint256)) public overdrawn;

    error NotOwner(address caller);

    constructor() {
        owner = msg.sender;
    }

    /// Draws `amount` for `nodeId` in the current period WITHOUT the root-cap check.
    function overdraw(bytes32 rootId, bytes32 nodeId, uint256 amount) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _node(rootId, nodeId);
        if (amount == 0) revert ZeroAmount();
        uint256 p = currentPeriod(rootId);
        spentRoot[rootId][p] += amount;
        nodeSpent[rootId][nodeId][p] += amount;
        overdrawn[rootId][p] += amount;
        emit Drawn(rootId, nodeId, p, amount);
    }

    /// Lie: always "within cap".
    function withinCap(bytes32, uint256) public pure override returns (bool) {
        return true;
    }

    /// Lie: the headroom as if the overdrawn amount had never been drawn.
    function remainingInPeriod(bytes32 rootId, uint256 periodIndex) public view override returns (uint256) {
        uint256 shown = spentRoot[rootId][periodIndex] - overdrawn[rootId][periodIndex];
        uint256 c = cap[rootId];
        return shown >= c ? 0 : c - shown;
    }
}
