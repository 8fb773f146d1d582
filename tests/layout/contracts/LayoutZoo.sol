// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

// A zoo of every storage shape the layout engine must read, each with a getter the tests use
// as the oracle (eth_call at the pinned block). Values are set in the constructor and in
// setup() and are deliberately awkward: negative numbers, packed neighbours, 31/32-byte
// strings, invalid UTF-8, elements that straddle slots.

type LayoutZooPrice is int64;

interface ILayoutZooPing {
    function ping(uint256 x) external view returns (uint256);
}

contract LayoutZooBase {
    // Inherited variables come first; four of them share slot 0.
    uint8 public baseSmall;
    bool public baseFlag;
    address public baseOwner;
    uint16 public baseMid;
}

contract LayoutZoo is LayoutZooBase, ILayoutZooPing {
    enum Phase { Idle, Open, Closed, Dissolved }

    struct Packed { uint8 a; int16 b; bool c; address d; uint64 e; } // exactly one slot
    struct Checkpoint { uint48 startedAt; uint48 lastCompletedAt; int128 delta; bytes32 root; }
    struct Member { Phase status; uint64 joinedAt; address account; string note; uint256[] scores; }
    struct Swarm {
        uint64 id;
        Phase phase;
        mapping(address => Member) members;
        address[] roster;
        Checkpoint[2] history;
        string name;
    }
    struct Inner { uint32 x; int32 y; }
    struct Outer { Inner inner; uint8 tag; Inner[3] trio; bytes blob; }

    // --- value types, packed ---------------------------------------------------------------
    int8 public neg8;
    int128 public neg128;
    uint64 public u64;
    bool public flag;
    Phase public phase;
    bytes4 public sel4;
    address public owner;
    bytes32 public b32;
    bytes20 public b20;
    ILayoutZooPing public zooRef;
    function(uint256) external view returns (uint256) public fnVar;
    function(uint256) internal pure returns (uint256) internal internalFn;
    uint256 public big;
    LayoutZooPrice public price;
    uint128 public u128Max;

    // --- bytes and string ------------------------------------------------------------------
    string public shortStr;
    string public str31;
    string public str32;
    string public longStr;
    string public emptyStr;
    bytes public shortBytes;
    bytes public longBytes;
    string internal badUtf8;

    // --- static arrays ---------------------------------------------------------------------
    uint8[5] internal smallArr;
    uint64[6] internal u64Arr;
    uint16[3][2] internal grid;
    Packed[2] internal packedPair;
    bytes4[9] internal selectors;

    // --- dynamic arrays --------------------------------------------------------------------
    uint256[] internal nums;
    uint8[] internal bytesLike;
    string[] internal names;
    uint32[][] internal jagged;
    Packed[] internal packedList;
    int128[] internal signedList;

    // --- mappings, one per key kind --------------------------------------------------------
    mapping(address => uint256) public balances;
    mapping(uint256 => address) public byUint;
    mapping(int8 => int256) public byInt8;
    mapping(int128 => uint256) public byInt128;
    mapping(bytes32 => bool) public byB32;
    mapping(bytes4 => uint16) public byB4;
    mapping(bool => uint8) public byBool;
    mapping(string => uint256) public byString;
    mapping(bytes => string) public byBytes;
    mapping(Phase => uint32) public byPhase;
    mapping(ILayoutZooPing => bool) public byContract;
    mapping(LayoutZooPrice => uint256) public byPrice;
    mapping(uint16 => uint256) public byU16;

    // --- nested mappings and chains --------------------------------------------------------
    mapping(address => mapping(uint256 => uint64)) public allowance;
    mapping(bytes32 => mapping(uint256 => bool)) public spentRoot;
    mapping(address => Checkpoint[4]) public checkpoints;
    mapping(address => Packed[]) public packedLists;
    mapping(uint256 => Swarm) internal swarms;
    mapping(uint256 => mapping(address => Outer[])) internal deep;
    mapping(string => string[]) internal tags;
    Outer internal outer;

    address internal constant ALICE = 0x00000000000000000000000000000000000A11cE;
    address internal constant BOB = 0xb0B0000000000000000000000000000000000B0B;

    constructor() {
        baseSmall = 0xAB;
        baseFlag = true;
        baseOwner = 0xC0FfEE0000000000000000000000000000c0fFEe;
        baseMid = 0xBEEF;

        neg8 = -5;
        neg128 = -123456789012345678901234567890;
        u64 = type(uint64).max - 1;
        flag = true;
        phase = Phase.Closed;
        sel4 = 0xdeadbeef;
        owner = msg.sender;
        b32 = keccak256("b32");
        b20 = bytes20(keccak256("b20"));
        zooRef = ILayoutZooPing(address(this));
        internalFn = _double;
        big = 2 ** 255 + 12345;
        price = LayoutZooPrice.wrap(-42);
        u128Max = type(uint128).max;

        shortStr = "hello";
        str31 = "abcdefghijklmnopqrstuvwxyz01234";
        str32 = "abcdefghijklmnopqrstuvwxyz012345";
        longStr = unicode"A long string of more than sixty-four bytes, with UTF-8: é ü ß — and padding....";
        shortBytes = hex"0102ff";
        longBytes = hex"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445";
        bytes memory bad = hex"41ff42c3";
        badUtf8 = string(bad);

        smallArr = [uint8(1), 2, 3, 250, 255];
        u64Arr = [uint64(1), 2 ** 40, 3, type(uint64).max, 5, 6];
        grid = [[uint16(1), 2, 3], [uint16(400), 500, 65535]];
        packedPair[0] = Packed(7, -300, true, ALICE, 2 ** 63);
        packedPair[1] = Packed(255, 32767, false, BOB, 1);
        for (uint256 i = 0; i < 9; i++) selectors[i] = bytes4(uint32(0x11111111 * (i + 1)));
    }

    function setup() external {
        fnVar = this.ping;
        nums.push(1);
        nums.push(2 ** 200);
        nums.push(3);
        for (uint256 i = 0; i < 40; i++) bytesLike.push(uint8(i * 7));
        names.push("alice");
        names.push("a name that is longer than thirty-two bytes");
        names.push("");
        jagged.push([uint32(1), 2]);
        jagged.push();
        jagged.push([uint32(3), 4, 5, 6, 7, 8, 9, 10, 4294967295]);
        packedList.push(Packed(1, -1, true, ALICE, 11));
        packedList.push(Packed(2, -32768, false, BOB, 22));
        packedList.push(Packed(3, 5, true, address(this), 33));
        signedList.push(-1);
        signedList.push(5);
        signedList.push(type(int128).min);

        balances[ALICE] = 1000;
        byUint[42] = BOB;
        byInt8[-128] = -1;
        byInt8[7] = 7;
        byInt128[-2] = 2;
        byB32[keccak256("root")] = true;
        byB4[0xcafebabe] = 513;
        byBool[true] = 9;
        byBool[false] = 8;
        byString["hello"] = 5;
        byString[""] = 6;
        byString["a string key that is longer than thirty-two bytes"] = 7;
        byBytes[hex"beef"] = "beef value";
        byBytes[hex""] = "empty key";
        byPhase[Phase.Dissolved] = 33;
        byContract[ILayoutZooPing(address(this))] = true;
        byPrice[LayoutZooPrice.wrap(-7)] = 77;
        byU16[65535] = 16;

        allowance[ALICE][3] = 333;
        allowance[BOB][type(uint256).max] = 444;
        spentRoot[keccak256("root")][2026] = true;

        checkpoints[ALICE][2] = Checkpoint(1767225600, 1767312000, -99, keccak256("cp2"));
        checkpoints[ALICE][3] = Checkpoint(1, 2, type(int128).max, bytes32(0));

        packedLists[BOB].push(Packed(9, -9, true, ALICE, 99));
        packedLists[BOB].push(Packed(10, -10, false, BOB, 100));

        Swarm storage s = swarms[7];
        s.id = 7;
        s.phase = Phase.Open;
        s.roster.push(ALICE);
        s.roster.push(BOB);
        s.history[1] = Checkpoint(10, 20, -30, keccak256("h1"));
        s.name = "swarm seven";
        Member storage m = s.members[ALICE];
        m.status = Phase.Open;
        m.joinedAt = 1767225601;
        m.account = ALICE;
        m.note = "a member note that is longer than thirty-two bytes";
        m.scores.push(10);
        m.scores.push(20);
        m.scores.push(30);
        s.members[BOB].status = Phase.Dissolved;
        s.members[BOB].note = "bob";

        Outer storage o = deep[1][BOB].push();
        o.inner = Inner(5, -6);
        o.tag = 200;
        o.trio[2] = Inner(7, -8);
        o.blob = hex"00ff00ff";
        deep[1][BOB].push().tag = 1;

        tags["red"].push("a");
        tags["red"].push("a tag value that is longer than thirty-two bytes");

        outer.inner = Inner(type(uint32).max, type(int32).min);
        outer.tag = 17;
        outer.trio[0] = Inner(1, -1);
        outer.trio[1] = Inner(2, -2);
        outer.blob = "a blob long enough to need two data slots: 0123456789abcdef";
    }

    function ping(uint256 x) external pure returns (uint256) {
        return x + 1;
    }

    function _double(uint256 x) internal pure returns (uint256) {
        return 2 * x;
    }

    // --- getters the public ones cannot give ----------------------------------------------
    function fnParts() external view returns (address, bytes4) {
        return (fnVar.address, fnVar.selector);
    }

    function callInternalFn(uint256 x) external view returns (uint256) {
        return internalFn(x);
    }

    function badUtf8Bytes() external view returns (bytes memory) {
        return bytes(badUtf8);
    }

    function getSmallArr() external view returns (uint8[5] memory) { return smallArr; }
    function getU64Arr() external view returns (uint64[6] memory) { return u64Arr; }
    function getGrid() external view returns (uint16[3][2] memory) { return grid; }
    function getPackedPair() external view returns (Packed[2] memory) { return packedPair; }
    function getSelectors() external view returns (bytes4[9] memory) { return selectors; }
    function getNums() external view returns (uint256[] memory) { return nums; }
    function getBytesLike() external view returns (uint8[] memory) { return bytesLike; }
    function getNames() external view returns (string[] memory) { return names; }
    function getJagged() external view returns (uint32[][] memory) { return jagged; }
    function getPackedList() external view returns (Packed[] memory) { return packedList; }
    function getSignedList() external view returns (int128[] memory) { return signedList; }
    function getOuter() external view returns (Outer memory) { return outer; }

    function packedListsLength(address a) external view returns (uint256) {
        return packedLists[a].length;
    }

    function swarmHead(uint256 id) external view returns (uint64, Phase, string memory) {
        Swarm storage s = swarms[id];
        return (s.id, s.phase, s.name);
    }

    function swarmRoster(uint256 id) external view returns (address[] memory) {
        return swarms[id].roster;
    }

    function swarmHistory(uint256 id) external view returns (Checkpoint[2] memory) {
        return swarms[id].history;
    }

    function swarmMember(uint256 id, address a) external view returns (Member memory) {
        return swarms[id].members[a];
    }

    function deepItems(uint256 k, address a) external view returns (Outer[] memory) {
        return deep[k][a];
    }

    function tagsOf(string calldata k) external view returns (string[] memory) {
        return tags[k];
    }
}
