"""The evidence digest: sha256 of the canonical JSON of the evidence's ``block``, ``reads``,
``logs`` and ``derived`` (docs/watch.md §Output: the digest ``step --json`` reports for the same
block, so a watch line can be re-checked by a step).

The text hashed is exactly ``canonical_json({"block": …, "derived": …, "logs": …,
"reads": …})`` (:mod:`recompute.core.jsontext`; docs/watch.md §Evidence digest). A watch hashes
it for every check at every block, and most of it does not change between them: the block's
part is the same for every check of a block, and a read carried from the block below is the
same entry, block after block. So the text is put together from the parts' own canonical texts
(the same bytes: a sorted-keys text of a dict is its keys' texts in order, joined with the same
separators), a block's text computed once per block and a read's once per :class:`ReadEntry`.
"""

from __future__ import annotations

import hashlib
from typing import Any, cast

from recompute.core.jsontext import canonical_json


class ReadEntry(dict[str, Any]):
    """One proven read as the evidence lists it (``address``, ``slot``, ``value``, ``path``,
    and ``block`` when read at an ancestor), keeping its canonical JSON text once computed.
    Never altered once made: the same entry stands in the evidence of every check that read
    the path, and of later blocks while it is carried."""

    __slots__ = ("_text",)

    def text(self) -> str:
        try:
            return self._text
        except AttributeError:
            self._text: str = canonical_json(self)
            return self._text


class ReadGroup(list[ReadEntry]):
    """The entries of one proven path (each a :class:`ReadEntry`), keeping the canonical
    texts of its entries joined as the digest joins them, once computed. Never altered once
    made: it stands in the evidence of every check that read the path."""

    __slots__ = ("_text",)

    def text(self) -> str:
        try:
            return self._text
        except AttributeError:
            self._text: str = ", ".join([_entry_text(e) for e in self])
            return self._text


def _entry_text(entry: dict[str, Any]) -> str:
    return entry.text() if isinstance(entry, ReadEntry) else canonical_json(entry)


def evidence_digest(block_text: str, reads: list[dict[str, Any]], logs: list[dict[str, Any]],
                    derived: dict[str, Any], groups: list[ReadGroup] | None = None) -> str:
    """sha256 hex of ``canonical_json({"block": …, "derived": …, "logs": …, "reads": …})``, the
    block's part given as its canonical text. ``groups``: the lists ``reads`` was made of, in
    order; their kept texts are used only if they account for every entry of ``reads`` (a
    list only ever extended: then it is exactly their concatenation)."""
    if groups and sum(map(len, groups)) == len(reads):
        parts = ", ".join([g.text() for g in groups if g])  # a path of no slot adds nothing
    else:
        try:
            parts = ", ".join([e.text() for e in cast(list[ReadEntry], reads)])
        except AttributeError:  # a plain dict among them (a recipe's own trace entry)
            parts = ", ".join([_entry_text(e) for e in reads])
    text = (f'{{"block": {block_text}, "derived": {canonical_json(derived)}, '
            f'"logs": {canonical_json(logs) if logs else "[]"}, "reads": [{parts}]}}')
    return hashlib.sha256(text.encode()).hexdigest()
