"""Proven reads of the swarm registries at every named ``swarm.*`` moment.

For every swarm formed by the moment's block, recompute proves its record, spec roles,
members and roster counters (storage proofs against the anchored block, decoded through the
bundled ``swarm-registry`` layouts) and re-derives what the views report — the lazy member
status (§5.2 SWARM_DISSOLVED, §7.2 NOT_CARRIED), the live counters and §6.5 rosterMet — then
compares with the registry's views at that block. On the honest registry every view agrees;
on the lying registry, at ``swarm.roster-lies``, exactly ``rosterMet`` and one
``memberStatus`` disagree with proven storage.
"""

from __future__ import annotations

import pytest
from web3 import Web3

from recompute.core.anchor import anchor_block
from recompute.core.prover import prove_account
from recompute.devnet.contracts import load_artifact
from recompute.layout import load_layout, read_all
from recompute.sources.live import LiveSource

# ERC-8447 §5.1 / §6.1 enum orders
DISSOLVED = 5
M_NONE, M_CANDIDATE, M_ACTIVE, M_SUSPENDED, M_EXITED = range(5)
X_NONE, X_LEFT, X_NOT_CARRIED, X_DISSOLVED = 0, 1, 4, 6

LAYOUTS = {"SwarmRegistry": "swarm-registry", "LyingSwarmRegistry": "swarm-registry-lying"}


def lazy_status(member: dict, record: dict) -> tuple[int, int]:
    """§5.2 / §7.2 (contracts/src/swarm/README.md): the stored status, unless the seat is live
    and either was not carried into the live roster generation (carriedPhase < rosterPhase:
    EXITED(NOT_CARRIED), which came first) or the swarm is DISSOLVED (EXITED(SWARM_DISSOLVED))."""
    status = member["status"]
    if status in (M_NONE, M_EXITED):
        return status, member["exitReason"]
    if member["carriedPhase"] < record["rosterPhase"]:
        return M_EXITED, X_NOT_CARRIED
    if record["state"] == DISSOLVED:
        return M_EXITED, X_DISSOLVED
    return status, X_NONE


def _plain(value):
    """A view's value in the reader's representation (bytes, lowercase addresses)."""
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, str) and value.startswith("0x") and len(value) == 42:
        return value.lower()
    return value


class Proven:
    """Everything one registry's proofs say about its swarms at one anchored block."""

    def __init__(self, block, address: str, layout: str, swarms: dict):
        self.swarms = swarms
        paths, self.index = [], {}
        for name, s in swarms.items():
            base = f"swarmData[{s['id']}]"
            wanted = {("record",): f"{base}.record", ("minMembers",): f"{base}.spec.minMembers",
                      ("roles",): f"{base}.spec.roles"}
            for m in s["members"]:
                wanted[("member", m["address"])] = f"{base}.members[{m['address']}]"
            for g in range(len(s["phases"])):
                wanted[("roster", g)] = f"{base}.rosterCounts[{g}]"
                for role in s["roles"]:
                    wanted[("role", g, role["id"])] = f"{base}.roleCounts[{g}][{role['id']}]"
            for key, path in wanted.items():
                self.index[(name, *key)] = len(paths)
                paths.append(path)
        account = bytes.fromhex(address[2:])
        self.results = read_all(
            load_layout(layout), paths,
            lambda slots: dict(prove_account(block, account, sorted(slots)).storage))

    def get(self, name: str, *key):
        return self.results[self.index[(name, *key)]].value

    # ---- derivations a verifier makes from proven storage
    def status(self, name: str, account: str) -> tuple[int, int]:
        return lazy_status(self.get(name, "member", account), self.get(name, "record"))

    def member_count(self, name: str) -> tuple[int, int, int]:
        record = self.get(name, "record")
        if record["state"] == DISSOLVED:
            return (0, 0, 0)
        c = self.get(name, "roster", record["rosterPhase"])
        return (c["active"], c["suspended"], c["candidates"])

    def role_count(self, name: str, role_id: str) -> tuple[int, int]:
        record = self.get(name, "record")
        if record["state"] == DISSOLVED:
            return (0, 0)
        c = self.get(name, "role", record["rosterPhase"], role_id)
        return (c["active"], c["suspended"])

    def roster_met(self, name: str) -> bool:
        """§6.5 over the live generation, ACTIVE seats only, minima from the proven spec."""
        record = self.get(name, "record")
        if record["state"] == DISSOLVED:
            return False
        gen = record["rosterPhase"]
        if self.get(name, "roster", gen)["active"] < self.get(name, "minMembers"):
            return False
        return all(self.get(name, "role", gen, "0x" + r["roleId"].hex())["active"] >= r["min"]
                   for r in self.get(name, "roles"))


