// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.24;

/// @title AggregateBudgetMeter — ERC-8312 aggregate-budget profile for delegation trees (§5.1).
/// @notice ERC-8312 thread, aggregate-budget profile: "the meter is keyed on the root: one slot per
///         (root, period), every draw at any depth check-then-increments it, and the conserved
///         quantity is the sum itself". `spentRoot[rootId][periodIndex]` is THE ONE conserved meter;
///         per-node figures (`nodeSpent`) are attribution only and never the conserved aggregate.
///         "cap, periodLength and periodAnchor MUST NOT change after root creation" and "the period
///         index MUST be a stored key rather than derived at read time": all three are written only
///         by `createRoot`, and the period index is the second mapping key of `spentRoot`.
///         "A capped node can't delegate (else it mints an uncapped child past its own cap)".
///         "Revocation never refunds": `revoke` never touches `spentRoot`.
///         Every admitted draw emits `Drawn(rootId, nodeId, periodIndex, amount)`, so
///         Σ Drawn.amount per (rootId, periodIndex) == spentRoot[rootId][periodIndex] <= cap.
///         The meter is admin-free: no owner, no setter, no reset.
contract AggregateBudgetMeter {
    /// The root node of every tree (created with the root, its agent is the tree's top agent).
    bytes32 public constant ROOT_NODE = bytes32(0);

    struct Node {
        address agent; // the key that may draw through / delegate under this node
        bool exists;
        bool revoked;
        bytes32 parent; // parent node id (the root node is its own parent)
        uint256 nodeCap; // per-period attenuation of this node's OWN draws, 0 = none
    }

    /// @notice Slot 0. THE conserved meter: realized aggregate spend of the whole tree per
    ///         (rootId, periodIndex) (ERC-8312 §5.1, `spentRoot: rootId => periodIndex => uint256`).
    mapping(bytes32 rootId => mapping(uint256 periodIndex => uint256 spent)) public spentRoot;

    /// @notice Slot 1. Conserved per-period budget of each tree; write-once at `createRoot`.
    mapping(bytes32 rootId => uint256) public cap;

    /// @notice Slot 2. Seconds per period (0 = a single period, index 0); write-once.
    mapping(bytes32 rootId => uint64) public periodLength;

    /// @notice Slot 3. Start of period 0; write-once.
    mapping(bytes32 rootId => uint64) public periodAnchor;

    /// @notice Slot 4. The principal who created the tree (zero = no such root).
    mapping(bytes32 rootId => address) public issuer;

    /// @notice Slot 5. Nodes registered under each root.
    mapping(bytes32 rootId => mapping(bytes32 nodeId => Node)) public nodes;

    /// @notice Slot 6. Attribution only: a node's own draws per period (bounded by its nodeCap).
    ///         Never the conserved quantity.
    mapping(bytes32 rootId => mapping(bytes32 nodeId => mapping(uint256 periodIndex => uint256))) public nodeSpent;

    event RootCreated(
        bytes32 indexed rootId, address indexed issuer, address indexed agent, uint256 cap, uint64 periodLength, uint64 periodAnchor
    );
    event NodeDelegated(
        bytes32 indexed rootId, bytes32 indexed parentId, bytes32 indexed nodeId, address agent, uint256 nodeCap
    );
    /// ERC-8312 §5.1: "Drawn(rootId, nodeId, periodIndex, amount) on every admitted draw".
    event Drawn(bytes32 indexed rootId, bytes32 indexed nodeId, uint256 indexed periodIndex, uint256 amount);
    event NodeRevoked(bytes32 indexed rootId, bytes32 indexed nodeId);

    error RootExists(bytes32 rootId);
    error UnknownRoot(bytes32 rootId);
    error UnknownNode(bytes32 rootId, bytes32 nodeId);
    error NodeExists(bytes32 rootId, bytes32 nodeId);
    error InvalidRoot();
    error InvalidNode();
    error NotNodeAgent(address caller);
    error NotAuthorized(address caller);
    error PathRevoked(bytes32 rootId, bytes32 nodeId);
    error CappedNodeCannotDelegate(bytes32 rootId, bytes32 nodeId);
    error PeriodNotStarted(bytes32 rootId);
    error ZeroAmount();
    /// The node's own per-period attenuation cap would be exceeded.
    error NodeCapExceeded(bytes32 rootId, bytes32 nodeId, uint256 nodeCap, uint256 nodeSpent);
    /// Conservation: spentRoot + amount would exceed the root cap.
    error RootCapExceeded(bytes32 rootId, uint256 periodIndex, uint256 cap, uint256 spent);

    /// Creates a tree; rootId = keccak256(abi.encode(msg.sender, salt)). The root node
    /// (ROOT_NODE) belongs to `agent`.
    function createRoot(bytes32 salt, address agent, uint256 cap_, uint64 periodLength_, uint64 periodAnchor_)
        external
        returns (bytes32 rootId)
    {
        rootId = keccak256(abi.encode(msg.sender, salt));
        if (issuer[rootId] != address(0)) revert RootExists(rootId);
        if (agent == address(0) || cap_ == 0) revert InvalidRoot();
        issuer[rootId] = msg.sender;
        cap[rootId] = cap_;
        periodLength[rootId] = periodLength_;
        periodAnchor[rootId] = periodAnchor_;
        nodes[rootId][ROOT_NODE] = Node(agent, true, false, ROOT_NODE, 0);
        emit RootCreated(rootId, msg.sender, agent, cap_, periodLength_, periodAnchor_);
    }

    /// Registers `nodeId` under `parentId`. Only the parent's agent, only on an unrevoked path, and
    /// never under a capped parent. The child shares the root meter; it gets no fresh budget.
    function delegate(bytes32 rootId, bytes32 parentId, bytes32 nodeId, address agent, uint256 nodeCap) external {
        Node storage parent = _node(rootId, parentId);
        if (msg.sender != parent.agent) revert NotNodeAgent(msg.sender);
        if (!isPathActive(rootId, parentId)) revert PathRevoked(rootId, parentId);
        if (parent.nodeCap != 0) revert CappedNodeCannotDelegate(rootId, parentId);
        if (nodeId == ROOT_NODE || agent == address(0)) revert InvalidNode();
        if (nodes[rootId][nodeId].exists) revert NodeExists(rootId, nodeId);
        nodes[rootId][nodeId] = Node(agent, true, false, parentId, nodeCap);
        emit NodeDelegated(rootId, parentId, nodeId, agent, nodeCap);
    }

    /// Revokes a node (and with it every path through its subtree). The issuer or the parent's
    /// agent may revoke. Never decrements spentRoot.
    function revoke(bytes32 rootId, bytes32 nodeId) external {
        Node storage n = _node(rootId, nodeId);
        if (msg.sender != issuer[rootId] && msg.sender != nodes[rootId][n.parent].agent) {
            revert NotAuthorized(msg.sender);
        }
        n.revoked = true;
        emit NodeRevoked(rootId, nodeId);
    }

    /// Meters `amount` spent by `nodeId` in the current period: check-then-increment on the one
    /// root meter; reverts if the root sum would exceed the cap.
    function draw(bytes32 rootId, bytes32 nodeId, uint256 amount) external {
        Node storage n = _node(rootId, nodeId);
        if (msg.sender != n.agent) revert NotNodeAgent(msg.sender);
        if (!isPathActive(rootId, nodeId)) revert PathRevoked(rootId, nodeId);
        if (amount == 0) revert ZeroAmount();
        uint256 p = currentPeriod(rootId);
        uint256 own = nodeSpent[rootId][nodeId][p] + amount;
        if (n.nodeCap != 0 && own > n.nodeCap) revert NodeCapExceeded(rootId, nodeId, n.nodeCap, own);
        uint256 spent = spentRoot[rootId][p] + amount;
        if (spent > cap[rootId]) revert RootCapExceeded(rootId, p, cap[rootId], spent);
        spentRoot[rootId][p] = spent;
        nodeSpent[rootId][nodeId][p] = own;
        emit Drawn(rootId, nodeId, p, amount);
    }

    /// True iff every node from `nodeId` up to the root node is unrevoked.
    function isPathActive(bytes32 rootId, bytes32 nodeId) public view returns (bool) {
        bytes32 id = nodeId;
        while (true) {
            Node storage n = nodes[rootId][id];
            if (!n.exists || n.revoked) return false;
            if (id == ROOT_NODE) return true;
            id = n.parent;
        }
        return false; // unreachable
    }

    /// The period containing `timestamp`: 0 when periodLength == 0, else
    /// (timestamp - periodAnchor) / periodLength; reverts before the anchor.
    function periodAt(bytes32 rootId, uint256 timestamp) public view returns (uint256) {
        if (issuer[rootId] == address(0)) revert UnknownRoot(rootId);
        uint256 len = periodLength[rootId];
        if (len == 0) return 0;
        uint256 anchor = periodAnchor[rootId];
        if (timestamp < anchor) revert PeriodNotStarted(rootId);
        return (timestamp - anchor) / len;
    }

    /// A LIVE surface (derived from block.timestamp): audits use spentRoot at a named period.
    function currentPeriod(bytes32 rootId) public view returns (uint256) {
        return periodAt(rootId, block.timestamp);
    }

    /// cap - spentRoot for the named period (0 when at or over the cap).
    function remainingInPeriod(bytes32 rootId, uint256 periodIndex) public view virtual returns (uint256) {
        uint256 spent = spentRoot[rootId][periodIndex];
        uint256 c = cap[rootId];
        return spent >= c ? 0 : c - spent;
    }

    /// Remaining conserved headroom of the whole tree in the current period (live surface).
    function remainingRoot(bytes32 rootId) external view returns (uint256) {
        return remainingInPeriod(rootId, currentPeriod(rootId));
    }

    /// The conservation predicate for a named period: spentRoot[rootId][periodIndex] <= cap.
    function withinCap(bytes32 rootId, uint256 periodIndex) public view virtual returns (bool) {
        return spentRoot[rootId][periodIndex] <= cap[rootId];
    }

    function _node(bytes32 rootId, bytes32 nodeId) internal view returns (Node storage n) {
        if (issuer[rootId] == address(0)) revert UnknownRoot(rootId);
        n = nodes[rootId][nodeId];
        if (!n.exists) revert UnknownNode(rootId, nodeId);
    }
}
