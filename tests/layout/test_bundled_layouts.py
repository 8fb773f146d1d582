"""The bundled descriptors in layouts/ are exactly what `recompute layout import` makes of the
committed artifacts they name in layouts/sources.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recompute.layout import load_layout

ROOT = Path(__file__).resolve().parents[2]
SOURCES = json.loads((ROOT / "layouts" / "sources.json").read_text())


@pytest.mark.parametrize("name,artifact", sorted(SOURCES.items()))
def test_bundled_layout_regenerates_byte_for_byte(tmp_path, name, artifact):
    out = tmp_path / f"{name}.json"
    result = subprocess.run(
        [sys.executable, "-m", "recompute", "layout", "import", artifact, "-o", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == (ROOT / "layouts" / f"{name}.json").read_bytes()


def test_every_bundled_layout_loads_by_name():
    bundled = sorted(p.stem for p in (ROOT / "layouts").glob("*.json")
                     if p.stem not in ("schema", "sources"))
    assert bundled == sorted(SOURCES)
    for name in bundled:
        assert load_layout(name).name.endswith(Path(SOURCES[name]).stem)


def test_the_meter_shapes_sit_where_the_8312_seed_puts_them():
    """ERC-8312 thread: reserved at slot 0, confirmed at slot 1; the headroom struct mapping
    at slot 2 (struct:2:2:1); spentRoot at slot 0 of the aggregate-budget cursor."""
    def slot_of(layout, label):
        return next(int(v["slot"]) for v in json.loads(
            (ROOT / "layouts" / f"{layout}.json").read_text())["storage"] if v["label"] == label)

    assert slot_of("meter-reserved-confirmed", "reserved") == 0
    assert slot_of("meter-reserved-confirmed", "confirmed") == 1
    assert slot_of("meter-headroom", "cursorValues") == 2
    assert slot_of("meter-aggregate-budget", "spentRoot") == 0
