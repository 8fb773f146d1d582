"""A real webhook receiver on 127.0.0.1: records every POST (its JSON body) and answers with the
status codes it is told to, in order (then 200)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self, statuses: list[int] | None = None):
        self.posts: list[tuple[int, str, dict]] = []  # (status answered, content type, body)
        self._statuses = list(statuses or [])
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(min(length, 1 << 20)) or b"null")
                with receiver._lock:
                    status = receiver._statuses.pop(0) if receiver._statuses else 200
                    receiver.posts.append((status, self.headers.get("Content-Type", ""), body))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def snapshot(self) -> list[tuple[int, str, dict]]:
        with self._lock:
            return list(self.posts)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
