"""The HTML report of a range audit or a stored one (docs/report.md): one self-contained page,
no script, no remote font or image (a Content-Security-Policy forbids every load), inline CSS
with print rules, one SVG timeline a check (:mod:`recompute.watch.timeline`).

What it shows comes from the lines and the store, which are data the user was handed: every
string is escaped by :func:`text` (the page's one escape point: visible, then HTML-escaped)
where it is written, never inserted as markup. The words (times, ages, the anchor's sentences,
derived values by type) are :mod:`recompute.watch.report_words`'.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape

from recompute.core.outside_text import visible
from recompute.core.verdict import EXIT_BAD, EXIT_GOOD, Verdict
from recompute.version import __version__
from recompute.watch.auditor import Summary
from recompute.watch.evaluate import JsonObject, Line
from recompute.watch.report_words import (
    anchor_rows,
    anchor_sentences,
    derived_value,
    iso,
)
from recompute.watch.timeline import Timeline, health_of, legend, svg

MAX_FINDINGS = 200  # a check's runs of BAD or unhealthy lines shown (the CSV has every line)


def text(value: object) -> str:
    """Any value written into the page, as text: the page's one escape point. Every
    non-printable character escaped visibly (:func:`recompute.core.outside_text.visible`: no
    bidi override, no invisible character), then ``<``, ``>``, ``&`` and quotes as HTML."""
    return escape(visible(str(value)), quote=True)


@dataclass
class Finding:
    """Consecutive lines of one check with the same verdict, reason and health: one row."""

    first: Line
    last: Line
    count: int = 1

    def same(self, line: Line) -> bool:
        return (line.verdict, line.reason, line.healthy) == (
            self.first.verdict, self.first.reason, self.first.healthy)


@dataclass
class AuditFacts:
    """What the page says of the audit as a whole."""

    title: str
    config_hash: str
    anchor: JsonObject  # Anchor.to_json(): method, trusts, and the method's detail
    exit_code: int
    first: int | None = None
    last: int | None = None
    pinned_hash: str | None = None
    complete: bool = True
    notes: list[str] = field(default_factory=list)
    retractions: list[JsonObject] = field(default_factory=list)  # {from, to, reason, detail}
    retraction_note: str = ""  # why there can be none, when there are none
    points: list[int] | None = None  # a sparse audit's blocks: marked on each timeline


class AuditPage:
    """Fed each block's lines in block order; :meth:`render` gives the page."""

    def __init__(self, checks: Iterable[tuple[str, Verdict]]):
        self.healthy = dict(checks)
        self.timelines: dict[str, Timeline] = {name: Timeline() for name in self.healthy}
        self.findings: dict[str, list[Finding]] = {name: [] for name in self.healthy}
        self.more: dict[str, int] = dict.fromkeys(self.healthy, 0)
        self._open: dict[str, Finding | None] = dict.fromkeys(self.healthy)
        self.low: int | None = None
        self.high: int | None = None

    def add(self, lines: Iterable[Line]) -> None:
        for line in lines:
            if line.block is None:  # node trouble before any block: no block to show
                continue
            if line.check not in self.timelines:  # a stored line of a check not listed
                self.timelines[line.check] = Timeline()
                self.findings[line.check] = []
                self.more[line.check] = 0
                self._open[line.check] = None
            self.timelines[line.check].add(line.block, line.verdict.value,
                                           health_of(line.healthy))
            self.low = line.block if self.low is None else min(self.low, line.block)
            self.high = line.block if self.high is None else max(self.high, line.block)
            self._finding(line)

    def _finding(self, line: Line) -> None:
        """Extend the check's open run, or start one (a line that is no finding ends it)."""
        run = self._open[line.check]
        if not (line.verdict is Verdict.BAD or line.healthy is False):
            self._open[line.check] = None
        elif run is not None and run.same(line):
            run.last = line
            run.count += 1
        elif len(self.findings[line.check]) < MAX_FINDINGS:
            self._open[line.check] = Finding(line, line)
            self.findings[line.check].append(self._open[line.check])  # type: ignore[arg-type]
        else:
            self._open[line.check] = None
            self.more[line.check] += 1

    def render(self, facts: AuditFacts, summary: Summary) -> str:
        first = facts.first if facts.first is not None else self.low
        last = facts.last if facts.last is not None else self.high
        body = [f"<h1>{text(facts.title)}</h1>", _verdict_banner(facts),
                self._overview(facts, summary, first, last), _anchor_section(facts),
                _summary_section(summary)]
        if first is not None and last is not None:
            body.append(self._timelines(first, last, facts.points))
        body += [self._findings(), _retractions(facts),
                 f"<footer>recompute {text(__version__)}: the verdicts are those of the "
                 "JSON lines; re-check any line with <code>recompute step … --block-hash "
                 "&lt;hash&gt; --json</code> (its evidence digest must be equal). Times are "
                 "UTC (ISO 8601); the JSON lines keep them as Unix seconds.</footer>"]
        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{text(facts.title)}</title><style>{_CSS}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")

    def _overview(self, facts: AuditFacts, summary: Summary, first: int | None,
                  last: int | None) -> str:
        """One paragraph: what was checked, over which blocks, trusting what, what was found."""
        names = list(summary.tallies)
        span = (f"blocks {first} to {last} ({summary.blocks} block(s) evaluated)"
                if first is not None and last is not None else "no block")
        stamp = facts.anchor.get("block_timestamp")
        top = (f", the last of them dated {iso(stamp)}" if isinstance(stamp, int)
               and not isinstance(stamp, bool) else "")
        trust = {"single-rpc": "trusting the node itself for which block is which (nothing "
                               "was pinned)",
                 "block-hash": "trusting only the block hash you pinned",
                 "checkpoint": "trusting only the checkpoint hash you pinned",
                 "light-client": "trusting only the beacon root you gave and the sync "
                                 "committees it leads to",
                 "parent-link": "each block tied to the one before it by parent links from "
                                "the block the watch anchored"}.get(
            str(facts.anchor.get("method")), f"trusting {facts.anchor.get('trusts', '?')}")
        found = []
        for name, t in summary.tallies.items():
            lines = sum(t.counts.values())
            if not lines:
                found.append(f"{name} had no line in this range")
            elif t.first_unhealthy is not None:
                runs = self.findings.get(name, [])
                where = "; ".join(_run_words(f) for f in runs[:3])
                more = f"; and {len(runs) - 3} more run(s)" if len(runs) > 3 else ""
                found.append(f"{name} was unhealthy ({where}{more})")
            elif t.counts[Verdict.UNVERIFIABLE]:
                found.append(f"{name} was never unhealthy but {t.counts[Verdict.UNVERIFIABLE]} "
                             "of its lines are UNVERIFIABLE")
            else:
                found.append(f"{name} was healthy at all {lines} of its blocks")
        unhealthy = sum(1 for t in summary.tallies.values() if t.first_unhealthy is not None)
        said = (f"This audit evaluated {len(names)} check(s) over {span}{top}, {trust}, from "
                "proofs of each block's storage against its state root. "
                f"{unhealthy} of {len(names)} check(s) were unhealthy at some block.")
        return (f"<section id=\"overview\"><p class=\"overview\">{text(said)}"
                "</p><ul class=\"found\">"
                + "".join(f"<li>{text(f)}</li>" for f in found) + "</ul></section>")

    def _timelines(self, first: int, last: int, points: list[int] | None = None) -> str:
        out = ["<section id=\"timelines\"><h2>Verdicts and health, block by block</h2>",
               legend()]
        for name, timeline in self.timelines.items():
            healthy = self.healthy.get(name)
            said = (f" (healthy when {text(healthy.value)})" if healthy is not None else "")
            out.append(f'<figure class="check"><figcaption><span class="name">{text(name)}'
                       f"</span>{said}</figcaption>{svg(timeline, name, first, last, points)}"
                       "</figure>")
        out.append("</section>")
        return "".join(out)

    def _findings(self) -> str:
        out = ["<section id=\"findings\"><h2>VERIFIED-BAD and unhealthy lines</h2>"
               "<p>Consecutive lines of a check with the same verdict, reason and health are "
               "one row: the first and the last block of the run, with their hashes and "
               "evidence digests; the detail and derived values are the first block's (and "
               "the last one's where they differ).</p>"]
        shown = False
        for name, runs in self.findings.items():
            if not runs:
                continue
            shown = True
            out.append(f'<h3 class="name">{text(name)}</h3><table class="findings"><thead><tr>'
                       "<th>blocks</th><th>verdict</th><th>detail</th><th>derived</th>"
                       "<th>evidence digest</th></tr></thead><tbody>")
            out += [_finding_row(run) for run in runs]
            out.append("</tbody></table>")
            if self.more[name]:
                out.append(f"<p>… and {self.more[name]} more line(s) of this check: the CSV "
                           "lists every line.</p>")
        if not shown:
            out.append("<p>None: no check had a VERIFIED-BAD or unhealthy verdict.</p>")
        out.append("</section>")
        return "".join(out)


