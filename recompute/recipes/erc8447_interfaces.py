"""ERC-8447 §16 interface identifiers and the canonical signatures they XOR (§12, §13).

The function declarations are the specification's own (§12 ISwarmRegistry, §13 IEligibility,
ISwarmAccount, IResourceAdapter), written in canonical ABI form (structs as tuples); the
identifiers are the values §16 states. Used by the pure conformance vectors."""

INTERFACES: dict[str, tuple[list[str], str]] = {
    "ISwarmRegistry": (
        [
            "supportsInterface(bytes4)",
            "specHashOf(((bytes32,uint32,uint32,address,bool)[],(bytes32,bytes32,bytes32,bytes32,"
            "uint8,uint8,uint64,bytes32)[],(uint8,address,bytes32)[],uint8,uint8,uint32,uint32,"
            "uint64,uint64,uint64,uint64,uint64,uint64,bytes32))",
            "form(((bytes32,uint32,uint32,address,bool)[],(bytes32,bytes32,bytes32,bytes32,uint8,"
            "uint8,uint64,bytes32)[],(uint8,address,bytes32)[],uint8,uint8,uint32,uint32,uint64,"
            "uint64,uint64,uint64,uint64,uint64,bytes32),bytes32,bytes32,string,bytes32,(bytes32,"
            "bytes32),(bytes32,uint8,address,(uint256,address,uint256),uint32))",
            "activate(bytes32)",
            "abort(bytes32)",
            "suspend(bytes32)",
            "resume(bytes32)",
            "enforceRoster(bytes32)",
            "enforceInactivity(bytes32)",
            "enforceDeadline(bytes32)",
            "advance(bytes32,address[],bytes32[])",
            "conclude(bytes32,uint8,bytes32)",
            "dissolve(bytes32)",
            "succeed(bytes32,((bytes32,uint32,uint32,address,bool)[],(bytes32,bytes32,bytes32,"
            "bytes32,uint8,uint8,uint64,bytes32)[],(uint8,address,bytes32)[],uint8,uint8,uint32,"
            "uint32,uint64,uint64,uint64,uint64,uint64,uint64,bytes32),bytes32,bytes32,string,"
            "(bytes32,uint8,address,(uint256,address,uint256),uint32),address[],bytes32[])",
            "amend(bytes32,bytes32,string,bytes32,bytes32,bool)",
            "setCharterURI(bytes32,string)",
            "transferAuthority(bytes32,uint8,address)",
            "setAccount(bytes32,address)",
            "applyToJoin(bytes32,bytes32,bytes32)",
            "join(bytes32,bytes32,bytes32)",
            "joinBySig(bytes32,address,bytes32,bytes32,uint256,bytes)",
            "acceptCharter(bytes32,bytes32)",
            "admit(bytes32,address,bytes32)",
            "leave(bytes32)",
            "suspendMember(bytes32,address)",
            "reinstate(bytes32,address)",
            "remove(bytes32,address)",
            "challenge(bytes32,address)",
            "expel(bytes32,address)",
            "substitute(bytes32,address,address)",
            "recordContribution(bytes32,bytes32,string)",
            "recordMilestone(bytes32,uint32,uint8,bytes32)",
            "attach(bytes32,(bytes32,uint256,address,uint256,bytes32,bytes32,string,bytes32,address))",
            "detach(bytes32,bytes32)",
            "registerTerm(bytes32,bytes32,string)",
            "getSwarm(bytes32)",
            "specOf(bytes32)",
            "phaseSpecOf(bytes32,uint32)",
            "roleSpecOf(bytes32,bytes32)",
            "authorityOf(bytes32,uint8)",
            "isAuthorized(bytes32,uint8,address)",
            "objectiveOf(bytes32)",
            "milestoneOf(bytes32,uint32)",
            "getMember(bytes32,address)",
            "memberStatus(bytes32,address)",
            "memberCount(bytes32)",
            "roleCount(bytes32,bytes32)",
            "rosterMet(bytes32)",
            "acceptedCharterOf(bytes32,address)",
            "seatEpochOf(bytes32,address)",
            "getResource(bytes32,bytes32)",
            "resourceCount(bytes32)",
            "resourceAt(bytes32,uint256)",
            "resourceAdapterOf(bytes32)",
            "termURI(bytes32,bytes32)",
            "isTerm(bytes32,bytes32)",
            "hardDeadlineOf(bytes32)",
            "inputOpen(bytes32)",
            "joinDigest(bytes32,address,bytes32,bytes32,uint256)",
            "clock()",
            "CLOCK_MODE()",
        ],
        "0x085203a4",
    ),
    "IEligibility": (
        [
            "isEligible(bytes32,bytes32,address)",
        ],
        "0xd0ede3d8",
    ),
    "ISwarmAccount": (
        [
            "swarmId()",
            "registry()",
            "recoveryAddress()",
        ],
        "0x25e98353",
    ),
    "IResourceAdapter": (
        [
            "kind()",
            "exists(uint256,address,uint256)",
            "controllerOf(uint256,address,uint256)",
            "digestOf(uint256,address,uint256)",
        ],
        "0x8e20b298",
    ),
}
