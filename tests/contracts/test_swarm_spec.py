# ruff: noqa: E501  (the §12/§13 declarations below are copied verbatim from the ERC-8447 text)
"""ERC-8447 §3 (spec validation and storage), §7.1 (vocabulary), §15 (clock) and §16 (ids).

Every §3.2 rule is broken once on an otherwise valid spec and must revert with its §18 error;
`specHash` is recomputed with eth_abi; the §16 interface identifiers are recomputed from the
§12/§13 signatures written out below (copied from the specification text).
"""

from __future__ import annotations

import dataclasses

import pytest
from eth_abi import encode
from eth_hash.auto import keccak

from recompute.devnet.contracts import load_artifact
from tests.contracts.swarm_helpers import (
    A_ADDRESS,
    A_ANY_MEMBER,
    A_INITIATOR,
    A_NONE,
    A_ROLE,
    AUTHORITY_ACT,
    BASE_TERMS,
    BIDDER,
    BOTH,
    CHARTER_1,
    CLOSED,
    COMMITMENT_1,
    COORDINATOR,
    DIMENSIONS,
    DP,
    EXCLUSIVE,
    FORMING,
    GATED,
    INHERIT,
    INITIATOR_ROLE,
    LEADER,
    MILESTONED,
    OPEN,
    ORIGIN_INITIATOR,
    PARTITIONED,
    RECRUIT,
    REDUNDANT,
    SELECT,
    SHARED,
    STANDING,
    TERMINAL,
    WORKER,
    ZERO32,
    ZERO_ADDR,
    Spec,
    authorities,
    kid,
    objective,
    phase,
    role,
    swarm_fixtures,
    swarm_record,
)

MAX63 = 2**63 - 1


chain, isolated = swarm_fixtures()


def accts(chain):
    a = chain.accounts
    return a[0], a[1], a[2]  # initiator, authority holder, judge


def base(chain) -> Spec:
    _, auth, _ = accts(chain)
    return Spec(
        roles=[role(WORKER, 2, 3, self_join=True), role(COORDINATOR, 1, 1)],
        phases=[phase()],
        authorities=authorities(auth),
    )


def form_fn(chain, spec: Spec, obj=None, parent=ZERO32):
    _, _, judge = accts(chain)
    return chain.registry.functions.form(spec.tuple(), CHARTER_1, COMMITMENT_1, "ipfs://pack",
                                         parent, (ORIGIN_INITIATOR, ZERO32), obj or objective(judge))


def refused(chain, spec: Spec, error: str, obj=None):
    chain.fails(form_fn(chain, spec, obj), accts(chain)[0], error)


def accepted(chain, spec: Spec, obj=None):
    reply = chain.eth_call(form_fn(chain, spec, obj), accts(chain)[0])
    assert "error" not in reply, reply


# --------------------------------------------------------------------------- §3.2, one rule each


def test_base_spec_is_valid(chain):
    accepted(chain, base(chain))


def test_roles_length_1_to_32(chain):
    refused(chain, dataclasses.replace(base(chain), roles=[]), "SAI_RolesOutOfRange")
    many = [role(kid(f"r{i}")) for i in range(33)]
    refused(chain, dataclasses.replace(base(chain), roles=many, min_members=1, max_members=0),
            "SAI_RolesOutOfRange")
    accepted(chain, dataclasses.replace(base(chain), roles=many[:32], min_members=1,
                                        max_members=0))


def test_role_id_nonzero(chain):
    spec = base(chain)
    spec.roles[1] = role(ZERO32, 1, 1)
    refused(chain, spec, "SAI_ZeroRole")


def test_role_ids_distinct(chain):
    spec = base(chain)
    spec.roles[1] = role(WORKER, 1, 1)
    refused(chain, spec, "SAI_DuplicateRole")


def test_role_min_le_max(chain):
    spec = base(chain)
    spec.roles[0] = role(WORKER, 4, 3)
    refused(chain, spec, "SAI_RoleBounds")
    spec.roles[0] = role(WORKER, 4, 0)  # max 0 = unbounded: any min
    accepted(chain, spec)


