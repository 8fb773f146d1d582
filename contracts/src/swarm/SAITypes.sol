// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

/// @title SAITypes — the data model of ERC-8447 (Swarm AI Framework)
/// @notice §3.1 (spec), §5.1 (lifecycle), §6.1 (membership), §8 (objective), §11 (authorities).
/// The seed gives §3.1, §5.1, §6.1 and §8 verbatim; the `Swarm`, `Member`, `Objective`,
/// `Milestone`, `RosterCount`, `RoleCount` and `Term` records are this implementation's
/// (the seed defers them to an asset file it does not include) and are documented field by field
/// because the recompute verifier reads them from storage.
library SAITypes {
    // ---- §3.1 Swarm Specification ----
    enum Boundary { OPEN, GATED, CLOSED }
    enum Admission { RECRUIT, INHERIT, SELECT }
    enum AuthorityKind { NONE, ADDRESS, ROLE, ANY_MEMBER, INITIATOR }
    enum DecisionPoint {
        ACTIVATE, ABORT, SUSPEND, RESUME, ADVANCE, CONCLUDE, DISSOLVE, SUCCEED,
        ADMIT, REMOVE, REINSTATE, AMEND, ATTACH, DETACH, SET_ACCOUNT, REPRESENT
    }
    enum Activation { ROSTER_MET, AUTHORITY, BOTH }
    enum Contributions { DISABLED, MEMBERS, OPEN }

    struct Authority {
        AuthorityKind kind;
        address target;
        bytes32 roleId;
    }

    struct RoleSpec {
        bytes32 roleId; // unique within the spec
        uint32 min; // active members required for activation; 0 = none
        uint32 max; // seats (active + suspended); 0 = unbounded
        address eligibility; // IEligibility module; 0 = none
        bool selfJoin; // may an eligible account join without the ADMIT authority
    }

    struct PhaseSpec {
        bytes32 name;
        bytes32 payoff; // registered term under keccak256("sai.dimension.payoff")
        bytes32 topology; // registered term under keccak256("sai.dimension.topology")
        bytes32 coordination; // registered term under keccak256("sai.dimension.coordination")
        Boundary boundary;
        Admission admission; // phase 0 MUST be RECRUIT
        uint64 inputWindow; // seconds from phase start accepting admissions; 0 = unbounded
        bytes32 descriptorHash; // informative
    }

    struct SwarmSpec {
        RoleSpec[] roles;
        PhaseSpec[] phases;
        Authority[] authorities; // one per DecisionPoint, in enum order (16)
        Activation activation;
        Contributions contributions;
        uint32 minMembers; // >= 1
        uint32 maxMembers; // seats; 0 = unbounded
        uint64 recruitmentWindow; // FORMING fallback; > 0
        uint64 maxDuration; // hard cap from activation; 0 = none
        uint64 inactivityTimeout; // 0 = disabled
        uint64 ineligibleGrace;
        uint64 settlementWindow;
        uint64 amendmentExitWindow;
        bytes32 descriptorHash; // informative
    }

    /// §3.4 what the formation came from.
    struct Origin {
        bytes32 kind;
        bytes32 ref;
    }

    // ---- §5.1 Lifecycle ----
    enum LifecycleState { NONE, FORMING, ACTIVE, SUSPENDED, CONCLUDING, DISSOLVED }
    enum OutcomeType { NONE, ACHIEVED, PARTIAL, FAILED, ABANDONED, SUPERSEDED }
    enum Reason { NONE, AUTHORITY, ACCEPTANCE, RECRUITMENT_EXPIRED, TIMEOUT, INACTIVITY, ROSTER_LOST, SUCCESSION }

    // ---- §6.1 Membership ----
    enum MemberStatus { NONE, CANDIDATE, ACTIVE, SUSPENDED, EXITED }
    enum SuspensionCause { NONE, AUTHORITY, INELIGIBLE }
    enum ExitReason { NONE, LEFT, REMOVED, INELIGIBLE, NOT_CARRIED, REPLACED, SWARM_DISSOLVED }

    // ---- §8 Objective ----
    enum ObjectiveKind { TERMINAL, MILESTONED, EXPLORATORY, STANDING }
    enum MilestoneStatus { PENDING, ACCEPTED, REJECTED }

    struct ExternalRef {
        uint256 chainId;
        address target;
        uint256 id;
    }

    struct ObjectiveInput {
        bytes32 objectiveHash;
        ObjectiveKind kind;
        address acceptanceAuthority;
        ExternalRef obligation;
        uint32 milestoneCount;
    }

    /// @notice §8 the objective record of a swarm.
    struct Objective {
        bytes32 objectiveHash; // current objective hash (§4.1, changed by a material amendment §9.1)
        ObjectiveKind kind; // frozen at form
        address acceptanceAuthority; // records milestones and may conclude (§8, §11.2)
        ExternalRef obligation; // bound external duty; never called by the registry
        uint32 milestoneCount; // > 0 iff MILESTONED
        uint32 milestonesAccepted; // number of milestones whose status is ACCEPTED
        uint32 version; // charter version at which objectiveHash was last set (1 at form)
    }

    /// @notice §8 one milestone of a MILESTONED objective.
    struct Milestone {
        MilestoneStatus status; // ACCEPTED is final; REJECTED may be recorded again
        bytes32 resultHash;
        uint64 at; // clock() when last recorded
    }

    /// @notice §5 / §9 / §11 the lifecycle record of one swarm.
    struct Swarm {
        LifecycleState state; // §5.1 procedural state
        OutcomeType outcome; // §5.1 outcome, set once at conclusion, kept apart from the state
        Reason reason; // §5.1 reason of the conclusion (AUTHORITY, ACCEPTANCE, TIMEOUT, ...)
        Reason suspensionReason; // §5.2 reason of the current suspension; NONE when not SUSPENDED
        uint32 phase; // §7.2 current phase index
        uint32 rosterPhase; // §7.2 last phase entered through SELECT or RECRUIT (0 = phase 0);
        //                      a seat whose carriedPhase < rosterPhase has lazily EXITED(NOT_CARRIED)
        uint32 charterVersion; // §4 1 at form, +1 per amendment
        uint32 commitmentVersion; // §4 1 at form, +1 per material amendment
        uint64 revision; // §5.4 number of state-changing calls so far (== number of Changed events)
        uint64 formedAt; // §5.2 recruitment window start
        uint64 activatedAt; // §5.2 0 until activation
        uint64 phaseStartedAt; // §7.2 phase 0 starts at activation
        uint64 suspendedAt; // §5.2 start of the current suspension
        uint64 concludedAt; // §5.2 settlement window start
        uint64 dissolvedAt; // §5.2
        uint64 lastActivity; // §5.3 swarm activity
        uint64 lastAmendedAt; // §9.1
        uint64 exitWindowUntil; // §9.1 end (inclusive) of the latest material amendment's exit window
        uint64 hardDeadline; // §5.2 activatedAt + maxDuration; 0 = unset
        address initiator; // §3.4 the account that submitted the formation
        address account; // §13.2 swarm account (profile not implemented: always zero)
        bytes32 specHash; // §3.1 keccak256(abi.encode(spec))
        bytes32 charterHash; // §4.1 current charter hash
        bytes32 commitmentHash; // §4.1 current commitment hash (0 = pack without commitment)
        bytes32 resultHash; // §8 frozen at conclusion
        bytes32 parentId; // §9.2 (nesting not implemented: always zero)
        bytes32 predecessorId; // §9.2 (succession not implemented: always zero)
        bytes32 successorId; // §9.2 (succession not implemented: always zero)
        bytes32 originKind; // §3.4
        bytes32 originRef; // §3.4
        string charterURI; // §4.1 transport hint
    }

    /// @notice §6 one seat of the membership ledger. Status as STORED; the lazy exits of §5.2
    /// (SWARM_DISSOLVED) and §7.2 (NOT_CARRIED) are derived by the views, never written.
    struct Member {
        MemberStatus status; // stored status (see lazy rules)
        SuspensionCause suspensionCause; // §6.1 while SUSPENDED
        ExitReason exitReason; // §6.1 explicit exits only (LEFT, REMOVED, INELIGIBLE, REPLACED)
        bool admitted; // §6.2 authority side done (admit, self-join in an OPEN phase, substitution)
        bool substituted; // §6.3 seat opened by `substitute`
        bytes32 roleId; // §6.1 the seat's role (may change on a SELECT advance)
        uint32 admittedPhase; // §6.2 phase in which admission completed
        uint32 carriedPhase; // §7.2 phase the seat was opened in, completed in, or carried into by SELECT
        uint64 openedAt; // when the seat was opened
        uint64 suspendedAt; // §6.4 start of the current suspension (ineligibleGrace is measured from it)
        uint64 lastActivity; // §5.3 member activity
        bytes32 acceptedCharterHash; // §4.2 hash most recently accepted on this seat (0 = none)
        uint32 acceptedCharterVersion; // §4.2 charter version of that acceptance
        uint32 acceptedCommitmentVersion; // §4.2 commitment version of that acceptance
    }

    /// @notice §6.5 seat counters of one roster generation (keyed by Swarm.rosterPhase).
    struct RosterCount {
        uint32 active;
        uint32 suspended;
        uint32 candidates;
    }

    /// @notice §6.2 per-role seat counters of one roster generation.
    struct RoleCount {
        uint32 active;
        uint32 suspended;
    }

    /// @notice §7.1 one vocabulary term.
    struct Term {
        bool registered;
        string uri;
    }
}
