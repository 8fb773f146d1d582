"""docs/library.md runs as it is: its Python examples, in order and in one fresh interpreter,
against the devnet (the page's ``http://127.0.0.1:8545`` pointed at the test's node), print
exactly the output the page shows under each of them.

Independent expectations: the page's own text (the verdicts and values its reader is promised);
those were checked when it was written against the devnet manifest (meter key-1: reserved 300,
confirmed 400, cap 1000; reservation r1: 400, confirmed so not open).
"""

from __future__ import annotations

import re
import subprocess
import sys

from tests import REPO_ROOT

GUIDE = REPO_ROOT / "docs" / "library.md"
PAGE_RPC = "http://127.0.0.1:8545"
MARK = "----- next example -----"


def examples() -> list[tuple[str, str | None]]:
    """(python code, the text shown under it or None), in page order."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    out: list[tuple[str, str | None]] = []
    for kind, body in blocks:
        if kind == "python":
            out.append((body, None))
        elif kind == "text" and out and out[-1][1] is None:
            out[-1] = (out[-1][0], body)
    return out


def test_the_guide_has_examples_with_their_output():
    found = examples()
    assert len(found) == 4 and all(shown for _, shown in found)
    assert all(PAGE_RPC not in code for code, _ in found[1:])  # one place names the node


def test_every_example_of_the_guide_prints_what_the_page_shows(devnet, tmp_path):
    node, _ = devnet
    found = examples()
    script = f"\nprint({MARK!r})\n".join(code for code, _ in found)
    program = tmp_path / "guide.py"
    program.write_text(script.replace(PAGE_RPC, node.url), encoding="utf-8")
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.split(MARK + "\n")
    assert len(printed) == len(found)
    for (code, shown), got in zip(found, printed, strict=True):
        assert got == shown, code