def test_eligibility_module_has_code(chain):
    spec = base(chain)
    spec.roles[0] = role(WORKER, 2, 3, eligibility=chain.accounts[7])
    refused(chain, spec, "SAI_ModuleNotContract")
    spec.roles[0] = role(WORKER, 2, 3, eligibility=chain.allowlist.address)
    accepted(chain, spec)


def test_phases_length_1_to_32(chain):
    refused(chain, dataclasses.replace(base(chain), phases=[]), "SAI_PhasesOutOfRange")
    many = [phase()] + [phase(admission=INHERIT) for _ in range(32)]
    refused(chain, dataclasses.replace(base(chain), phases=many), "SAI_PhasesOutOfRange")
    accepted(chain, dataclasses.replace(base(chain), phases=many[:32]))


def test_phase0_must_recruit(chain):
    for admission in (INHERIT, SELECT):
        refused(chain, dataclasses.replace(base(chain), phases=[phase(admission=admission)]),
                "SAI_Phase0MustRecruit")


def test_phase_terms_registered_in_their_dimension(chain):
    unknown = kid("sai.payoff.unregistered")
    for bad in (phase(payoff=unknown), phase(topology=unknown), phase(coordination=unknown),
                phase(payoff=LEADER), phase(topology=SHARED), phase(coordination=PARTITIONED)):
        refused(chain, dataclasses.replace(base(chain), phases=[bad]), "SAI_UnknownTerm")


def test_sixteen_authorities(chain):
    spec = base(chain)
    refused(chain, dataclasses.replace(spec, authorities=spec.authorities[:15]),
            "SAI_AuthoritiesLength")
    refused(chain, dataclasses.replace(spec, authorities=spec.authorities + [spec.authorities[0]]),
            "SAI_AuthoritiesLength")


def test_authority_shapes(chain):
    holder = accts(chain)[1]
    bad = [
        (A_ADDRESS, ZERO_ADDR, ZERO32),
        (A_ADDRESS, holder, WORKER),
        (A_ROLE, holder, WORKER),
        (A_NONE, holder, ZERO32),
        (A_NONE, ZERO_ADDR, WORKER),
        (A_ANY_MEMBER, ZERO_ADDR, WORKER),
        (A_INITIATOR, holder, ZERO32),
    ]
    for shape in bad:
        spec = dataclasses.replace(base(chain), authorities=authorities(holder, SUSPEND=shape))
        refused(chain, spec, "SAI_AuthorityShape")
    for good in [(A_ROLE, ZERO_ADDR, WORKER), (A_ANY_MEMBER, ZERO_ADDR, ZERO32),
                 (A_INITIATOR, ZERO_ADDR, ZERO32), (A_NONE, ZERO_ADDR, ZERO32)]:
        accepted(chain, dataclasses.replace(base(chain),
                                            authorities=authorities(holder, SUSPEND=good)))


def test_role_authority_names_a_spec_role(chain):
    holder = accts(chain)[1]
    spec = dataclasses.replace(base(chain),
                               authorities=authorities(holder, REMOVE=(A_ROLE, ZERO_ADDR, BIDDER)))
    refused(chain, spec, "SAI_UnknownRoleAuthority")


def test_role_authority_not_initiator_role(chain):
    holder = accts(chain)[1]
    spec = base(chain)
    spec.roles.append(role(INITIATOR_ROLE, 0, 0))
    spec.authorities = authorities(holder, REMOVE=(A_ROLE, ZERO_ADDR, INITIATOR_ROLE))
    refused(chain, spec, "SAI_InitiatorRoleAuthority")


def test_initiator_role_min_zero(chain):
    spec = base(chain)
    spec.roles.append(role(INITIATOR_ROLE, 1, 0))
    refused(chain, spec, "SAI_InitiatorRoleMin")
    spec.roles[-1] = role(INITIATOR_ROLE, 0, 0)
    accepted(chain, spec)


def test_min_members_at_least_one(chain):
    refused(chain, dataclasses.replace(base(chain), min_members=0), "SAI_MinMembers")


