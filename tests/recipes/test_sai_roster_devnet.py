"""``sai/roster`` through the real CLI at the devnet's ``swarm.*`` moments.

How each run is made and where the expected values come from: see ``sai_devnet``.
"""

from __future__ import annotations

import pytest

from tests.recipes import sai_devnet
from tests.recipes.sai_devnet import BAD, GOOD, role_id, view_disagreements


def step(*args, **kwargs):
    """``sai_devnet.step`` where a usage error (exit 64) is an outcome, ``(64, {"error": …})``."""
    return sai_devnet.step(*args, usage_error_ok=True, **kwargs)


# ---- sai/roster -----------------------------------------------------------------------------

ROSTER_CASES = [
    # moment, swarm, roster met, {role: active}, suspended, accounts with MemberActivated
    ("formed", "minimal", False, {"worker": 0, "coordinator": 0}, 0, 0),
    ("activated", "minimal", True, {"worker": 2, "coordinator": 1}, 0, 3),
    ("amended", "minimal", True, {"worker": 2, "coordinator": 1}, 0, 4),
    ("dissolved", "minimal", False, {"worker": 0, "coordinator": 0}, 0, 4),
    ("suspended", "challenged", False, {"worker": 1, "coordinator": 1}, 1, 3),
    ("reinstated", "challenged", True, {"worker": 2, "coordinator": 1}, 0, 3),
    ("expelled", "challenged", True, {"worker": 2, "coordinator": 1}, 0, 4),
    ("select-advanced", "tender", True, {"bidder": 0, "worker": 2, "coordinator": 1}, 0, 5),
    ("substituted", "tender", True, {"bidder": 0, "worker": 2, "coordinator": 1}, 0, 5),
    ("inherit-advanced", "pipeline", True, {"worker": 2, "verifier": 0}, 1, 3),
    ("inherit-completed", "pipeline", True, {"worker": 2, "verifier": 1}, 1, 4),
]


@pytest.mark.parametrize("moment, swarm, met, by_role, suspended, seen", ROSTER_CASES,
                         ids=[c[0] for c in ROSTER_CASES])
def test_roster(devnet, moment, swarm, met, by_role, suspended, seen):
    _, manifest = devnet
    formed = manifest["swarm"]["swarms"][swarm]["formed_block"]
    rc, out = step(manifest, "sai/roster", moment, swarm, "--param", f"from_block={formed}",
                   "--compare-views")
    derived = out["evidence"]["derived"]
    assert derived["roster_met"] is met
    assert derived["active_by_role"] == {role_id(manifest, r): str(n) for r, n in by_role.items()}
    assert (derived["active"], derived["suspended"], derived["members_seen"]) == \
        (str(sum(by_role.values())), str(suspended), str(seen))
    assert derived["formation_block"] == str(formed)
    assert derived["counters_agree"] is True  # the honest counters match the records
    assert out["evidence"]["findings"] == []  # and so do the views
    assert (rc, out["verdict"]) == (GOOD if met else BAD)


def test_lying_roster_follows_storage(devnet):
    # storage: a[4] left, 1 worker < min 2 and 2 active < minMembers 3; the view says met
    _, manifest = devnet
    formed = manifest["swarm"]["swarms"]["lying"]["formed_block"]
    rc, out = step(manifest, "sai/roster", "roster-lies", "lying",
                   "--param", f"from_block={formed}", "--compare-views")
    derived = out["evidence"]["derived"]
    assert derived["roster_met"] is False and derived["active"] == "2"
    assert derived["counters_agree"] is True
    assert (rc, out["verdict"]) == BAD
    (finding,) = view_disagreements(out)
    assert (finding["view"], finding["view_says"], finding["storage_says"]) == \
        ("rosterMet(bytes32)", True, False)


def test_roster_from_block_after_formation_is_refused(devnet):
    _, manifest = devnet
    formed = manifest["swarm"]["swarms"]["tender"]["formed_block"]
    rc, out = step(manifest, "sai/roster", "substituted", "tender",
                   "--param", f"from_block={formed + 1}")
    # a usage error: admissions before the from block would be missed
    assert rc == 64 and "no SwarmFormed event" in out["error"]
