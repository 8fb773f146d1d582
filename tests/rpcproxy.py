"""A real HTTP hop in front of anvil whose answers a test may rewrite: a node that refuses a
method, or lies in it (the one lying node of the tests: core and light-client tests use it).
It counts what it is asked (HTTP requests, calls by method), relays JSON-RPC batches as batches,
and can refuse batches or tamper with a batch answer as a whole. Passing trouble is queued in
:attr:`RpcProxy.faults`: each HTTP request takes the next fault, if any, instead of an answer
(an HTTP status such as 503 or 429, with a ``Retry-After`` when given as ``(status, seconds)``,
or ``"reset"``: the connection closed with a TCP reset; ``None``: no trouble), or only the
batches do, in turn (:attr:`RpcProxy.faults_on_batches`)."""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from recompute.devnet.anvil import rpc_call

# rewrite(method, params, reply) -> reply: the JSON-RPC reply object to send
Rewrite = Callable[[str, list, dict], dict]
# batch_rewrite(replies) -> what to send for a batch: a list of replies, or anything else
BatchRewrite = Callable[[list], object]

# What a node that does not take batches answers one (the JSON-RPC 2.0 invalid request).
BATCH_REFUSED = {"jsonrpc": "2.0", "id": None,
                 "error": {"code": -32600, "message": "batch requests are not supported"}}


class RpcProxy:
    def __init__(self, upstream: str, rewrite: Rewrite = lambda m, p, r: r, *,
                 batches: bool | str = True, batch_rewrite: BatchRewrite | None = None):
        """``batches``: True relays them; False answers one with the JSON-RPC error a node
        that does not take batches gives; "drop" closes the connection unanswered (a server
        that cannot parse a JSON array)."""
        proxy = self
        self.requests = 0  # HTTP requests received
        self.methods: Counter[str] = Counter()  # JSON-RPC calls by method
        self.batches_refused = 0
        self.faults: list[int | tuple[int, int] | str | None] = []  # next requests: None, none
        self.faulted = 0  # requests answered by a fault
        self.faults_on_batches = False  # True: only batches take the faults (in turn)
        self._lock = threading.Lock()

        def one(request: dict, reply: dict) -> dict:
            return rewrite(request["method"], request.get("params", []), reply)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # kept-alive connections, as a node's

            def do_POST(self):  # noqa: N802 -- http.server's name
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                calls = request if isinstance(request, list) else [request]
                fault = proxy._count(calls, isinstance(request, list))
                if fault is not None:
                    return _send_fault(self, fault)
                if isinstance(request, list):
                    if batches is not True:
                        with proxy._lock:
                            proxy.batches_refused += 1
                        if batches == "drop":
                            self.close_connection = True
                            return None
                        return self._send(BATCH_REFUSED)
                    replies = [one(c, r) for c, r in zip(calls, _relay(upstream, calls),
                                                          strict=True)]
                    return self._send(batch_rewrite(replies) if batch_rewrite else replies)
                reply = {"jsonrpc": "2.0", "id": request.get("id")}
                try:
                    reply["result"] = rpc_call(upstream, request["method"],
                                               request.get("params", []))
                except RuntimeError as exc:
                    reply["error"] = {"code": -32000, "message": str(exc)}
                self._send(one(request, reply))

            def _send(self, answer: object) -> None:
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _count(self, calls: list, batch: bool) -> int | tuple[int, int] | str | None:
        """A request received: counted; the fault it takes, if any."""
        with self._lock:
            self.requests += 1
            self.methods.update(c.get("method", "?") for c in calls)
            takes = batch or not self.faults_on_batches
            fault = self.faults.pop(0) if self.faults and takes else None
            self.faulted += fault is not None
            return fault

    def reset(self) -> None:
        with self._lock:
            self.requests = 0
            self.methods.clear()
            self.batches_refused = 0

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _send_fault(handler: BaseHTTPRequestHandler, fault: int | tuple[int, int] | str) -> None:
    """Passing trouble instead of an answer: an HTTP status (and Retry-After), or a reset."""
    if fault == "reset":  # SO_LINGER 0: close() sends RST, not FIN
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        handler.close_connection = True
        handler.connection.close()
        return
    status, after = fault if isinstance(fault, tuple) else (fault, None)
    data = b"<html>busy</html>"
    handler.send_response(int(status))
    if after is not None:
        handler.send_header("Retry-After", str(after))
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _relay(upstream: str, calls: list) -> list:
    """A batch relayed as a batch; the answers in the order of ``calls``."""
    request = urllib.request.Request(upstream, data=json.dumps(calls).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        replies = json.loads(response.read())
    by_id = {reply.get("id"): reply for reply in replies}
    return [by_id[call.get("id")] for call in calls]


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
