"""A check's verdicts and health across a range audit, as runs of blocks, and the SVG picture of
them that the HTML report shows (docs/report.md §The timeline): drawn here, no chart library.

Two bands per picture: the verdict at each block (GOOD, BAD, UNVERIFIABLE, or no line: a block
before the check's ``since``), and the health (healthy, unhealthy, unknown for UNVERIFIABLE).
The runs are kept as they come (block order), so memory grows with the changes, not the blocks;
a picture draws at most :data:`COLUMNS` rectangles a band, each column showing the worst state
among its blocks (unhealthy over unknown over healthy), so a single bad block is never hidden.
Every text in the picture (the check's name, which the store holds) is made visible and escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape as html_escape

from recompute.core.outside_text import visible

WIDTH = 960  # the picture's coordinate width; it scales to the page
COLUMNS = 480  # at most this many rectangles a band
NONE = "none"  # no line for this block (before the check's since, or not evaluated)



def escape(value: object) -> str:
    """Text in the picture: visible (no control, bidi or invisible character), HTML-escaped."""
    return html_escape(visible(value))


# state -> (colour, label, rank: the worst wins a column)
VERDICTS = {
    NONE: ("#e3e3e3", "no line", 0),
    "VERIFIED-GOOD": ("#1f6fb2", "VERIFIED-GOOD", 1),
    "UNVERIFIABLE": ("#e0a100", "UNVERIFIABLE", 2),
    "VERIFIED-BAD": ("#7b1fa2", "VERIFIED-BAD", 3),
}
HEALTH = {
    NONE: ("#e3e3e3", "no line", 0),
    "healthy": ("#2e7d32", "healthy", 1),
    "unknown": ("#e0a100", "unknown (UNVERIFIABLE)", 2),
    "unhealthy": ("#c62828", "unhealthy", 3),
}


def health_of(healthy: bool | None) -> str:
    return "unknown" if healthy is None else "healthy" if healthy else "unhealthy"


@dataclass
class Run:
    first: int
    last: int
    verdict: str
    health: str


class Timeline:
    """One check's states, fed in block order."""

    def __init__(self) -> None:
        self.runs: list[Run] = []

    def add(self, block: int, verdict: str, health: str) -> None:
        if self.runs:
            run = self.runs[-1]
            if (run.last + 1 == block and run.verdict == verdict and run.health == health):
                run.last = block
                return
        self.runs.append(Run(block, block, verdict, health))

    def columns(self, band: str, first: int, last: int) -> list[tuple[int, int, str]]:
        """``(first block, last block, state)`` runs of the band over ``first..last``, gaps as
        ``none``, merged into at most :data:`COLUMNS` columns (the worst state of a column's
        blocks)."""
        states = VERDICTS if band == "verdict" else HEALTH
        span = last - first + 1
        runs: list[tuple[int, int, str]] = []
        at = first
        for run in self.runs:
            lo, hi = max(run.first, at), min(run.last, last)
            if lo > hi:
                continue
            if lo > at:
                runs.append((at, lo - 1, NONE))
            runs.append((lo, hi, run.verdict if band == "verdict" else run.health))
            at = hi + 1
        if at <= last:
            runs.append((at, last, NONE))
        if span <= COLUMNS:
            return _merged(runs)
        per = -(-span // COLUMNS)  # blocks a column, rounded up
        worst: dict[int, str] = {}
        for lo, hi, state in runs:
            for column in range((lo - first) // per, (hi - first) // per + 1):
                held = worst.get(column)
                if held is None or states[state][2] > states[held][2]:
                    worst[column] = state
        out = [(first + c * per, min(last, first + (c + 1) * per - 1), s)
               for c, s in sorted(worst.items())]
        return _merged(out)


def _merged(runs: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    for lo, hi, state in runs:
        if out and out[-1][2] == state and out[-1][1] + 1 == lo:
            out[-1] = (out[-1][0], hi, state)
        else:
            out.append((lo, hi, state))
    return out


_BAND_Y = {"verdict": 6, "health": 34}
_BAND_H = 22
_LABEL_W = 70  # the bands' names on the left


def svg(timeline: Timeline, name: str, first: int, last: int,
        points: list[int] | None = None) -> str:
    """The picture of one check over blocks ``first..last``: two bands, block numbers under
    them; every rectangle has a tooltip (its blocks and state). ``points``: a sparse audit's
    blocks, each marked by a dot above the bands at its place (with its number as tooltip)."""
    plot = WIDTH - _LABEL_W
    span = last - first + 1
    label = escape(name)
    parts = [f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} 80" '
             f'role="img" aria-label="timeline of {label}">',
             f"<title>{label}: verdict and health at blocks {first}.."
             f"{last}</title>"]
    for band, states in (("verdict", VERDICTS), ("health", HEALTH)):
        y = _BAND_Y[band]
        parts.append(f'<text x="0" y="{y + 15}" class="band">{band}</text>')
        for lo, hi, state in timeline.columns(band, first, last):
            x0 = _LABEL_W + (lo - first) * plot / span
            x1 = _LABEL_W + (hi + 1 - first) * plot / span
            colour, text, _ = states[state]
            blocks = f"block {lo}" if lo == hi else f"blocks {lo}..{hi}"
            parts.append(f'<rect x="{x0:.2f}" y="{y}" width="{max(x1 - x0, 0.5):.2f}" '
                         f'height="{_BAND_H}" fill="{colour}" data-state="{escape(state)}">'
                         f"<title>{blocks}: {escape(text)}</title></rect>")
    for block in points or ():
        x = _LABEL_W + (block + 0.5 - first) * plot / span
        parts.append(f'<circle class="point" cx="{x:.2f}" cy="3" r="2.5" fill="#333">'
                     f"<title>block {block}</title></circle>")
    parts.append(f'<text x="{_LABEL_W}" y="74" class="tick">{first}</text>')
    if span >= 8:  # three block numbers between the ends, at the middle of their block
        for k in (1, 2, 3):
            block = first + span * k // 4
            x = _LABEL_W + (block + 0.5 - first) * plot / span
            parts.append(f'<text x="{x:.2f}" y="74" class="tick" text-anchor="middle">{block}'
                         "</text>")
    parts.append(f'<text x="{WIDTH}" y="74" class="tick" text-anchor="end">{last}'
                 "</text>")
    parts.append("</svg>")
    return "".join(parts)


def legend() -> str:
    """The colours of both bands, as HTML (one line each)."""
    def items(states: dict[str, tuple[str, str, int]]) -> str:
        return "".join(f'<span class="key"><span class="swatch" style="background:{c}"></span>'
                       f"{escape(text)}</span>" for c, text, _ in states.values())

    return (f'<p class="legend"><b>verdict</b> {items(VERDICTS)}</p>'
            f'<p class="legend"><b>health</b> {items(HEALTH)}</p>')
