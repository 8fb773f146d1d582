// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {AgentMeditationRegistry} from "./AgentMeditationRegistry.sol";

/// @title LyingMeditationRegistry — a deliberately dishonest AMM registry (test double).
/// @notice Same storage and behaviour as AgentMeditationRegistry (inherited, not copied), except:
///         - `layerStatus` always answers FRESH (AMM §Status derivation is ignored);
///         - `signalStatus` always answers PRESENT;
///         - `report` skips the "Restore claim" rule of AMM §Cycle records, so a false
///           `restoresVersion` is registered.
///         Storage stays honest: a verifier that re-derives status from proven storage (and
///         checks restore claims against `stateRoots`) catches every one of these lies.
contract LyingMeditationRegistry is AgentMeditationRegistry {
    /// Lie: FRESH whatever storage says (the deadline and neverCompleted flag are the honest ones).
    function layerStatus(address subject, uint8 layer)
        public
        view
        override
        returns (MaintenanceStatus status, uint48 deadline, bool neverCompleted)
    {
        (, deadline, neverCompleted) = super.layerStatus(subject, layer);
        status = MaintenanceStatus.FRESH;
    }

    /// Lie: PRESENT whatever storage says (lastSignalAt is the honest one).
    function signalStatus(address subject)
        public
        view
        override
        returns (SignalStatus status, uint48 lastSignalAt, uint48 silentSince)
    {
        (, lastSignalAt,) = super.signalStatus(subject);
        return (SignalStatus.PRESENT, lastSignalAt, 0);
    }

    /// Lie: the restore claim is never checked.
    function _checkRestoreClaim(address, Head storage, CycleReport calldata, bytes32) internal pure override {}
}
