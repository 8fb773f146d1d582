"""Strict parsing of 0x-hex text, from a node's JSON answers or from a user's arguments.

The node's text is outside data: every parser here raises the error class its caller names
(``Unverifiable('rpc-malformed', …)`` for node answers, ``UsageError`` for arguments), with a
message that says which field was wrong, never a bare ValueError.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from recompute.core.errors import ArgumentError, OptionError, UsageError
from recompute.core.keccak import keccak256

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


# ---- values a user gives (options, config files): a bad one is a UsageError ------------

_HEX_NUMBER = re.compile(r"0x[0-9a-fA-F]+\Z")


def eip55(digits: str) -> str:
    """40 hex digits with EIP-55's checksum case: a letter upper-case where the same nibble of
    keccak256(the lower-case digits as ASCII) is 8 or more."""
    lower = digits.lower()
    digest = keccak256(lower.encode("ascii")).hex()
    return "".join(c.upper() if int(h, 16) >= 8 else c
                   for c, h in zip(lower, digest[:40], strict=True))


def checksum_problem(digits: str) -> str | None:
    """Why 40 hex digits of mixed case are no EIP-55 address (the checksummed spelling), or
    None. All lower-case and all upper-case carry no checksum and are accepted, as EIP-55 has
    it; mixed case is a checksum and must be right (a mistyped letter changes the case)."""
    if digits == digits.lower() or digits == digits.upper():
        return None
    right = eip55(digits)
    if digits == right:
        return None
    return (f"has a wrong EIP-55 checksum (mixed case is a checksum: 0x{right}); check the "
            "address, or write it all lower-case to give no checksum")


def parse_address(text: str, what: str) -> bytes:
    if not isinstance(text, str) or not re.fullmatch(r"0x[0-9a-fA-F]{40}", text):
        raise UsageError(f"{what} {text!r} is not an address (0x followed by 40 hex digits)")
    problem = checksum_problem(text[2:])
    if problem:
        raise UsageError(f"{what} {text} {problem}")
    return bytes.fromhex(text[2:])


def parse_hash(text: str, what: str) -> bytes:
    if not re.fullmatch(r"0x[0-9a-fA-F]{64}", text or ""):
        raise UsageError(f"{what} {text!r} is not a 32-byte hash (0x followed by 64 hex digits)")
    return bytes.fromhex(text[2:])


def parse_uint256(text: str, what: str) -> int:
    """A 256-bit unsigned integer written in decimal or 0x-hex."""
    text = (text or "").strip()
    if len(text) > 80:  # past any 256-bit number, and Python's 4,300-digit limit
        raise UsageError(f"{what} {_show(text)} is longer than any 256-bit number")
    if _HEX_NUMBER.match(text):
        value = int(text, 16)
    elif re.fullmatch(r"[0-9]+", text):  # ASCII digits only: str.isdigit() accepts '²', '٣'
        value = int(text)
    else:
        raise UsageError(f"{what} {text!r} is not a number (decimal or 0x-hex)")
    if value >= 1 << 256:
        raise UsageError(f"{what} {text!r} does not fit in 256 bits")
    return value


# Block tags a node resolves (EIP-1898 / the execution API's BlockTag); "pending" is not one:
# a pending block has no settled state to prove against.
BLOCK_TAGS = ("latest", "safe", "finalized", "earliest")


def parse_block(text: str | None) -> int | str | None:
    """A block the user names: a tag (:data:`BLOCK_TAGS`), or a number in decimal or
    0x-hex."""
    if text is None:
        return None
    if text in BLOCK_TAGS:
        return text
    try:
        value = parse_uint256(text, "block")
    except UsageError:
        raise OptionError("{block} {text!r} is not a number (decimal or 0x-hex) nor a tag "
                          "({tags})", ("block",), text=text, tags=", ".join(BLOCK_TAGS)) from None
    if value >= 1 << 64:
        raise OptionError("{block} {text!r} is not a block number", ("block",), text=text)
    return value


# ---- values a library caller gives (docs/library.md): bytes or text; a bad one names itself --


def as_data(value: object, name: str, size: int, what: str) -> bytes:
    """``size`` bytes given as bytes or as 0x-hex text (either case), e.g. an address or a hash;
    anything else an :class:`ArgumentError` whose message starts with ``name``."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data: bytes | None = bytes(value)
    elif (isinstance(value, str) and len(value) == 2 + 2 * size and _HEX.match(value)):
        data = bytes.fromhex(value[2:])
    else:
        data = None
    if data is None or len(data) != size:
        raise ArgumentError(f"{name}: {_show(value)} is not {what} (0x followed by {2 * size} "
                            f"hex digits, or {size} bytes)")
    problem = checksum_problem(value[2:]) if size == 20 and isinstance(value, str) else None
    if problem:
        raise ArgumentError(f"{name}: {value} {problem}")
    return data


def as_uint256(value: object, name: str) -> int:
    """A 256-bit unsigned integer given as an int, decimal or 0x-hex text, or 32 bytes."""
    if isinstance(value, bool):
        number = -1  # True is not a number here
    elif isinstance(value, int):
        number = value
    elif isinstance(value, (bytes, bytearray, memoryview)) and len(value) == 32:
        number = int.from_bytes(value, "big")
    elif isinstance(value, str):
        try:
            number = parse_uint256(value, name)
        except UsageError:
            number = -1
    else:
        number = -1
    if not 0 <= number < 1 << 256:
        raise ArgumentError(f"{name}: {_show(value)} is not a uint256 (an int, decimal or 0x-hex "
                            "text, or 32 bytes)")
    return number