def test_max_members_zero_or_at_least_min(chain):
    refused(chain, dataclasses.replace(base(chain), min_members=3, max_members=2),
            "SAI_MaxMembers")
    accepted(chain, dataclasses.replace(base(chain), min_members=3, max_members=0))
    accepted(chain, dataclasses.replace(base(chain), min_members=3, max_members=3))


def test_activation_authority_required_unless_roster_met(chain):
    holder = accts(chain)[1]
    none = authorities(holder, ACTIVATE=(A_NONE, ZERO_ADDR, ZERO32))
    for activation in (AUTHORITY_ACT, BOTH):
        refused(chain, dataclasses.replace(base(chain), activation=activation, authorities=none),
                "SAI_ActivationAuthority")
    accepted(chain, dataclasses.replace(base(chain), authorities=none))


def test_recruitment_window_positive(chain):
    refused(chain, dataclasses.replace(base(chain), recruitment_window=0), "SAI_RecruitmentWindow")


def test_liveness_fallback_required(chain):
    refused(chain, dataclasses.replace(base(chain), max_duration=0, inactivity_timeout=0),
            "SAI_NoLivenessFallback")
    accepted(chain, dataclasses.replace(base(chain), max_duration=0, inactivity_timeout=1))
    accepted(chain, dataclasses.replace(base(chain), max_duration=1, inactivity_timeout=0))


def test_conclusion_reachable(chain):
    holder = accts(chain)[1]
    spec = dataclasses.replace(base(chain),
                               authorities=authorities(holder, CONCLUDE=(A_NONE, ZERO_ADDR, ZERO32)))
    refused(chain, spec, "SAI_NoConclusionPath", obj=objective(ZERO_ADDR))
    accepted(chain, spec)  # the acceptance authority alone is a conclusion path (§8)


def test_advance_authority_for_several_phases(chain):
    holder = accts(chain)[1]
    spec = dataclasses.replace(base(chain), phases=[phase(), phase(admission=INHERIT)],
                               authorities=authorities(holder, ADVANCE=(A_NONE, ZERO_ADDR, ZERO32)))
    refused(chain, spec, "SAI_AdvanceAuthority")
    accepted(chain, dataclasses.replace(spec, phases=[phase()]))


def test_gated_recruit_phase_needs_address_or_initiator_admitter(chain):
    holder = accts(chain)[1]
    phases = [phase(), phase(boundary=GATED, admission=RECRUIT)]
    for admitter in [(A_ROLE, ZERO_ADDR, COORDINATOR), (A_ANY_MEMBER, ZERO_ADDR, ZERO32)]:
        spec = dataclasses.replace(base(chain), phases=phases,
                                   authorities=authorities(holder, ADMIT=admitter))
        refused(chain, spec, "SAI_RecruitAdmitter")
        # the same admitter is fine when the later recruiting phase is OPEN, or phase 0 only
        accepted(chain, dataclasses.replace(spec, phases=[phase(), phase(boundary=OPEN)]))
    accepted(chain, dataclasses.replace(base(chain), phases=phases, authorities=authorities(
        holder, ADMIT=(A_INITIATOR, ZERO_ADDR, ZERO32))))


def test_durations_fit_63_bits(chain):
    fields = ["recruitment_window", "max_duration", "inactivity_timeout", "ineligible_grace",
              "settlement_window", "amendment_exit_window"]
    for name in fields:
        refused(chain, dataclasses.replace(base(chain), **{name: MAX63 + 1}), "SAI_DurationTooLong")
        accepted(chain, dataclasses.replace(base(chain), **{name: MAX63}))
    refused(chain, dataclasses.replace(base(chain), phases=[phase(input_window=MAX63 + 1)]),
            "SAI_DurationTooLong")


def test_unimplemented_profile_rejected(chain):
    # §3.2: a deployment MUST reject a spec requiring a profile it does not implement (§6.6).
    for mode in (1, 2):
        refused(chain, dataclasses.replace(base(chain), contributions=mode),
                "SAI_ProfileUnsupported")


