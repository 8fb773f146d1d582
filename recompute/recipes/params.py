"""A recipe's parameters: :class:`Param` declares one (``--param NAME=VALUE``, a checks.toml
``params`` entry) and parses its text: an address (EIP-55 checked when mixed-case), an integer
(``uint`` within 256 bits), 32 bytes of hex, a bool, a file path, or text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recompute.core.errors import OptionError, literal
from recompute.core.hexdata import checksum_problem


def _bad_param(name: str, text: str, what: str) -> OptionError:
    """``--param NAME=TEXT`` and what is wrong with it, the option worded by the caller."""
    return OptionError("{param} " + literal(name) + "={text!r}" + what, ("param",), text=text)


def _address_text(name: str, text: str) -> str:
    if not re.fullmatch(r"0x[0-9a-fA-F]{40}", text):
        raise _bad_param(name, text, " is not an address (0x + 40 hex digits)")
    problem = checksum_problem(text[2:])
    if problem:
        raise _bad_param(name, text, f" {problem}")
    return "0x" + text[2:].lower()


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    help: str
    default: Any = None
    required: bool = True

    def parse(self, text: str) -> Any:
        """A value given on the command line as text."""
        if self.kind == "address":
            return _address_text(self.name, text)
        if self.kind in ("uint", "int"):
            try:
                value = int(text, 0)
            except ValueError:
                raise _bad_param(self.name, text, " is not an integer") from None
            if self.kind == "uint" and not 0 <= value < 1 << 256:
                raise _bad_param(self.name, text, " is not a uint256")
            return value
        if self.kind == "bytes32":
            if not re.fullmatch(r"0x[0-9a-fA-F]{64}", text):
                raise _bad_param(self.name, text, " is not 32 bytes of 0x-hex")
            return "0x" + text[2:].lower()
        if self.kind == "bool":
            if text.lower() not in ("true", "false", "1", "0"):
                raise _bad_param(self.name, text, " is not true/false")
            return text.lower() in ("true", "1")
        if self.kind == "file":
            path = Path(text)
            if not path.is_file():
                raise _bad_param(self.name, text, ": no such file")
            return path
        return text
