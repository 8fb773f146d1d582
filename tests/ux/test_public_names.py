"""Every public name of the library (``recompute.api.__all__``) has its row in docs/library.md's
table of public names, and the table names nothing that is not public."""

import re

import recompute.api
from tests import REPO_ROOT


def test_every_public_name_is_documented():
    page = (REPO_ROOT / "docs" / "library.md").read_text()
    table = page.split("## Every public name", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\| `(\w+)`(?:, `(\w+)`)? \|", table, re.M))
    documented = {n for pair in named for n in pair if n}
    assert documented == set(recompute.api.__all__) | {"__version__"}
