"""One corpus of hostile text, fed to every output (docs/trust.md §What recompute promises):
what a node, a beacon, a store or a file could put in a string, each aimed at a reader of one
kind. Every output's test takes these strings in and checks what comes out with the checks
below, so that one list says what "nothing but text" means.
"""

from __future__ import annotations

import contextlib
import json
import threading
import unicodedata
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# name -> text
CORPUS = {
    # a spreadsheet: a bare CR splits the record, the next "row" starts with a formula
    "cr-formula": "x\r=cmd|' /C calc'!A0",
    "lf-formula": "x\n=HYPERLINK(\"http://127.0.0.1:9\")",
    "crlf-formula": "x\r\n+1+1",
    "tab-formula": "\t=1+1",
    "space-formula": "   =1+1",
    "fullwidth-formula": "\uff1dcmd|' /C calc'!A0",  # ＝
    "fullwidth-plus": " \uff0b1",  # ＋ after a space
    "small-equals": "\ufe661+1",  # ﹦
    "at-formula": "@SUM(1,1)",
    "minus-formula": "-1+1",
    # a terminal: overwrite the line, erase, recolour, hide, write the clipboard, ring
    "cr-overwrite": "x\rVERIFIED-GOOD (ok)\x1b[K",
    "osc52-clipboard": "\x1b]52;c;Y2FsYyAmJiBleGl0Cg==\x07",
    "conceal": "\x1b[8mhidden from view",
    "c1-csi": "\x9b2J\x9b31mred",
    "bell-nul-del": "\x07\x00\x7f",
    "backspaces": "GOOD\x08\x08\x08\x08BAD ",
    # a reader of any page or file: text that reads backwards, invisible characters
    "bidi-override": "evil\u202egnp.exe",
    "bidi-isolate": "\u2066hidden\u2069\u200f",
    "zero-width": "ve\u200brified\u200d\u2060\ufeff\u00ad",
    "line-separator": "one\u2028two\u2029three\u0085four",
    # a page: markup
    "html": "<script>document.title='owned'</script><img src=x onerror=alert(1)>&amp;\"'",
}

ALL = "|".join(CORPUS.values())  # every attack in one string
FORMULA = frozenset("=+-@")


def not_text(text: str) -> list[str]:
    """The characters of ``text`` that are not text a person reads (anything
    :meth:`str.isprintable` refuses, but the line feeds that end an output's own lines)."""
    return sorted({f"U+{ord(c):04X}" for c in text if not c.isprintable() and c != "\n"})


def formula_cells(rows: list[list[str]]) -> list[str]:
    """The cells a spreadsheet would run as a formula (after spaces, any width)."""
    out = []
    for row in rows:
        for cell in row:
            first = cell.lstrip(" \t\r\n")[:1]
            if first and (first in FORMULA or unicodedata.normalize("NFKC", first)[:1]
                          in FORMULA or cell[:1] in "\t\r"):
                out.append(cell)
    return out


def spreadsheet_rows(text: str) -> list[list[str]]:
    """``text`` split as a spreadsheet splits a CSV: records at CR, LF or CRLF outside quotes
    (a bare CR ends a record, as LibreOffice and Excel take it), cells at commas."""
    rows: list[list[str]] = [[]]
    cell, quoted, i = [], False, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == '"' and text[i + 1 : i + 2] == '"':
                cell.append('"')
                i += 1
            elif c == '"':
                quoted = False
            else:
                cell.append(c)
        elif c == '"' and not cell:
            quoted = True
        elif c == ",":
            rows[-1].append("".join(cell))
            cell = []
        elif c in "\r\n":
            rows[-1].append("".join(cell))
            cell = []
            if c == "\r" and text[i + 1 : i + 2] == "\n":
                i += 1
            rows.append([])
        else:
            cell.append(c)
        i += 1
    if cell:
        rows[-1].append("".join(cell))
    return [r for r in rows if r]


@contextlib.contextmanager
def hostile_node(message: str) -> Iterator[str]:
    """A JSON-RPC endpoint on loopback that answers every call with an error whose message is
    ``message`` (a batch: one such error per call); as a beacon node, every GET with HTTP 500
    and ``{"message": message}``; yields its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 -- http.server's name
            body = json.dumps({"code": 500, "message": message}).encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):  # noqa: N802 -- http.server's name
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            calls = request if isinstance(request, list) else [request]
            replies = [{"jsonrpc": "2.0", "id": c.get("id"),
                        "error": {"code": -32000, "message": message}} for c in calls]
            body = json.dumps(replies if isinstance(request, list) else replies[0]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
