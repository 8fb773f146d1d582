"""The derived values an ``--expect`` may name: each recipe's :class:`Output` types, so that an
expected value is checked when the command line or checks.toml is parsed, before any node is
asked, and compared in its canonical text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from recompute.core.errors import UsageError

_DECIMAL = re.compile(r"-?[0-9]{1,80}\Z")
_HEXNUM = re.compile(r"0[xX][0-9a-fA-F]{1,64}\Z")


def parse_int_text(text: str) -> int | None:
    """An integer written in decimal or 0x-hex (at most 256 bits' worth of digits), or None."""
    text = text.strip()
    if _DECIMAL.match(text):
        return int(text)
    if _HEXNUM.match(text):
        return int(text, 16)
    return None


@dataclass(frozen=True)
class Output:
    """The type of one derived value, so that ``--expect k=v`` is checked when the command or
    checks.toml is parsed, before any node is asked. Kinds: ``int``
    (decimal or 0x-hex), ``bool``, ``hex`` (0x bytes, compared lower-case), ``enum`` (one of
    ``choices``, any case), ``text`` (compared as written), ``json`` (a table: not
    expectable)."""

    kind: str
    choices: tuple[str, ...] = ()
    unit: str = ""  # how a report shows it: "time" (Unix seconds), "amount"; "" as it is

    def parse(self, text: str, where: str) -> str:
        """The expected value's canonical text (as :func:`normalise` writes derived values)."""
        text = text.strip()
        if self.kind == "int":
            value = parse_int_text(text)
            if value is None:
                raise UsageError(f"{where}={text!r} is not an integer (decimal or 0x-hex)")
            return str(value)
        if self.kind == "bool":
            if text.lower() not in ("true", "false"):
                raise UsageError(f"{where}={text!r} is not true or false")
            return text.lower()
        if self.kind == "hex":
            if not re.fullmatch(r"0[xX]([0-9a-fA-F]{2})*", text):
                raise UsageError(f"{where}={text!r} is not 0x-hex bytes")
            return text.lower()
        if self.kind == "enum":
            for choice in self.choices:
                if text.upper() == choice.upper():
                    return choice
            raise UsageError(f"{where}={text!r} is not one of {', '.join(self.choices)}")
        if self.kind == "json":
            raise UsageError(f"{where}: a table of values cannot be expected; expect one of its "
                             "scalar neighbours")
        return text


INT, BOOL, HEX, TEXT, TABLE = Output("int"), Output("bool"), Output("hex"), Output("text"), \
    Output("json")
TIME, AMOUNT = Output("int", unit="time"), Output("int", unit="amount")  # ints, shown so


def enum(*choices: str) -> Output:
    return Output("enum", tuple(choices))
