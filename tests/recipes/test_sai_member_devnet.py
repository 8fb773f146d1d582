"""``sai/member`` through the real CLI at the devnet's ``swarm.*`` moments.

How each run is made and where the expected values come from: see ``sai_devnet``.
"""

from __future__ import annotations

import pytest

from tests.recipes.sai_devnet import BAD, GOOD, account, role_id, step, view_disagreements

# ---- sai/member -----------------------------------------------------------------------------

MEMBER_CASES = [
    # moment, swarm, a[i], status, exit reason, role, suspension cause
    ("formed", "minimal", 3, "NONE", "NONE", None, "NONE"),
    ("candidates", "minimal", 4, "CANDIDATE", "NONE", "worker", "NONE"),  # admitted first
    ("activated", "minimal", 5, "ACTIVE", "NONE", "coordinator", "NONE"),
    ("amended", "minimal", 6, "EXITED", "LEFT", "worker", "NONE"),
    ("concluded", "minimal", 4, "ACTIVE", "NONE", "worker", "NONE"),  # CONCLUDING: no exit
    ("dissolved", "minimal", 3, "EXITED", "SWARM_DISSOLVED", "worker", "NONE"),  # lazy
    ("dissolved", "minimal", 6, "EXITED", "LEFT", "worker", "NONE"),  # explicit exit stays
    ("suspended", "challenged", 4, "SUSPENDED", "NONE", "worker", "INELIGIBLE"),
    ("select-advanced", "tender", 4, "ACTIVE", "NONE", "worker", "NONE"),  # bidder→worker
    ("select-advanced", "tender", 6, "EXITED", "NOT_CARRIED", "bidder", "NONE"),  # suspended
    ("select-advanced", "tender", 8, "EXITED", "NOT_CARRIED", "bidder", "NONE"),  # candidate
    ("substituted", "tender", 5, "EXITED", "REPLACED", "worker", "NONE"),
    ("substituted", "tender", 7, "ACTIVE", "NONE", "worker", "NONE"),  # the new seat
    ("inherit-advanced", "pipeline", 5, "SUSPENDED", "NONE", "worker", "AUTHORITY"),
    ("inherit-advanced", "pipeline", 6, "CANDIDATE", "NONE", "verifier", "NONE"),  # kept
]


@pytest.mark.parametrize("moment, swarm, i, status, reason, role, cause", MEMBER_CASES,
                         ids=[f"{c[0]}-a{c[2]}" for c in MEMBER_CASES])
def test_member(devnet, moment, swarm, i, status, reason, role, cause):
    _, manifest = devnet
    rc, out = step(manifest, "sai/member", moment, swarm,
                   "--param", f"account={account(manifest, i)}", "--compare-views")
    derived = out["evidence"]["derived"]
    assert (derived["status"], derived["exit_reason"], derived["suspension_cause"]) == \
        (status, reason, cause)
    assert derived["role"] == (role_id(manifest, role) if role else "0x" + "00" * 32)
    assert derived["lazy_exit"] is (reason in ("SWARM_DISSOLVED", "NOT_CARRIED"))
    assert (rc, out["verdict"]) == (GOOD if status == "ACTIVE" else BAD)
    assert view_disagreements(out) == []  # the honest views report the same (§5.2)


def test_expect_active_for_an_expelled_member_is_bad(devnet):
    _, manifest = devnet
    a6 = f"account={account(manifest, 6)}"
    rc, out = step(manifest, "sai/member", "expelled", "challenged", "--param", a6,
                   "--expect", "status=ACTIVE")
    assert (rc, out["verdict"]) == BAD
    assert out["evidence"]["expectations"] == [
        {"key": "status", "expected": "ACTIVE", "derived": "EXITED", "holds": False}]
    rc, out = step(manifest, "sai/member", "expelled", "challenged", "--param", a6,
                   "--expect", "status=EXITED", "--expect", "exit_reason=INELIGIBLE")
    assert (rc, out["verdict"]) == GOOD


def test_lying_member_status_view(devnet):
    # storage: a[4] left; the liar's memberStatus cache still answers ACTIVE / NONE
    _, manifest = devnet
    rc, out = step(manifest, "sai/member", "roster-lies", "lying",
                   "--param", f"account={account(manifest, 4)}", "--compare-views")
    derived = out["evidence"]["derived"]
    assert (derived["status"], derived["exit_reason"]) == ("EXITED", "LEFT")
    assert (rc, out["verdict"]) == BAD
    assert {(f["value"], f["view_says"], f["storage_says"])
            for f in view_disagreements(out)} == {("status", "ACTIVE", "EXITED"),
                                                  ("exit_reason", "NONE", "LEFT")}



def test_unknown_block_hash_is_unverifiable(devnet):
    _, manifest = devnet
    rc, out = step(manifest, "sai/member", "formed", "minimal",
                   "--param", f"account={account(manifest, 3)}", block_hash="0x" + "11" * 32)
    assert (rc, out["verdict"], out["reason"]) == (2, "UNVERIFIABLE", "block-unknown")