def test_objective_rules(chain):
    judge = accts(chain)[2]
    refused(chain, base(chain), "SAI_ZeroObjective", obj=objective(judge, objective_hash=ZERO32))
    refused(chain, base(chain), "SAI_MilestoneCount", obj=objective(judge, MILESTONED, 0))
    refused(chain, base(chain), "SAI_MilestoneCount", obj=objective(judge, STANDING, 2))
    accepted(chain, base(chain), obj=objective(judge, MILESTONED, 2))


def test_initiator_role_module_checks_msg_sender(chain):
    initiator = accts(chain)[0]
    spec = base(chain)
    spec.roles.append(role(INITIATOR_ROLE, 0, 0, eligibility=chain.allowlist.address))
    refused(chain, spec, "SAI_Ineligible")
    chain.tx(chain.allowlist.functions.setAllowed(initiator, True), initiator)
    accepted(chain, spec)


def test_parent_refused_nesting_not_implemented(chain):
    fn = form_fn(chain, base(chain), parent=kid("some parent"))
    chain.fails(fn, accts(chain)[0], "SAI_ParentUnavailable")


# --------------------------------------------------------------------------- storage and hash


def two_phase_tender(chain) -> Spec:
    holder = accts(chain)[1]
    return Spec(
        roles=[role(BIDDER, 2, 0, chain.allowlist.address, True),
               role(WORKER, 1, 2, chain.catching.address, False),
               role(COORDINATOR, 1, 1)],
        phases=[phase("bidding", EXCLUSIVE, REDUNDANT, LEADER, OPEN, RECRUIT, 172_800,
                      kid("bidding descriptor")),
                phase("execution", SHARED, PARTITIONED, LEADER, CLOSED, SELECT, 0,
                      kid("execution descriptor"))],
        authorities=authorities(holder, REMOVE=(A_ROLE, ZERO_ADDR, COORDINATOR),
                                RESUME=(A_ANY_MEMBER, ZERO_ADDR, ZERO32),
                                DISSOLVE=(A_NONE, ZERO_ADDR, ZERO32),
                                SUCCEED=(A_INITIATOR, ZERO_ADDR, ZERO32)),
        activation=BOTH, min_members=3, max_members=0, recruitment_window=86_400,
        max_duration=2_592_000, inactivity_timeout=0, ineligible_grace=3_600,
        settlement_window=604_800, amendment_exit_window=259_200,
        descriptor=kid("tender descriptor"))


@pytest.mark.parametrize("which", ["minimal", "tender"])
def test_spec_hash_matches_eth_abi(chain, which):
    spec = base(chain) if which == "minimal" else two_phase_tender(chain)
    expected = keccak(encode(
        ["((bytes32,uint32,uint32,address,bool)[],(bytes32,bytes32,bytes32,bytes32,uint8,uint8,"
         "uint64,bytes32)[],(uint8,address,bytes32)[],uint8,uint8,uint32,uint32,uint64,uint64,"
         "uint64,uint64,uint64,uint64,bytes32)"], [spec.tuple()]))
    assert spec.spec_hash() == expected
    assert chain.registry.functions.specHashOf(spec.tuple()).call() == expected
    swarm_id = chain.form(spec, accts(chain)[2], accts(chain)[0])
    assert swarm_record(chain, swarm_id)["specHash"] == expected


def test_spec_stored_in_full_and_read_back(chain):
    initiator, holder, judge = accts(chain)
    spec = two_phase_tender(chain)
    swarm_id = chain.form(spec, judge, initiator)
    reg = chain.registry.functions
    stored = reg.specOf(swarm_id).call()
    assert [list(x) for x in stored[0]] == [list(r) for r in spec.roles]
    assert [list(x) for x in stored[1]] == [list(p) for p in spec.phases]
    assert [list(x) for x in stored[2]] == [list(a) for a in spec.authorities]
    assert list(stored[3:]) == list(spec.tuple()[3:])
    for r in spec.roles:
        assert list(reg.roleSpecOf(swarm_id, r[0]).call()) == list(r)
    for i, p in enumerate(spec.phases):
        assert list(reg.phaseSpecOf(swarm_id, i).call()) == list(p)
    for name, index in DP.items():
        assert list(reg.authorityOf(swarm_id, index).call()) == list(spec.authorities[index]), name
    chain.fails(reg.roleSpecOf(swarm_id, kid("sai.role.observer")), initiator, "SAI_UnknownRole")
    chain.fails(reg.phaseSpecOf(swarm_id, 2), initiator, "SAI_PhasesOutOfRange")


