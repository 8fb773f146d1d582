// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {SAITypes} from "./SAITypes.sol";
import {SwarmData, SwarmLogic} from "./SwarmStore.sol";
import {IEligibility} from "./IEligibility.sol";
import "./SAIErrors.sol";

/// @title SpecLib — ERC-8447 §3.2 validation, §8 objective validation and storage of the spec.
/// External library: linked into SwarmRegistry and executed by DELEGATECALL in its storage.
library SpecLib {
    bytes32 internal constant DIM_PAYOFF = keccak256("sai.dimension.payoff");
    bytes32 internal constant DIM_TOPOLOGY = keccak256("sai.dimension.topology");
    bytes32 internal constant DIM_COORDINATION = keccak256("sai.dimension.coordination");
    uint64 internal constant MAX_DURATION = type(uint64).max >> 1; // 2^63 - 1 (§3.2)

    /// §3.2 + §8: validates `spec` and `objective`, then stores the spec, the role index, the
    /// ADDRESS holders and the objective in `d`. Reverts with the §18 error of the first rule broken.
    function initialize(
        SwarmData storage d,
        mapping(bytes32 => mapping(bytes32 => SAITypes.Term)) storage terms,
        bytes32 swarmId,
        SAITypes.SwarmSpec calldata spec,
        SAITypes.ObjectiveInput calldata objective
    ) external {
        _validateRoles(d, spec);
        _validatePhases(terms, spec);
        _validateAuthorities(d, spec);
        _validateScalars(spec, objective);
        _validateObjective(objective);
        _store(d, spec, objective);
        _checkInitiator(d, swarmId);
    }

    // §3.2 first bullet; also stores the role index (used to detect duplicates).
    function _validateRoles(SwarmData storage d, SAITypes.SwarmSpec calldata spec) private {
        uint256 n = spec.roles.length;
        if (n == 0 || n > 32) revert SAI_RolesOutOfRange();
        for (uint256 i = 0; i < n; i++) {
            SAITypes.RoleSpec calldata r = spec.roles[i];
            if (r.roleId == bytes32(0)) revert SAI_ZeroRole();
            if (d.roleIndexPlusOne[r.roleId] != 0) revert SAI_DuplicateRole();
            d.roleIndexPlusOne[r.roleId] = i + 1;
            if (r.max != 0 && r.min > r.max) revert SAI_RoleBounds();
            if (r.eligibility != address(0) && r.eligibility.code.length == 0) revert SAI_ModuleNotContract();
            // §3.2 reserved initiator role: its min MUST be zero.
            if (r.roleId == SwarmLogic.INITIATOR_ROLE && r.min != 0) revert SAI_InitiatorRoleMin();
        }
    }

    // §3.2 second bullet; §7.1 terms.
    function _validatePhases(
        mapping(bytes32 => mapping(bytes32 => SAITypes.Term)) storage terms,
        SAITypes.SwarmSpec calldata spec
    ) private view {
        uint256 n = spec.phases.length;
        if (n == 0 || n > 32) revert SAI_PhasesOutOfRange();
        if (spec.phases[0].admission != SAITypes.Admission.RECRUIT) revert SAI_Phase0MustRecruit();
        for (uint256 i = 0; i < n; i++) {
            SAITypes.PhaseSpec calldata p = spec.phases[i];
            if (!terms[DIM_PAYOFF][p.payoff].registered) revert SAI_UnknownTerm();
            if (!terms[DIM_TOPOLOGY][p.topology].registered) revert SAI_UnknownTerm();
            if (!terms[DIM_COORDINATION][p.coordination].registered) revert SAI_UnknownTerm();
            if (p.inputWindow > MAX_DURATION) revert SAI_DurationTooLong();
        }
    }

    // §3.2 third bullet (authority shapes).
    function _validateAuthorities(SwarmData storage d, SAITypes.SwarmSpec calldata spec) private view {
        if (spec.authorities.length != 16) revert SAI_AuthoritiesLength();
        for (uint256 i = 0; i < 16; i++) {
            SAITypes.Authority calldata a = spec.authorities[i];
            if (a.kind == SAITypes.AuthorityKind.ADDRESS) {
                if (a.target == address(0) || a.roleId != bytes32(0)) revert SAI_AuthorityShape();
            } else if (a.kind == SAITypes.AuthorityKind.ROLE) {
                if (a.target != address(0)) revert SAI_AuthorityShape();
                if (d.roleIndexPlusOne[a.roleId] == 0) revert SAI_UnknownRoleAuthority();
                if (a.roleId == SwarmLogic.INITIATOR_ROLE) revert SAI_InitiatorRoleAuthority();
            } else if (a.target != address(0) || a.roleId != bytes32(0)) {
                revert SAI_AuthorityShape();
            }
        }
    }

    // §3.2 remaining bullets, in the seed's order.
    function _validateScalars(SAITypes.SwarmSpec calldata spec, SAITypes.ObjectiveInput calldata objective)
        private
        pure
    {
        if (spec.minMembers < 1) revert SAI_MinMembers();
        if (spec.maxMembers != 0 && spec.maxMembers < spec.minMembers) revert SAI_MaxMembers();
        if (
            spec.activation != SAITypes.Activation.ROSTER_MET
                && spec.authorities[uint8(SAITypes.DecisionPoint.ACTIVATE)].kind == SAITypes.AuthorityKind.NONE
        ) revert SAI_ActivationAuthority();
        if (spec.recruitmentWindow == 0) revert SAI_RecruitmentWindow();
        if (spec.maxDuration == 0 && spec.inactivityTimeout == 0) revert SAI_NoLivenessFallback();
        if (
            spec.authorities[uint8(SAITypes.DecisionPoint.CONCLUDE)].kind == SAITypes.AuthorityKind.NONE
                && objective.acceptanceAuthority == address(0)
        ) revert SAI_NoConclusionPath();
        if (
            spec.phases.length > 1
                && spec.authorities[uint8(SAITypes.DecisionPoint.ADVANCE)].kind == SAITypes.AuthorityKind.NONE
        ) revert SAI_AdvanceAuthority();
        SAITypes.AuthorityKind admitKind = spec.authorities[uint8(SAITypes.DecisionPoint.ADMIT)].kind;
        for (uint256 i = 1; i < spec.phases.length; i++) {
            if (
                spec.phases[i].admission == SAITypes.Admission.RECRUIT
                    && spec.phases[i].boundary == SAITypes.Boundary.GATED
                    && admitKind != SAITypes.AuthorityKind.ADDRESS && admitKind != SAITypes.AuthorityKind.INITIATOR
            ) revert SAI_RecruitAdmitter();
        }
        if (
            spec.recruitmentWindow > MAX_DURATION || spec.maxDuration > MAX_DURATION
                || spec.inactivityTimeout > MAX_DURATION || spec.ineligibleGrace > MAX_DURATION
                || spec.settlementWindow > MAX_DURATION || spec.amendmentExitWindow > MAX_DURATION
        ) revert SAI_DurationTooLong();
        // §3.2 last paragraph: contributions (§6.6) are a profile this deployment does not implement.
        if (spec.contributions != SAITypes.Contributions.DISABLED) revert SAI_ProfileUnsupported();
    }

    // §8 objective rules.
    function _validateObjective(SAITypes.ObjectiveInput calldata objective) private pure {
        if (objective.objectiveHash == bytes32(0)) revert SAI_ZeroObjective();
        if ((objective.milestoneCount > 0) != (objective.kind == SAITypes.ObjectiveKind.MILESTONED)) {
            revert SAI_MilestoneCount();
        }
    }

    function _store(SwarmData storage d, SAITypes.SwarmSpec calldata spec, SAITypes.ObjectiveInput calldata objective)
        private
    {
        SAITypes.SwarmSpec storage s = d.spec;
        for (uint256 i = 0; i < spec.roles.length; i++) s.roles.push(spec.roles[i]);
        for (uint256 i = 0; i < spec.phases.length; i++) s.phases.push(spec.phases[i]);
        for (uint256 i = 0; i < 16; i++) {
            s.authorities.push(spec.authorities[i]);
            if (spec.authorities[i].kind == SAITypes.AuthorityKind.ADDRESS) {
                d.authorityHolder[uint8(i)] = spec.authorities[i].target;
            }
        }
        s.activation = spec.activation;
        s.contributions = spec.contributions;
        s.minMembers = spec.minMembers;
        s.maxMembers = spec.maxMembers;
        s.recruitmentWindow = spec.recruitmentWindow;
        s.maxDuration = spec.maxDuration;
        s.inactivityTimeout = spec.inactivityTimeout;
        s.ineligibleGrace = spec.ineligibleGrace;
        s.settlementWindow = spec.settlementWindow;
        s.amendmentExitWindow = spec.amendmentExitWindow;
        s.descriptorHash = spec.descriptorHash;

        SAITypes.Objective storage o = d.objective;
        o.objectiveHash = objective.objectiveHash;
        o.kind = objective.kind;
        o.acceptanceAuthority = objective.acceptanceAuthority;
        o.obligation = objective.obligation;
        o.milestoneCount = objective.milestoneCount;
        o.version = 1;
    }

    /// §3.2 reserved initiator role: its module, if any, is evaluated against msg.sender at form.
    function _checkInitiator(SwarmData storage d, bytes32 swarmId) private view {
        uint256 idx = d.roleIndexPlusOne[SwarmLogic.INITIATOR_ROLE];
        if (idx == 0) return;
        address module = d.spec.roles[idx - 1].eligibility;
        if (module == address(0)) return;
        try IEligibility(module).isEligible(swarmId, SwarmLogic.INITIATOR_ROLE, msg.sender) returns (bool ok) {
            if (!ok) revert SAI_Ineligible();
        } catch {
            revert SAI_Ineligible();
        }
    }
}