def _run_words(run: Finding) -> str:
    """``VERIFIED-BAD from block 28 to 226, 199 blocks`` (one block: ``at block 69``)."""
    if run.count == 1:
        return f"{run.first.verdict.value} at block {run.first.block}"
    return (f"{run.first.verdict.value} from block {run.first.block} to {run.last.block}, "
            f"{run.count} blocks")


def _derived(line: Line, before: Line | None = None) -> str:
    """The line's derived values by type (those that differ from ``before``'s, if given)."""
    return "".join(f"<div><span class=\"key\">{text(k)}</span> "
                   f"{text(derived_value(k, v))}</div>" for k, v in line.derived.items()
                   if before is None or before.derived.get(k) != v)


def _finding_row(run: Finding) -> str:
    first, last = run.first, run.last
    blocks = (f"<b>{text(_run_words(run))}</b><br>{first.block} "
              f"<code class=\"hash\">{text(first.hash)}</code>")
    digests = f"<code class=\"hash\">{text(first.evidence_digest)}</code>"
    derived = _derived(first)
    detail = text(first.detail)
    if run.count > 1:
        blocks += f"<br>{last.block} <code class=\"hash\">{text(last.hash)}</code>"
        digests += f"<br><code class=\"hash\">{text(last.evidence_digest)}</code>"
        if last.derived != first.derived:
            derived += (f"<div class=\"then\">at block {last.block}:</div>"
                        f"{_derived(last, first)}")
        if last.detail != first.detail:
            detail += f"<div class=\"then\">at block {last.block}: {text(last.detail)}</div>"
    health = "" if first.healthy is not False else ", unhealthy"
    return (f"<tr><td>{blocks}</td><td>{text(first.verdict.value)} "
            f"({text(first.reason)}{health})</td><td>{detail}</td>"
            f"<td class=\"derived\">{derived}</td><td>{digests}</td></tr>")


