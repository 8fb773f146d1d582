"""The reason table of docs/trust.md lists exactly the reason codes the code can give."""

from __future__ import annotations

import re
from pathlib import Path

from recompute.core.verdict import REASONS, Reason

README = Path(__file__).resolve().parents[2] / "docs" / "trust.md"


def readme_reasons() -> list[str]:
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("| reason | meaning | what to do |")
    codes = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        codes.append(re.match(r"\| `([a-z0-9-]+)` \|", line).group(1))
    return codes


def test_the_readme_table_lists_every_reason_once():
    codes = readme_reasons()
    assert len(codes) == len(set(codes))
    assert set(codes) == set(REASONS) == {r.value for r in Reason}


def test_reason_values_are_the_strings_evidence_carries():
    assert Reason.NO_CONTRACT == "no-contract"
    assert REASONS["rpc-malformed"] == Reason.RPC_MALFORMED.description


def test_an_unknown_reason_code_cannot_be_raised():
    import pytest

    from recompute.core.errors import Unverifiable

    with pytest.raises(ValueError):
        Unverifiable("node-was-rude", "no such code")
