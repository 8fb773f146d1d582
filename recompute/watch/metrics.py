"""Prometheus text metrics of a watch, served on 127.0.0.1 (docs/watch.md §Metrics).

The exposition format is Prometheus' text format 0.0.4 (``# HELP`` / ``# TYPE`` lines, then
``name{label="value"} number``); the server is the standard library's ``http.server`` in a
daemon thread, answering ``GET /metrics`` (and ``/``).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from recompute.core.errors import UsageError

PREFIX = "recompute_watch_"

# name -> (type, help)
FAMILIES = {
    "verdicts_total": ("counter", "Lines per check and verdict, each evaluation of a block once "
                                  "(re-evaluations after a reorg included)."),
    "final_verdicts_total": ("counter", "Final lines per check and verdict."),
    "check_healthy": ("gauge", "1 if the check's last verified verdict was healthy, 0 if not."),
    "last_verified_block": ("gauge", "Number of the last block whose checks were evaluated."),
    "last_final_block": ("gauge", "Number of the last block whose lines are final."),
    "head_block": ("gauge", "The node's head block number as last seen."),
    "lag_blocks": ("gauge", "Head block minus last verified block."),
    "rpc_errors_total": ("counter", "Node failures that stopped an evaluation, by reason."),
    "reorgs_total": ("counter", "Reorgs detected."),
    "orphaned_blocks_total": ("counter", "Verified blocks that a reorg orphaned."),
    "blocks_total": ("counter", "Block evaluations completed."),
    "up": ("gauge", "1 while the node answers, 0 while it is in trouble."),
    "last_success_timestamp_seconds": ("gauge", "Unix time of the last block verified."),
}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class Metrics:
    def __init__(self):
        self._lock = threading.Lock()
        self._values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {
            (name, ()): 0 for name in ("reorgs_total", "orphaned_blocks_total", "blocks_total")}

    def inc(self, name: str, amount: float = 1, **labels: str) -> None:
        key = (name, tuple(sorted(labels.items())))
        with self._lock:
            self._values[key] = self._values.get(key, 0) + amount

    def set(self, name: str, value: float, **labels: str) -> None:
        with self._lock:
            self._values[(name, tuple(sorted(labels.items())))] = value

    def get(self, name: str, **labels: str) -> float | None:
        with self._lock:
            return self._values.get((name, tuple(sorted(labels.items()))))

    def render(self) -> str:
        with self._lock:
            values = dict(self._values)
        out = []
        for name, (kind, help_text) in FAMILIES.items():
            out.append(f"# HELP {PREFIX}{name} {help_text}")
            out.append(f"# TYPE {PREFIX}{name} {kind}")
            for (key, labels), value in sorted(values.items()):
                if key != name:
                    continue
                shown = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
                number = int(value) if float(value).is_integer() else value
                out.append(f"{PREFIX}{name}{{{shown}}} {number}" if shown
                           else f"{PREFIX}{name} {number}")
        return "\n".join(out) + "\n"


def serve(metrics: Metrics, port: int) -> ThreadingHTTPServer:
    """Serve ``metrics`` on 127.0.0.1:``port`` from a daemon thread; the server is returned
    (``server.server_address[1]`` is the port, useful with port 0)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 -- http.server's naming
            if self.path.split("?")[0] not in ("/metrics", "/"):
                self.send_error(404, "only /metrics is served")
                return
            body = metrics.render().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # keep stderr for the watch's own lines
            pass

    if not 0 <= port <= 65535:
        raise UsageError(f"--metrics-port {port} is not a TCP port")
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        raise UsageError(f"--metrics-port {port}: {exc.strerror or exc}") from None
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="watch-metrics", daemon=True).start()
    return server