def test_form_records_identity_origin_and_versions(chain):
    initiator, _, judge = accts(chain)
    spec = base(chain)
    receipt_id = chain.form(spec, judge, initiator)
    chain_id = chain.w3.eth.chain_id
    # §12: unique id; this implementation's derivation (chain id, registry address, counter n=1)
    expected = keccak(encode(["uint256", "address", "uint256"],
                             [chain_id, chain.registry.address, 1]))
    assert receipt_id == expected
    rec = swarm_record(chain, expected)
    assert rec["state"] == FORMING
    assert (rec["charterVersion"], rec["commitmentVersion"]) == (1, 1)
    assert rec["revision"] == 1  # form is the first state-changing call (§5.4)
    assert rec["formedAt"] == rec["lastActivity"] == chain.now
    assert rec["initiator"] == initiator
    assert (rec["charterHash"], rec["commitmentHash"]) == (CHARTER_1, COMMITMENT_1)
    assert (rec["originKind"], rec["originRef"]) == (ORIGIN_INITIATOR, ZERO32)
    assert rec["charterURI"] == "ipfs://pack"
    obj = chain.registry.functions.objectiveOf(expected).call()
    assert obj[1] == TERMINAL and obj[2] == judge and obj[6] == 1  # kind, authority, version 1


def test_unknown_swarm(chain):
    chain.fails(chain.registry.functions.activate(kid("nope")), accts(chain)[0], "SAI_UnknownSwarm")


# --------------------------------------------------------------------------- §7.1 vocabulary


def test_base_terms_registered_at_deployment(chain):
    reg = chain.registry.functions
    for dim, names in BASE_TERMS.items():
        for name in names:
            term = kid(f"sai.{dim}.{name}")
            assert reg.isTerm(DIMENSIONS[dim], term).call(), (dim, name)
            for other in DIMENSIONS:
                if other != dim:
                    assert not reg.isTerm(DIMENSIONS[other], term).call()
    assert not reg.isTerm(DIMENSIONS["payoff"], kid("sai.payoff.tournament")).call()


def test_register_term(chain):
    sender = chain.accounts[5]
    reg = chain.registry.functions
    term = kid("sai.payoff.tournament")
    receipt = chain.tx(reg.registerTerm(DIMENSIONS["payoff"], term, "ipfs://tournament"), sender)
    (ev,) = chain.events(receipt, "TermRegistered")
    assert ev["args"]["term"] == term and ev["args"]["by"] == sender
    assert reg.isTerm(DIMENSIONS["payoff"], term).call()
    assert reg.termURI(DIMENSIONS["payoff"], term).call() == "ipfs://tournament"
    # write-once, non-zero, one of three dimensions
    chain.fails(reg.registerTerm(DIMENSIONS["payoff"], term, "x"), sender, "SAI_TermExists")
    chain.fails(reg.registerTerm(DIMENSIONS["payoff"], SHARED, "x"), sender, "SAI_TermExists")
    chain.fails(reg.registerTerm(DIMENSIONS["payoff"], ZERO32, "x"), sender, "SAI_ZeroTerm")
    chain.fails(reg.registerTerm(kid("sai.dimension.boundary"), term, "x"), sender,
                "SAI_UnknownDimension")
    # a spec may now use it
    accepted(chain, dataclasses.replace(base(chain), phases=[phase(payoff=term)]))


# --------------------------------------------------------------------------- §15, §16

