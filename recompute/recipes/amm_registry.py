"""The AMM reference registry as the AMM recipes address it (the AMM specification).

Storage names are the reference registry's (``layouts/amm-registry.json``): ``heads``,
``checkpoints``, ``stateRoots``, ``policies``, ``policyEffectiveFroms``, ``floors``,
``demands``; every AMM recipe is keyed by the enrolled subject, the layer ones by a layer index.
"""

from __future__ import annotations

from recompute.core.errors import OptionError
from recompute.recipes.params import Param
from recompute.recipes.plan import Params

LAYOUT = "amm-registry"
SUBJECT = Param("subject", "address", "the enrolled subject")
LAYER = Param("layer", "uint", "layer index 0..3 (AMM §Layers)")


def layer_index(p: Params) -> int:
    """The ``layer`` parameter, refused outside 0..3 (AMM §Layers: four fixed layers)."""
    layer: int = p["layer"]
    if not 0 <= layer <= 3:
        raise OptionError("{param} layer={layer}: a layer index is 0..3 (AMM §Layers)",
                          ("param",), layer=layer)
    return layer
