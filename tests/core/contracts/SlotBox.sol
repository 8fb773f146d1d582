// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A contract whose storage the trust-core tests and the proof benchmark prove:
/// a few plain slots (some set, some left zero) and a mapping filled in bulk.
contract SlotBox {
    uint256 public a = 0x38;            // slot 0: set
    uint256 public b;                   // slot 1: never set (proven zero)
    uint256 public c = type(uint256).max; // slot 2: a full 32-byte value
    mapping(uint256 => uint256) public m; // slot 3: m[k] at keccak256(k . 3)

    function set(uint256 slotA, uint256 slotC) external {
        a = slotA;
        c = slotC;
    }

    /// m[start + i] = (start + i) * 7 + 1 for i < n: non-zero, distinct values.
    function fill(uint256 start, uint256 n) external {
        for (uint256 i = 0; i < n; i++) {
            m[start + i] = (start + i) * 7 + 1;
        }
    }
}
