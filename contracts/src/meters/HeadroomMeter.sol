// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

/// @title HeadroomMeter — ERC-8312 turnover-cursor ("headroom") shape.
/// @notice ERC-8312 thread: "cumulativeTurnover <= maxCumulativeTurnover", read through the
///         recipe layout `struct:2:2:1` = cursor values in the mapping at slot 2, aggregate
///         (cumulativeTurnover) at member +2, cap (maxCumulativeTurnover) at member +1; i.e. for
///         an envelope id the struct base is keccak256(envelopeId ‖ uint256(2)).
contract HeadroomMeter {
    struct CursorValues {
        uint256 portfolioValue; // +0
        uint256 maxCumulativeTurnover; // +1  the cap
        uint256 cumulativeTurnover; // +2  the aggregate
        address principal; // +3 (offset 0)  who opened the envelope
        bool active; // +3 (offset 20)
        address operator; // +4  the only account that may record turnover
    }

    /// @notice Slot 0. Number of envelopes opened (keeps `cursorValues` at slot 2).
    uint256 public envelopeCount;

    /// @notice Slot 1. Number of admitted turnover records across all envelopes.
    uint256 public turnoverCount;

    /// @notice Slot 2. Cursor values per envelope id (ERC-8312 thread, `struct:2:2:1`).
    mapping(bytes32 envelopeId => CursorValues) public cursorValues;

    event EnvelopeOpened(
        bytes32 indexed envelopeId, address indexed principal, address indexed operator, uint256 maxCumulativeTurnover
    );
    event TurnoverRecorded(bytes32 indexed envelopeId, uint256 amount, uint256 cumulativeTurnover);
    event EnvelopeClosed(bytes32 indexed envelopeId);

    error EnvelopeExists(bytes32 envelopeId);
    error EnvelopeInactive(bytes32 envelopeId);
    error NotOperator(address caller);
    error NotPrincipal(address caller);
    error ZeroAmount();
    /// cumulativeTurnover + amount would exceed maxCumulativeTurnover.
    error TurnoverCapExceeded(bytes32 envelopeId, uint256 maxCumulativeTurnover, uint256 cumulativeTurnover);

    function openEnvelope(bytes32 envelopeId, address operator, uint256 portfolioValue, uint256 maxCumulativeTurnover)
        external
    {
        CursorValues storage c = cursorValues[envelopeId];
        if (c.principal != address(0)) revert EnvelopeExists(envelopeId);
        c.portfolioValue = portfolioValue;
        c.maxCumulativeTurnover = maxCumulativeTurnover;
        c.principal = msg.sender;
        c.active = true;
        c.operator = operator;
        envelopeCount += 1;
        emit EnvelopeOpened(envelopeId, msg.sender, operator, maxCumulativeTurnover);
    }

    /// Check-then-increment of the turnover aggregate against its cap.
    function recordTurnover(bytes32 envelopeId, uint256 amount) external {
        CursorValues storage c = cursorValues[envelopeId];
        if (!c.active) revert EnvelopeInactive(envelopeId);
        if (msg.sender != c.operator) revert NotOperator(msg.sender);
        if (amount == 0) revert ZeroAmount();
        uint256 next = c.cumulativeTurnover + amount;
        if (next > c.maxCumulativeTurnover) revert TurnoverCapExceeded(envelopeId, c.maxCumulativeTurnover, next);
        c.cumulativeTurnover = next;
        turnoverCount += 1;
        emit TurnoverRecorded(envelopeId, amount, next);
    }

    function closeEnvelope(bytes32 envelopeId) external {
        CursorValues storage c = cursorValues[envelopeId];
        if (msg.sender != c.principal) revert NotPrincipal(msg.sender);
        c.active = false;
        emit EnvelopeClosed(envelopeId);
    }

    /// The accessor form the thread recomputed against (`cursorSummary(envelopeId)`).
    function cursorSummary(bytes32 envelopeId)
        external
        view
        returns (
            uint256 portfolioValue,
            uint256 cumulativeTurnover,
            uint256 maxCumulativeTurnover,
            uint256 remainingTurnover,
            bool active
        )
    {
        CursorValues storage c = cursorValues[envelopeId];
        portfolioValue = c.portfolioValue;
        cumulativeTurnover = c.cumulativeTurnover;
        maxCumulativeTurnover = c.maxCumulativeTurnover;
        remainingTurnover = _remaining(c);
        active = c.active;
    }

    function remaining(bytes32 envelopeId) external view returns (uint256) {
        return _remaining(cursorValues[envelopeId]);
    }

    /// The headroom bound: cumulativeTurnover <= maxCumulativeTurnover.
    function withinCap(bytes32 envelopeId) external view returns (bool) {
        CursorValues storage c = cursorValues[envelopeId];
        return c.cumulativeTurnover <= c.maxCumulativeTurnover;
    }

    function _remaining(CursorValues storage c) internal view returns (uint256) {
        return c.cumulativeTurnover >= c.maxCumulativeTurnover ? 0 : c.maxCumulativeTurnover - c.cumulativeTurnover;
    }
}
