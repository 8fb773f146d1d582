"""A watch line on stdout is ``json.dumps(line.to_json(), separators=(", ", ": "))`` (the
format docs/watch.md §Output gives, compared byte for byte between one-process, segmented and
stored runs); the sink puts that text together field by field (one anchor text per block).
Expected values: json.dumps itself, over the shapes a line takes."""

from __future__ import annotations

import io
import json

import pytest

from recompute.core.verdict import Verdict
from recompute.watch.evaluate import Line
from recompute.watch.metrics import Metrics
from recompute.watch.sink import Sink

ANCHOR = {"method": "parent-link", "pinned_hash": "0x" + "ab" * 32}
LINES = [
    Line(7, "0x" + "cd" * 32, "s000/layer-0", Verdict.GOOD, "ok", True, True,
         {"status": "FRESH", "deadline": "1762687648", "never_completed": True},
         "f" * 64, anchor=ANCHOR),
    Line(7, "0x" + "cd" * 32, "naïve \"check\"\n", Verdict.BAD, "predicate-failed", False,
         False, {"roster": ["0xaa"], "nested": {"z": None, "a": [1, 2.5]}, "é": "ü"},
         "0" * 64, 'found x = 1; healthy means "y"', anchor=ANCHOR),
    Line(8, None, "c", Verdict.UNVERIFIABLE, "rpc-unreachable", detail="the node: ☹"),
    Line(None, None, "c", Verdict.UNVERIFIABLE, "block-unknown"),
    Line(9, "0x" + "11" * 32, "c", Verdict.GOOD, "ok", anchor={"method": "checkpoint",
                                                               "root_number": 3}),
]


@pytest.mark.parametrize("method", ["evaluated", "finalized", "unverifiable"])
def test_the_sink_writes_what_json_dumps_writes(method):
    out = io.StringIO()
    getattr(Sink(Metrics(), out=out, err=io.StringIO()), method)(LINES)
    expected = "".join(json.dumps(line.to_json(), separators=(", ", ": ")) + "\n"
                       for line in LINES)
    assert out.getvalue() == expected


def test_a_line_is_frozen_and_complete():
    """Line's own __init__ (fields set at once) keeps the dataclass's contract: every field
    set, defaults as declared, no field altered afterwards, equal lines equal."""
    import dataclasses

    import pytest

    line = Line(7, None, "c", Verdict.GOOD, "ok")
    assert dataclasses.asdict(line) == {
        "block": 7, "hash": None, "check": "c", "verdict": Verdict.GOOD, "reason": "ok",
        "final": False, "healthy": None, "derived": {}, "evidence_digest": None, "detail": "",
        "anchor": None}
    assert line.derived is not Line(7, None, "c", Verdict.GOOD, "ok").derived
    with pytest.raises(dataclasses.FrozenInstanceError):
        line.final = True  # type: ignore[misc]
    assert line.as_final() == dataclasses.replace(line, final=True) != line
