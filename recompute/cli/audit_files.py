"""``--html FILE`` and ``--csv FILE`` of ``recompute watch --from N --to M`` and ``recompute
audit report`` (docs/report.md): the paths checked before any node is asked, the lines taken
block by block, each file written beside its final name and renamed into place once whole
(an interrupted audit leaves no half file): :mod:`recompute.disk.whole_file`, the paths
being the ones the user named (a link given is written through, docs/report.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import click

from recompute.core.errors import UsageError
from recompute.core.verdict import Verdict
from recompute.disk.whole_file import WholeFile, write_whole
from recompute.watch.audit_csv import AuditCsv
from recompute.watch.audit_page import AuditFacts, AuditPage
from recompute.watch.auditor import Summary
from recompute.watch.evaluate import Line
from recompute.watch.metrics import Metrics
from recompute.watch.sink import Sink

html_option = click.option("--html", "html_path", metavar="FILE",
                           help="Write the audit as one self-contained HTML page "
                                "(docs/report.md).")
csv_option = click.option("--csv", "csv_path", metavar="FILE",
                          help="Write every line as a CSV row: block, check, verdict, … "
                               "(docs/report.md).")


def _checked(option: str, path: str) -> Path:
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {path}: is a folder; give a file name")
    if not target.parent.is_dir():
        raise UsageError(f"{option} {path}: no folder {target.parent}; create it first")
    return target


class ReportFiles:
    """The report files asked for; :meth:`add` each block's lines, then :meth:`finish`."""

    def __init__(self, html_path: str | None, csv_path: str | None):
        self.html = _checked("--html", html_path) if html_path else None
        self.csv = _checked("--csv", csv_path) if csv_path else None
        self.page: AuditPage | None = None
        self._csv_out: WholeFile | None = None
        self._csv_writer: AuditCsv | None = None

    @property
    def wanted(self) -> bool:
        return self.html is not None or self.csv is not None

    def start(self, checks: Iterable[tuple[str, Verdict]]) -> None:
        if self.html is not None:
            self.page = AuditPage(checks)
        if self.csv is not None:
            try:
                self._csv_out = WholeFile(self.csv, named=True)
            except OSError as exc:
                raise UsageError(f"--csv {self.csv}: {exc.strerror or exc}") from None
            self._csv_writer = AuditCsv(self._csv_out)

    def add(self, lines: list[Line]) -> None:
        if self.page is not None:
            self.page.add(lines)
        if self._csv_writer is not None:
            self._csv_writer.add(lines)

    def finish(self, facts: AuditFacts, summary: Summary) -> list[str]:
        """Write the files; the notes saying where."""
        notes = []
        csv, html = self.csv, self.html
        if self._csv_out is not None and csv is not None:
            out, self._csv_out = self._csv_out, None
            _settle("--csv", csv, out.commit)
            notes.append(f"report: {csv} (CSV, one row per line)")
        if self.page is not None and html is not None:
            text = self.page.render(facts, summary)
            _settle("--html", html, lambda: write_whole(html, text, named=True))
            notes.append(f"report: {html} (HTML)")
        return notes

    def discard(self) -> None:
        """An audit that did not finish: no file (the partial CSV removed)."""
        if self._csv_out is not None:
            self._csv_out.discard()
            self._csv_out = None


def _settle(option: str, path: str | Path, write: Callable[[], object]) -> None:
    try:
        write()
    except OSError as exc:
        raise UsageError(f"{option} {path}: {exc.strerror or exc}") from None


class ReportingSink(Sink):
    """A one-process range audit's sink that also hands each block's lines to the reports."""

    def __init__(self, metrics: Metrics, *, files: ReportFiles) -> None:
        super().__init__(metrics)
        self.files = files

    def evaluated(self, lines: list[Line]) -> None:
        super().evaluated(lines)
        self.files.add(lines)
