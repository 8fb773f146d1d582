"""A layer document file (``amm/commitment --param document=FILE``) is outside JSON: one that
JCS (RFC 8785) cannot canonicalise (a number outside the I-JSON range) is one UsageError line
naming the file, not an exception out of the recipe (exit 70)."""

from __future__ import annotations

import json

import pytest

from recompute.core.errors import UsageError
from recompute.recipes.registry import get_recipe


@pytest.mark.parametrize("value", [10**30, 2**53 + 1])
def test_a_document_jcs_cannot_canonicalise_is_one_line(tmp_path, value):
    document = tmp_path / "layer.json"
    document.write_text(json.dumps({"schema": "s", "layer": 0, "x": value}))
    recipe = get_recipe("amm/commitment")
    params = recipe.parse_params({"subject": "0x" + "11" * 20, "layer": "0",
                                  "document": str(document)})
    with pytest.raises(UsageError) as caught:
        next(recipe.plan(params, None))
    assert str(caught.value).startswith(f"{document}: ")
    assert "JCS" in str(caught.value) and "\n" not in str(caught.value)