STRUCTS = {
    "SAITypes.SwarmSpec": "((bytes32,uint32,uint32,address,bool)[],(bytes32,bytes32,bytes32,"
                          "bytes32,uint8,uint8,uint64,bytes32)[],(uint8,address,bytes32)[],uint8,"
                          "uint8,uint32,uint32,uint64,uint64,uint64,uint64,uint64,uint64,bytes32)",
    "SAITypes.Origin": "(bytes32,bytes32)",
    "SAITypes.ObjectiveInput": "(bytes32,uint8,address,(uint256,address,uint256),uint32)",
    "SAITypes.ResourceInput": "(bytes32,uint256,address,uint256,bytes32,bytes32,string,bytes32,"
                              "address)",
    "SAITypes.DecisionPoint": "uint8",
    "SAITypes.OutcomeType": "uint8",
    "SAITypes.MilestoneStatus": "uint8",
}

# §12 ISwarmRegistry, the function declarations as the specification writes them (parameters only).
I_SWARM_REGISTRY = """
supportsInterface(bytes4 interfaceId)
specHashOf(SAITypes.SwarmSpec calldata spec)
form(SAITypes.SwarmSpec calldata spec, bytes32 charterHash, bytes32 commitmentHash, string calldata charterURI, bytes32 parentId, SAITypes.Origin calldata origin, SAITypes.ObjectiveInput calldata objective)
activate(bytes32 swarmId)
abort(bytes32 swarmId)
suspend(bytes32 swarmId)
resume(bytes32 swarmId)
enforceRoster(bytes32 swarmId)
enforceInactivity(bytes32 swarmId)
enforceDeadline(bytes32 swarmId)
advance(bytes32 swarmId, address[] calldata carried, bytes32[] calldata roles)
conclude(bytes32 swarmId, SAITypes.OutcomeType outcome, bytes32 resultHash)
dissolve(bytes32 swarmId)
succeed(bytes32 swarmId, SAITypes.SwarmSpec calldata newSpec, bytes32 charterHash, bytes32 commitmentHash, string calldata charterURI, SAITypes.ObjectiveInput calldata objective, address[] calldata carried, bytes32[] calldata roles)
amend(bytes32 swarmId, bytes32 charterHash, string calldata charterURI, bytes32 objectiveHash, bytes32 commitmentHash, bool material)
setCharterURI(bytes32 swarmId, string calldata charterURI)
transferAuthority(bytes32 swarmId, SAITypes.DecisionPoint decisionPoint, address newAuthority)
setAccount(bytes32 swarmId, address account)
applyToJoin(bytes32 swarmId, bytes32 roleId, bytes32 charterHash)
join(bytes32 swarmId, bytes32 roleId, bytes32 charterHash)
joinBySig(bytes32 swarmId, address account, bytes32 roleId, bytes32 charterHash, uint256 deadline, bytes calldata signature)
acceptCharter(bytes32 swarmId, bytes32 charterHash)
admit(bytes32 swarmId, address account, bytes32 roleId)
leave(bytes32 swarmId)
suspendMember(bytes32 swarmId, address account)
reinstate(bytes32 swarmId, address account)
remove(bytes32 swarmId, address account)
challenge(bytes32 swarmId, address account)
expel(bytes32 swarmId, address account)
substitute(bytes32 swarmId, address previous, address next)
recordContribution(bytes32 swarmId, bytes32 contributionHash, string calldata uri)
recordMilestone(bytes32 swarmId, uint32 index, SAITypes.MilestoneStatus status, bytes32 resultHash)
attach(bytes32 swarmId, SAITypes.ResourceInput calldata resource)
detach(bytes32 swarmId, bytes32 resourceId)
registerTerm(bytes32 dimension, bytes32 term, string calldata uri)
getSwarm(bytes32 swarmId)
specOf(bytes32 swarmId)
phaseSpecOf(bytes32 swarmId, uint32 phase)
roleSpecOf(bytes32 swarmId, bytes32 roleId)
authorityOf(bytes32 swarmId, SAITypes.DecisionPoint decisionPoint)
isAuthorized(bytes32 swarmId, SAITypes.DecisionPoint decisionPoint, address account)
objectiveOf(bytes32 swarmId)
milestoneOf(bytes32 swarmId, uint32 index)
getMember(bytes32 swarmId, address account)
memberStatus(bytes32 swarmId, address account)
memberCount(bytes32 swarmId)
roleCount(bytes32 swarmId, bytes32 roleId)
rosterMet(bytes32 swarmId)
acceptedCharterOf(bytes32 swarmId, address account)
seatEpochOf(bytes32 swarmId, address account)
getResource(bytes32 swarmId, bytes32 resourceId)
resourceCount(bytes32 swarmId)
resourceAt(bytes32 swarmId, uint256 index)
resourceAdapterOf(bytes32 kind)
termURI(bytes32 dimension, bytes32 term)
isTerm(bytes32 dimension, bytes32 term)
hardDeadlineOf(bytes32 swarmId)
inputOpen(bytes32 swarmId)
joinDigest(bytes32 swarmId, address account, bytes32 roleId, bytes32 charterHash, uint256 deadline)
clock()
CLOCK_MODE()
"""

