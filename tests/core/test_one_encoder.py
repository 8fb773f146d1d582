"""Every JSON text the package writes comes from recompute/core/jsontext.py: no other module
calls ``json.dumps``/``json.dump``, builds a ``JSONEncoder`` or reaches into ``json.encoder``,
or imports ``rfc8785``, so a writer's bytes are decided in one place (docs/design.md §JSON text).
The finder is checked on planted code first, so that the test can fail."""

from __future__ import annotations

import ast
from pathlib import Path

import recompute

PACKAGE = Path(recompute.__file__).resolve().parent
ENCODER = PACKAGE / "core" / "jsontext.py"
FORBIDDEN_ATTRIBUTES = {"dumps", "dump", "JSONEncoder", "encoder"}  # of the json module


def _writers(source: str) -> list[str]:
    """``line: what`` for each JSON writer outside the encoder module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES
                and isinstance(node.value, ast.Name) and node.value.id == "json"):
            found.append(f"{node.lineno}: json.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("json", "json.encoder"):
            names = [a.name for a in node.names
                     if node.module == "json.encoder" or a.name in FORBIDDEN_ATTRIBUTES]
            found += [f"{node.lineno}: from {node.module} import {n}" for n in names]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""])
            found += [f"{node.lineno}: import {m}" for m in modules
                      if m.split(".")[0] == "rfc8785" or m == "json.encoder"]
    return sorted(found, key=lambda f: int(f.split(":")[0]))


def test_the_finder_finds_each_way_of_writing_json():
    planted = ("import json\nimport rfc8785\nfrom json import dumps as d\n"
               "from json.encoder import encode_basestring_ascii\nimport json.encoder\n"
               "json.dumps({})\njson.dump({}, f)\nclass E(json.JSONEncoder): pass\n"
               "json.encoder.c_make_encoder\njson.loads('1')\nfrom json import loads\n")
    assert _writers(planted) == [
        "2: import rfc8785", "3: from json import dumps",
        "4: from json.encoder import encode_basestring_ascii", "5: import json.encoder",
        "6: json.dumps", "7: json.dump", "8: json.JSONEncoder", "9: json.encoder"]


def test_no_module_but_the_encoder_writes_json():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != ENCODER:
            writers = _writers(path.read_text())
            if writers:
                found[str(path.relative_to(PACKAGE))] = writers
    assert found == {}, f"JSON written outside recompute/core/jsontext.py: {found}"
