// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {IEligibility} from "./IEligibility.sol";

/// @title AllowlistEligibility — ERC-8447 §6.4 module answering from an allowlist the devnet flips.
/// @notice `mode` lets the devnet exercise the §6.4 classification: NORMAL answers the allowlist,
/// REVERT reverts (unevaluable), NON_BOOLEAN returns the word 2 (not an ABI boolean: unevaluable).
/// The allowlist is keyed by account only (every swarm and role), and answers from stored state the
/// evaluated account cannot change (§6.4 "MUST NOT answer from a quantity the account can change").
contract AllowlistEligibility is IEligibility {
    enum Mode { NORMAL, REVERT, NON_BOOLEAN }

    /// @notice The account allowed to edit the list and the mode.
    address public owner;
    /// @notice account => eligible.
    mapping(address => bool) public allowed;
    /// @notice How isEligible answers (see Mode).
    Mode public mode;

    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "not owner");
        _;
    }

    function setAllowed(address account, bool value) external onlyOwner {
        allowed[account] = value;
    }

    function setMode(Mode value) external onlyOwner {
        mode = value;
    }

    function isEligible(bytes32, bytes32, address account) external view returns (bool) {
        Mode m = mode;
        if (m == Mode.REVERT) revert("AllowlistEligibility: reverting");
        if (m == Mode.NON_BOOLEAN) {
            assembly ("memory-safe") {
                mstore(0x00, 2)
                return(0x00, 0x20)
            }
        }
        return allowed[account];
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 || interfaceId == type(IEligibility).interfaceId;
    }
}
