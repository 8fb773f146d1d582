// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {SAITypes} from "./SAITypes.sol";

/// @title ISwarmEvents — the events of ERC-8447 §12, declared once so that the registry and its
/// external libraries (which execute in the registry's context) emit the very same events.
interface ISwarmEvents {
    event SwarmFormed(bytes32 indexed swarmId, address indexed initiator, bytes32 indexed parentId, bytes32 specHash, bytes32 charterHash, bytes32 commitmentHash, string charterURI, bytes32 originKind, bytes32 originRef, bytes32 predecessorId);
    event SwarmActivated(bytes32 indexed swarmId, uint64 at, uint64 hardDeadline, address by);
    event SwarmSuspended(bytes32 indexed swarmId, SAITypes.Reason reason, address by);
    event SwarmResumed(bytes32 indexed swarmId, address by);
    event PhaseAdvanced(bytes32 indexed swarmId, uint32 indexed phase, uint32 carried, address by);
    event SwarmConcluded(bytes32 indexed swarmId, SAITypes.OutcomeType outcome, SAITypes.Reason reason, bytes32 resultHash, address by);
    event SwarmDissolved(bytes32 indexed swarmId, uint64 at, address by);
    event SwarmSucceeded(bytes32 indexed swarmId, bytes32 indexed successorId, address by);
    event CharterAmended(bytes32 indexed swarmId, uint32 indexed charterVersion, uint32 commitmentVersion, bool material, bytes32 charterHash, bytes32 objectiveHash, bytes32 commitmentHash, string charterURI, uint64 exitUntil, address by);
    event CharterURIUpdated(bytes32 indexed swarmId, string charterURI);
    event AuthorityTransferred(bytes32 indexed swarmId, SAITypes.DecisionPoint indexed decisionPoint, address indexed previous, address next);
    event AccountSet(bytes32 indexed swarmId, address account, address by);
    event Changed(bytes32 indexed swarmId, uint64 indexed revision, bytes4 selector, address by);
    event MemberApplied(bytes32 indexed swarmId, address indexed account, bytes32 indexed roleId, bytes32 charterHash);
    event MemberAdmitted(bytes32 indexed swarmId, address indexed account, bytes32 indexed roleId, address by);
    event CharterAccepted(bytes32 indexed swarmId, address indexed account, bytes32 charterHash, uint32 charterVersion, uint32 commitmentVersion, bool signed);
    event MemberActivated(bytes32 indexed swarmId, address indexed account, bytes32 indexed roleId, uint32 phase);
    event MemberSuspended(bytes32 indexed swarmId, address indexed account, SAITypes.SuspensionCause cause, address by);
    event MemberReinstated(bytes32 indexed swarmId, address indexed account, address by);
    event MemberExited(bytes32 indexed swarmId, address indexed account, SAITypes.ExitReason reason, bool onAmendment, address by);
    event MemberSubstituted(bytes32 indexed swarmId, address indexed previous, address indexed next, bytes32 roleId, address by);
    event MemberCarried(bytes32 indexed swarmId, address indexed account, bytes32 indexed roleId, uint32 phase);
    event Challenged(bytes32 indexed swarmId, address indexed account, address indexed by, bool eligible);
    event Contribution(bytes32 indexed swarmId, address indexed contributor, uint32 indexed phase, bytes32 contributionHash, string uri, uint32 charterVersion, bool isMember, bool whileSuspended);
    event MilestoneRecorded(bytes32 indexed swarmId, uint32 indexed index, SAITypes.MilestoneStatus status, bytes32 resultHash, address by);
    event ResourceAttached(bytes32 indexed swarmId, bytes32 indexed resourceId, bytes32 indexed kind, uint256 chainId, address target, uint256 id, bytes32 digest, bytes32 digestKind, string uri, bytes32 roleId, address provider, address by);
    event ResourceDetached(bytes32 indexed swarmId, bytes32 indexed resourceId, address by);
    event TermRegistered(bytes32 indexed dimension, bytes32 indexed term, string uri, address by);
}
