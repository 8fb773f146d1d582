// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

/// @title ReservedConfirmedMeter — ERC-8312 cursor in the "StatefulBound" shape.
/// @notice ERC-8312 thread (cap conservation, "reserved + confirmed <= cap on a single cursor like
///         the StatefulBound reference"): per key, `reserved` (slot 0) and `confirmed` (slot 1)
///         are the two halves of the aggregate; the invariant is reserved + confirmed <= cap.
///         Reservation binding (ERC-8312 thread, "confirm/cancel bound to the reserver, no third
///         party can move it"): only the account that made a reservation may confirm or cancel it.
contract ReservedConfirmedMeter {
    struct Reservation {
        bytes32 key; // the cursor the reservation draws on
        address reserver; // the only account that may confirm or cancel it
        bool open; // true until confirmed or cancelled
        uint256 amount;
    }

    /// @notice Slot 0. Amount currently reserved (held, not yet settled) per key.
    ///         ERC-8312 thread: the "reserved" half of the StatefulBound aggregate.
    mapping(bytes32 key => uint256) public reserved;

    /// @notice Slot 1. Amount confirmed (settled) per key; the "confirmed" half of the aggregate.
    mapping(bytes32 key => uint256) public confirmed;

    /// @notice Slot 2. The per-key cap, written once by `openKey` (a literal cap for the
    ///         cap-conservation recipe).
    mapping(bytes32 key => uint256) public cap;

    /// @notice Slot 3. The principal who opened the key (zero = key not opened).
    mapping(bytes32 key => address) public principalOf;

    /// @notice Slot 4. Accounts the principal allows to reserve against the key.
    mapping(bytes32 key => mapping(address account => bool)) public isReserver;

    /// @notice Slot 5. Every reservation by id.
    mapping(bytes32 reservationId => Reservation) public reservations;

    /// @notice Slot 6. Number of reservations made (the id nonce).
    uint256 public reservationCount;

    event KeyOpened(bytes32 indexed key, address indexed principal, uint256 cap);
    event ReserverSet(bytes32 indexed key, address indexed account, bool allowed);
    event Reserved(bytes32 indexed key, bytes32 indexed reservationId, address indexed reserver, uint256 amount);
    event Confirmed(bytes32 indexed key, bytes32 indexed reservationId, uint256 amount);
    event Cancelled(bytes32 indexed key, bytes32 indexed reservationId, uint256 amount);

    error KeyExists(bytes32 key);
    error UnknownKey(bytes32 key);
    error NotPrincipal(address caller);
    error NotAllowedReserver(address caller);
    error ZeroAmount();
    /// reserved + confirmed + amount would exceed cap.
    error CapExceeded(bytes32 key, uint256 cap, uint256 aggregate);
    error ReservationNotOpen(bytes32 reservationId);
    /// Reservation binding: the caller did not make the reservation.
    error NotReserver(address caller);

    function openKey(bytes32 key, uint256 cap_) external {
        if (principalOf[key] != address(0)) revert KeyExists(key);
        principalOf[key] = msg.sender;
        cap[key] = cap_;
        emit KeyOpened(key, msg.sender, cap_);
    }

    function setReserver(bytes32 key, address account, bool allowed) external {
        if (principalOf[key] == address(0)) revert UnknownKey(key);
        if (msg.sender != principalOf[key]) revert NotPrincipal(msg.sender);
        isReserver[key][account] = allowed;
        emit ReserverSet(key, account, allowed);
    }

    /// Holds `amount` of the key's headroom; check-then-increment keeps reserved + confirmed <= cap.
    function reserve(bytes32 key, uint256 amount) external returns (bytes32 reservationId) {
        address principal = principalOf[key];
        if (principal == address(0)) revert UnknownKey(key);
        if (msg.sender != principal && !isReserver[key][msg.sender]) revert NotAllowedReserver(msg.sender);
        if (amount == 0) revert ZeroAmount();
        uint256 aggregate = reserved[key] + confirmed[key] + amount;
        if (aggregate > cap[key]) revert CapExceeded(key, cap[key], aggregate);
        reserved[key] += amount;
        reservationId = keccak256(abi.encode(key, ++reservationCount));
        reservations[reservationId] = Reservation(key, msg.sender, true, amount);
        emit Reserved(key, reservationId, msg.sender, amount);
    }

    /// Settles a reservation: moves its amount from reserved to confirmed (the sum is unchanged).
    function confirm(bytes32 reservationId) external {
        Reservation storage r = _ownOpenReservation(reservationId);
        r.open = false;
        reserved[r.key] -= r.amount;
        confirmed[r.key] += r.amount;
        emit Confirmed(r.key, reservationId, r.amount);
    }

    /// Releases a reservation's headroom.
    function cancel(bytes32 reservationId) external {
        Reservation storage r = _ownOpenReservation(reservationId);
        r.open = false;
        reserved[r.key] -= r.amount;
        emit Cancelled(r.key, reservationId, r.amount);
    }

    /// cap - (reserved + confirmed), 0 when the aggregate is at or above the cap.
    function remaining(bytes32 key) external view returns (uint256) {
        uint256 aggregate = reserved[key] + confirmed[key];
        return aggregate >= cap[key] ? 0 : cap[key] - aggregate;
    }

    /// The cap-conservation predicate: reserved + confirmed <= cap.
    function withinCap(bytes32 key) external view returns (bool) {
        return reserved[key] + confirmed[key] <= cap[key];
    }

    function _ownOpenReservation(bytes32 reservationId) internal view returns (Reservation storage r) {
        r = reservations[reservationId];
        if (!r.open) revert ReservationNotOpen(reservationId);
        if (msg.sender != r.reserver) revert NotReserver(msg.sender);
    }
}
