"""Output roots computed from published preimages equal the published roots
(tests/fixtures/op-stack-output-roots/: where each came from is in its README)."""

from __future__ import annotations

import json

import pytest

from recompute.l2.output_root import OutputRootPreimage, output_root
from tests import REPO_ROOT

ROOTS = json.loads((REPO_ROOT / "tests" / "fixtures" / "op-stack-output-roots"
                    / "roots.json").read_text())["roots"]


def _preimage(entry: dict) -> OutputRootPreimage:
    return OutputRootPreimage.decode(b"".join(bytes.fromhex(entry[key][2:]) for key in (
        "version", "state_root", "withdrawal_storage_root", "block_hash")))


@pytest.mark.parametrize("entry", ROOTS, ids=[entry["name"] for entry in ROOTS])
def test_the_published_output_root_is_recomputed(entry):
    assert "0x" + output_root(_preimage(entry)).hex() == entry["output_root"]


@pytest.mark.parametrize("entry", ROOTS, ids=[entry["name"] for entry in ROOTS])
def test_one_field_changed_gives_another_root(entry):
    for key in ("state_root", "withdrawal_storage_root", "block_hash"):
        changed = dict(entry)
        changed[key] = entry[key][:-1] + ("0" if entry[key][-1] != "0" else "1")
        assert "0x" + output_root(_preimage(changed)).hex() != entry["output_root"]

