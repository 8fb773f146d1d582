"""Every JSON text the tool writes: the evidence digest's text, JSON lines, store records,
reports, request bodies, vector files. tests/core/test_one_encoder.py keeps ``json.dumps`` out
of the rest of the package, so a writer's bytes are decided here, by the function it calls:

- :func:`canonical_json`: the evidence digest's text (below), and wherever a value is hashed or
  compared as text: sorted keys, ``", "`` and ``": "`` separators, non-ASCII and control
  characters as ``\\uXXXX`` escapes, integers in decimal;
- :func:`json_line`: one JSON line, a store record, an RPC request body: the keys in the order the
  value has them, the same separators and escapes;
- :func:`compact_json`: sorted keys, no spaces (a CSV cell, a hash of compiler settings);
- :func:`json_document`: an indented file or report (``--json``), options as the format needs;
- :func:`jcs`: RFC 8785 canonical JSON (the ``rfc8785`` package), as bytes, where a
  specification defines a hash over it (the SAI charter's ``contentHash``).

The digest keeps :func:`canonical_json`, not RFC 8785. Its text is published (every watch
line's ``evidence_digest``, ``step --json``, the evidence store and the audit reports) and
``step`` re-computes it to re-check a line, so its bytes cannot change. RFC 8785 would change
them (its separators are ``,`` and ``:``), and it refuses integers beyond 2^53 (I-JSON), where
the evidence's integers are a header's number and timestamp (uint64 in the header a chain
signs) and log positions; ``canonical_json`` writes any integer in decimal. Over the devnet's
range audit (1,338 lines), two ``step --json`` evidences and the 93 JSON files of vectors/,
``rfc8785.dumps`` refused nothing: those integers are small there, and storage words, slots and
derived numbers are strings. docs/watch.md §Evidence digest says how a third party re-creates
the digest.

Speed: ``json.dumps`` with options and ``JSONEncoder.encode`` build the C encoder again on every
call, which costs more than encoding a small dict (a 400-check block encodes a thousand of
them). :func:`encoder` builds it once, with the options given, and returns a function with
exactly ``JSONEncoder(sort_keys=…, separators=…, ensure_ascii=…).encode``'s output (``allow_nan``),
falling back to that method where the C encoder is not there. Unlike it, no circular-reference
check: the values are trees the code made (a cycle would recurse until RecursionError rather
than raise ValueError).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # None without _json


def encoder(*, sort_keys: bool = False, separators: tuple[str, str] = (", ", ": "),
            ascii: bool = True) -> Callable[[Any], str]:
    """``JSONEncoder(sort_keys=…, separators=…, ensure_ascii=ascii).encode``, built once."""
    python = json.JSONEncoder(sort_keys=sort_keys, separators=separators, ensure_ascii=ascii)
    if _c_make_encoder is None:  # pragma: no cover
        return python.encode
    item, key = separators
    strings = (json.encoder.encode_basestring_ascii if ascii
               else json.encoder.encode_basestring)
    made = _c_make_encoder(None, python.default, strings, None, key, item, sort_keys, False,
                           True)

    def encode(value: Any) -> str:
        return "".join(made(value, 0))

    return encode


# Each built once: these run for every check at every block of a watch.
canonical_json = encoder(sort_keys=True)
canonical_json.__doc__ = """The canonical text: sorted keys, ``", "`` / ``": "``, ASCII escapes
(``json.dumps(value, sort_keys=True)``). What the evidence digest hashes."""
json_line = encoder()
json_line.__doc__ = """One JSON line or record: keys in their order, ``", "`` / ``": "``, ASCII
escapes (``json.dumps(value)``)."""
compact_json = encoder(sort_keys=True, separators=(",", ":"))
compact_json.__doc__ = """Sorted keys, no spaces, ASCII escapes."""
_UNICODE = encoder(ascii=False)
# a str as json_line writes it (the C function where there is one)
json_string: Callable[[str], str] = json.encoder.encode_basestring_ascii


def json_text(value: Any, *, ascii: bool = True) -> str:
    """:func:`json_line`, or with non-ASCII characters as they are (``ascii=False``: a string shown
    to a person, who reads "é" rather than ``\\u00e9``)."""
    return json_line(value) if ascii else _UNICODE(value)


def json_document(value: Any, *, indent: int = 2, sort_keys: bool = False,
                  ascii: bool = True) -> str:
    """An indented JSON document (no final newline), for a file or a ``--json`` report."""
    return json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ascii)


def shown_json(value: Any) -> str:
    """A value of any type as one JSON text for a person: what JSON cannot hold (bytes, a
    path) as its ``str``."""
    return json.dumps(value, default=str)


def jcs(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value``; ValueError or TypeError on what RFC 8785 refuses
    (integers beyond 2^53, non-string keys, NaN, a value JSON has no type for)."""
    import rfc8785  # only where a specification hashes it: off the verdict's import path

    return rfc8785.dumps(value)