def _verdict_banner(facts: AuditFacts) -> str:
    if not facts.complete:
        kind, said = "unverifiable", "Incomplete: not every segment is tied to the pinned block"
    elif facts.exit_code == EXIT_GOOD:
        kind, said = "good", "Every check was healthy at every block (exit 0)"
    elif facts.exit_code == EXIT_BAD:
        kind, said = "bad", "A check was unhealthy at some block (exit 1)"
    else:
        kind, said = "unverifiable", ("Some lines are UNVERIFIABLE and none is unhealthy "
                                      "(exit 2)")
    notes = "".join(f"<li>{text(note)}</li>" for note in facts.notes)
    return (f'<p class="banner {kind}">{text(said)}</p>'
            + (f"<ul class=\"notes\">{notes}</ul>" if notes else ""))


def _anchor_section(facts: AuditFacts) -> str:
    rows = []
    if facts.first is not None and facts.last is not None:
        rows.append(("blocks", f"{facts.first}..{facts.last}"))
    if facts.pinned_hash:
        rows.append(("top block's hash", facts.pinned_hash))
    rows.append(("anchor method", str(facts.anchor.get("method", "?"))))
    rows += anchor_rows(facts.anchor)
    rows.append(("checks configuration (sha256)", facts.config_hash))
    cells = "".join(f"<tr><th>{text(k)}</th><td><code>{text(v)}</code></td></tr>"
                    for k, v in rows)
    said = "".join(f"<p>{text(s)}</p>" for s in anchor_sentences(facts.anchor))
    kind = "unverifiable" if facts.anchor.get("method") == "single-rpc" else "said"
    banner = ""
    if facts.anchor.get("method") == "op-stack":  # an L2 block: its game's tier (docs/l2.md)
        tier = str(facts.anchor.get("tier", "?"))
        tone = "good" if tier == "final" else "unverifiable"
        by = ("the root the chain's AnchorStateRegistry accepted, which is final"
              if facts.anchor.get("basis") == "anchor-state-registry"
              else f"a dispute game that is {tier}")
        banner = (f'<p class="banner {tone}">L2 TIER {text(tier.upper())}: pinned through '
                  f'L1 by {text(by)}'
                  + ("" if tier == "final" else ", not final: its root claim can still be "
                     "overturned") + ".</p>")
    return (f'<section id="anchor"><h2>Anchor: what the verdicts rest on</h2>{banner}'
            f'<div class="anchor {kind}">{said}</div>'
            f'<table class="facts">{cells}</table></section>')


