"""A real HTTP hop in front of anvil whose answers a test may rewrite: a node that refuses a
method, or lies in it (the one lying node of the tests: core and light-client tests use it)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from recompute.devnet.anvil import rpc_call

# rewrite(method, params, reply) -> reply: the JSON-RPC reply object to send
Rewrite = Callable[[str, list, dict], dict]


class RpcProxy:
    def __init__(self, upstream: str, rewrite: Rewrite):
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 -- http.server's name
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                method, params = request["method"], request.get("params", [])
                reply = {"jsonrpc": "2.0", "id": request.get("id")}
                try:
                    reply["result"] = rpc_call(upstream, method, params)
                except RuntimeError as exc:
                    reply["error"] = {"code": -32000, "message": str(exc)}
                data = json.dumps(rewrite(method, params, reply)).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def unchanged(method: str, params: list, reply: dict) -> dict:
    """A relay that changes nothing: the same node on another port (a quorum's endpoints must
    be distinct hosts and ports, so the same node under two names is refused)."""
    return reply


def refuse(method_name: str) -> Rewrite:
    """A node that does not serve ``method_name`` (method not found)."""

    def rewrite(method: str, params: list, reply: dict) -> dict:
        if method == method_name:
            return {"jsonrpc": "2.0", "id": reply["id"],
                    "error": {"code": -32601, "message": f"the method {method} does not exist"}}
        return reply

    return rewrite


def rewrite_proofs(lie: Callable[[dict], object]) -> Rewrite:
    """A node that lies in its ``eth_getProof`` answers: ``lie`` edits each one in place."""

    def rewrite(method: str, params: list, reply: dict) -> dict:
        if method == "eth_getProof" and "result" in reply:
            lie(reply["result"])
        return reply

    return rewrite


@contextlib.contextmanager
def silent_endpoint() -> Iterator[str]:
    """The URL of a listener on loopback that accepts connections and never says a byte (a
    hung node or beacon)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for connection in held:
            connection.close()
        server.close()