# §13 auxiliary interfaces.
I_ELIGIBILITY = "isEligible(bytes32 swarmId, bytes32 roleId, address account)"
I_SWARM_ACCOUNT = "swarmId()\nregistry()\nrecoveryAddress()"
I_RESOURCE_ADAPTER = """
kind()
exists(uint256 chainId, address target, uint256 id)
controllerOf(uint256 chainId, address target, uint256 id)
digestOf(uint256 chainId, address target, uint256 id)
"""


def canonical(declaration: str) -> str:
    name, params = declaration.strip().split("(", 1)
    types = [p.split()[0] for p in params.rstrip(")").split(",") if p.strip()]
    return f"{name}({','.join(STRUCTS.get(t, t) for t in types)})"


def interface_id(declarations: str) -> str:
    value = 0
    for line in declarations.strip().splitlines():
        value ^= int.from_bytes(keccak(canonical(line).encode())[:4], "big")
    return f"0x{value:08x}"


def test_interface_identifiers_of_section_16():
    assert len(I_SWARM_REGISTRY.strip().splitlines()) == 61
    assert interface_id(I_SWARM_REGISTRY) == "0x085203a4"
    assert interface_id(I_ELIGIBILITY) == "0xd0ede3d8"
    assert interface_id(I_SWARM_ACCOUNT) == "0x25e98353"
    assert interface_id(I_RESOURCE_ADAPTER) == "0x8e20b298"


def test_supports_interface_claims_only_what_is_implemented(chain):
    reg = chain.registry.functions
    assert reg.supportsInterface(bytes.fromhex("01ffc9a7")).call()
    erc6372 = interface_id("clock()\nCLOCK_MODE()")
    assert reg.supportsInterface(bytes.fromhex(erc6372[2:])).call()
    # joinBySig, contributions, resources, succession and setAccount are out of scope:
    assert not reg.supportsInterface(bytes.fromhex("085203a4")).call()
    assert not reg.supportsInterface(bytes.fromhex("ffffffff")).call()
    assert chain.allowlist.functions.supportsInterface(bytes.fromhex("d0ede3d8")).call()


def test_clock_is_timestamp(chain):
    reg = chain.registry.functions
    assert reg.CLOCK_MODE().call() == "mode=timestamp"
    assert chain.view(reg.clock(), at=chain.now + 77) == chain.now + 77


def test_swarm_ids_are_unique_per_formation(chain):
    initiator, _, judge = accts(chain)
    a = chain.form(base(chain), judge, initiator)
    b = chain.form(base(chain), judge, initiator)
    assert a != b
    assert chain.registry.functions.swarmCount().call() == 2
    assert swarm_record(chain, b)["state"] == FORMING


def test_every_deployed_contract_fits_eip170(chain):
    for contract in (chain.registry, chain.allowlist, chain.catching):
        assert 0 < len(chain.w3.eth.get_code(contract.address)) <= 24_576
    for name in ("SwarmRegistry", "LyingSwarmRegistry", "SpecLib", "MembershipLib"):
        runtime = load_artifact(name)["deployedBytecode"].removeprefix("0x")
        assert 0 < len(runtime) // 2 <= 24_576, name
