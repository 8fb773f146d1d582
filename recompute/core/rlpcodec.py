"""RLP (Yellow Paper App. B), strict: the one canonical encoding or an error.

Chosen by measurement over pyrlp (benchmarks/bench_primitives.py): the same results on every
input (tests/core/test_rlpcodec.py compares the two with hypothesis), in a fraction of the
time and without pyrlp's import. Every non-canonical form is refused: a single byte below
0x80 wrapped as a string, a long-form length for a payload under 56 bytes, a length with a
leading zero byte, a payload running past its list or past the input, trailing bytes. Nesting
is bounded by :data:`MAX_DEPTH` nested lists (no node, header or receipt nests deeper than 4).
"""

from __future__ import annotations

from typing import TypeAlias

MAX_DEPTH = 16


class RlpError(ValueError):
    """Bytes that are not the canonical RLP of one item."""


# What decoding gives: a byte string or a list of items.
Item: TypeAlias = bytes | list["Item"]
# What encoding takes: also bytearrays, non-negative ints and tuples.
Encodable: TypeAlias = bytes | bytearray | int | list["Encodable"] | tuple["Encodable", ...]


def decode(data: bytes) -> Item:
    """The one item ``data`` encodes, exactly (no trailing bytes)."""
    if not data:
        raise RlpError("empty input")
    item, end = _item(data, 0, len(data), 0)
    if end != len(data):
        raise RlpError(f"{len(data) - end} trailing byte(s) after the item")
    return item


def _item(data: bytes, pos: int, limit: int, depth: int) -> tuple[Item, int]:
    """The item at ``pos``, which must end at or before ``limit``; (item, end)."""
    b0 = data[pos]
    if b0 < 0xC0:
        return _string(data, pos, b0, limit)
    if b0 < 0xF8:
        start = pos + 1
        end = start + b0 - 0xC0
    else:
        start, end = _long(data, pos, b0 - 0xF7, limit)
    if end > limit:
        raise RlpError("a list runs past its container")
    if depth >= MAX_DEPTH:
        raise RlpError(f"lists nested deeper than {MAX_DEPTH}")
    items: list[Item] = []
    append = items.append
    while start < end:  # strings inline (the common case: a node's hashes), lists recurse
        b0 = data[start]
        if b0 < 0x80:
            append(data[start : start + 1])
            start += 1
        elif b0 < 0xB8:
            stop = start + 1 + b0 - 0x80
            if stop > end:
                raise RlpError("a string runs past its container")
            if b0 == 0x81 and data[start + 1] < 0x80:
                raise RlpError("a single byte below 0x80 encoded as a string")
            append(data[start + 1 : stop])
            start = stop
        else:
            item, start = _item(data, start, end, depth + 1)
            append(item)
    return items, end


def _string(data: bytes, pos: int, b0: int, limit: int) -> tuple[bytes, int]:
    """The string whose prefix byte ``b0`` (below 0xC0) is at ``pos``; (string, end)."""
    if b0 < 0x80:
        return data[pos : pos + 1], pos + 1
    if b0 < 0xB8:
        start = pos + 1
        end = start + b0 - 0x80
        if end > limit:
            raise RlpError("a string runs past its container")
        if end - start == 1 and data[start] < 0x80:
            raise RlpError("a single byte below 0x80 encoded as a string")
        return data[start:end], end
    start, end = _long(data, pos, b0 - 0xB7, limit)
    return data[start:end], end


def _long(data: bytes, pos: int, size: int, limit: int) -> tuple[int, int]:
    start = pos + 1 + size
    if start > limit:
        raise RlpError("a length runs past its container")
    if data[pos + 1] == 0:
        raise RlpError("a length with a leading zero byte")
    length = int.from_bytes(data[pos + 1 : start], "big")
    if length < 56:
        raise RlpError("a long-form length for a payload under 56 bytes")
    end = start + length
    if end > limit:
        raise RlpError("a payload runs past its container")
    return start, end


def encode(item: Encodable) -> bytes:
    """The canonical RLP of bytes, a non-negative int (big-endian, no leading zero) or a
    (nested) list of them."""
    if isinstance(item, bytes | bytearray):
        if len(item) == 1 and item[0] < 0x80:
            return bytes(item)
        return _prefix(len(item), 0x80) + bytes(item)
    if isinstance(item, int) and not isinstance(item, bool):
        if item < 0:
            raise ValueError("RLP encodes non-negative integers only")
        return encode(item.to_bytes((item.bit_length() + 7) // 8, "big"))
    if isinstance(item, list | tuple):
        body = b"".join(encode(x) for x in item)
        return _prefix(len(body), 0xC0) + body
    raise TypeError(f"RLP encodes bytes and lists, not {type(item).__name__}")


def _prefix(length: int, offset: int) -> bytes:
    if length < 56:
        return bytes([offset + length])
    size = (length.bit_length() + 7) // 8
    return bytes([offset + 55 + size]) + length.to_bytes(size, "big")
