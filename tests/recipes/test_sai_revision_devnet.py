"""``sai/revision`` through the real CLI at the devnet's ``swarm.*`` moments.

How each run is made and where the expected values come from: see ``sai_devnet``.
"""

from __future__ import annotations

import pytest

from tests.recipes.sai_devnet import GOOD, step

# ---- sai/revision ---------------------------------------------------------------------------

REVISION_CASES = [
    # pin, swarm, from (a moment, or "before" = the block before formation), revision, r_from
    # minimal: form, applyToJoin a3, admit a4, admit a3, acceptCharter a4, applyToJoin+admit
    # a5, activate (8), applyToJoin+admit a6, amend, acceptCharter a3, leave a6 (13),
    # conclude (14), dissolve (15; the early dissolve reverted)
    ("dissolved", "minimal", "before", 15, 0),
    ("amended", "minimal", "activated", 13, 8),
    # challenged: 3 seats (7), activate, challenge a4, enforceRoster (10), challenge a4 (11),
    # resume (12), applyToJoin+admit a6, challenge a6, expel (16; the early expel reverted)
    ("expelled", "challenged", "suspended", 16, 10),
    # tender: seat a3 (3), 4 joins, applyToJoin a8, activate, suspendMember, advance (11),
    # challenge a5, substitute, acceptCharter a7 (14)
    ("substituted", "tender", "select-advanced", 14, 11),
    ("inherit-completed", "pipeline", "inherit-advanced", 12, 11),  # admit a6
    # lying: 3 seats (7), activate (8), leave a4 (9); the cache setters are no swarm calls
    ("roster-lies", "lying", "lying-activated", 9, 8),
]


@pytest.mark.parametrize("pin, swarm, since, revision, r_from", REVISION_CASES,
                         ids=[f"{c[1]}-{c[0]}" for c in REVISION_CASES])
def test_revision(devnet, pin, swarm, since, revision, r_from):
    _, manifest = devnet
    if since == "before":
        from_block = manifest["swarm"]["swarms"][swarm]["formed_block"] - 1
    else:
        from_block = manifest["moments"][f"swarm.{since}"]["number"]
    rc, out = step(manifest, "sai/revision", pin, swarm, "--param", f"from_block={from_block}",
                   "--compare-views")
    derived = out["evidence"]["derived"]
    assert (derived["revision"], derived["revision_at_from"], derived["changed_events"]) == \
        (str(revision), str(r_from), str(revision - r_from))
    assert derived["consistent"] is True and derived["increased"] is True
    assert (rc, out["verdict"]) == GOOD
    assert out["evidence"]["findings"] == []  # getSwarm's revision agrees
    # the revision at the from block is proven from storage there, not inferred
    at_from = [r for r in out["evidence"]["reads"] if r.get("block") == from_block]
    assert at_from and all(r["path"].endswith("record.revision") for r in at_from)


def test_revision_unchanged_is_good_and_says_so(devnet):
    # nothing changes the minimal swarm after its dissolution block: no call, no Changed, the
    # revision stays; §5.4 asks one increment per state-changing call, so nothing is broken
    # (docs/design.md §Verdicts follow the normative text) and increased is reported False
    _, manifest = devnet
    pin = manifest["moments"]["swarm.dissolved"]["number"]
    rc, out = step(manifest, "sai/revision", "dissolved", "minimal",
                   "--param", f"from_block={pin}")
    derived = out["evidence"]["derived"]
    assert (derived["revision"], derived["revision_at_from"], derived["changed_events"]) == \
        ("15", "15", "0")
    assert derived["increased"] is False and derived["consistent"] is True
    assert (rc, out["verdict"]) == GOOD
