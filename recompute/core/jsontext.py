"""JSON text of values the code itself built (evidence, watch lines), at the speed the watch
needs (a 400-check block encodes a thousand small dicts).

``json.dumps`` and ``JSONEncoder.encode`` build the C encoder again on every call, which costs
more than encoding a small dict. :func:`encoder` builds it once, with the options given, and
returns a function with exactly ``JSONEncoder(sort_keys=…, separators=…).encode``'s output
(ASCII, ``allow_nan``), falling back to that method where the C encoder is not there. Unlike it,
no circular-reference check: the values are trees the code made (a cycle would recurse until
RecursionError rather than raise ValueError).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # None without _json


def encoder(*, sort_keys: bool = False,
            separators: tuple[str, str] = (", ", ": ")) -> Callable[[Any], str]:
    """``JSONEncoder(sort_keys=sort_keys, separators=separators).encode``, built once."""
    python = json.JSONEncoder(sort_keys=sort_keys, separators=separators)
    if _c_make_encoder is None:  # pragma: no cover
        return python.encode
    item, key = separators
    made = _c_make_encoder(None, python.default, json.encoder.encode_basestring_ascii, None,
                           key, item, sort_keys, False, True)

    def encode(value: Any) -> str:
        return "".join(made(value, 0))

    return encode
