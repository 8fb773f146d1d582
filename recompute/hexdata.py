"""Strict parsing of 0x-hex text, from a node's JSON answers or from a user's arguments.

The node's text is outside data: every parser here raises the error class its caller names
(``Unverifiable('rpc-malformed', …)`` for node answers, ``UsageError`` for arguments), with a
message that says which field was wrong, never a bare ValueError.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_HEX = re.compile(r"0x[0-9a-fA-F]*\Z")

ErrorFactory = Callable[[str], Exception]


def parse_data(text: object, what: str, error: ErrorFactory, size: int | None = None) -> bytes:
    """0x-hex byte data (an even number of digits); ``size`` forces an exact length."""
    if not isinstance(text, str) or not _HEX.match(text) or len(text) % 2:
        raise error(f"{what} is not 0x-prefixed even-length hex: {_show(text)}")
    data = bytes.fromhex(text[2:])
    if size is not None and len(data) != size:
        raise error(f"{what} must be {size} bytes, got {len(data)}: {_show(text)}")
    return data


def parse_quantity(text: object, what: str, error: ErrorFactory, bits: int = 256) -> int:
    """A JSON-RPC quantity: 0x-hex, at least one digit, within ``bits`` bits."""
    if not isinstance(text, str) or not _HEX.match(text) or len(text) < 3:
        raise error(f"{what} is not a 0x-hex quantity: {_show(text)}")
    value = int(text, 16)
    if value.bit_length() > bits:
        raise error(f"{what} does not fit in {bits} bits: {_show(text)}")
    return value


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