def _struct(fn, block) -> dict:
    names = [c["name"] for c in fn.abi["outputs"][0]["components"]]
    return {n: _plain(v) for n, v in zip(names, fn.call(block_identifier=block), strict=True)}


def disagreements(proven: Proven, registry, block: int) -> list[tuple]:
    """Every view of every proven swarm whose answer differs from the proven derivation."""
    out = []
    for name, s in proven.swarms.items():
        sid = bytes.fromhex(s["id"][2:])
        f = registry.functions
        record = proven.get(name, "record")
        if _struct(f.getSwarm(sid), block) != record:
            out.append((name, "getSwarm"))
        if f.revisionOf(sid).call(block_identifier=block) != record["revision"]:
            out.append((name, "revisionOf"))
        if tuple(f.memberCount(sid).call(block_identifier=block)) != proven.member_count(name):
            out.append((name, "memberCount"))
        for role in s["roles"]:
            rid = bytes.fromhex(role["id"][2:])
            view = tuple(f.roleCount(sid, rid).call(block_identifier=block))
            if view != proven.role_count(name, role["id"]):
                out.append((name, "roleCount", role["name"]))
        if f.rosterMet(sid).call(block_identifier=block) is not proven.roster_met(name):
            out.append((name, "rosterMet"))
        for m in s["members"]:
            account = m["address"]
            derived = proven.status(name, account)
            if tuple(f.memberStatus(sid, account).call(block_identifier=block)) != derived:
                out.append((name, "memberStatus", account))
            raw = dict(proven.get(name, "member", account))
            raw["status"], raw["exitReason"] = derived
            if _struct(f.getMember(sid, account), block) != raw:
                out.append((name, "getMember", account))
    return out


@pytest.fixture(scope="module")
def setting(devnet):
    node, manifest = devnet
    w3 = Web3(Web3.HTTPProvider(node.url))
    registries = {name: w3.eth.contract(address=manifest["contracts"][name],
                                        abi=load_artifact(name)["abi"])
                  for name in LAYOUTS}
    return node, manifest, registries


def prove_at(setting, label: str) -> dict[str, tuple[Proven, object, int]]:
    """Per registry: the proofs of every swarm formed at or before moment ``label``."""
    node, manifest, registries = setting
    moment = manifest["moments"][label]
    block = anchor_block([LiveSource(node.url)], block_hash=bytes.fromhex(moment["hash"][2:]))
    assert block.number == moment["number"]
    out = {}
    for registry_name, registry in registries.items():
        swarms = {n: s for n, s in manifest["swarm"]["swarms"].items()
                  if s["registry"] == registry_name and s["formed_block"] <= moment["number"]}
        if swarms:
            proven = Proven(block, manifest["contracts"][registry_name],
                            LAYOUTS[registry_name], swarms)
            out[registry_name] = (proven, registry, moment["number"])
    return out


def _swarm_moments():
    # the labels are fixed by the script; test_history_swarm checks the manifest has exactly
    # these (so a new moment without an expectation fails there)
    return ["swarm.formed", "swarm.candidates", "swarm.activated", "swarm.amended",
            "swarm.concluded", "swarm.dissolved", "swarm.suspended", "swarm.reinstated",
            "swarm.resumed", "swarm.expelled", "swarm.select-advanced", "swarm.substituted",
            "swarm.inherit-advanced", "swarm.inherit-completed", "swarm.lying-activated",
            "swarm.roster-lies", "swarm.tender-dissolved", "swarm.recruit-advanced",
            "swarm.recruit-dissolved", "swarm.roles-short", "swarm.quorum-met",
            "swarm.total-short", "swarm.aborted"]


def test_the_list_of_moments_is_the_manifests(setting):
    _, manifest, _ = setting
    assert sorted(_swarm_moments()) == sorted(manifest["swarm"]["moments"])


