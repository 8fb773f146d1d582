// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

/// @title Stranger — a contract that is not the meter, emitting the meter's event signatures.
/// @notice Issue #11 item 1: anyone can deploy this and emit `Drawn(rootId, …)` or SAI's
///         `Changed` / `SwarmFormed` with any arguments, in a block where the real registry logs
///         too. A recipe must count only the logs of the contract it reads.
contract Stranger {
    event Drawn(bytes32 indexed rootId, bytes32 indexed nodeId, uint256 indexed periodIndex, uint256 amount);

    function forgeDrawn(bytes32 rootId, bytes32 nodeId, uint256 periodIndex, uint256 amount) external {
        emit Drawn(rootId, nodeId, periodIndex, amount);
    }
}
