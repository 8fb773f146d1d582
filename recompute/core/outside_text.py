"""Text from outside (a node's or beacon's error message, a store's field, a file's contents
quoted in an error, a layout's label, a vector's name) made safe to show, once, where it enters
(docs/trust.md §What recompute promises).

:func:`visible` escapes every character that is not printable text: C0 controls (``ESC``,
``CR``, ``LF``, ``BEL``…), ``DEL``, C1 controls (``U+0080``–``U+009F``, among them the 8-bit
``CSI`` and ``OSC``), the bidirectional overrides and isolates (``U+202A``–``U+202E``,
``U+2066``–``U+2069``, the marks ``U+200E``, ``U+200F``, ``U+061C``), the invisible format
characters (zero-width space and joiners ``U+200B``–``U+200D``, word joiner ``U+2060``, soft
hyphen ``U+00AD``, byte-order mark ``U+FEFF``), the line and paragraph separators
``U+2028``/``U+2029``, and every space but the plain one: exactly the characters for which
:meth:`str.isprintable` is false, plus none else. Each is written as Python writes it in a
string literal (``\\r``, ``\\x1b``, ``\\u202e``), so that a person sees that it was there and
a terminal, a spreadsheet or a page gets nothing but text.
"""

from __future__ import annotations

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: object, limit: int | None = None) -> str:
    """``text`` (``str()`` of it) with every non-printable character escaped, cut to ``limit``
    characters (``...`` at the end) when one is given."""
    text = text if isinstance(text, str) else str(text)
    if not text.isprintable():
        text = "".join(c if c.isprintable() else _escape(c) for c in text)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 3, 0)] + "..."
    return text


def _escape(c: str) -> str:
    if c in _SHORT:
        return _SHORT[c]
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible_tree(value: object) -> object:
    """A JSON-able value with every string in it (keys too) made :func:`visible`."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        return [visible_tree(v) for v in value]
    if isinstance(value, dict):
        return {visible(k) if isinstance(k, str) else k: visible_tree(v)
                for k, v in value.items()}
    return value
