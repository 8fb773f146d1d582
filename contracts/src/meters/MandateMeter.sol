// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

/// @title MandateMeter — ERC-8312 thread, the regulated-mandate counter shape (ERC-8226 RAMS).
/// @notice "A RAMS mandate is keyed (agent, principal) and holds one authoritative cumulativeUsed
///         slot"; "cumulativeUsed and maxCumulativeValue are public storage, so aggregate <= cap
///         verifies from the state root". Counting and gating are fused: `recordExecution` applies
///         the same checks as `canExecute` before advancing the counter.
contract MandateMeter {
    struct Mandate {
        uint256 cumulativeUsed; // +0  the aggregate
        uint256 maxCumulativeValue; // +1  the cap (write-once at grant)
        bool active; // +2 (offset 0)  false after revocation
        bool granted; // +2 (offset 1)  the mandate was ever granted
    }

    /// @notice Slot 0. Mandate per (agent, principal): base = keccak256(principal ‖
    ///         keccak256(agent ‖ 0)); cumulativeUsed at base+0, maxCumulativeValue at base+1.
    mapping(address agent => mapping(address principal => Mandate)) public mandates;

    event MandateGranted(address indexed agent, address indexed principal, uint256 maxCumulativeValue);
    event MandateRevoked(address indexed agent, address indexed principal);
    event ExecutionRecorded(address indexed agent, address indexed principal, uint256 value, uint256 cumulativeUsed);

    error MandateExists(address agent, address principal);
    error MandateInactive(address agent, address principal);
    error ZeroValue();
    /// cumulativeUsed + value would exceed maxCumulativeValue.
    error MandateCapExceeded(address agent, address principal, uint256 maxCumulativeValue, uint256 cumulativeUsed);

    /// The principal (msg.sender) grants `agent` a mandate bounded by `maxCumulativeValue`. A
    /// mandate is granted once, so its counter can never be reset by a re-grant.
    function grant(address agent, uint256 maxCumulativeValue) external {
        Mandate storage m = mandates[agent][msg.sender];
        if (m.granted) revert MandateExists(agent, msg.sender);
        m.maxCumulativeValue = maxCumulativeValue;
        m.active = true;
        m.granted = true;
        emit MandateGranted(agent, msg.sender, maxCumulativeValue);
    }

    function revoke(address agent) external {
        Mandate storage m = mandates[agent][msg.sender];
        if (!m.active) revert MandateInactive(agent, msg.sender);
        m.active = false;
        emit MandateRevoked(agent, msg.sender);
    }

    /// The agent (msg.sender) uses `value` of its mandate from `principal`.
    function recordExecution(address principal, uint256 value) external {
        Mandate storage m = mandates[msg.sender][principal];
        if (!m.active) revert MandateInactive(msg.sender, principal);
        if (value == 0) revert ZeroValue();
        uint256 next = m.cumulativeUsed + value;
        if (next > m.maxCumulativeValue) revert MandateCapExceeded(msg.sender, principal, m.maxCumulativeValue, next);
        m.cumulativeUsed = next;
        emit ExecutionRecorded(msg.sender, principal, value, next);
    }

    function canExecute(address agent, address principal, uint256 value) external view returns (bool) {
        Mandate storage m = mandates[agent][principal];
        return m.active && value != 0 && m.cumulativeUsed + value <= m.maxCumulativeValue;
    }

    function remaining(address agent, address principal) external view returns (uint256) {
        Mandate storage m = mandates[agent][principal];
        return m.cumulativeUsed >= m.maxCumulativeValue ? 0 : m.maxCumulativeValue - m.cumulativeUsed;
    }

    /// The mandate bound: cumulativeUsed <= maxCumulativeValue.
    function withinCap(address agent, address principal) external view returns (bool) {
        Mandate storage m = mandates[agent][principal];
        return m.cumulativeUsed <= m.maxCumulativeValue;
    }
}
