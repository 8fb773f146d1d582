"""JSON from outside, bounded before it is parsed (README §Trust model: every parser of outside
bytes is bounded in size, depth and number of values, and fails with one clear line).

Node answers, vectors, layout descriptors and build artifacts all come through :func:`loads`
or :func:`load_file`: the size is checked first, then the nesting depth and the number of
values are counted on the raw text (strings skipped), and only then does :func:`json.loads`
run, so no object of a document over a bound is ever built. The values bound matters beside the
bytes bound: 64 MiB of ``[{},{},…]`` is 22 million dicts, 1.75 GB once parsed (docs/performance.md
§Bounded answers). Python's JSON decoder
recurses once per nesting level; web3 (through py_ecc) raises the interpreter's recursion limit
to 100,000 on import, so 200 KB of ``[`` would overflow the C stack (SIGSEGV) rather than raise
RecursionError. :func:`reset_recursion_limit` puts the limit back after such an import.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any

MAX_DEPTH = 64  # proofs, receipts, descriptors and vectors nest a dozen levels at most
MAX_BYTES = 64 * 1024 * 1024  # a block of receipts or a big vector: well under this
# Values (objects, arrays, strings, numbers, literals; each ``,`` and opening bracket outside
# strings counts one) in one document. The densest legitimate answers, a block's receipts and
# logs, are 30 bytes a value or more (hex strings); a mainnet block's receipts, a few MB, are
# some 100,000-300,000 values: 2 million is a margin of more than 6x over them, and 2 million
# of the costliest values (one-key objects) are about 250 MB once parsed, 16 MB of text.
MAX_VALUES = 2_000_000
RECURSION_LIMIT = 1000  # CPython's own default

# The bytes that shape JSON's nesting and count its values: quotes, backslashes (escapes in
# strings), brackets, commas. In UTF-8 none of them occurs inside a multi-byte character, so they
# can be read on the bytes.
_MARKS = b'"\\[]{},'
_NOT_MARK = bytes(sorted(set(range(256)) - set(_MARKS)))
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
# A JSON string, written "unrolled" (runs of plain bytes, then one escape at a time).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}

ErrorFactory = Callable[[str], Exception]


def reset_recursion_limit() -> None:
    """Undo py_ecc's ``sys.setrecursionlimit(100000)`` (imported by web3)."""
    if sys.getrecursionlimit() > RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)


def nesting_depth(text: str | bytes, limit: int = MAX_DEPTH) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings; when there are no more than
    ``limit`` opening brackets at all, their count (a bound, enough to compare with it).

    Read on the bytes, in C but for the last step: the quotes, backslashes and brackets are
    kept (``bytes.translate``), the strings dropped from those (without a backslash a string
    ends at the next quote; with one, the whole text goes through :data:`_STRING`), and the
    depth is the highest running sum of the brackets left."""
    data = _bytes(text)
    marks = data.translate(None, _NOT_MARK)
    opening = marks.count(b"[") + marks.count(b"{")
    if opening <= limit:
        return opening
    brackets = _outside_strings(data, marks).translate(None, _NOT_BRACKET)
    return max(accumulate(map(_STEP.__getitem__, brackets), initial=0))


def value_count(text: str | bytes, limit: int = MAX_VALUES) -> int:
    """How many values the document has, at most: its commas and opening brackets outside
    strings, plus one; when that many are not found in the whole text (strings included),
    that count (a bound, enough to compare with ``limit``)."""
    data = _bytes(text)
    counted = data.count(b",") + data.count(b"[") + data.count(b"{")
    if counted < limit or b'"' not in data:  # no string: the count is exact
        return counted + 1
    outside = _outside_strings(data, data.translate(None, _NOT_MARK))
    return outside.count(b",") + outside.count(b"[") + outside.count(b"{") + 1


def _bytes(text: str | bytes) -> bytes:
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)


def _outside_strings(data: bytes, marks: bytes) -> bytes:
    """What of ``data``'s :data:`_MARKS` (``marks``) is outside its strings (or ``data``
    without its strings): without a backslash a string ends at the next quote; with one, the
    whole text goes through :data:`_STRING`."""
    if b"\\" in marks:
        return _STRING.sub(b"", data)
    parts = marks.split(b'"')
    kept = parts[::2]
    if len(parts) % 2 == 0:  # an odd number of quotes: the last one opens no string
        kept.append(parts[-1])
    return b"".join(kept)


def loads(data: str | bytes, what: str, error: ErrorFactory, *, max_bytes: int = MAX_BYTES,
          max_depth: int = MAX_DEPTH, max_values: int = MAX_VALUES, **options: Any) -> Any:
    """``json.loads`` of outside text, or ``error(one line)``: too big, too deep, too many
    values, not UTF-8, not JSON. ``options`` go to :func:`json.loads` (e.g.
    ``object_pairs_hook``)."""
    if len(data) > max_bytes:
        raise error(f"{what} is larger than {max_bytes:,} bytes")
    raw = data
    if value_count(raw, max_values) > max_values:  # before any copy: 64 MiB read in C at once
        raise error(f"{what}: JSON of more than {max_values:,} values")
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise error(f"{what} is not JSON (not UTF-8 text)") from None
    if nesting_depth(raw, max_depth) > max_depth:
        raise error(f"{what}: JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(data, **options)
    except json.JSONDecodeError as exc:
        raise error(f"{what} is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
                    ) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer over Python's digit limit
        raise error(f"{what} is not JSON ({' '.join(str(exc).split())[:120]})") from None


def read_limited(path: str | Path, what: str, error: ErrorFactory, max_bytes: int) -> bytes:
    """The bytes of a regular file from outside, at most ``max_bytes + 1`` of them (more means
    too big), or ``error(one line)``. The file is opened without blocking and checked on the
    open descriptor, so a FIFO with no writer, ``/dev/zero`` or a directory is one line, never
    a hang or endless bytes, even when it was put there after a look at the name."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, ValueError):  # ValueError: a NUL in the name, no file has it
        raise error(f"{what}: no such file") from None
    except OSError as exc:
        raise error(f"{what}: cannot read ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise error(f"{what}: not a file")
        chunks, left = [], max_bytes + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"{what}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def load_file(path: str | Path, what: str | None, error: ErrorFactory, *,
              max_bytes: int = MAX_BYTES, **options: Any) -> Any:
    """A JSON file from outside: only regular files, read up to ``max_bytes`` (so
    ``/proc/self/mem`` or a FIFO is one line, not a hang or a crash)."""
    what = what or str(path)
    data = read_limited(path, what, error, max_bytes)
    return loads(data, what, error, max_bytes=max_bytes, **options)
