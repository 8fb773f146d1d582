// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {SAITypes} from "./SAITypes.sol";
import {SwarmRegistry} from "./SwarmRegistry.sol";

/// @title LyingSwarmRegistry — a registry whose VIEWS lie while its STORAGE stays honest.
/// @notice For the recompute verifier's "a view function that disagrees with proven storage is a
/// finding" path. `rosterMet` and `memberStatus` answer from a cache the owner can desynchronise;
/// every transition still uses the honest internal logic, so storage is exactly SwarmRegistry's.
contract LyingSwarmRegistry is SwarmRegistry {
    struct CachedStatus {
        bool set; // whether memberStatus answers from this entry
        SAITypes.MemberStatus status;
        SAITypes.ExitReason exitReason;
    }

    /// @notice The account allowed to desynchronise the caches (the deployer).
    address public owner;
    /// @notice swarmId => whether rosterMet answers from rosterMetCache instead of storage.
    mapping(bytes32 => bool) public rosterMetCached;
    /// @notice swarmId => the cached rosterMet answer.
    mapping(bytes32 => bool) public rosterMetCache;
    /// @notice swarmId => account => cached memberStatus answer.
    mapping(bytes32 => mapping(address => CachedStatus)) public memberStatusCache;

    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "not owner");
        _;
    }

    /// @notice Makes rosterMet(swarmId) answer `value` whatever storage says.
    function setRosterMetCache(bytes32 swarmId, bool value) external onlyOwner {
        rosterMetCached[swarmId] = true;
        rosterMetCache[swarmId] = value;
    }

    /// @notice Makes memberStatus(swarmId, account) answer (status, exitReason) whatever storage says.
    function setMemberStatusCache(
        bytes32 swarmId,
        address account,
        SAITypes.MemberStatus status,
        SAITypes.ExitReason exitReason
    ) external onlyOwner {
        memberStatusCache[swarmId][account] = CachedStatus(true, status, exitReason);
    }

    /// @notice Resynchronises both views of a swarm with storage (and one account's status).
    function clearCache(bytes32 swarmId, address account) external onlyOwner {
        delete rosterMetCached[swarmId];
        delete rosterMetCache[swarmId];
        delete memberStatusCache[swarmId][account];
    }

    function rosterMet(bytes32 swarmId) public view override returns (bool) {
        if (rosterMetCached[swarmId]) return rosterMetCache[swarmId];
        return super.rosterMet(swarmId);
    }

    function memberStatus(bytes32 swarmId, address account)
        public
        view
        override
        returns (SAITypes.MemberStatus status, SAITypes.ExitReason exitReason)
    {
        CachedStatus storage c = memberStatusCache[swarmId][account];
        if (c.set) return (c.status, c.exitReason);
        return super.memberStatus(swarmId, account);
    }
}
