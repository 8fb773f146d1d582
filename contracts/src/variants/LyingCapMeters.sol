// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

import {ReservedConfirmedMeter} from "../meters/ReservedConfirmedMeter.sol";
import {HeadroomMeter} from "../meters/HeadroomMeter.sol";
import {MandateMeter} from "../meters/MandateMeter.sol";

/// @title Lying variants of the three ERC-8312 cursor meters (test doubles), one skipped check each.
/// @notice ERC-8312 thread: "aggregate ≤ cap, provable from public state". Each variant inherits its
///         honest meter (same storage, same views) and adds one write path that is the honest one
///         minus its cap check, so that a cursor can stand above its cap: the state no honest meter
///         can reach (the honest write reverts with CapExceeded / TurnoverCapExceeded /
///         MandateCapExceeded). A verifier that reads the aggregate and the cap from storage
///         calls the over-cap cursor VERIFIED-BAD.

/// `reserve` without `aggregate > cap` (every other check kept).
contract LyingReservedConfirmedMeter is ReservedConfirmedMeter {
    function reserveUnchecked(bytes32 key, uint256 amount) external returns (bytes32 reservationId) {
        address principal = principalOf[key];
        if (principal == address(0)) revert UnknownKey(key);
        if (msg.sender != principal && !isReserver[key][msg.sender]) revert NotAllowedReserver(msg.sender);
        if (amount == 0) revert ZeroAmount();
        reserved[key] += amount;
        reservationId = keccak256(abi.encode(key, ++reservationCount));
        reservations[reservationId] = Reservation(key, msg.sender, true, amount);
        emit Reserved(key, reservationId, msg.sender, amount);
    }
}

/// `recordTurnover` without `next > maxCumulativeTurnover` (every other check kept).
contract LyingHeadroomMeter is HeadroomMeter {
    function recordTurnoverUnchecked(bytes32 envelopeId, uint256 amount) external {
        CursorValues storage c = cursorValues[envelopeId];
        if (!c.active) revert EnvelopeInactive(envelopeId);
        if (msg.sender != c.operator) revert NotOperator(msg.sender);
        if (amount == 0) revert ZeroAmount();
        uint256 next = c.cumulativeTurnover + amount;
        c.cumulativeTurnover = next;
        turnoverCount += 1;
        emit TurnoverRecorded(envelopeId, amount, next);
    }
}

/// `recordExecution` without `next > maxCumulativeValue` (every other check kept).
contract LyingMandateMeter is MandateMeter {
    function recordExecutionUnchecked(address principal, uint256 value) external {
        Mandate storage m = mandates[msg.sender][principal];
        if (!m.active) revert MandateInactive(msg.sender, principal);
        if (value == 0) revert ZeroValue();
        uint256 next = m.cumulativeUsed + value;
        m.cumulativeUsed = next;
        emit ExecutionRecorded(msg.sender, principal, value, next);
    }
}
