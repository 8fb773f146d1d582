"""The devnet L2's lying node, as a process of its own (``recompute devnet up --l2`` starts it
detached, ``down`` stops it): a JSON-RPC hop in front of the L2 anvil that answers everything
as the anvil does except the storage values of one contract (the L2's AMM registry) in
``eth_getProof`` and ``eth_getStorageAt``, each of which it raises by one. Its headers, state
roots and proofs are the honest node's: a verifier that proves each value against the state
root of the L2 block its L1 anchor names cannot be led to a verdict by it (the value no longer
matches its proof), only to UNVERIFIABLE.

    python -P -m recompute.devnet.l2_lie --upstream URL --address 0x… --out lie.json

``--out`` receives ``{"url", "pid", "address"}`` once the server listens.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from recompute.core.jsontext import json_line
from recompute.disk.whole_file import write_whole

MAX_REQUEST_BYTES = 1 << 20
MAX_REPLY_BYTES = 64 << 20
UPSTREAM_TIMEOUT = 30.0


def _raised(word: str) -> str:
    """A 32-byte storage word (hex quantity) plus one, wrapping at 2**256."""
    return hex((int(word, 16) + 1) % (1 << 256))


def lie(call: dict[str, Any], reply: dict[str, Any], address: str) -> dict[str, Any]:
    """The reply to ``call`` as the lying node gives it (``reply``: the honest node's)."""
    method, params, result = call.get("method"), call.get("params") or [], reply.get("result")
    if not params or not isinstance(params[0], str) or params[0].lower() != address:
        return reply
    if method == "eth_getProof" and isinstance(result, dict):
        for entry in result.get("storageProof") or []:
            entry["value"] = _raised(entry["value"])
    elif method == "eth_getStorageAt" and isinstance(result, str):
        reply["result"] = "0x" + _raised(result)[2:].rjust(64, "0")
    return reply


def _relay(upstream: str, body: bytes) -> Any:
    request = urllib.request.Request(upstream, data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=UPSTREAM_TIMEOUT) as response:
        return json.loads(response.read(MAX_REPLY_BYTES + 1)[:MAX_REPLY_BYTES])


def server(upstream: str, address: str) -> ThreadingHTTPServer:
    """The lying hop on a free loopback port (not started)."""
    address = address.lower()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 -- http.server's name
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 < length <= MAX_REQUEST_BYTES:
                self.send_error(413)
                return
            body = self.rfile.read(length)
            try:
                calls = json.loads(body)
                replies = _relay(upstream, body)
            except (OSError, ValueError):
                self.send_error(502)
                return
            if isinstance(calls, list) and isinstance(replies, list):
                by_id = {json_line(c.get("id")): c for c in calls if isinstance(c, dict)}
                replies = [lie(by_id.get(json_line(r.get("id")), {}), r, address)
                           if isinstance(r, dict) else r for r in replies]
            elif isinstance(calls, dict) and isinstance(replies, dict):
                replies = lie(calls, replies, address)
            data = json_line(replies).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m recompute.devnet.l2_lie")
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--address", required=True)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    httpd = server(args.upstream, args.address)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    write_whole(args.out, json_line({"url": url, "pid": os.getpid(),
                                     "address": args.address.lower()}))
    stop.wait()
    httpd.shutdown()


if __name__ == "__main__":
    main()
