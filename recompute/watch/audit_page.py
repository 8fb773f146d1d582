"""The HTML report of a range audit or a stored one (docs/report.md): one self-contained page,
no script, no remote font or image (a Content-Security-Policy forbids every load), inline CSS
with print rules, one SVG timeline a check (:mod:`recompute.watch.timeline`).

What it shows comes from the lines and the store, which are data the user was handed: every
string is escaped (:func:`html.escape`) where it is written, never inserted as markup.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape
from urllib.parse import urlsplit

from recompute.core.verdict import EXIT_BAD, EXIT_GOOD, Verdict
from recompute.version import __version__
from recompute.watch.auditor import Summary
from recompute.watch.evaluate import JsonObject, Line
from recompute.watch.timeline import Timeline, health_of, legend, svg

MAX_FINDINGS = 200  # a check's BAD and unhealthy lines shown on the page (the CSV has all)


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
        self.findings: dict[str, list[Line]] = {name: [] for name in self.healthy}
        self.more: dict[str, int] = dict.fromkeys(self.healthy, 0)
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
            self.timelines[line.check].add(line.block, line.verdict.value,
                                           health_of(line.healthy))
            self.low = line.block if self.low is None else min(self.low, line.block)
            self.high = line.block if self.high is None else max(self.high, line.block)
            if line.verdict is Verdict.BAD or line.healthy is False:
                if len(self.findings[line.check]) < MAX_FINDINGS:
                    self.findings[line.check].append(line)
                else:
                    self.more[line.check] += 1

    def render(self, facts: AuditFacts, summary: Summary) -> str:
        first = facts.first if facts.first is not None else self.low
        last = facts.last if facts.last is not None else self.high
        body = [f"<h1>{escape(facts.title)}</h1>", _verdict_banner(facts),
                _anchor_section(facts), _summary_section(summary)]
        if first is not None and last is not None:
            body.append(self._timelines(first, last, facts.points))
        body += [self._findings(), _retractions(facts),
                 f'<footer>recompute {escape(__version__)}: the verdicts are those of the '
                 "JSON lines; re-check any line with <code>recompute step … --block-hash "
                 "&lt;hash&gt; --json</code> (its evidence digest must be equal).</footer>"]
        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(facts.title)}</title><style>{_CSS}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")

    def _timelines(self, first: int, last: int, points: list[int] | None = None) -> str:
        out = ["<section id=\"timelines\"><h2>Verdicts and health, block by block</h2>",
               legend()]
        for name, timeline in self.timelines.items():
            healthy = self.healthy.get(name)
            said = f" (healthy: {escape(healthy.value)})" if healthy is not None else ""
            out.append(f'<figure class="check"><figcaption><span class="name">{escape(name)}'
                       f"</span>{said}</figcaption>{svg(timeline, name, first, last, points)}"
                       "</figure>")
        out.append("</section>")
        return "".join(out)

    def _findings(self) -> str:
        out = ["<section id=\"findings\"><h2>VERIFIED-BAD and unhealthy lines</h2>"]
        shown = False
        for name, lines in self.findings.items():
            if not lines:
                continue
            shown = True
            out.append(f'<h3 class="name">{escape(name)}</h3><table><thead><tr><th>block</th>'
                       "<th>verdict</th><th>reason</th><th>detail</th><th>derived</th>"
                       "<th>evidence digest</th></tr></thead><tbody>")
            for line in lines:
                out.append(
                    f"<tr><td>{line.block}<br><code class=\"hash\">{escape(str(line.hash))}"
                    f"</code></td><td>{escape(line.verdict.value)}"
                    f"{'' if line.healthy is not False else ' (unhealthy)'}</td>"
                    f"<td>{escape(line.reason)}</td><td>{escape(line.detail)}</td>"
                    f"<td><code>{escape(json.dumps(line.derived, sort_keys=True))}</code></td>"
                    f"<td><code class=\"hash\">{escape(str(line.evidence_digest))}</code></td>"
                    "</tr>")
            out.append("</tbody></table>")
            if self.more[name]:
                out.append(f"<p>… and {self.more[name]} more line(s) of this check: the CSV "
                           "lists every line.</p>")
        if not shown:
            out.append("<p>None: no check had a VERIFIED-BAD or unhealthy verdict.</p>")
        out.append("</section>")
        return "".join(out)


def _verdict_banner(facts: AuditFacts) -> str:
    if not facts.complete:
        kind, text = "unverifiable", "Incomplete: not every segment is tied to the pinned block"
    elif facts.exit_code == EXIT_GOOD:
        kind, text = "good", "Every check was healthy at every block (exit 0)"
    elif facts.exit_code == EXIT_BAD:
        kind, text = "bad", "A check was unhealthy at some block (exit 1)"
    else:
        kind, text = "unverifiable", ("Some lines are UNVERIFIABLE and none is unhealthy "
                                      "(exit 2)")
    notes = "".join(f"<li>{escape(note)}</li>" for note in facts.notes)
    return (f'<p class="banner {kind}">{escape(text)}</p>'
            + (f"<ul class=\"notes\">{notes}</ul>" if notes else ""))


def _anchor_section(facts: AuditFacts) -> str:
    rows = []
    if facts.first is not None and facts.last is not None:
        rows.append(("blocks", f"{facts.first}..{facts.last}"))
    if facts.pinned_hash:
        rows.append(("pinned block hash", facts.pinned_hash))
    anchor = dict(facts.anchor)
    rows.append(("anchor", str(anchor.pop("method", "?"))))
    rows.append(("what it trusts", str(anchor.pop("trusts", "?"))))
    for key, value in anchor.items():
        value = _no_secrets(value)
        rows.append((str(key), value if isinstance(value, str)
                     else json.dumps(value, ensure_ascii=False)))
    rows.append(("checks configuration (sha256)", facts.config_hash))
    cells = "".join(f"<tr><th>{escape(k)}</th><td><code>{escape(v)}</code></td></tr>"
                    for k, v in rows)
    warning = ""
    if facts.anchor.get("method") == "single-rpc":
        warning = ('<p class="banner unverifiable">single-rpc: the node itself said which block '
                   "this is; pin it with --block-hash, --checkpoint or a --quorum of endpoints "
                   "to not trust it.</p>")
    return (f'<section id="anchor"><h2>Anchor</h2>{warning}<table class="facts">{cells}</table>'
            "</section>")


def _no_secrets(value: object) -> object:
    """An endpoint URL as its scheme, host and port: a page is handed to others, and a node's
    path or query often holds an API key."""
    if isinstance(value, str) and value.startswith(("http://", "https://", "ws://", "wss://")):
        try:
            url = urlsplit(value)
            port = f":{url.port}" if url.port else ""
        except ValueError:
            return "(an endpoint URL)"
        hidden = "/…" if url.path.strip("/") or url.query else ""
        return f"{url.scheme}://{url.hostname}{port}{hidden}"
    if isinstance(value, list):
        return [_no_secrets(v) for v in value]
    if isinstance(value, dict):
        return {k: _no_secrets(v) for k, v in value.items()}
    return value


def _summary_section(summary: Summary) -> str:
    rows = []
    for name, t in summary.tallies.items():
        reasons = ", ".join(f"{reason} ×{n}" for reason, n in sorted(t.reasons.items()))
        rows.append(
            f"<tr><td class=\"name\">{escape(name)}</td><td>{escape(t.healthy.value)}</td>"
            f"<td class=\"n\">{t.counts[Verdict.GOOD]}</td>"
            f"<td class=\"n\">{t.counts[Verdict.BAD]}</td>"
            f"<td class=\"n\">{t.counts[Verdict.UNVERIFIABLE]}</td>"
            f"<td class=\"n\">{_dash(t.first_bad)}</td>"
            f"<td class=\"n\">{_dash(t.first_unhealthy)}</td><td>{escape(reasons)}</td></tr>")
    return ("<section id=\"summary\"><h2>Summary</h2>"
            f"<p>{summary.blocks} block(s), {len(summary.tallies)} check(s).</p>"
            "<table><thead><tr><th>check</th><th>healthy</th><th>GOOD</th><th>BAD</th>"
            "<th>UNVERIFIABLE</th><th>first BAD</th><th>first unhealthy</th>"
            "<th>UNVERIFIABLE because</th></tr></thead><tbody>"
            f"{''.join(rows)}</tbody></table></section>")


def _retractions(facts: AuditFacts) -> str:
    out = ["<section id=\"retractions\"><h2>Retractions</h2>"]
    if facts.retractions:
        out.append("<p>The lines of these blocks were withdrawn: their segment does not tie to "
                   "the pinned block by parent links, so every check there is UNVERIFIABLE."
                   "</p><table><thead><tr><th>blocks</th><th>reason</th><th>detail</th></tr>"
                   "</thead><tbody>")
        for r in facts.retractions:
            out.append(f"<tr><td>{escape(str(r.get('from')))}..{escape(str(r.get('to')))}</td>"
                       f"<td>{escape(str(r.get('reason')))}</td>"
                       f"<td>{escape(str(r.get('detail')))}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append(f"<p>None. {escape(facts.retraction_note)}</p>")
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
@media print{body{margin:0;max-width:none;font-size:11px}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
section{break-inside:auto}h2,h3{break-after:avoid;page-break-after:avoid}
tr{break-inside:avoid;page-break-inside:avoid}}
"""
