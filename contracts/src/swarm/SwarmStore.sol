// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {SAITypes} from "./SAITypes.sol";
import "./SAIErrors.sol";

/// @notice Everything the registry stores for one swarm, under `swarmData[swarmId]` of
/// SwarmRegistry. Plain storage, read by the recompute verifier through solc's storage layout.
struct SwarmData {
    /// §5 lifecycle record: state, outcome, reason, phase, rosterPhase, versions, revision, clocks.
    SAITypes.Swarm record;
    /// §8 objective record.
    SAITypes.Objective objective;
    /// §3.1 the full specification as formed (frozen, §3.3); specHash = keccak256(abi.encode(spec)).
    SAITypes.SwarmSpec spec;
    /// §3.2 roleId => index in spec.roles plus one (0 = unknown role).
    mapping(bytes32 => uint256) roleIndexPlusOne;
    /// §11.3 decision point (uint8 of SAITypes.DecisionPoint) => current holder of an ADDRESS
    /// authority (spec.authorities keeps the holder at formation).
    mapping(uint8 => address) authorityHolder;
    /// §6 account => its current (or last) seat; status as stored, lazy exits derived (§5.2, §7.2).
    mapping(address => SAITypes.Member) members;
    /// §4.3 account => number of its seats closed explicitly (leave, remove, expel, substitution).
    mapping(address => uint256) seatEpochs;
    /// §6.5 rosterPhase => seat counters of the live roster of that generation. The live roster
    /// is rosterCounts[record.rosterPhase]; all zero once the swarm is DISSOLVED (§5.2).
    mapping(uint32 => SAITypes.RosterCount) rosterCounts;
    /// §6.2/§6.5 rosterPhase => roleId => per-role seat counters of that generation.
    mapping(uint32 => mapping(bytes32 => SAITypes.RoleCount)) roleCounts;
    /// §8 milestone index => milestone record.
    mapping(uint32 => SAITypes.Milestone) milestones;
}

/// @title SwarmLogic — internal helpers shared by the registry and its external libraries.
library SwarmLogic {
    bytes32 internal constant INITIATOR_ROLE = keccak256("sai.role.initiator");

    /// §5.2 / §7.2: the status a seat has once the lazy roster-wide exits are applied.
    /// NOT_CARRIED (an advance) precedes SWARM_DISSOLVED (the end), since it happened first.
    function liveStatus(SwarmData storage d, address account)
        internal
        view
        returns (SAITypes.MemberStatus, SAITypes.ExitReason)
    {
        SAITypes.Member storage m = d.members[account];
        SAITypes.MemberStatus st = m.status;
        if (st == SAITypes.MemberStatus.NONE || st == SAITypes.MemberStatus.EXITED) return (st, m.exitReason);
        if (m.carriedPhase < d.record.rosterPhase) return (SAITypes.MemberStatus.EXITED, SAITypes.ExitReason.NOT_CARRIED);
        if (d.record.state == SAITypes.LifecycleState.DISSOLVED) {
            return (SAITypes.MemberStatus.EXITED, SAITypes.ExitReason.SWARM_DISSOLVED);
        }
        return (st, SAITypes.ExitReason.NONE);
    }

    function status(SwarmData storage d, address account) internal view returns (SAITypes.MemberStatus st) {
        (st,) = liveStatus(d, account);
    }

    /// §11.1 authority resolution; nobody is authorized in a DISSOLVED swarm.
    function isAuthorized(SwarmData storage d, SAITypes.DecisionPoint dp, address account) internal view returns (bool) {
        if (d.record.state == SAITypes.LifecycleState.DISSOLVED) return false;
        SAITypes.Authority storage a = d.spec.authorities[uint8(dp)];
        SAITypes.AuthorityKind k = a.kind;
        if (k == SAITypes.AuthorityKind.ADDRESS) return account == d.authorityHolder[uint8(dp)];
        if (k == SAITypes.AuthorityKind.INITIATOR) return account == d.record.initiator;
        if (k == SAITypes.AuthorityKind.ROLE || k == SAITypes.AuthorityKind.ANY_MEMBER) {
            if (status(d, account) != SAITypes.MemberStatus.ACTIVE) return false;
            return k == SAITypes.AuthorityKind.ANY_MEMBER || d.members[account].roleId == a.roleId;
        }
        return false;
    }

    function requireAuthorized(SwarmData storage d, SAITypes.DecisionPoint dp) internal view {
        if (!isAuthorized(d, dp, msg.sender)) revert SAI_NotAuthorized();
    }

    /// §6.5 rosterMet over the live roster generation; only ACTIVE members count.
    function rosterMet(SwarmData storage d) internal view returns (bool) {
        if (d.record.state == SAITypes.LifecycleState.DISSOLVED) return false;
        uint32 gen = d.record.rosterPhase;
        if (d.rosterCounts[gen].active < d.spec.minMembers) return false;
        SAITypes.RoleSpec[] storage roles = d.spec.roles;
        for (uint256 i = 0; i < roles.length; i++) {
            if (d.roleCounts[gen][roles[i].roleId].active < roles[i].min) return false;
        }
        return true;
    }

    /// §12 inputOpen: true while FORMING; while ACTIVE, until phaseStartedAt + inputWindow (inclusive).
    function inputOpen(SwarmData storage d) internal view returns (bool) {
        SAITypes.LifecycleState st = d.record.state;
        if (st == SAITypes.LifecycleState.FORMING) return true;
        if (st != SAITypes.LifecycleState.ACTIVE) return false;
        uint64 w = d.spec.phases[d.record.phase].inputWindow;
        return w == 0 || block.timestamp <= uint256(d.record.phaseStartedAt) + w;
    }

    function roleSpec(SwarmData storage d, bytes32 roleId) internal view returns (SAITypes.RoleSpec storage) {
        uint256 idx = d.roleIndexPlusOne[roleId];
        if (idx == 0) revert SAI_UnknownRole();
        return d.spec.roles[idx - 1];
    }

    /// Moves a live seat between statuses, keeping the counters of the live generation exact.
    function setStatus(SwarmData storage d, SAITypes.Member storage m, SAITypes.MemberStatus to) internal {
        uint32 gen = d.record.rosterPhase;
        SAITypes.RosterCount storage rc = d.rosterCounts[gen];
        SAITypes.RoleCount storage roc = d.roleCounts[gen][m.roleId];
        SAITypes.MemberStatus from = m.status;
        if (from == SAITypes.MemberStatus.CANDIDATE) rc.candidates -= 1;
        else if (from == SAITypes.MemberStatus.ACTIVE) { rc.active -= 1; roc.active -= 1; }
        else if (from == SAITypes.MemberStatus.SUSPENDED) { rc.suspended -= 1; roc.suspended -= 1; }
        if (to == SAITypes.MemberStatus.CANDIDATE) rc.candidates += 1;
        else if (to == SAITypes.MemberStatus.ACTIVE) { rc.active += 1; roc.active += 1; }
        else if (to == SAITypes.MemberStatus.SUSPENDED) { rc.suspended += 1; roc.suspended += 1; }
        m.status = to;
    }
}
