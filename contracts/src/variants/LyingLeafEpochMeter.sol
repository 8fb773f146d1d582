// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {AggregateBudgetMeter} from "../meters/AggregateBudgetMeter.sol";

/// @title LyingLeafEpochMeter — an aggregate-budget meter keyed to a leaf's local window (test double).
/// @notice ERC-8312 thread on §5.1, the keying rule: "Key the conserved meter to the root period,
///         (rootId, rootPeriodIndex) … Leaf epochs stay attribution (which local window a draw fell
///         in); they are never the conservation key." This variant skips exactly that: a leaf given
///         a local epoch (`setLeafEpoch`) draws through `leafDraw`, which keys the conserved meter
///         (`spentRoot`, `nodeSpent`, the `Drawn` period) to the leaf's local window instead of the
///         root period. Every other check of `draw` is kept (agent, path, amount, node cap, root
///         cap, each against the leaf-window key). A leaf whose local epochs do not tile the root
///         period then draws its full allocation in two overlapping local windows within one root
///         period (the thread's epoch-unaligned counterexample); the honest meter refuses the
///         second draw (RootCapExceeded). Storage stays honest to what it did.
contract LyingLeafEpochMeter is AggregateBudgetMeter {
    struct LeafEpoch {
        uint64 length; // seconds per local window (0 = none set)
        uint64 anchor; // start of local window 0
    }

    /// @notice Slot 7 (after the inherited slots 0..6). A leaf's local epoch, set by the issuer.
    mapping(bytes32 rootId => mapping(bytes32 nodeId => LeafEpoch)) public leafEpochs;

    error NoLeafEpoch(bytes32 rootId, bytes32 nodeId);

    function setLeafEpoch(bytes32 rootId, bytes32 nodeId, uint64 length, uint64 anchor) external {
        _node(rootId, nodeId);
        if (msg.sender != issuer[rootId]) revert NotAuthorized(msg.sender);
        if (length == 0) revert InvalidNode();
        leafEpochs[rootId][nodeId] = LeafEpoch(length, anchor);
    }

    /// `draw` with the leaf's local window as the meter key (the lie).
    function leafDraw(bytes32 rootId, bytes32 nodeId, uint256 amount) external {
        Node storage n = _node(rootId, nodeId);
        if (msg.sender != n.agent) revert NotNodeAgent(msg.sender);
        if (!isPathActive(rootId, nodeId)) revert PathRevoked(rootId, nodeId);
        if (amount == 0) revert ZeroAmount();
        LeafEpoch memory e = leafEpochs[rootId][nodeId];
        if (e.length == 0) revert NoLeafEpoch(rootId, nodeId);
        if (block.timestamp < e.anchor) revert PeriodNotStarted(rootId);
        uint256 w = (block.timestamp - e.anchor) / e.length; // the leaf's local window, not the root period
        uint256 own = nodeSpent[rootId][nodeId][w] + amount;
        if (n.nodeCap != 0 && own > n.nodeCap) revert NodeCapExceeded(rootId, nodeId, n.nodeCap, own);
        uint256 spent = spentRoot[rootId][w] + amount;
        if (spent > cap[rootId]) revert RootCapExceeded(rootId, w, cap[rootId], spent);
        spentRoot[rootId][w] = spent;
        nodeSpent[rootId][nodeId][w] = own;
        emit Drawn(rootId, nodeId, w, amount);
    }
}
