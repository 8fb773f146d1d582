"""The AMM registry artifacts: EIP-170 size, and the storage layout the verifier reads (names,
slots and struct member positions pinned, AMM §Layer checkpoints and state versions)."""

from __future__ import annotations

import pytest

from recompute.devnet.contracts import load_artifact

EIP170_LIMIT = 24576

REGISTRY_STORAGE = [
    ("heads", "0"),
    ("checkpoints", "1"),
    ("stateRoots", "2"),
    ("policies", "3"),
    ("policyEffectiveFroms", "4"),
    ("floors", "5"),
    ("demands", "6"),
    ("operatorPerms", "7"),
]


def members(artifact: dict, struct: str) -> list[tuple[str, str, int]]:
    for name, t in artifact["storageLayout"]["types"].items():
        if name.startswith(f"t_struct({struct})"):
            return [(m["label"], m["slot"], m["offset"]) for m in t["members"]]
    raise AssertionError(struct)


@pytest.mark.parametrize("name", ["AgentMeditationRegistry", "LyingMeditationRegistry"])
def test_fits_eip170(name):
    code = load_artifact(name)["deployedBytecode"]
    assert 0 < (len(code) - 2) // 2 <= EIP170_LIMIT


@pytest.mark.parametrize("name", ["AgentMeditationRegistry", "LyingMeditationRegistry"])
def test_storage_variables(name):
    # the liar inherits the honest storage unchanged
    storage = load_artifact(name)["storageLayout"]["storage"]
    assert [(v["label"], v["slot"]) for v in storage] == REGISTRY_STORAGE


def test_struct_packing():
    a = load_artifact("AgentMeditationRegistry")
    assert members(a, "LayerCheckpoint") == [
        ("commitment", "0", 0), ("lastCompletedAt", "1", 0), ("lastCompletedRecordedAt", "1", 6),
        ("completedUnderPolicy", "1", 12), ("lastChangedVersion", "1", 16)]
    assert members(a, "Head") == [
        ("enrolled", "0", 0), ("controller", "0", 1), ("controllerRights", "0", 21),
        ("policyVersion", "0", 22), ("floorVersion", "0", 26), ("stateVersion", "1", 0),
        ("recordCount", "1", 8), ("root", "2", 0), ("enrolledAt", "3", 0),
        ("lastSignalAt", "3", 6), ("nextPlannedAt", "3", 12)]
    assert members(a, "Demand") == [("demandedAt", "0", 0), ("dueBy", "0", 6)]
