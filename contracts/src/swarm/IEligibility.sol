// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

/// @title IEligibility — ERC-8447 §6.4 / §13.1 (ERC-165 id 0xd0ede3d8, §16)
interface IEligibility {
    function isEligible(bytes32 swarmId, bytes32 roleId, address account) external view returns (bool);
}
