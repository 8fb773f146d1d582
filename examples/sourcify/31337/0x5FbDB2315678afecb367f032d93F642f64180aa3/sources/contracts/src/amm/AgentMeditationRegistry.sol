// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {IAgentMeditation} from "./IAgentMeditation.sol";

/// @title AgentMeditationRegistry — reference registry of the Agent Meditation Mechanism (AMM).
/// @notice Implements the whole `IAgentMeditation` interface (AMM §Interface) with a timestamp
///         ERC-6372 clock (AMM §Clock). Storage holds exactly what AMM §Events says storage keeps
///         ("the head, the four checkpoints, policy versions, the floor, demands and the root of
///         every state version") under plain names, so that a storage-proof verifier can re-derive
///         every status from the slots alone. Full cycle records live in `CycleRecorded` events.
/// @dev    Every rejection rule of AMM §Cycle records has its own custom error named after it.
contract AgentMeditationRegistry is IAgentMeditation {
    // ------------------------------------------------------------------ constants

    /// AMM §Commitment format.
    bytes32 public constant TAG_LAYER_COMMITMENT = keccak256("AgentMeditationMechanism/LayerCommitment/v1");
    /// AMM §Commitment format.
    bytes32 public constant TAG_STATE_ROOT = keccak256("AgentMeditationMechanism/StateRoot/v1");

    /// AMM §Roles and authorization: controller rights.
    uint8 public constant RIGHT_FLOOR = 1;
    uint8 public constant RIGHT_DEMAND = 2;
    uint8 public constant RIGHT_REVOKE_OPERATORS = 4;
    /// AMM §Roles and authorization: operator permissions.
    uint8 public constant PERM_REPORT = 1;
    uint8 public constant PERM_PULSE = 2;
    uint8 public constant PERM_POLICY = 4;

    uint8 internal constant ALL_LAYERS = 0x0F;
    uint8 internal constant ALL_RIGHTS = 0x07;
    bytes4 internal constant ERC165_ID = 0x01ffc9a7;

    // ------------------------------------------------------------------ storage
    // Declaration order fixes the slots (heads = slot 0 ... operatorPerms = slot 7); the verifier
    // reads them through solc's storageLayout, so do not reorder.

    /// @notice Head record per subject (AMM §Layer checkpoints and state versions, §Interface
    ///         `Head`): enrolment flag, controller relation and rights, current policy and floor
    ///         versions, current state version and root, record count, enrolment time, last
    ///         activity signal and planning hint.
    mapping(address subject => Head) internal heads;

    /// @notice The four per-layer checkpoints per subject, index = layer (AMM §Layer checkpoints
    ///         and state versions `LayerCheckpoint`): commitment, lastCompletedAt,
    ///         lastCompletedRecordedAt, completedUnderPolicy, lastChangedVersion.
    mapping(address subject => LayerCheckpoint[4]) internal checkpoints;

    /// @notice Root of EVERY registered state version per subject (AMM §Layer checkpoints and state
    ///         versions: "The registry MUST keep the root of every state version (rootAt)").
    mapping(address subject => mapping(uint64 stateVersion => bytes32 root)) internal stateRoots;

    /// @notice Every policy version per subject, never modified or deleted (AMM §Policy and floor).
    ///         Versions start at 1; `heads[subject].policyVersion` is the latest.
    mapping(address subject => mapping(uint32 version => Policy)) internal policies;

    /// @notice Effective-from timepoint (clock value at `enroll`/`setPolicy`) of every policy version
    ///         (AMM §Policy and floor; used by the governing-policy rule of §Cycle records).
    mapping(address subject => mapping(uint32 version => uint48 effectiveFrom)) internal policyEffectiveFroms;

    /// @notice The controller's current floor per subject (AMM §Policy and floor); its version
    ///         counter is `heads[subject].floorVersion`. All-zero until a floor is set.
    mapping(address subject => Floor) internal floors;

    /// @notice Outstanding demand per subject and layer, index = layer (AMM §Demand);
    ///         demandedAt == 0 means none.
    mapping(address subject => Demand[4]) internal demands;

    /// @notice Operator permission bitmask per (subject, operator) (AMM §Roles and authorization).
    mapping(address subject => mapping(address operator => uint8 permissions)) internal operatorPerms;

    // ------------------------------------------------------------------ errors

    error NotEnrolled(address subject);
    error AlreadyEnrolled(address subject);
    error Unauthorized(address caller);
    error InvalidLayer(uint8 layer);
    /// AMM §Policy and floor: policy validity.
    error InvalidPolicy();
    /// AMM §Policy and floor: floor validity.
    error InvalidFloor();
    /// AMM §Roles and authorization: the controller is the subject, rights out of range, ...
    error InvalidController();
    /// AMM §Roles and authorization: "the subject MUST NOT change or remove an existing controller".
    error ControllerAlreadySet();
    /// AMM §Roles and authorization: a controller may only hand on / keep a subset of its rights.
    error ControllerRightsNotSubset();
    /// AMM §Roles and authorization: operator address or permission bitmask not acceptable.
    error InvalidOperator();
    /// AMM §Demand: empty or out-of-range layer mask, or dueBy not in the future.
    error InvalidDemand();

    // One error per rejection rule of AMM §Cycle records, named after the rule.
    /// Rule "Scope".
    error ScopeViolated();
    /// Rule "Outcome consistency".
    error OutcomeInconsistent();
    /// Rule "Governing policy".
    error GoverningPolicyViolated();
    /// Rule "Linkage".
    error LinkageBroken();
    /// Rule "Unscoped layers unchanged".
    error UnscopedLayerChanged(uint8 layer);
    /// Rule "Time ordering".
    error TimeOrderingViolated();
    /// Rule "Restore claim".
    error RestoreClaimInvalid();

    // ------------------------------------------------------------------ ERC-165 / ERC-6372

    /// AMM §Interface: ERC-165 support for IAgentMeditation (0x9c81b550) and ERC-165 itself.
    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == type(IAgentMeditation).interfaceId || interfaceId == ERC165_ID;
    }

    /// AMM §Clock: ERC-6372 timestamp clock.
    function clock() public view returns (uint48) {
        return uint48(block.timestamp);
    }

    /// AMM §Clock: "CLOCK_MODE() equal to mode=timestamp".
    // solhint-disable-next-line func-name-mixedcase
    function CLOCK_MODE() external pure returns (string memory) {
        return "mode=timestamp";
    }

    // ------------------------------------------------------------------ enrolment and roles

    /// AMM §Roles and authorization (Enrollment).
    function enroll(bytes32[4] calldata baseline, Policy calldata policy, address controller, uint8 controllerRights)
        external
    {
        address subject = msg.sender;
        Head storage h = heads[subject];
        if (h.enrolled) revert AlreadyEnrolled(subject);
        _validatePolicy(policy);
        _validateControllerChoice(subject, controller, controllerRights);

        uint48 now_ = clock();
        bytes32 root = computeRoot(baseline);
        h.enrolled = true;
        h.controller = controller;
        h.controllerRights = controllerRights;
        h.policyVersion = 1;
        h.stateVersion = 1;
        h.root = root;
        h.enrolledAt = now_;
        h.lastSignalAt = now_; // "an activity signal at that time"

        LayerCheckpoint[4] storage cps = checkpoints[subject];
        for (uint8 i = 0; i < 4; i++) {
            cps[i].commitment = baseline[i];
            // The baseline registers state version 1; it is not a completion (lastCompletedAt 0).
            cps[i].lastChangedVersion = 1;
        }
        stateRoots[subject][1] = root;
        policies[subject][1] = policy;
        policyEffectiveFroms[subject][1] = now_;

        emit Enrolled(subject, controller, controllerRights, root, now_);
        emit PolicyUpdated(subject, 1, policy.policyHash, now_, subject);
        if (controller != address(0)) emit ControllerChanged(subject, address(0), controller, controllerRights);
    }

    /// AMM §Roles and authorization: the subject grants (or, with 0, clears) operator permissions.
    function setOperator(address operator, uint8 permissions) external {
        address subject = msg.sender;
        Head storage h = _enrolledHead(subject);
        // A controller cannot be granted operator rights (AMM §Roles and authorization).
        if (operator == address(0) || operator == subject || operator == h.controller) revert InvalidOperator();
        if (permissions > 0x07) revert InvalidOperator();
        operatorPerms[subject][operator] = permissions;
        emit OperatorSet(subject, operator, permissions, subject);
    }

    /// AMM §Roles and authorization: revocation by the subject or a controller holding
    /// RIGHT_REVOKE_OPERATORS.
    function revokeOperator(address subject, address operator) external {
        Head storage h = _enrolledHead(subject);
        if (msg.sender != subject) _requireController(h, RIGHT_REVOKE_OPERATORS);
        operatorPerms[subject][operator] = 0;
        emit OperatorSet(subject, operator, 0, msg.sender);
    }

    /// AMM §Roles and authorization: the subject appoints a controller only when none is set; the
    /// controller transfers (to another address with a subset of its rights), shrinks its rights
    /// (newController == itself) or renounces (newController == 0, rights == 0).
    function setController(address subject, address newController, uint8 rights) external {
        Head storage h = _enrolledHead(subject);
        address previous = h.controller;
        if (msg.sender == subject) {
            if (previous != address(0)) revert ControllerAlreadySet();
            if (newController == address(0)) revert InvalidController();
        } else if (msg.sender == previous) {
            if (rights & ~h.controllerRights != 0) revert ControllerRightsNotSubset();
        } else {
            revert Unauthorized(msg.sender);
        }
        _validateControllerChoice(subject, newController, rights);
        h.controller = newController;
        h.controllerRights = rights;
        emit ControllerChanged(subject, previous, newController, rights);
    }

    // ------------------------------------------------------------------ policy, floor, demand

    /// AMM §Policy and floor: appends a policy version effective from clock(); never touches a
    /// checkpoint. The policy is stored as given even where it is weaker than the floor: the
    /// effective requirements combine both (see requirementsOf), so it cannot relax the floor.
    function setPolicy(address subject, Policy calldata policy) external {
        Head storage h = _enrolledHead(subject);
        _authorizeWriter(subject, h, PERM_POLICY);
        _validatePolicy(policy);
        uint32 version = ++h.policyVersion;
        uint48 now_ = clock();
        policies[subject][version] = policy;
        policyEffectiveFroms[subject][version] = now_;
        emit PolicyUpdated(subject, version, policy.policyHash, now_, msg.sender);
    }

    /// AMM §Policy and floor: only a controller holding RIGHT_FLOOR; increments the floor version.
    function setFloor(address subject, Floor calldata floor) external {
        Head storage h = _enrolledHead(subject);
        _requireController(h, RIGHT_FLOOR);
        if (floor.requiredLayers > ALL_LAYERS) revert InvalidFloor();
        for (uint8 i = 0; i < 4; i++) {
            if (_has(floor.requiredLayers, i) && floor.maxInterval[i] == 0) revert InvalidFloor();
        }
        uint32 version = ++h.floorVersion;
        floors[subject] = floor;
        emit FloorUpdated(subject, version, clock(), msg.sender);
    }

    /// AMM §Demand: controller with RIGHT_DEMAND, dueBy in the future; replaces earlier demands.
    function demand(address subject, uint8 layerMask, uint48 dueBy) external {
        Head storage h = _enrolledHead(subject);
        _requireController(h, RIGHT_DEMAND);
        uint48 now_ = clock();
        if (layerMask == 0 || layerMask > ALL_LAYERS || dueBy <= now_) revert InvalidDemand();
        for (uint8 i = 0; i < 4; i++) {
            if (_has(layerMask, i)) demands[subject][i] = Demand(now_, dueBy);
        }
        emit Demanded(subject, layerMask, dueBy, msg.sender);
    }

    /// AMM §Demand: withdrawal by the controller holding RIGHT_DEMAND (the seed names no other
    /// party; the right that issues a demand is the one that withdraws it).
    function withdrawDemand(address subject, uint8 layerMask) external {
        Head storage h = _enrolledHead(subject);
        _requireController(h, RIGHT_DEMAND);
        if (layerMask == 0 || layerMask > ALL_LAYERS) revert InvalidDemand();
        for (uint8 i = 0; i < 4; i++) {
            if (_has(layerMask, i)) delete demands[subject][i];
        }
        emit DemandWithdrawn(subject, layerMask, msg.sender);
    }

    // ------------------------------------------------------------------ records

    /// AMM §Cycle records: checks every rejection rule in the order the seed lists them, then
    /// applies the record.
    function report(address subject, CycleReport calldata r) external returns (uint64 seq) {
        Head storage h = _enrolledHead(subject);
        _authorizeWriter(subject, h, PERM_REPORT);
        LayerCheckpoint[4] storage cps = checkpoints[subject];
        _checkScope(r);
        _checkOutcome(r);
        _checkGoverningPolicy(subject, h, r);
        _checkLinkage(h, r);
        _checkUnscopedLayers(cps, r);
        _checkTimeOrdering(cps, r);
        bytes32 postRoot = computeRoot(r.postCommitments);
        _checkRestoreClaim(subject, h, r, postRoot);
        return _applyReport(subject, h, cps, r, postRoot);
    }

    /// AMM §Pulse: subject, or operator with PERM_PULSE or PERM_REPORT. Touches only the record
    /// count, the last activity signal and the planning hint.
    function pulse(address subject, uint48 nextPlannedAt) external returns (uint64 seq) {
        Head storage h = _enrolledHead(subject);
        _authorizeWriter(subject, h, PERM_PULSE | PERM_REPORT);
        uint48 now_ = clock();
        seq = ++h.recordCount;
        h.lastSignalAt = now_;
        h.nextPlannedAt = nextPlannedAt;
        emit Pulsed(subject, seq, now_, nextPlannedAt, msg.sender);
    }

    // ------------------------------------------------------------------ views

    function headOf(address subject) external view returns (Head memory) {
        return heads[subject];
    }

    function checkpointOf(address subject, uint8 layer) external view returns (LayerCheckpoint memory) {
        if (layer > 3) revert InvalidLayer(layer);
        return checkpoints[subject][layer];
    }

    function rootAt(address subject, uint64 stateVersion) external view returns (bytes32) {
        return stateRoots[subject][stateVersion];
    }

    /// @dev An unknown version answers the all-zero policy.
    function policyOf(address subject, uint32 version) external view returns (Policy memory) {
        return policies[subject][version];
    }

    function policyEffectiveFrom(address subject, uint32 version) external view returns (uint48) {
        return policyEffectiveFroms[subject][version];
    }

    function floorOf(address subject) external view returns (Floor memory) {
        return floors[subject];
    }

    function demandOf(address subject, uint8 layer) external view returns (Demand memory) {
        if (layer > 3) revert InvalidLayer(layer);
        return demands[subject][layer];
    }

    function operatorPermissions(address subject, address operator) external view returns (uint8) {
        return operatorPerms[subject][operator];
    }

    function requirementsOf(address subject) external view returns (Requirements memory) {
        return _requirements(subject);
    }

    /// AMM §Status derivation (layer status).
    function layerStatus(address subject, uint8 layer)
        public
        view
        virtual
        returns (MaintenanceStatus status, uint48 deadline, bool neverCompleted)
    {
        if (layer > 3) revert InvalidLayer(layer);
        Head storage h = heads[subject];
        if (!h.enrolled) return (MaintenanceStatus.NOT_ENROLLED, 0, false);
        Requirements memory q = _requirements(subject);
        LayerCheckpoint storage cp = checkpoints[subject][layer];
        neverCompleted = cp.lastCompletedAt == 0;
        if (!_has(q.requiredLayers, layer)) {
            status = _has(q.supportedLayers, layer) ? MaintenanceStatus.UNSCHEDULED : MaintenanceStatus.UNSUPPORTED;
            return (status, 0, neverCompleted);
        }
        // anchor: last completion, or the enrolment time for a never-completed layer.
        uint256 anchor = neverCompleted ? h.enrolledAt : cp.lastCompletedAt;
        uint256 due = anchor + q.maxInterval[layer];
        Demand storage d = demands[subject][layer];
        if (d.demandedAt != 0 && d.dueBy < due) due = d.dueBy; // an outstanding demand lowers it
        if (due > type(uint48).max) due = type(uint48).max;
        deadline = uint48(due);
        uint256 now_ = clock();
        if (now_ >= due) status = MaintenanceStatus.OVERDUE;
        else if (now_ + q.dueWindow >= due) status = MaintenanceStatus.DUE;
        else status = MaintenanceStatus.FRESH;
    }

    /// AMM §Status derivation (signal status). `silentSince` is lastSignalAt + pulseInterval, the
    /// end of the expected window (the seed: SILENT "when clock() exceeds lastSignalAt +
    /// pulseInterval"); it is 0 unless SILENT.
    function signalStatus(address subject)
        public
        view
        virtual
        returns (SignalStatus status, uint48 lastSignalAt, uint48 silentSince)
    {
        Head storage h = heads[subject];
        if (!h.enrolled) return (SignalStatus.NOT_ENROLLED, 0, 0);
        lastSignalAt = h.lastSignalAt;
        uint48 interval = _requirements(subject).pulseInterval;
        if (interval == 0) return (SignalStatus.NOT_TRACKED, lastSignalAt, 0);
        uint256 end = uint256(lastSignalAt) + interval;
        if (clock() > end) {
            return (SignalStatus.SILENT, lastSignalAt, end > type(uint48).max ? type(uint48).max : uint48(end));
        }
        return (SignalStatus.PRESENT, lastSignalAt, 0);
    }

    /// AMM §Commitment format: root = keccak256(abi.encode(TAG_STATE_ROOT, c0, c1, c2, c3)).
    function computeRoot(bytes32[4] calldata commitments) public pure returns (bytes32) {
        return keccak256(abi.encode(TAG_STATE_ROOT, commitments[0], commitments[1], commitments[2], commitments[3]));
    }

    /// AMM §Commitment format: commitment = keccak256(abi.encode(TAG_LAYER_COMMITMENT, uint8 layer,
    /// schemaHash, contentHash, salt)). Layer indices are fixed to 0..3 (AMM §Layers).
    function computeLayerCommitment(uint8 layer, bytes32 schemaHash, bytes32 contentHash, bytes32 salt)
        external
        pure
        returns (bytes32)
    {
        if (layer > 3) revert InvalidLayer(layer);
        return keccak256(abi.encode(TAG_LAYER_COMMITMENT, layer, schemaHash, contentHash, salt));
    }

    // ------------------------------------------------------------------ report rules

    /// Rule "Scope": layerMask non-empty and within 0x0F; completedLayers ⊆ layerMask; every
    /// nibble of opsMask belonging to a layer outside layerMask is zero.
    function _checkScope(CycleReport calldata r) internal pure {
        if (r.layerMask == 0 || r.layerMask > ALL_LAYERS) revert ScopeViolated();
        if (r.completedLayers & ~r.layerMask != 0) revert ScopeViolated();
        for (uint8 i = 0; i < 4; i++) {
            if (!_has(r.layerMask, i) && (r.opsMask >> (4 * i)) & 0x0F != 0) revert ScopeViolated();
        }
    }

    /// Rule "Outcome consistency". An outcome code above 3 names no outcome and is inconsistent.
    function _checkOutcome(CycleReport calldata r) internal pure {
        uint8 o = r.outcome;
        bool ok;
        if (o == uint8(Outcome.COMPLETED)) ok = r.completedLayers == r.layerMask;
        else if (o == uint8(Outcome.PARTIAL)) ok = r.completedLayers != 0 && r.completedLayers != r.layerMask;
        else if (o == uint8(Outcome.ABORTED)) ok = r.completedLayers != r.layerMask;
        else if (o == uint8(Outcome.FAILED)) ok = r.completedLayers == 0;
        if (!ok) revert OutcomeInconsistent();
    }

    /// Rule "Governing policy": policyVersion exists, was in effect at reportedStartedAt (and the
    /// next version, if any, was not yet), its supportedLayers cover layerMask and it allows trigger.
    function _checkGoverningPolicy(address subject, Head storage h, CycleReport calldata r) internal view {
        uint32 v = r.policyVersion;
        if (v == 0 || v > h.policyVersion) revert GoverningPolicyViolated();
        mapping(uint32 => uint48) storage eff = policyEffectiveFroms[subject];
        if (eff[v] > r.reportedStartedAt) revert GoverningPolicyViolated();
        if (v < h.policyVersion && r.reportedStartedAt >= eff[v + 1]) revert GoverningPolicyViolated();
        Policy storage p = policies[subject][v];
        if (r.layerMask & ~p.supportedLayers != 0) revert GoverningPolicyViolated();
        if (r.trigger > 7 || (p.allowedTriggers >> r.trigger) & 1 == 0) revert GoverningPolicyViolated();
    }

    /// Rule "Linkage": baseVersion and preRoot are the current state version and root.
    function _checkLinkage(Head storage h, CycleReport calldata r) internal view {
        if (r.baseVersion != h.stateVersion || r.preRoot != h.root) revert LinkageBroken();
    }

    /// Rule "Unscoped layers unchanged".
    function _checkUnscopedLayers(LayerCheckpoint[4] storage cps, CycleReport calldata r) internal view {
        for (uint8 i = 0; i < 4; i++) {
            if (!_has(r.layerMask, i) && r.postCommitments[i] != cps[i].commitment) revert UnscopedLayerChanged(i);
        }
    }

    /// Rule "Time ordering": reportedStartedAt <= reportedEndedAt <= clock(), and reportedEndedAt
    /// strictly after the registered completion of every completed layer.
    function _checkTimeOrdering(LayerCheckpoint[4] storage cps, CycleReport calldata r) internal view {
        if (r.reportedStartedAt > r.reportedEndedAt || r.reportedEndedAt > clock()) revert TimeOrderingViolated();
        for (uint8 i = 0; i < 4; i++) {
            if (_has(r.completedLayers, i) && r.reportedEndedAt <= cps[i].lastCompletedAt) {
                revert TimeOrderingViolated();
            }
        }
    }

    /// Rule "Restore claim": a non-zero restoresVersion is below the current state version and
    /// rootAt(restoresVersion) equals the root of postCommitments. Virtual only so that the
    /// LyingMeditationRegistry test double can skip it.
    function _checkRestoreClaim(address subject, Head storage h, CycleReport calldata r, bytes32 postRoot)
        internal
        view
        virtual
    {
        uint64 rv = r.restoresVersion;
        if (rv == 0) return;
        if (rv >= h.stateVersion || stateRoots[subject][rv] != postRoot) revert RestoreClaimInvalid();
    }

    /// AMM §Cycle records, "On acceptance the registry ...".
    function _applyReport(
        address subject,
        Head storage h,
        LayerCheckpoint[4] storage cps,
        CycleReport calldata r,
        bytes32 postRoot
    ) internal returns (uint64 seq) {
        uint64 baseVersion = h.stateVersion;
        uint64 newVersion = baseVersion;
        uint8 changed;
        for (uint8 i = 0; i < 4; i++) {
            if (r.postCommitments[i] != cps[i].commitment) changed |= uint8(1 << i);
        }
        if (changed != 0) {
            newVersion = baseVersion + 1;
            h.stateVersion = newVersion;
            h.root = postRoot;
            stateRoots[subject][newVersion] = postRoot;
            for (uint8 i = 0; i < 4; i++) {
                if (!_has(changed, i)) continue;
                emit LayerCommitmentChanged(subject, i, newVersion, cps[i].commitment, r.postCommitments[i]);
                cps[i].commitment = r.postCommitments[i];
                cps[i].lastChangedVersion = newVersion;
            }
        }
        uint48 now_ = clock();
        for (uint8 i = 0; i < 4; i++) {
            if (!_has(r.completedLayers, i)) continue;
            LayerCheckpoint storage cp = cps[i];
            cp.lastCompletedAt = r.reportedEndedAt;
            cp.lastCompletedRecordedAt = now_;
            cp.completedUnderPolicy = r.policyVersion;
            Demand storage d = demands[subject][i];
            if (d.demandedAt != 0 && d.demandedAt <= r.reportedEndedAt) delete demands[subject][i];
        }
        seq = ++h.recordCount;
        h.lastSignalAt = now_;
        h.nextPlannedAt = r.nextPlannedAt;
        emit CycleRecorded(subject, seq, baseVersion, newVersion, r, changed, now_, msg.sender);
    }

    // ------------------------------------------------------------------ internals

    /// AMM §Policy and floor: effective requirements = policy combined with the floor by minimum.
    function _requirements(address subject) internal view returns (Requirements memory q) {
        Head storage h = heads[subject];
        if (!h.enrolled) return q;
        Policy storage p = policies[subject][h.policyVersion];
        Floor storage f = floors[subject];
        q.supportedLayers = p.supportedLayers;
        q.requiredLayers = p.requiredLayers | f.requiredLayers;
        q.dueWindow = p.dueWindow;
        q.pulseInterval = _minNonZero(p.pulseInterval, f.pulseInterval);
        for (uint8 i = 0; i < 4; i++) {
            uint48 fromPolicy = _has(p.requiredLayers, i) ? p.maxInterval[i] : 0;
            uint48 fromFloor = _has(f.requiredLayers, i) ? f.maxInterval[i] : 0;
            q.maxInterval[i] = _minNonZero(fromPolicy, fromFloor);
        }
    }

    /// AMM §Policy and floor: policy validity.
    function _validatePolicy(Policy calldata p) internal pure {
        if (p.supportedLayers == 0 || p.supportedLayers > ALL_LAYERS) revert InvalidPolicy();
        if (p.requiredLayers & ~p.supportedLayers != 0) revert InvalidPolicy();
        if (p.allowedTriggers == 0 || p.allowedTriggers > 0x0F) revert InvalidPolicy();
        if (p.disclosure > 2) revert InvalidPolicy();
        for (uint8 i = 0; i < 4; i++) {
            if (_has(p.requiredLayers, i) && p.maxInterval[i] == 0) revert InvalidPolicy();
        }
    }

    /// AMM §Roles and authorization: a controller is never the subject; no controller means no
    /// rights; rights are within RIGHT_FLOOR | RIGHT_DEMAND | RIGHT_REVOKE_OPERATORS.
    function _validateControllerChoice(address subject, address controller, uint8 rights) internal pure {
        if (controller == subject || rights > ALL_RIGHTS) revert InvalidController();
        if (controller == address(0) && rights != 0) revert InvalidController();
    }

    /// The subject itself, or an operator holding one of `perms`. A controller never writes
    /// records, pulses or policy (AMM §Roles and authorization), even if it were an operator.
    function _authorizeWriter(address subject, Head storage h, uint8 perms) internal view {
        if (msg.sender == subject) return;
        if (msg.sender == h.controller || operatorPerms[subject][msg.sender] & perms == 0) {
            revert Unauthorized(msg.sender);
        }
    }

    function _requireController(Head storage h, uint8 right) internal view {
        if (msg.sender != h.controller || h.controllerRights & right == 0) revert Unauthorized(msg.sender);
    }

    function _enrolledHead(address subject) internal view returns (Head storage h) {
        h = heads[subject];
        if (!h.enrolled) revert NotEnrolled(subject);
    }

    function _has(uint8 mask, uint8 layer) internal pure returns (bool) {
        return (mask >> layer) & 1 == 1;
    }

    function _minNonZero(uint48 a, uint48 b) internal pure returns (uint48) {
        if (a == 0) return b;
        if (b == 0) return a;
        return a < b ? a : b;
    }
}
