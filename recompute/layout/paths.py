"""The path syntax auditors use to name storage: ``swarms[7].members[0xab…].status``.

Grammar (whitespace is allowed only inside brackets, around the key)::

    path   := IDENT ( "." IDENT | "[" key "]" )*
    key    := DECIMAL            -- 42, -5 (negative only means something for intN keys)
            | HEX                -- 0x1f, an address 0x + 40 hex digits, bytesN, bytes
            | STRING             -- "text" with \\" and \\\\ escapes, UTF-8 encoded
            | "true" | "false"

``.length`` on a dynamic array or on bytes/string names its length; which member or key
kind a step needs is decided by the resolver, which knows the types. Errors name the
1-based column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NoReturn

from recompute.core.errors import UsageError

_IDENT_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$")
_IDENT_REST = _IDENT_START | set("0123456789")
_DIGITS = set("0123456789")
_HEX = set("0123456789abcdefABCDEF")


# A literal inside ``[...]``: one frozen class per form, so a resolver matches on the class.
# ``kind`` names the form in messages; ``col`` is the 1-based column where the key starts.


@dataclass(frozen=True)
class IntKey:
    """A decimal key: ``42``, ``-5`` (negative only means something for intN keys)."""

    text: str
    col: int
    number: int
    kind: ClassVar[str] = "int"


@dataclass(frozen=True)
class HexKey:
    """``0x…``: an address, a bytesN, a bytes value or a number."""

    text: str
    col: int
    digits: str  # as written, lowercase, without 0x (may be empty)
    kind: ClassVar[str] = "hex"

    @property
    def number(self) -> int | None:
        return int(self.digits, 16) if self.digits else None


@dataclass(frozen=True)
class StringKey:
    """``"text"``: its UTF-8 bytes."""

    text: str
    col: int
    data: bytes
    kind: ClassVar[str] = "string"


@dataclass(frozen=True)
class BoolKey:
    text: str
    col: int
    flag: bool
    kind: ClassVar[str] = "bool"


Key = IntKey | HexKey | StringKey | BoolKey

# 2**256 has 78 decimal digits: a longer decimal key can be nothing solc hashes, and Python's
# int() refuses more than 4,300 digits; a path is bounded as a whole before it is parsed.
MAX_DECIMAL_DIGITS = 80
MAX_PATH_LENGTH = 8192


@dataclass(frozen=True)
class MemberStep:
    name: str
    col: int

    @property
    def text(self) -> str:
        return f".{self.name}"


@dataclass(frozen=True)
class IndexStep:
    key: Key
    col: int

    @property
    def text(self) -> str:
        return f"[{self.key.text}]"


@dataclass(frozen=True)
class Path:
    text: str
    root: str
    steps: tuple[MemberStep | IndexStep, ...]

    def prefix(self, n: int) -> str:
        """The canonical text of the root and the first ``n`` steps."""
        return self.root + "".join(s.text for s in self.steps[:n])


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def fail(self, message: str, pos: int | None = None) -> NoReturn:
        col = (self.pos if pos is None else pos) + 1
        raise UsageError(f"bad path {self.text!r}: {message} at column {col}")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def ident(self, what: str) -> str:
        start = self.pos
        if self.peek() not in _IDENT_START or not self.peek():
            got = repr(self.peek()) if self.peek() else "the end"
            self.fail(f"expected {what}, found {got}")
        while self.peek() and self.peek() in _IDENT_REST:
            self.pos += 1
        return self.text[start:self.pos]

    def skip_spaces(self) -> None:
        while self.peek() and self.peek() in " \t":
            self.pos += 1

    def key(self) -> Key:
        start = self.pos
        c = self.peek()
        if c == '"':
            return self.string(start)
        if c == "-" or (c and c in _DIGITS):
            if self.text.startswith(("0x", "0X"), self.pos):
                self.pos += 2
                while self.peek() and self.peek() in _HEX:
                    self.pos += 1
                digits = self.text[start + 2:self.pos].lower()
                return HexKey(self.text[start:self.pos], start + 1, digits)
            if c == "-":
                self.pos += 1
                if not (self.peek() and self.peek() in _DIGITS):
                    self.fail("expected digits after '-'")
            while self.peek() and self.peek() in _DIGITS:
                self.pos += 1
            text = self.text[start:self.pos]
            if len(text.lstrip("-")) > MAX_DECIMAL_DIGITS:
                self.fail(f"a decimal key of more than {MAX_DECIMAL_DIGITS} digits exceeds "
                          "2**256", start)
            return IntKey(text, start + 1, int(text))
        if c and c in _IDENT_START:
            word = self.ident("a key")
            if word in ("true", "false"):
                return BoolKey(word, start + 1, word == "true")
            self.fail(f"{word!r} is not a key (use a number, 0x-hex, \"string\", true or false)",
                      start)
        got = repr(c) if c else "the end"
        self.fail(f"expected a key (number, 0x-hex, \"string\", true/false), found {got}")

    def string(self, start: int) -> Key:
        self.pos += 1
        out = []
        while True:
            c = self.peek()
            if not c:
                self.fail("unterminated string", start)
            if c == '"':
                self.pos += 1
                break
            if c == "\\":
                nxt = self.text[self.pos + 1:self.pos + 2]
                if nxt not in ('"', "\\"):
                    self.fail("only \\\" and \\\\ escapes are allowed in strings")
                out.append(nxt)
                self.pos += 2
                continue
            out.append(c)
            self.pos += 1
        value = "".join(out)
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError:
            self.fail("the string is not encodable as UTF-8", start)
        return StringKey(self.text[start:self.pos], start + 1, data)

    def parse(self) -> Path:
        if not self.text:
            raise UsageError("bad path '': empty path")
        root = self.ident("a variable name")
        steps: list[MemberStep | IndexStep] = []
        while self.pos < len(self.text):
            c = self.peek()
            start = self.pos
            if c == ".":
                self.pos += 1
                steps.append(MemberStep(self.ident("a member name after '.'"), start + 1))
            elif c == "[":
                self.pos += 1
                self.skip_spaces()
                key = self.key()
                self.skip_spaces()
                if self.peek() != "]":
                    got = repr(self.peek()) if self.peek() else "the end"
                    self.fail(f"expected ']', found {got}")
                self.pos += 1
                steps.append(IndexStep(key, start + 1))
            else:
                self.fail(f"expected '.' or '[', found {c!r}")
        return Path(self.text, root, tuple(steps))


def parse_path(text: str) -> Path:
    """Parse a layout path; :class:`UsageError` (with the column) on any syntax error."""
    if not isinstance(text, str):
        raise UsageError(f"a path must be text, got {type(text).__name__}")
    if len(text) > MAX_PATH_LENGTH:
        raise UsageError(f"bad path {text[:40]!r}…: longer than {MAX_PATH_LENGTH} characters")
    return _Parser(text).parse()
