"""The evidence digest put together from kept parts (recompute.evaluator.digest) hashes exactly
the bytes of ``json.dumps({"block", "reads", "logs", "derived"}, sort_keys=True)``, the
definition docs/watch.md gives (so a watch line can be re-checked by ``step``): expected
values from hashlib and json directly, on the shapes evidence takes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from recompute.core.jsontext import canonical_json as canonical
from recompute.evaluator.digest import ReadEntry, ReadGroup, evidence_digest

BLOCK = {"number": 7, "hash": "0x" + "ab" * 32, "state_root": "0x" + "cd" * 32,
         "receipts_root": "0x" + "ef" * 32, "timestamp": 1762601248}
READ = {"address": "0x" + "12" * 20, "slot": "0x" + "00" * 31 + "01",
        "value": "0x" + "00" * 32, "path": "heads[0x1212].enrolled"}


def _by_definition(block, reads, logs, derived) -> str:
    return hashlib.sha256(json.dumps({"block": block, "reads": reads, "logs": logs,
                                      "derived": derived}, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize("reads, logs, derived", [
    ([], [], {}),
    ([READ], [], {"status": "FRESH", "deadline": "1762687648", "never_completed": True}),
    ([READ, {**READ, "block": 5}], [{"address": "0x" + "12" * 20, "topics": ["0x01"],
                                     "data": "0x", "block": 6, "log_index": 0}],
     {"roster": ["0xaa", "0xbb"], "nested": {"z": 1, "a": [None, False]}, "é": "ü"}),
])
def test_the_digest_is_the_definitions(reads, logs, derived):
    kept = [ReadEntry(r) for r in reads]
    expected = _by_definition(BLOCK, reads, logs, derived)
    assert evidence_digest(canonical(BLOCK), kept, logs, derived) == expected
    assert evidence_digest(canonical(BLOCK), reads, logs, derived) == expected  # plain dicts
    for entry in kept:  # a kept text is the one computed again
        assert entry.text() == entry.text() == json.dumps(dict(entry), sort_keys=True)


def test_a_different_read_is_a_different_digest():
    other = {**READ, "value": "0x" + "00" * 31 + "01"}
    assert (evidence_digest(canonical(BLOCK), [ReadEntry(READ)], [], {})
            != evidence_digest(canonical(BLOCK), [ReadEntry(other)], [], {}))


def test_the_digest_from_kept_groups_is_the_definitions():
    """A trace's reads made of kept per-path groups (one of no slot) hash as the flat list;
    a group list that does not account for every entry is not used."""
    one = {**READ, "path": "a"}
    two = [{**READ, "slot": "0x" + "00" * 31 + "02", "path": "b"},
           {**READ, "slot": "0x" + "00" * 31 + "03", "path": "b", "block": 5}]
    groups = [ReadGroup([ReadEntry(one)]), ReadGroup(), ReadGroup([ReadEntry(e) for e in two])]
    reads = [e for g in groups for e in g]
    derived = {"status": "FRESH"}
    expected = _by_definition(BLOCK, reads, [], derived)
    assert evidence_digest(canonical(BLOCK), reads, [], derived, groups) == expected
    more = reads + [ReadEntry({**READ, "path": "c"})]  # added outside the groups
    assert (evidence_digest(canonical(BLOCK), more, [], derived, groups)
            == _by_definition(BLOCK, more, [], derived))


def test_the_recipe_docs_watch_md_gives_a_third_party_re_creates_the_digest():
    """docs/watch.md §Evidence digest: its Python lines, run on evidence the digest code hashed
    (unsorted keys, non-ASCII and control characters, a nested table), assert the same digest."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "watch.md").read_text()
    section = page.split("### Evidence digest", 1)[1]
    snippet = section.split("```python\n", 1)[1].split("```", 1)[0]
    reads = [ReadEntry(READ), ReadEntry({**READ, "path": "names[\"é\"]\n\u2028", "block": 5})]
    derived = {"z": "ünïcode 𝄞", "a": {"0xbb": "40", "0xaa": True}, "m": None}
    logs = [{"address": "0x" + "12" * 20, "topics": ["0x01"], "data": "0x", "block": 6}]
    evidence = {"block": BLOCK, "derived": derived, "logs": logs, "reads": reads,
                "evidence_digest": evidence_digest(canonical(BLOCK), reads, logs, derived)}
    exec(snippet, {"step_json": json.loads(json.dumps({"evidence": evidence}))})
    evidence["evidence_digest"] = "0" * 64  # the snippet can fail
    with pytest.raises(AssertionError):
        exec(snippet, {"step_json": json.loads(json.dumps({"evidence": evidence}))})
