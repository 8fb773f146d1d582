// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title StandardAnchorStateRegistryLayout
/// @notice The storage of the OP stack's AnchorStateRegistry 3.x, variable for variable in its
///         order (contracts-bedrock src/dispute/AnchorStateRegistry.sol 3.5.0; its storage-layout
///         snapshot names slot 0's address pauseSource, 3.5.0 systemConfig), with getters that
///         read it as the release's own do. No logic of the release: the tests place this code
///         at a listed implementation address and write its storage, and the getters are an
///         honest reader of what recompute decodes from the proven slots.
contract StandardAnchorStateRegistryLayout {
    /// @notice A root and the L2 block (sequence number) it is the output root of (Types.sol).
    struct Proposal {
        bytes32 root;
        uint256 l2SequenceNumber;
    }

    uint8 private _initialized;
    bool private _initializing;
    address public systemConfig;
    address public disputeGameFactory;
    address public anchorGame;
    Proposal internal startingAnchorRoot;
    mapping(address => bool) public disputeGameBlacklist;
    uint32 public respectedGameType;
    uint64 public retirementTimestamp;

    /// @notice The starting anchor root, as AnchorStateRegistry.getStartingAnchorRoot.
    function getStartingAnchorRoot() external view returns (Proposal memory) {
        return startingAnchorRoot;
    }
}
