// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

// ERC-8447 §18 custom errors (only those this implementation can raise), plus two of its own:
// SAI_ProfileUnsupported (§3.2: a spec requiring an unimplemented normative-optional profile)
// and SAI_ZeroCharter (a zero charter hash at form or amend, §9.1 "non-zero charterHash").

// Specification (§3.2)
error SAI_RolesOutOfRange();
error SAI_ZeroRole();
error SAI_DuplicateRole();
error SAI_RoleBounds();
error SAI_ModuleNotContract();
error SAI_PhasesOutOfRange();
error SAI_Phase0MustRecruit();
error SAI_UnknownTerm();
error SAI_AuthoritiesLength();
error SAI_AuthorityShape();
error SAI_UnknownRoleAuthority();
error SAI_InitiatorRoleAuthority();
error SAI_InitiatorRoleMin();
error SAI_MinMembers();
error SAI_MaxMembers();
error SAI_ActivationAuthority();
error SAI_RecruitmentWindow();
error SAI_NoLivenessFallback();
error SAI_NoConclusionPath();
error SAI_AdvanceAuthority();
error SAI_RecruitAdmitter();
error SAI_DurationTooLong();
error SAI_ProfileUnsupported();
// Objective (§8)
error SAI_ZeroObjective();
error SAI_MilestoneCount();
error SAI_MilestoneIndex();
error SAI_MilestoneStatus();
error SAI_MilestoneFinal();
// Lifecycle (§5, §7.2)
error SAI_UnknownSwarm();
error SAI_WrongState();
error SAI_NotAuthorized();
error SAI_RosterNotMet();
error SAI_RosterMet();
error SAI_RosterCheckDeferred();
error SAI_WindowOpen();
error SAI_BeforeDeadline();
error SAI_NotInactive();
error SAI_LastPhase();
error SAI_CarriedShape();
error SAI_NotCarriedMember();
error SAI_BadOutcome();
error SAI_MilestonesIncomplete();
error SAI_ParentUnavailable();
// Charter (§4, §9.1)
error SAI_StaleCharter();
error SAI_SameCharter();
error SAI_ZeroCharter();
// Membership (§6)
error SAI_BoundaryClosed();
error SAI_Gated();
error SAI_InputClosed();
error SAI_UnknownRole();
error SAI_InitiatorRoleSeated();
error SAI_RoleFull();
error SAI_SwarmFull();
error SAI_SeatTaken();
error SAI_RoleMismatch();
error SAI_Ineligible();
error SAI_NotMember();
error SAI_NoSeat();
error SAI_NotCandidate();
error SAI_NotSuspended();
error SAI_NoModule();
error SAI_GraceRunning();
error SAI_Unevaluable();
error SAI_SuccessorHasSeat();
// Vocabulary (§7.1)
error SAI_UnknownDimension();
error SAI_ZeroTerm();
error SAI_TermExists();
// Authority (§11.3)
error SAI_NotHolder();
error SAI_ZeroAuthority();
error SAI_NotTransferable();