def _summary_section(summary: Summary) -> str:
    rows = []
    for name, t in summary.tallies.items():
        reasons = ", ".join(f"{reason} ×{n}" for reason, n in sorted(t.reasons.items()))
        lines = sum(t.counts.values())
        outcome = ("no line" if not lines else "healthy at every block"
                   if t.first_unhealthy is None else f"unhealthy from block {t.first_unhealthy}")
        rows.append(
            f"<tr><td class=\"name\">{text(name)}</td><td>{text(outcome)}</td>"
            f"<td class=\"verdict\">{text(t.healthy.value)}</td>"
            f"<td class=\"n\">{t.counts[Verdict.GOOD]}</td>"
            f"<td class=\"n\">{t.counts[Verdict.BAD]}</td>"
            f"<td class=\"n\">{t.counts[Verdict.UNVERIFIABLE]}</td>"
            f"<td class=\"n\">{_dash(t.first_bad)}</td>"
            f"<td class=\"n\">{_dash(t.first_unhealthy)}</td><td>{text(reasons)}</td></tr>")
    return ("<section id=\"summary\"><h2>Summary</h2>"
            f"<p>{summary.blocks} block(s), {len(summary.tallies)} check(s). A check is "
            "healthy at a block when its verdict there is the one its configuration counts as "
            "healthy (column “healthy when”).</p>"
            "<table><thead><tr><th>check</th><th>outcome</th><th>healthy when</th>"
            "<th>GOOD</th><th>BAD</th><th>UNVERIFIABLE</th><th>first BAD</th>"
            "<th>first unhealthy</th><th>UNVERIFIABLE because</th></tr></thead><tbody>"
            f"{''.join(rows)}</tbody></table></section>")


def _retractions(facts: AuditFacts) -> str:
    out = ["<section id=\"retractions\"><h2>Retractions</h2>"]
    if facts.retractions:
        out.append("<p>The lines of these blocks were withdrawn: their segment does not tie to "
                   "the pinned block by parent links, so every check there is UNVERIFIABLE."
                   "</p><table><thead><tr><th>blocks</th><th>reason</th><th>detail</th></tr>"
                   "</thead><tbody>")
        for r in facts.retractions:
            out.append(f"<tr><td>{text(r.get('from'))}..{text(r.get('to'))}</td>"
                       f"<td>{text(r.get('reason'))}</td>"
                       f"<td>{text(r.get('detail'))}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append(f"<p>None. {text(facts.retraction_note)}</p>")
    out.append("</section>")
    return "".join(out)


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;
margin:2em auto;max-width:1100px;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.3em}h2{font-size:1.2em;border-bottom:1px solid #ccc;
padding-bottom:.2em;margin-top:1.6em}h3{font-size:1em;margin:1em 0 .3em}
code{font:12px/1.3 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all}
table{border-collapse:collapse;width:100%;margin:.4em 0}
th,td{border:1px solid #d0d0d0;padding:.25em .45em;text-align:left;vertical-align:top}
thead th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}
table.facts th{width:14em;background:#f7f7f7;font-weight:600}
.name{font-weight:600;word-break:break-all}
.banner{padding:.6em .9em;border-radius:4px;font-weight:600}
.banner.good{background:#e6f4ea;border:1px solid #2e7d32}
.banner.bad{background:#fdecea;border:1px solid #c62828}
.banner.unverifiable{background:#fff6dc;border:1px solid #e0a100}
figure.check{margin:.8em 0;break-inside:avoid;page-break-inside:avoid}
figure.check figcaption{margin-bottom:.2em}
svg.timeline{width:100%;height:auto;display:block}
svg.timeline text{font:12px system-ui,sans-serif;fill:#333}
.legend{margin:.2em 0}.key{margin-right:1em;white-space:nowrap}
.swatch{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em;
border:1px solid #999}
footer{margin-top:2em;color:#555;font-size:.9em}
p.overview{font-size:1.05em}ul.found li{margin:.15em 0}
.anchor p{margin:.3em 0}.anchor.unverifiable{background:#fff6dc;border:1px solid #e0a100;
padding:.3em .9em;border-radius:4px}
td.derived div{overflow-wrap:anywhere}td.derived .key{color:#555}
.then{color:#555;margin-top:.3em}table.findings{table-layout:fixed}
table.findings th:nth-child(1){width:24%}table.findings th:nth-child(2){width:12%}
table.findings th:nth-child(3){width:22%}table.findings th:nth-child(5){width:16%}
td{overflow-wrap:anywhere}td.verdict{white-space:nowrap}
@media print{body{margin:0;max-width:none;font-size:11px}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
section{break-inside:auto}h2,h3{break-after:avoid;page-break-after:avoid}
tr{break-inside:avoid;page-break-inside:avoid}}
"""
