// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {SAITypes} from "./SAITypes.sol";
import {SwarmData, SwarmLogic} from "./SwarmStore.sol";
import {IEligibility} from "./IEligibility.sol";
import {ISwarmEvents} from "./ISwarmEvents.sol";
import "./SAIErrors.sol";

/// @title MembershipLib — ERC-8447 §4.2 acceptance, §6 membership ledger and §7.2 advancing.
/// External library: linked into SwarmRegistry and executed by DELEGATECALL in its storage, so
/// msg.sender is the registry's caller. The registry emits `Changed` after each call (§5.4).
library MembershipLib {
    using SwarmLogic for SwarmData;

    // ------------------------------------------------------------------ admission (§6.2)

    /// §6.2 member side only: records acceptance of the current charter; completes the seat if
    /// the authority side is already done.
    function applyToJoin(SwarmData storage d, bytes32 swarmId, bytes32 roleId, bytes32 charterHash) external {
        _requireAdmissionOpen(d);
        SAITypes.Member storage m = _seatFor(d, msg.sender, roleId);
        _accept(d, swarmId, m, msg.sender, charterHash);
        emit ISwarmEvents.MemberApplied(swarmId, msg.sender, roleId, charterHash);
        _emitAccepted(d, swarmId, m, msg.sender);
        _tryComplete(d, swarmId, m, msg.sender);
    }

    /// §6.2 `join`: both sides at once in an OPEN phase for a selfJoin role; refused otherwise.
    function join(SwarmData storage d, bytes32 swarmId, bytes32 roleId, bytes32 charterHash) external {
        _requireAdmissionOpen(d);
        SAITypes.Boundary b = d.spec.phases[d.record.phase].boundary;
        if (b == SAITypes.Boundary.GATED) revert SAI_Gated();
        SAITypes.RoleSpec storage rs = _admissibleRole(d, roleId);
        if (!rs.selfJoin) revert SAI_Gated();
        SAITypes.Member storage m = _seatFor(d, msg.sender, roleId);
        _accept(d, swarmId, m, msg.sender, charterHash);
        m.admitted = true; // §6.2 the account's own join counts as the authority side
        _emitAccepted(d, swarmId, m, msg.sender);
        _tryComplete(d, swarmId, m, msg.sender);
    }

    /// §6.2 authority side by the ADMIT authority.
    function admit(SwarmData storage d, bytes32 swarmId, address account, bytes32 roleId) external {
        d.requireAuthorized(SAITypes.DecisionPoint.ADMIT);
        _requireAdmissionOpen(d);
        SAITypes.Member storage m = _seatFor(d, account, roleId);
        if (m.admitted) revert SAI_SeatTaken();
        m.admitted = true;
        m.lastActivity = uint64(block.timestamp);
        d.record.lastActivity = uint64(block.timestamp);
        emit ISwarmEvents.MemberAdmitted(swarmId, account, roleId, msg.sender);
        _tryComplete(d, swarmId, m, account);
    }

    /// §4.2 acceptCharter: the caller holds a seat and names the current charter hash.
    function acceptCharter(SwarmData storage d, bytes32 swarmId, bytes32 charterHash) external {
        SAITypes.MemberStatus st = d.status(msg.sender);
        if (st != SAITypes.MemberStatus.CANDIDATE && st != SAITypes.MemberStatus.ACTIVE
            && st != SAITypes.MemberStatus.SUSPENDED) revert SAI_NoSeat();
        _requireJudgmentState(d); // §5.2 CONCLUDING leaves `leave` only
        SAITypes.Member storage m = d.members[msg.sender];
        _accept(d, swarmId, m, msg.sender, charterHash);
        _emitAccepted(d, swarmId, m, msg.sender);
        _tryComplete(d, swarmId, m, msg.sender);
    }

    // ------------------------------------------------------------------ departure & judgment (§6.3)

    /// §6.3 leave: any live seat, every state but DISSOLVED; onAmendment inside an exit window.
    function leave(SwarmData storage d, bytes32 swarmId) external {
        if (d.record.state == SAITypes.LifecycleState.DISSOLVED) revert SAI_WrongState();
        SAITypes.MemberStatus st = d.status(msg.sender);
        if (st != SAITypes.MemberStatus.CANDIDATE && st != SAITypes.MemberStatus.ACTIVE
            && st != SAITypes.MemberStatus.SUSPENDED) revert SAI_NoSeat();
        SAITypes.Member storage m = d.members[msg.sender];
        bool onAmendment = block.timestamp <= d.record.exitWindowUntil
            && m.acceptedCommitmentVersion < d.record.commitmentVersion;
        _exit(d, swarmId, m, msg.sender, SAITypes.ExitReason.LEFT, onAmendment);
    }

    /// §6.3 suspendMember: REMOVE authority, ACTIVE or SUSPENDED member -> SUSPENDED(AUTHORITY).
    function suspendMember(SwarmData storage d, bytes32 swarmId, address account) external {
        d.requireAuthorized(SAITypes.DecisionPoint.REMOVE);
        _requireJudgmentState(d);
        SAITypes.Member storage m = _liveMember(d, account);
        _suspend(d, swarmId, m, account, SAITypes.SuspensionCause.AUTHORITY);
    }

    /// §6.3 remove: a CANDIDATE by the ADMIT authority, a member by the REMOVE authority.
    function remove(SwarmData storage d, bytes32 swarmId, address account) external {
        _requireJudgmentState(d);
        SAITypes.MemberStatus st = d.status(account);
        if (st == SAITypes.MemberStatus.CANDIDATE) {
            d.requireAuthorized(SAITypes.DecisionPoint.ADMIT);
        } else if (st == SAITypes.MemberStatus.ACTIVE || st == SAITypes.MemberStatus.SUSPENDED) {
            d.requireAuthorized(SAITypes.DecisionPoint.REMOVE);
        } else {
            revert SAI_NoSeat();
        }
        _exit(d, swarmId, d.members[account], account, SAITypes.ExitReason.REMOVED, false);
    }

    /// §6.3 reinstate on judgment; a SUSPENDED(INELIGIBLE) member is re-evaluated first.
    function reinstate(SwarmData storage d, bytes32 swarmId, address account) external {
        d.requireAuthorized(SAITypes.DecisionPoint.REINSTATE);
        _requireJudgmentState(d);
        if (d.status(account) != SAITypes.MemberStatus.SUSPENDED) revert SAI_NotSuspended();
        SAITypes.Member storage m = d.members[account];
        if (m.suspensionCause == SAITypes.SuspensionCause.INELIGIBLE) _requireEligible(d, swarmId, m.roleId, account);
        _reinstate(d, swarmId, m, account);
    }

    /// §6.3 substitute: ADMIT authority; `previous` EXITED(REPLACED); `next` gets a seat with the
    /// authority side done and `substituted` set, completed by its own acceptance.
    function substitute(SwarmData storage d, bytes32 swarmId, address previous, address next) external {
        d.requireAuthorized(SAITypes.DecisionPoint.ADMIT);
        _requireJudgmentState(d);
        SAITypes.Member storage p = _liveMember(d, previous);
        SAITypes.MemberStatus nst = d.status(next);
        if (nst == SAITypes.MemberStatus.CANDIDATE || nst == SAITypes.MemberStatus.ACTIVE
            || nst == SAITypes.MemberStatus.SUSPENDED) revert SAI_SuccessorHasSeat();
        bytes32 roleId = p.roleId;
        _requireEligible(d, swarmId, roleId, next);
        _exit(d, swarmId, p, previous, SAITypes.ExitReason.REPLACED, false);
        SAITypes.Member storage n = _open(d, next, roleId);
        n.admitted = true;
        n.substituted = true;
        emit ISwarmEvents.MemberSubstituted(swarmId, previous, next, roleId, msg.sender);
    }

    // ------------------------------------------------------------------ challenge (§6.4)

    /// §6.4 challenge: anyone; evaluated false suspends an ACTIVE member, evaluated true reinstates
    /// a SUSPENDED(INELIGIBLE) one; unevaluable changes nothing and returns (false, false).
    function challenge(SwarmData storage d, bytes32 swarmId, address account)
        external
        returns (bool evaluated, bool eligible)
    {
        _requireJudgmentState(d);
        SAITypes.MemberStatus st = d.status(account);
        SAITypes.Member storage m = d.members[account];
        if (!(st == SAITypes.MemberStatus.ACTIVE
            || (st == SAITypes.MemberStatus.SUSPENDED && m.suspensionCause == SAITypes.SuspensionCause.INELIGIBLE))) {
            revert SAI_NotMember();
        }
        address module = d.roleSpec(m.roleId).eligibility;
        if (module == address(0)) revert SAI_NoModule();
        (evaluated, eligible) = _evaluate(module, swarmId, m.roleId, account);
        if (!evaluated) return (false, false);
        emit ISwarmEvents.Challenged(swarmId, account, msg.sender, eligible);
        if (!eligible && st == SAITypes.MemberStatus.ACTIVE) {
            _suspend(d, swarmId, m, account, SAITypes.SuspensionCause.INELIGIBLE);
        } else if (eligible && st == SAITypes.MemberStatus.SUSPENDED) {
            _reinstate(d, swarmId, m, account);
        }
    }

    /// §6.4 expel: anyone, after ineligibleGrace; re-evaluates: false exits, true reinstates,
    /// unevaluable reverts with SAI_Unevaluable.
    function expel(SwarmData storage d, bytes32 swarmId, address account) external {
        _requireJudgmentState(d);
        SAITypes.Member storage m = d.members[account];
        if (d.status(account) != SAITypes.MemberStatus.SUSPENDED
            || m.suspensionCause != SAITypes.SuspensionCause.INELIGIBLE) revert SAI_NotSuspended();
        address module = d.roleSpec(m.roleId).eligibility;
        if (module == address(0)) revert SAI_NoModule();
        // "suspended for longer than ineligibleGrace"
        if (block.timestamp <= uint256(m.suspendedAt) + d.spec.ineligibleGrace) revert SAI_GraceRunning();
        (bool evaluated, bool eligible) = _evaluate(module, swarmId, m.roleId, account);
        if (!evaluated) revert SAI_Unevaluable();
        emit ISwarmEvents.Challenged(swarmId, account, msg.sender, eligible);
        if (eligible) _reinstate(d, swarmId, m, account);
        else _exit(d, swarmId, m, account, SAITypes.ExitReason.INELIGIBLE, false);
    }

    // ------------------------------------------------------------------ advancing (§7.2)

    /// §7.2 advance under INHERIT, SELECT or RECRUIT; NOT_CARRIED exits are lazy: every seat whose
    /// carriedPhase is below the new rosterPhase is reported EXITED(NOT_CARRIED).
    function advance(SwarmData storage d, bytes32 swarmId, address[] calldata carried, bytes32[] calldata roles)
        external
    {
        d.requireAuthorized(SAITypes.DecisionPoint.ADVANCE);
        if (d.record.state != SAITypes.LifecycleState.ACTIVE) revert SAI_WrongState();
        uint32 next = d.record.phase + 1;
        if (next >= d.spec.phases.length) revert SAI_LastPhase();
        SAITypes.Admission adm = d.spec.phases[next].admission;
        uint32 count;
        if (adm == SAITypes.Admission.SELECT) {
            if (roles.length != 0 && roles.length != carried.length) revert SAI_CarriedShape();
            count = uint32(carried.length);
            for (uint256 i = 0; i < carried.length; i++) {
                _carry(d, swarmId, carried[i], roles.length == 0 ? bytes32(0) : roles[i], next);
            }
            d.rosterCounts[next].active = count;
            if (d.spec.maxMembers != 0 && count > d.spec.maxMembers) revert SAI_SwarmFull();
            d.record.rosterPhase = next;
        } else {
            if (carried.length != 0 || roles.length != 0) revert SAI_CarriedShape();
            if (adm == SAITypes.Admission.INHERIT) {
                SAITypes.RosterCount storage rc = d.rosterCounts[d.record.rosterPhase];
                count = rc.active + rc.suspended;
            } else {
                d.record.rosterPhase = next; // RECRUIT: everybody NOT_CARRIED, counters start at zero
            }
        }
        d.record.phase = next;
        d.record.phaseStartedAt = uint64(block.timestamp);
        d.record.lastActivity = uint64(block.timestamp);
        emit ISwarmEvents.PhaseAdvanced(swarmId, next, count, msg.sender);
    }

    function _carry(SwarmData storage d, bytes32 swarmId, address account, bytes32 newRole, uint32 next) private {
        if (d.status(account) != SAITypes.MemberStatus.ACTIVE) revert SAI_NotCarriedMember();
        SAITypes.Member storage m = d.members[account];
        if (m.carriedPhase == next) revert SAI_CarriedShape(); // listed twice
        if (newRole == bytes32(0)) newRole = m.roleId;
        SAITypes.RoleSpec storage rs = _admissibleRole(d, newRole);
        _requireEligible(d, swarmId, newRole, account);
        SAITypes.RoleCount storage rc = d.roleCounts[next][newRole];
        rc.active += 1;
        if (rs.max != 0 && rc.active > rs.max) revert SAI_RoleFull();
        m.roleId = newRole;
        m.carriedPhase = next;
        emit ISwarmEvents.MemberCarried(swarmId, account, newRole, next);
    }

    // ------------------------------------------------------------------ internals

    /// §6.2 refusals that depend on the swarm and the phase only.
    function _requireAdmissionOpen(SwarmData storage d) private view {
        SAITypes.LifecycleState s = d.record.state;
        if (s != SAITypes.LifecycleState.FORMING && s != SAITypes.LifecycleState.ACTIVE) revert SAI_WrongState();
        if (d.spec.phases[d.record.phase].boundary == SAITypes.Boundary.CLOSED) revert SAI_BoundaryClosed();
        if (!d.inputOpen()) revert SAI_InputClosed();
    }

    /// §6.3 judgment, challenge, expel and substitution: FORMING, ACTIVE or SUSPENDED only.
    function _requireJudgmentState(SwarmData storage d) private view {
        SAITypes.LifecycleState s = d.record.state;
        if (s != SAITypes.LifecycleState.FORMING && s != SAITypes.LifecycleState.ACTIVE
            && s != SAITypes.LifecycleState.SUSPENDED) revert SAI_WrongState();
    }

    function _admissibleRole(SwarmData storage d, bytes32 roleId) private view returns (SAITypes.RoleSpec storage rs) {
        rs = d.roleSpec(roleId);
        if (roleId == SwarmLogic.INITIATOR_ROLE) revert SAI_InitiatorRoleSeated();
    }

    /// The seat an admission act works on: an existing CANDIDATE seat of the same role, or a new one.
    function _seatFor(SwarmData storage d, address account, bytes32 roleId) private returns (SAITypes.Member storage m) {
        _admissibleRole(d, roleId);
        SAITypes.MemberStatus st = d.status(account);
        if (st == SAITypes.MemberStatus.ACTIVE || st == SAITypes.MemberStatus.SUSPENDED) revert SAI_SeatTaken();
        if (st == SAITypes.MemberStatus.CANDIDATE) {
            m = d.members[account];
            if (m.roleId != roleId) revert SAI_RoleMismatch();
            return m;
        }
        _requireCaps(d, roleId);
        m = _open(d, account, roleId);
    }

    /// Opens a fresh CANDIDATE seat (earlier seat, explicit or lazily exited, is overwritten).
    function _open(SwarmData storage d, address account, bytes32 roleId) private returns (SAITypes.Member storage m) {
        delete d.members[account];
        m = d.members[account];
        m.roleId = roleId;
        m.carriedPhase = d.record.phase;
        m.openedAt = uint64(block.timestamp);
        d.setStatus(m, SAITypes.MemberStatus.CANDIDATE);
    }

    /// §6.2 role max and maxMembers over active + suspended seats.
    function _requireCaps(SwarmData storage d, bytes32 roleId) private view {
        uint32 gen = d.record.rosterPhase;
        uint32 rmax = d.roleSpec(roleId).max;
        SAITypes.RoleCount storage rc = d.roleCounts[gen][roleId];
        if (rmax != 0 && rc.active + rc.suspended >= rmax) revert SAI_RoleFull();
        uint32 smax = d.spec.maxMembers;
        SAITypes.RosterCount storage c = d.rosterCounts[gen];
        if (smax != 0 && c.active + c.suspended >= smax) revert SAI_SwarmFull();
    }

    /// §4.2 member side: the hash must be current; records hash and both versions.
    function _accept(SwarmData storage d, bytes32, SAITypes.Member storage m, address, bytes32 charterHash) private {
        if (charterHash != d.record.charterHash) revert SAI_StaleCharter();
        m.acceptedCharterHash = charterHash;
        m.acceptedCharterVersion = d.record.charterVersion;
        m.acceptedCommitmentVersion = d.record.commitmentVersion;
        m.lastActivity = uint64(block.timestamp);
        d.record.lastActivity = uint64(block.timestamp);
    }

    function _emitAccepted(SwarmData storage d, bytes32 swarmId, SAITypes.Member storage m, address account) private {
        emit ISwarmEvents.CharterAccepted(
            swarmId, account, m.acceptedCharterHash, d.record.charterVersion, d.record.commitmentVersion, false
        );
    }

    /// §6.2 completion: both sides for the current commitment version; re-checks the refusals at the
    /// moment of completion (a substituted seat is exempt from all but eligibility, §6.3).
    function _tryComplete(SwarmData storage d, bytes32 swarmId, SAITypes.Member storage m, address account) private {
        if (m.status != SAITypes.MemberStatus.CANDIDATE || !m.admitted) return;
        if (m.acceptedCharterVersion == 0 || m.acceptedCommitmentVersion != d.record.commitmentVersion) return;
        if (!m.substituted) {
            _requireAdmissionOpen(d);
            _requireCaps(d, m.roleId);
        }
        _requireEligible(d, swarmId, m.roleId, account);
        d.setStatus(m, SAITypes.MemberStatus.ACTIVE);
        m.admittedPhase = d.record.phase;
        m.carriedPhase = d.record.phase;
        emit ISwarmEvents.MemberActivated(swarmId, account, m.roleId, d.record.phase);
    }

    function _liveMember(SwarmData storage d, address account) private view returns (SAITypes.Member storage) {
        SAITypes.MemberStatus st = d.status(account);
        if (st != SAITypes.MemberStatus.ACTIVE && st != SAITypes.MemberStatus.SUSPENDED) revert SAI_NotMember();
        return d.members[account];
    }

    function _suspend(
        SwarmData storage d,
        bytes32 swarmId,
        SAITypes.Member storage m,
        address account,
        SAITypes.SuspensionCause cause
    ) private {
        d.setStatus(m, SAITypes.MemberStatus.SUSPENDED);
        m.suspensionCause = cause;
        m.suspendedAt = uint64(block.timestamp);
        emit ISwarmEvents.MemberSuspended(swarmId, account, cause, msg.sender);
    }

    function _reinstate(SwarmData storage d, bytes32 swarmId, SAITypes.Member storage m, address account) private {
        d.setStatus(m, SAITypes.MemberStatus.ACTIVE);
        m.suspensionCause = SAITypes.SuspensionCause.NONE;
        m.suspendedAt = 0;
        emit ISwarmEvents.MemberReinstated(swarmId, account, msg.sender);
    }

    /// An explicit exit: closes the seat and advances the account's seat epoch (§4.3).
    function _exit(
        SwarmData storage d,
        bytes32 swarmId,
        SAITypes.Member storage m,
        address account,
        SAITypes.ExitReason reason,
        bool onAmendment
    ) private {
        d.setStatus(m, SAITypes.MemberStatus.EXITED);
        m.exitReason = reason;
        m.suspensionCause = SAITypes.SuspensionCause.NONE;
        d.seatEpochs[account] += 1;
        emit ISwarmEvents.MemberExited(swarmId, account, reason, onAmendment, msg.sender);
    }

    function _requireEligible(SwarmData storage d, bytes32 swarmId, bytes32 roleId, address account) private view {
        address module = d.roleSpec(roleId).eligibility;
        if (module == address(0)) return;
        (bool evaluated, bool eligible) = _evaluate(module, swarmId, roleId, account);
        if (!evaluated || !eligible) revert SAI_Ineligible();
    }

    /// §6.4 classification: evaluated with the module's answer, or unevaluable (a revert, a return
    /// that is not exactly one ABI boolean, or a `false` arriving with less than one eighth of the
    /// gas available before the call still remaining).
    function _evaluate(address module, bytes32 swarmId, bytes32 roleId, address account)
        private
        view
        returns (bool evaluated, bool eligible)
    {
        bytes memory data = abi.encodeCall(IEligibility.isEligible, (swarmId, roleId, account));
        bool ok;
        uint256 size;
        uint256 value;
        uint256 before = gasleft();
        assembly ("memory-safe") {
            ok := staticcall(gas(), module, add(data, 0x20), mload(data), 0x00, 0x20)
            size := returndatasize()
            value := mload(0x00)
        }
        uint256 remaining = gasleft();
        if (!ok || size != 32 || value > 1) return (false, false);
        if (value == 0 && remaining < before / 8) return (false, false);
        return (true, value == 1);
    }
}
