// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {IEligibility} from "./IEligibility.sol";

/// @title CatchingEligibility — the module shape §6.4's gas rule defends against.
/// @notice It wraps its own (deliberately expensive) read in try/catch and answers `false` when the
/// read fails. A caller that starves the call lets the outer frame survive (1/64 rule) while the
/// inner read runs out of gas, producing a `false` that is no answer; the registry classifies a
/// `false` arriving with less than 1/8 of the pre-call gas left as unevaluable.
contract CatchingEligibility is IEligibility {
    /// @notice The account allowed to edit the list and the cost.
    address public owner;
    /// @notice account => eligible (what an unstarved read answers).
    mapping(address => bool) public allowed;
    /// @notice Number of hashing rounds the inner read performs before answering (its gas cost).
    uint256 public work;

    constructor(uint256 work_) {
        owner = msg.sender;
        work = work_;
    }

    function setAllowed(address account, bool value) external {
        require(msg.sender == owner, "not owner");
        allowed[account] = value;
    }

    function setWork(uint256 value) external {
        require(msg.sender == owner, "not owner");
        work = value;
    }

    function isEligible(bytes32, bytes32, address account) external view returns (bool) {
        try this.read(account) returns (bool ok) {
            return ok;
        } catch {
            return false; // the failing read is caught and answered as `false`
        }
    }

    /// @notice The expensive read: `work` rounds of hashing, then the allowlist.
    function read(address account) external view returns (bool) {
        uint256 acc;
        uint256 n = work;
        assembly ("memory-safe") {
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                mstore(0x00, acc)
                mstore(0x20, i)
                acc := keccak256(0x00, 0x40)
            }
        }
        // `acc` is never zero in practice; the comparison keeps the loop from being optimised out.
        return acc != 1 && allowed[account];
    }
}
