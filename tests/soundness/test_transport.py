"""A node's answer is bounded in time (one deadline for the whole request), size and depth
(liveness and crashes). Real HTTP servers on 127.0.0.1, no mocks."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from recompute.core.errors import Unverifiable
from recompute.sources.live import LiveSource


class _Server:
    def __init__(self, handler):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def answering(body: bytes, drip: float = 0.0, limit: float = 8.0):
    """A handler that answers every request with ``body``, one byte every ``drip`` seconds
    (for at most ``limit`` seconds: the server stops by itself)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            started = time.monotonic()
            try:
                if not drip:
                    self.wfile.write(body)
                    return
                for byte in body:
                    if time.monotonic() - started > limit:
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(drip)
            except OSError:
                return  # the client hung up: as it should

    return Handler


def test_a_slow_drip_answer_ends_at_the_timeout():
    body = b'{"jsonrpc":"2.0","id":1,"result":"0x1"}' + b" " * 50
    with _Server(answering(body, drip=1.0)) as server:
        source = LiveSource(server.url, timeout=2.0)
        started = time.monotonic()
        with pytest.raises(Unverifiable) as caught:
            source.chain_id()
        elapsed = time.monotonic() - started
    assert caught.value.reason == "rpc-unreachable"
    assert "within 2s" in caught.value.detail
    assert elapsed < 4.0  # the whole request, not one byte, is bounded by the 2 s


@pytest.mark.parametrize("body, words", [
    (b"[" * 200_000, "nested deeper"),
    (b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 5000 + b"]" * 5000 + b"}", "nested deeper"),
    (b"\xff\xfe not utf-8", "not UTF-8"),
    (b"not json", "not JSON"),
    (b'{"jsonrpc":"2.0","id":1,"result":' + b"9" * 5000 + b"}", "not JSON"),
])
def test_an_unparseable_answer_is_rpc_malformed(body, words):
    with _Server(answering(body)) as server:
        with pytest.raises(Unverifiable) as caught:
            LiveSource(server.url, timeout=5.0).chain_id()
    assert caught.value.reason == "rpc-malformed"
    assert words in caught.value.detail


def test_an_honest_answer_still_parses():
    with _Server(answering(b'{"jsonrpc":"2.0","id":1,"result":"0x7a69"}')) as server:
        assert LiveSource(server.url).chain_id() == 31337


def _counting(close: bool):
    """An HTTP/1.1 handler answering eth_chainId; ``connections`` counts the TCP connections
    it was handed; with ``close`` every answer says ``Connection: close``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        connections = 0

        def log_message(self, *args):
            pass

        def setup(self):
            type(self).connections += 1
            super().setup()

        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = b'{"jsonrpc": "2.0", "id": 1, "result": "0x7a69"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if close:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.mark.parametrize("close, expected", [(False, 1), (True, 3)])
def test_one_kept_alive_connection_unless_the_server_closes_it(close, expected):
    # three requests on one connection (README §Performance: the cold verdict's 3 calls); a
    # server that says Connection: close gets a new connection per request, and each answer
    # is still read whole
    handler = _counting(close)
    with _Server(handler) as server:
        source = LiveSource(server.url, timeout=5)
        assert [source.client.request("eth_chainId", []) for _ in range(3)] == ["0x7a69"] * 3
    assert handler.connections == expected