@pytest.mark.parametrize("label", _swarm_moments())
def test_proven_storage_matches_views(setting, label):
    _, manifest, _ = setting
    proofs = prove_at(setting, label)
    assert manifest["swarm"]["moments"][label]["swarm"] in {
        n for proven, _, _ in proofs.values() for n in proven.swarms}
    for registry_name, (proven, registry, number) in proofs.items():
        found = disagreements(proven, registry, number)
        moments = _swarm_moments()  # in chain order: the caches lie from roster-lies on
        if registry_name == "LyingSwarmRegistry" and \
                moments.index(label) >= moments.index("swarm.roster-lies"):
            a4 = manifest["accounts"][4]
            assert found == [("lying", "rosterMet"), ("lying", "memberStatus", a4)]
        else:
            assert found == [], (registry_name, found)


def test_roster_lies_in_storage(setting):
    """The script: a4 left, so storage holds one worker (min 2) and a4 EXITED(LEFT); the views
    answer rosterMet = true and a4 ACTIVE from the owner-set caches, which are in storage too."""
    _, manifest, _ = setting
    proven, registry, number = prove_at(setting, "swarm.roster-lies")["LyingSwarmRegistry"]
    a4 = manifest["accounts"][4]
    worker = manifest["swarm"]["roles"]["worker"]
    assert proven.get("lying", "role", 0, worker)["active"] == 1
    assert proven.roster_met("lying") is False
    assert proven.status("lying", a4) == (M_EXITED, X_LEFT)
    sid = bytes.fromhex(manifest["swarm"]["swarms"]["lying"]["id"][2:])
    assert registry.functions.rosterMet(sid).call(block_identifier=number) is True
    assert tuple(registry.functions.memberStatus(sid, a4).call(block_identifier=number)) == (
        M_ACTIVE, X_NONE)
    node, _, _ = setting
    moment = manifest["moments"]["swarm.roster-lies"]
    block = anchor_block([LiveSource(node.url)], block_hash=bytes.fromhex(moment["hash"][2:]))
    sid_hex = manifest["swarm"]["swarms"]["lying"]["id"]
    cache = read_all(
        load_layout("swarm-registry-lying"),
        [f"rosterMetCached[{sid_hex}]", f"rosterMetCache[{sid_hex}]",
         f"memberStatusCache[{sid_hex}][{a4}]"],
        lambda slots: dict(prove_account(block, bytes.fromhex(registry.address[2:]),
                                         sorted(slots)).storage))
    assert [r.value for r in cache] == [True, True,
                                        {"set": True, "status": M_ACTIVE, "exitReason": X_NONE}]


def test_lazy_exits_are_derived_not_stored(setting):
    """The script's lazy exits: at swarm.select-advanced a8 is stored CANDIDATE with
    carriedPhase 0 < rosterPhase 1 (NOT_CARRIED) and a6 stored SUSPENDED; at swarm.dissolved
    a3 is stored ACTIVE in a DISSOLVED swarm (SWARM_DISSOLVED) and a6 stays EXITED(LEFT)."""
    _, manifest, _ = setting
    a = manifest["accounts"]
    proven, _, _ = prove_at(setting, "swarm.select-advanced")["SwarmRegistry"]
    assert proven.get("tender", "record")["rosterPhase"] == 1
    a8 = proven.get("tender", "member", a[8])
    assert (a8["status"], a8["carriedPhase"]) == (M_CANDIDATE, 0)
    assert proven.get("tender", "member", a[6])["status"] == M_SUSPENDED
    for i in (6, 7, 8):
        assert proven.status("tender", a[i]) == (M_EXITED, X_NOT_CARRIED)
    proven, _, _ = prove_at(setting, "swarm.dissolved")["SwarmRegistry"]
    assert proven.get("minimal", "record")["state"] == DISSOLVED
    assert proven.get("minimal", "member", a[3])["status"] == M_ACTIVE
    assert proven.status("minimal", a[3]) == (M_EXITED, X_DISSOLVED)
    assert proven.status("minimal", a[6]) == (M_EXITED, X_LEFT)
    assert proven.member_count("minimal") == (0, 0, 0)
    stored = proven.get("minimal", "roster", 0)
    assert (stored["active"], stored["suspended"], stored["candidates"]) == (3, 0, 0)
