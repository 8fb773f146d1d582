// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

/// @title IAgentMeditation — the Agent Meditation Mechanism registry interface.
/// @notice AMM §Interface: 23 functions whose selectors XOR to the ERC-165 id 0x9c81b550.
///         Structures are those of AMM §Policy and floor, §Layer checkpoints and state
///         versions, §Cycle records and §Interface; events are those of AMM §Events.
interface IAgentMeditation {
    /// AMM §Cycle records: whole-cycle outcome codes.
    enum Outcome { COMPLETED, PARTIAL, ABORTED, FAILED }
    /// AMM §Status derivation: per-layer maintenance status.
    enum MaintenanceStatus { NOT_ENROLLED, UNSUPPORTED, UNSCHEDULED, FRESH, DUE, OVERDUE }
    /// AMM §Status derivation: activity-signal status.
    enum SignalStatus { NOT_ENROLLED, NOT_TRACKED, PRESENT, SILENT }

    /// AMM §Policy and floor.
    struct Policy {
        bytes32 policyHash; // commitment to the off-chain policy document, may be zero
        string policyURI; // optional locator
        uint8 supportedLayers; // layers the subject maintains
        uint8 requiredLayers; // subset of supportedLayers that carry a timeliness requirement
        uint8 allowedTriggers; // bitmask over trigger codes, bit (1 << trigger)
        uint8 disclosure; // 0 commitment only, 1 summary, 2 full
        uint48 dueWindow; // warning window before a deadline
        uint48 pulseInterval; // 0 = activity signal not tracked
        uint48[4] maxInterval; // per layer, in clock units
    }

    /// AMM §Policy and floor.
    struct Floor {
        uint8 requiredLayers;
        uint48 pulseInterval;
        uint48[4] maxInterval;
    }

    /// AMM §Layer checkpoints and state versions.
    struct LayerCheckpoint {
        bytes32 commitment; // current registered state commitment
        uint48 lastCompletedAt; // reported completion time of the last completed routine, 0 = never
        uint48 lastCompletedRecordedAt; // clock value when that completion was recorded
        uint32 completedUnderPolicy; // policy version governing that completion
        uint64 lastChangedVersion; // state version at which the commitment last changed
    }

    /// AMM §Cycle records.
    struct CycleReport {
        uint64 baseVersion; // state version the cycle was computed against
        bytes32 preRoot; // state root the cycle was computed against
        bytes32[4] postCommitments; // layer commitments after the cycle, all four layers
        uint8 layerMask; // layers in scope
        uint8 completedLayers; // layers whose routine was completed, subset of layerMask
        uint16 opsMask; // bit (layer * 4 + op); op: 0 clean, 1 repair, 2 update, 3 iterate
        uint8 outcome; // 0 COMPLETED, 1 PARTIAL, 2 ABORTED, 3 FAILED
        uint8 trigger; // 0 SCHEDULED, 1 EVENT, 2 COMMANDED, 3 SELF
        uint32 policyVersion; // policy version in effect when the cycle started
        uint48 reportedStartedAt;
        uint48 reportedEndedAt; // completion time of every completed layer
        uint48 nextPlannedAt; // planning hint, 0 = none
        uint64 restoresVersion; // non-zero when the post state restores an earlier state version
        bytes32 recordHash; // commitment to the off-chain cycle record document, may be zero
        string recordURI; // optional locator
    }

    /// AMM §Interface.
    struct Head {
        bool enrolled;
        address controller;
        uint8 controllerRights;
        uint32 policyVersion;
        uint32 floorVersion;
        uint64 stateVersion;
        uint64 recordCount;
        bytes32 root;
        uint48 enrolledAt;
        uint48 lastSignalAt;
        uint48 nextPlannedAt;
    }

    /// AMM §Interface / §Demand.
    struct Demand {
        uint48 demandedAt; // 0 = none
        uint48 dueBy;
    }

    /// AMM §Interface / §Policy and floor (effective requirements).
    struct Requirements {
        uint8 supportedLayers;
        uint8 requiredLayers;
        uint48 dueWindow;
        uint48 pulseInterval;
        uint48[4] maxInterval;
    }

    // AMM §Events
    event Enrolled(
        address indexed subject, address indexed controller, uint8 controllerRights, bytes32 root, uint48 enrolledAt
    );
    event ControllerChanged(
        address indexed subject, address indexed previousController, address indexed newController, uint8 rights
    );
    event OperatorSet(address indexed subject, address indexed operator, uint8 permissions, address indexed by);
    event PolicyUpdated(
        address indexed subject, uint32 indexed version, bytes32 policyHash, uint48 effectiveFrom, address by
    );
    event FloorUpdated(address indexed subject, uint32 indexed version, uint48 effectiveFrom, address by);
    event Demanded(address indexed subject, uint8 layerMask, uint48 dueBy, address by);
    event DemandWithdrawn(address indexed subject, uint8 layerMask, address by);
    event CycleRecorded(
        address indexed subject,
        uint64 indexed seq,
        uint64 baseVersion,
        uint64 newVersion,
        CycleReport report,
        uint8 changedLayers,
        uint48 recordedAt,
        address submitter
    );
    event LayerCommitmentChanged(
        address indexed subject,
        uint8 indexed layer,
        uint64 indexed version,
        bytes32 previousCommitment,
        bytes32 newCommitment
    );
    event Pulsed(address indexed subject, uint64 indexed seq, uint48 recordedAt, uint48 nextPlannedAt, address submitter);

    function enroll(bytes32[4] calldata baseline, Policy calldata policy, address controller, uint8 controllerRights)
        external;
    function setOperator(address operator, uint8 permissions) external;
    function revokeOperator(address subject, address operator) external;
    function setController(address subject, address newController, uint8 rights) external;
    function setPolicy(address subject, Policy calldata policy) external;
    function setFloor(address subject, Floor calldata floor) external;
    function demand(address subject, uint8 layerMask, uint48 dueBy) external;
    function withdrawDemand(address subject, uint8 layerMask) external;
    function report(address subject, CycleReport calldata r) external returns (uint64 seq);
    function pulse(address subject, uint48 nextPlannedAt) external returns (uint64 seq);
    function headOf(address subject) external view returns (Head memory);
    function checkpointOf(address subject, uint8 layer) external view returns (LayerCheckpoint memory);
    function rootAt(address subject, uint64 stateVersion) external view returns (bytes32);
    function policyOf(address subject, uint32 version) external view returns (Policy memory);
    function policyEffectiveFrom(address subject, uint32 version) external view returns (uint48);
    function floorOf(address subject) external view returns (Floor memory);
    function demandOf(address subject, uint8 layer) external view returns (Demand memory);
    function operatorPermissions(address subject, address operator) external view returns (uint8);
    function requirementsOf(address subject) external view returns (Requirements memory);
    function layerStatus(address subject, uint8 layer)
        external
        view
        returns (MaintenanceStatus status, uint48 deadline, bool neverCompleted);
    function signalStatus(address subject)
        external
        view
        returns (SignalStatus status, uint48 lastSignalAt, uint48 silentSince);
    function computeRoot(bytes32[4] calldata commitments) external pure returns (bytes32);
    function computeLayerCommitment(uint8 layer, bytes32 schemaHash, bytes32 contentHash, bytes32 salt)
        external
        pure
        returns (bytes32);
}
