// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {SAITypes} from "./SAITypes.sol";
import {SwarmData, SwarmLogic} from "./SwarmStore.sol";
import {ISwarmEvents} from "./ISwarmEvents.sol";
import {SpecLib} from "./SpecLib.sol";
import {MembershipLib} from "./MembershipLib.sol";
import "./SAIErrors.sol";

/// @title SwarmRegistry — reference ERC-8447 swarm registry for the recompute devnet.
/// @notice Implements §3 (spec), §4 (charter), §5 (lifecycle + revision log), §6 (membership,
/// challenge), §7 (phases, vocabulary), §8 (objective), §9.1 (amendment), §11 (authorities),
/// §15 (clock). Not implemented: joinBySig, contributions, resources, succession, nesting and the
/// swarm account, so the registry does NOT claim the §16 ISwarmRegistry id 0x085203a4.
/// Logic lives in the external libraries SpecLib and MembershipLib (EIP-170); all storage is here.
contract SwarmRegistry is ISwarmEvents {
    using SwarmLogic for SwarmData;

    bytes32 internal constant DIM_PAYOFF = keccak256("sai.dimension.payoff");
    bytes32 internal constant DIM_TOPOLOGY = keccak256("sai.dimension.topology");
    bytes32 internal constant DIM_COORDINATION = keccak256("sai.dimension.coordination");

    /// @notice Number of swarms formed so far; the n-th swarm's id is
    /// keccak256(abi.encode(block.chainid, address(this), n)) (§12 "unique within the instance").
    uint256 public swarmCount;

    /// @notice §7.1 vocabulary: dimension id => term id => {registered, descriptor uri}. Write-once.
    mapping(bytes32 => mapping(bytes32 => SAITypes.Term)) public terms;

    /// @notice Per-swarm storage (see SwarmData in SwarmStore.sol): §5 record (state, outcome,
    /// reason, phase, rosterPhase, revision, clocks), §8 objective and milestones, §3 spec,
    /// §6 members, seat epochs and the roster counters behind rosterMet (§6.5).
    mapping(bytes32 => SwarmData) internal swarmData;

    constructor() {
        // §7.1 base vocabulary, registered at deployment: keccak256("sai.<dimension>.<term>").
        _base(DIM_PAYOFF, "payoff", "shared");
        _base(DIM_PAYOFF, "payoff", "exclusive");
        _base(DIM_PAYOFF, "payoff", "mixed");
        _base(DIM_TOPOLOGY, "topology", "redundant");
        _base(DIM_TOPOLOGY, "topology", "partitioned");
        _base(DIM_TOPOLOGY, "topology", "sequential");
        _base(DIM_TOPOLOGY, "topology", "hierarchical");
        _base(DIM_TOPOLOGY, "topology", "iterative");
        _base(DIM_TOPOLOGY, "topology", "free");
        _base(DIM_COORDINATION, "coordination", "leader");
        _base(DIM_COORDINATION, "coordination", "collective");
        _base(DIM_COORDINATION, "coordination", "market");
        _base(DIM_COORDINATION, "coordination", "automated");
        _base(DIM_COORDINATION, "coordination", "none");
    }

    function _base(bytes32 dim, string memory dimName, string memory name) private {
        string memory id = string.concat("sai.", dimName, ".", name);
        _registerTerm(dim, keccak256(bytes(id)), string.concat("erc-8447:", id));
    }

    // ================================================================== §3 / §4 formation

    function specHashOf(SAITypes.SwarmSpec calldata spec) external pure returns (bytes32) {
        return keccak256(abi.encode(spec));
    }

    /// @notice §3–§4, §5.2 "→ FORMING". Nesting (parentId) is not implemented: parentId MUST be 0.
    function form(
        SAITypes.SwarmSpec calldata spec,
        bytes32 charterHash,
        bytes32 commitmentHash,
        string calldata charterURI,
        bytes32 parentId,
        SAITypes.Origin calldata origin,
        SAITypes.ObjectiveInput calldata objective
    ) external returns (bytes32 swarmId) {
        if (parentId != bytes32(0)) revert SAI_ParentUnavailable();
        if (charterHash == bytes32(0)) revert SAI_ZeroCharter();
        uint256 n = ++swarmCount;
        swarmId = keccak256(abi.encode(block.chainid, address(this), n));
        SwarmData storage d = swarmData[swarmId];
        SpecLib.initialize(d, terms, swarmId, spec, objective);
        SAITypes.Swarm storage r = d.record;
        r.state = SAITypes.LifecycleState.FORMING;
        r.charterVersion = 1;
        r.commitmentVersion = 1;
        r.formedAt = uint64(block.timestamp);
        r.lastActivity = uint64(block.timestamp);
        r.initiator = msg.sender;
        r.specHash = keccak256(abi.encode(spec));
        r.charterHash = charterHash;
        r.commitmentHash = commitmentHash;
        r.originKind = origin.kind;
        r.originRef = origin.ref;
        r.charterURI = charterURI;
        emit SwarmFormed(swarmId, msg.sender, bytes32(0), r.specHash, charterHash, commitmentHash, charterURI,
            origin.kind, origin.ref, bytes32(0));
        _changed(swarmId);
    }

    // ================================================================== §5.2 lifecycle

    /// @notice FORMING -> ACTIVE (anyone under ROSTER_MET; the ACTIVATE authority otherwise).
    function activate(bytes32 swarmId) external {
        SwarmData storage d = _swarm(swarmId);
        SAITypes.Swarm storage r = d.record;
        if (r.state != SAITypes.LifecycleState.FORMING) revert SAI_WrongState();
        SAITypes.Activation a = d.spec.activation;
        if (a != SAITypes.Activation.ROSTER_MET) d.requireAuthorized(SAITypes.DecisionPoint.ACTIVATE);
        if (a != SAITypes.Activation.AUTHORITY && !d.rosterMet()) revert SAI_RosterNotMet();
        r.state = SAITypes.LifecycleState.ACTIVE;
        r.activatedAt = uint64(block.timestamp);
        r.phaseStartedAt = uint64(block.timestamp);
        if (d.spec.maxDuration != 0) r.hardDeadline = uint64(block.timestamp) + d.spec.maxDuration;
        emit SwarmActivated(swarmId, r.activatedAt, r.hardDeadline, msg.sender);
        _changed(swarmId);
    }

    /// @notice FORMING -> DISSOLVED(ABANDONED): the ABORT authority any time, anyone after
    /// formedAt + recruitmentWindow. Every seat exits lazily with SWARM_DISSOLVED.
    function abort(bytes32 swarmId) external {
        SwarmData storage d = _swarm(swarmId);
        SAITypes.Swarm storage r = d.record;
        if (r.state != SAITypes.LifecycleState.FORMING) revert SAI_WrongState();
        SAITypes.Reason reason;
        if (d.isAuthorized(SAITypes.DecisionPoint.ABORT, msg.sender)) {
            reason = SAITypes.Reason.AUTHORITY;
        } else if (block.timestamp > uint256(r.formedAt) + d.spec.recruitmentWindow) {
            reason = SAITypes.Reason.RECRUITMENT_EXPIRED;
        } else {
            revert SAI_WindowOpen();
        }
        _concludeRecord(r, SAITypes.OutcomeType.ABANDONED, reason, bytes32(0));
        emit SwarmConcluded(swarmId, SAITypes.OutcomeType.ABANDONED, reason, bytes32(0), msg.sender);
        _dissolveRecord(swarmId, r);
        _changed(swarmId);
    }

    /// @notice ACTIVE -> SUSPENDED(AUTHORITY) by the SUSPEND authority.
    function suspend(bytes32 swarmId) external {
        SwarmData storage d = _swarm(swarmId);
        if (d.record.state != SAITypes.LifecycleState.ACTIVE) revert SAI_WrongState();
        d.requireAuthorized(SAITypes.DecisionPoint.SUSPEND);
        _suspendSwarm(swarmId, d.record, SAITypes.Reason.AUTHORITY);
    }

    /// @notice SUSPENDED -> ACTIVE: the RESUME authority; anyone after ROSTER_LOST once rosterMet.
    function resume(bytes32 swarmId) external {
        SwarmData storage d = _swarm(swarmId);
        SAITypes.Swarm storage r = d.record;
        if (r.state != SAITypes.LifecycleState.SUSPENDED) revert SAI_WrongState();
        if (!d.isAuthorized(SAITypes.DecisionPoint.RESUME, msg.sender)) {
            if (r.suspensionReason != SAITypes.Reason.ROSTER_LOST) revert SAI_NotAuthorized();
            if (!d.rosterMet()) revert SAI_RosterNotMet();
        }
        r.state = SAITypes.LifecycleState.ACTIVE;
        r.suspensionReason = SAITypes.Reason.NONE;
        r.suspendedAt = 0;
        emit SwarmResumed(swarmId, msg.sender);
        _changed(swarmId);
    }

    /// @notice ACTIVE -> SUSPENDED(ROSTER_LOST) by anyone when rosterMet is false; deferred until
    /// phaseStartedAt + recruitmentWindow after a SELECT or RECRUIT advance (§7.2).
    function enforceRoster(bytes32 swarmId) external {
        SwarmData storage d = _swarm(swarmId);
        SAITypes.Swarm storage r = d.record;
        if (r.state != SAITypes.LifecycleState.ACTIVE) revert SAI_WrongState();
        if (d.rosterMet()) revert SAI_RosterMet();
        if (r.rosterPhase != 0 && r.rosterPhase == r.phase
            && block.timestamp < uint256(r.phaseStartedAt) + d.spec.recruitmentWindow) revert SAI_RosterCheckDeferred();
        _suspendSwarm(swarmId, r, SAITypes.Reason.ROSTER_LOST);
    }

    /// @notice Two-stage inactivity fallback: ACTIVE -> SUSPENDED(INACTIVITY) after
    /// lastActivity + inactivityTimeout; SUSPENDED -> CONCLUDING(ABANDONED, INACTIVITY) after
    /// suspendedAt + inactivityTimeout.
    function enforceInactivity(bytes32 swarmId) external {
        SwarmData storage d = _swarm(swarmId);
        SAITypes.Swarm storage r = d.record;
        uint64 t = d.spec.inactivityTimeout;
        if (r.state == SAITypes.LifecycleState.ACTIVE) {
            if (t == 0 || block.timestamp <= uint256(r.lastActivity) + t) revert SAI_NotInactive();
            _suspendSwarm(swarmId, r, SAITypes.Reason.INACTIVITY);
        } else if (r.state == SAITypes.LifecycleState.SUSPENDED) {
            if (t == 0 || block.timestamp <= uint256(r.suspendedAt) + t) revert SAI_NotInactive();
            _concludeFallback(swarmId, r, SAITypes.Reason.INACTIVITY);
        } else {
            revert SAI_WrongState();
        }
    }

    /// @notice ACTIVE/SUSPENDED -> CONCLUDING(ABANDONED, TIMEOUT) by anyone after hardDeadline.
    function enforceDeadline(bytes32 swarmId) external {
        SwarmData storage d = _swarm(swarmId);
        SAITypes.Swarm storage r = d.record;
        if (r.state != SAITypes.LifecycleState.ACTIVE && r.state != SAITypes.LifecycleState.SUSPENDED) {
            revert SAI_WrongState();
        }
        if (r.hardDeadline == 0 || block.timestamp <= r.hardDeadline) revert SAI_BeforeDeadline();
        _concludeFallback(swarmId, r, SAITypes.Reason.TIMEOUT);
    }

    /// @notice §7.2 advance (ADVANCE authority, ACTIVE).
    function advance(bytes32 swarmId, address[] calldata carried, bytes32[] calldata roles) external {
        MembershipLib.advance(_swarm(swarmId), swarmId, carried, roles);
        _changed(swarmId);
    }

    /// @notice §8 conclude: the CONCLUDE authority or the acceptance authority, ACTIVE or SUSPENDED.
    function conclude(bytes32 swarmId, SAITypes.OutcomeType outcome, bytes32 resultHash) external {
        SwarmData storage d = _swarm(swarmId);
        SAITypes.Swarm storage r = d.record;
        if (r.state != SAITypes.LifecycleState.ACTIVE && r.state != SAITypes.LifecycleState.SUSPENDED) {
            revert SAI_WrongState();
        }
        SAITypes.Objective storage o = d.objective;
        SAITypes.Reason reason;
        if (msg.sender == o.acceptanceAuthority && o.acceptanceAuthority != address(0)) {
            reason = SAITypes.Reason.ACCEPTANCE;
        } else if (d.isAuthorized(SAITypes.DecisionPoint.CONCLUDE, msg.sender)) {
            reason = SAITypes.Reason.AUTHORITY;
        } else {
            revert SAI_NotAuthorized();
        }
        if (outcome == SAITypes.OutcomeType.NONE || outcome == SAITypes.OutcomeType.SUPERSEDED) revert SAI_BadOutcome();
        if (o.kind == SAITypes.ObjectiveKind.MILESTONED) {
            if (outcome == SAITypes.OutcomeType.ACHIEVED && o.milestonesAccepted < o.milestoneCount) {
                revert SAI_MilestonesIncomplete();
            }
            if (outcome == SAITypes.OutcomeType.PARTIAL && o.milestonesAccepted == 0) revert SAI_MilestonesIncomplete();
        }
        _concludeRecord(r, outcome, reason, resultHash);
        emit SwarmConcluded(swarmId, outcome, reason, resultHash, msg.sender);
        _changed(swarmId);
    }

    /// @notice CONCLUDING -> DISSOLVED: the DISSOLVE authority, anyone after
    /// concludedAt + settlementWindow. Every remaining seat exits lazily with SWARM_DISSOLVED.
    function dissolve(bytes32 swarmId) external {
        SwarmData storage d = _swarm(swarmId);
        SAITypes.Swarm storage r = d.record;
        if (r.state != SAITypes.LifecycleState.CONCLUDING) revert SAI_WrongState();
        if (!d.isAuthorized(SAITypes.DecisionPoint.DISSOLVE, msg.sender)
            && block.timestamp <= uint256(r.concludedAt) + d.spec.settlementWindow) revert SAI_WindowOpen();
        _dissolveRecord(swarmId, r);
        _changed(swarmId);
    }

    // ================================================================== §8 milestones

    function recordMilestone(bytes32 swarmId, uint32 index, SAITypes.MilestoneStatus status, bytes32 resultHash)
        external
    {
        SwarmData storage d = _swarm(swarmId);
        SAITypes.Objective storage o = d.objective;
        if (msg.sender != o.acceptanceAuthority || o.acceptanceAuthority == address(0)) revert SAI_NotAuthorized();
        if (d.record.state != SAITypes.LifecycleState.ACTIVE) revert SAI_WrongState();
        if (index >= o.milestoneCount) revert SAI_MilestoneIndex();
        if (status == SAITypes.MilestoneStatus.PENDING) revert SAI_MilestoneStatus();
        SAITypes.Milestone storage ms = d.milestones[index];
        if (ms.status == SAITypes.MilestoneStatus.ACCEPTED) revert SAI_MilestoneFinal();
        ms.status = status;
        ms.resultHash = resultHash;
        ms.at = uint64(block.timestamp);
        if (status == SAITypes.MilestoneStatus.ACCEPTED) o.milestonesAccepted += 1;
        d.record.lastActivity = uint64(block.timestamp);
        emit MilestoneRecorded(swarmId, index, status, resultHash, msg.sender);
        _changed(swarmId);
    }

    // ================================================================== §9.1 amendment

    function amend(
        bytes32 swarmId,
        bytes32 charterHash,
        string calldata charterURI,
        bytes32 objectiveHash,
        bytes32 commitmentHash,
        bool material
    ) external {
        SwarmData storage d = _swarm(swarmId);
        d.requireAuthorized(SAITypes.DecisionPoint.AMEND);
        SAITypes.Swarm storage r = d.record;
        if (r.state != SAITypes.LifecycleState.FORMING && r.state != SAITypes.LifecycleState.ACTIVE
            && r.state != SAITypes.LifecycleState.SUSPENDED) revert SAI_WrongState();
        if (charterHash == bytes32(0)) revert SAI_ZeroCharter();
        if (charterHash == r.charterHash) revert SAI_SameCharter();
        r.charterVersion += 1;
        r.charterHash = charterHash;
        r.charterURI = charterURI;
        r.lastAmendedAt = uint64(block.timestamp);
        r.lastActivity = uint64(block.timestamp);
        SAITypes.Objective storage o = d.objective;
        // §9.1 the registry decides the class: a changed objective or commitment hash is material
        // by construction; `material` can only add materiality (one-way flag).
        if (objectiveHash != bytes32(0) && objectiveHash != o.objectiveHash) {
            o.objectiveHash = objectiveHash;
            o.version = r.charterVersion;
            material = true;
        }
        if (commitmentHash != bytes32(0) && commitmentHash != r.commitmentHash) {
            r.commitmentHash = commitmentHash;
            material = true;
        }
        uint64 exitUntil;
        if (material) {
            r.commitmentVersion += 1;
            exitUntil = uint64(block.timestamp) + d.spec.amendmentExitWindow;
            r.exitWindowUntil = exitUntil;
        }
        emit CharterAmended(swarmId, r.charterVersion, r.commitmentVersion, material, charterHash, o.objectiveHash,
            r.commitmentHash, charterURI, exitUntil, msg.sender);
        _changed(swarmId);
    }

    /// @notice §9.1 setCharterURI: AMEND authority, any state but DISSOLVED (isAuthorized is false then).
    function setCharterURI(bytes32 swarmId, string calldata charterURI) external {
        SwarmData storage d = _swarm(swarmId);
        d.requireAuthorized(SAITypes.DecisionPoint.AMEND);
        d.record.charterURI = charterURI;
        emit CharterURIUpdated(swarmId, charterURI);
        _changed(swarmId);
    }

    // ================================================================== §11.3 transfer

    function transferAuthority(bytes32 swarmId, SAITypes.DecisionPoint decisionPoint, address newAuthority) external {
        SwarmData storage d = _swarm(swarmId);
        if (d.record.state == SAITypes.LifecycleState.DISSOLVED) revert SAI_WrongState();
        if (d.spec.authorities[uint8(decisionPoint)].kind != SAITypes.AuthorityKind.ADDRESS) revert SAI_NotTransferable();
        address previous = d.authorityHolder[uint8(decisionPoint)];
        if (msg.sender != previous) revert SAI_NotHolder();
        if (newAuthority == address(0)) revert SAI_ZeroAuthority();
        d.authorityHolder[uint8(decisionPoint)] = newAuthority;
        emit AuthorityTransferred(swarmId, decisionPoint, previous, newAuthority);
        _changed(swarmId);
    }

    // ================================================================== §6 membership (MembershipLib)

    function applyToJoin(bytes32 swarmId, bytes32 roleId, bytes32 charterHash) external {
        MembershipLib.applyToJoin(_swarm(swarmId), swarmId, roleId, charterHash);
        _changed(swarmId);
    }

    function join(bytes32 swarmId, bytes32 roleId, bytes32 charterHash) external {
        MembershipLib.join(_swarm(swarmId), swarmId, roleId, charterHash);
        _changed(swarmId);
    }

    function acceptCharter(bytes32 swarmId, bytes32 charterHash) external {
        MembershipLib.acceptCharter(_swarm(swarmId), swarmId, charterHash);
        _changed(swarmId);
    }

    function admit(bytes32 swarmId, address account, bytes32 roleId) external {
        MembershipLib.admit(_swarm(swarmId), swarmId, account, roleId);
        _changed(swarmId);
    }

    function leave(bytes32 swarmId) external {
        MembershipLib.leave(_swarm(swarmId), swarmId);
        _changed(swarmId);
    }

    function suspendMember(bytes32 swarmId, address account) external {
        MembershipLib.suspendMember(_swarm(swarmId), swarmId, account);
        _changed(swarmId);
    }

    function reinstate(bytes32 swarmId, address account) external {
        MembershipLib.reinstate(_swarm(swarmId), swarmId, account);
        _changed(swarmId);
    }

    function remove(bytes32 swarmId, address account) external {
        MembershipLib.remove(_swarm(swarmId), swarmId, account);
        _changed(swarmId);
    }

    /// @notice §6.4 challenge; an unevaluable predicate changes nothing and emits no Changed (§5.4).
    function challenge(bytes32 swarmId, address account) external returns (bool evaluated, bool eligible) {
        (evaluated, eligible) = MembershipLib.challenge(_swarm(swarmId), swarmId, account);
        if (evaluated) _changed(swarmId);
    }

    function expel(bytes32 swarmId, address account) external {
        MembershipLib.expel(_swarm(swarmId), swarmId, account);
        _changed(swarmId);
    }

    function substitute(bytes32 swarmId, address previous, address next) external {
        MembershipLib.substitute(_swarm(swarmId), swarmId, previous, next);
        _changed(swarmId);
    }

    // ================================================================== §7.1 vocabulary

    function registerTerm(bytes32 dimension, bytes32 term, string calldata uri) external {
        if (dimension != DIM_PAYOFF && dimension != DIM_TOPOLOGY && dimension != DIM_COORDINATION) {
            revert SAI_UnknownDimension();
        }
        if (term == bytes32(0)) revert SAI_ZeroTerm();
        if (terms[dimension][term].registered) revert SAI_TermExists();
        _registerTerm(dimension, term, uri);
    }

    function _registerTerm(bytes32 dimension, bytes32 term, string memory uri) private {
        terms[dimension][term] = SAITypes.Term({registered: true, uri: uri});
        emit TermRegistered(dimension, term, uri, msg.sender);
    }

    // ================================================================== views

    function getSwarm(bytes32 swarmId) external view returns (SAITypes.Swarm memory) {
        return _swarm(swarmId).record;
    }

    function specOf(bytes32 swarmId) external view returns (SAITypes.SwarmSpec memory) {
        return _swarm(swarmId).spec;
    }

    function phaseSpecOf(bytes32 swarmId, uint32 phase) external view returns (SAITypes.PhaseSpec memory) {
        SwarmData storage d = _swarm(swarmId);
        if (phase >= d.spec.phases.length) revert SAI_PhasesOutOfRange();
        return d.spec.phases[phase];
    }

    function roleSpecOf(bytes32 swarmId, bytes32 roleId) external view returns (SAITypes.RoleSpec memory) {
        return _swarm(swarmId).roleSpec(roleId);
    }

    /// @notice §11.3: the spec's authority with the CURRENT holder of an ADDRESS slot.
    function authorityOf(bytes32 swarmId, SAITypes.DecisionPoint decisionPoint)
        external
        view
        returns (SAITypes.Authority memory a)
    {
        SwarmData storage d = _swarm(swarmId);
        a = d.spec.authorities[uint8(decisionPoint)];
        if (a.kind == SAITypes.AuthorityKind.ADDRESS) a.target = d.authorityHolder[uint8(decisionPoint)];
    }

    function isAuthorized(bytes32 swarmId, SAITypes.DecisionPoint decisionPoint, address account)
        external
        view
        returns (bool)
    {
        return _swarm(swarmId).isAuthorized(decisionPoint, account);
    }

    function objectiveOf(bytes32 swarmId) external view returns (SAITypes.Objective memory) {
        return _swarm(swarmId).objective;
    }

    function milestoneOf(bytes32 swarmId, uint32 index)
        external
        view
        returns (SAITypes.MilestoneStatus status, bytes32 resultHash, uint64 at)
    {
        SwarmData storage d = _swarm(swarmId);
        if (index >= d.objective.milestoneCount) revert SAI_MilestoneIndex();
        SAITypes.Milestone storage ms = d.milestones[index];
        return (ms.status, ms.resultHash, ms.at);
    }

    /// @notice The seat record with the lazy exits of §5.2 / §7.2 applied to status and exitReason.
    function getMember(bytes32 swarmId, address account) external view returns (SAITypes.Member memory m) {
        SwarmData storage d = _swarm(swarmId);
        m = d.members[account];
        (m.status, m.exitReason) = d.liveStatus(account);
    }

    /// @notice §6.1 status with the lazy NOT_CARRIED (§7.2) and SWARM_DISSOLVED (§5.2) exits.
    function memberStatus(bytes32 swarmId, address account)
        public
        view
        virtual
        returns (SAITypes.MemberStatus status, SAITypes.ExitReason exitReason)
    {
        return _swarm(swarmId).liveStatus(account);
    }

    /// @notice Seats of the live roster generation as the lazy rules report them (zero once DISSOLVED).
    function memberCount(bytes32 swarmId) external view returns (uint32 active, uint32 suspended, uint32 candidates) {
        SwarmData storage d = _swarm(swarmId);
        if (d.record.state == SAITypes.LifecycleState.DISSOLVED) return (0, 0, 0);
        SAITypes.RosterCount storage c = d.rosterCounts[d.record.rosterPhase];
        return (c.active, c.suspended, c.candidates);
    }

    function roleCount(bytes32 swarmId, bytes32 roleId) external view returns (uint32 active, uint32 suspended) {
        SwarmData storage d = _swarm(swarmId);
        if (d.record.state == SAITypes.LifecycleState.DISSOLVED) return (0, 0);
        SAITypes.RoleCount storage c = d.roleCounts[d.record.rosterPhase][roleId];
        return (c.active, c.suspended);
    }

    /// @notice §6.5 roster condition over ACTIVE members only.
    function rosterMet(bytes32 swarmId) public view virtual returns (bool) {
        return _swarm(swarmId).rosterMet();
    }

    function acceptedCharterOf(bytes32 swarmId, address account)
        external
        view
        returns (bytes32 charterHash, uint32 charterVersion, uint32 commitmentVersion)
    {
        SAITypes.Member storage m = _swarm(swarmId).members[account];
        return (m.acceptedCharterHash, m.acceptedCharterVersion, m.acceptedCommitmentVersion);
    }

    function seatEpochOf(bytes32 swarmId, address account) external view returns (uint256) {
        return _swarm(swarmId).seatEpochs[account];
    }

    function termURI(bytes32 dimension, bytes32 term) external view returns (string memory) {
        return terms[dimension][term].uri;
    }

    function isTerm(bytes32 dimension, bytes32 term) external view returns (bool) {
        return terms[dimension][term].registered;
    }

    function hardDeadlineOf(bytes32 swarmId) external view returns (uint64) {
        return _swarm(swarmId).record.hardDeadline;
    }

    function inputOpen(bytes32 swarmId) external view returns (bool) {
        return _swarm(swarmId).inputOpen();
    }

    /// @notice §5.4 the swarm's revision counter.
    function revisionOf(bytes32 swarmId) external view returns (uint64) {
        return _swarm(swarmId).record.revision;
    }

    /// @notice §15 / ERC-6372.
    function clock() external view returns (uint48) {
        return uint48(block.timestamp);
    }

    // solhint-disable-next-line func-name-mixedcase
    function CLOCK_MODE() external pure returns (string memory) {
        return "mode=timestamp";
    }

    /// @notice ERC-165: IERC165 and IERC6372 only. ISwarmRegistry (0x085203a4) is NOT claimed because
    /// joinBySig, contributions, resources, succession and setAccount are not implemented (§16).
    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 // IERC165
            || interfaceId == 0xda287a1d; // IERC6372: clock() ^ CLOCK_MODE()
    }

    // ================================================================== internals

    function _swarm(bytes32 swarmId) internal view returns (SwarmData storage d) {
        d = swarmData[swarmId];
        if (d.record.state == SAITypes.LifecycleState.NONE) revert SAI_UnknownSwarm();
    }

    /// §5.4: increments the revision and emits Changed after the call's own events. Virtual only
    /// so that the LyingRevisionSwarmRegistry test double can skip one emit.
    function _changed(bytes32 swarmId) internal virtual {
        SAITypes.Swarm storage r = swarmData[swarmId].record;
        uint64 rev = ++r.revision;
        emit Changed(swarmId, rev, msg.sig, msg.sender);
    }

    function _suspendSwarm(bytes32 swarmId, SAITypes.Swarm storage r, SAITypes.Reason reason) private {
        r.state = SAITypes.LifecycleState.SUSPENDED;
        r.suspensionReason = reason;
        r.suspendedAt = uint64(block.timestamp);
        emit SwarmSuspended(swarmId, reason, msg.sender);
        _changed(swarmId);
    }

    function _concludeFallback(bytes32 swarmId, SAITypes.Swarm storage r, SAITypes.Reason reason) private {
        _concludeRecord(r, SAITypes.OutcomeType.ABANDONED, reason, bytes32(0));
        emit SwarmConcluded(swarmId, SAITypes.OutcomeType.ABANDONED, reason, bytes32(0), msg.sender);
        _changed(swarmId);
    }

    function _concludeRecord(SAITypes.Swarm storage r, SAITypes.OutcomeType outcome, SAITypes.Reason reason, bytes32 h)
        private
    {
        r.state = SAITypes.LifecycleState.CONCLUDING;
        r.outcome = outcome;
        r.reason = reason;
        r.resultHash = h;
        r.concludedAt = uint64(block.timestamp);
    }

    function _dissolveRecord(bytes32 swarmId, SAITypes.Swarm storage r) private {
        r.state = SAITypes.LifecycleState.DISSOLVED;
        r.dissolvedAt = uint64(block.timestamp);
        emit SwarmDissolved(swarmId, r.dissolvedAt, msg.sender);
    }
}
