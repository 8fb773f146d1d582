"""The beacon light-client API over loopback HTTP, for tests and the devnet: the server every
beacon stand-in shares (:class:`BeaconHTTP`), and :class:`FixtureBeaconServer`, which serves a
recorded set (tests/fixtures/light-client/<set>/) as-is, so tests replay real mainnet data
through the real client.

Both answer ``/eth/v1/beacon/genesis`` and ``/eth/v1/beacon/light_client/{bootstrap/<root>,
updates, finality_update, optimistic_update}`` as a beacon node does (JSON, HTTP/1.1
keep-alive) on 127.0.0.1 and a free port; ``tamper(route, document)`` may rewrite any answer.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from recompute.core.jsontext import json_line
from recompute.lightclient.networks import Network
from recompute.lightclient.ssz import BeaconBlockHeader, hash_tree_root

Tamper = Callable[[str, object], object]

# ---------------------------------------------------------------------------------------
# HTTP


class _BeaconServer(ThreadingHTTPServer):
    beacon: BeaconHTTP  # what it serves


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive

    def do_GET(self) -> None:  # noqa: N802 -- http.server's name
        parts = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        server = self.server
        assert isinstance(server, _BeaconServer)  # the only server this handler is given
        try:
            status, route, document = server.beacon.answer(parts.path, query)
        except Exception as error:  # a bug in a test server must not hang its client
            status, route, document = 500, "error", {"code": 500, "message": str(error)}
        tamper = server.beacon.tamper
        if tamper is not None and status == 200:
            document = tamper(route, copy.deepcopy(document))
        body = document if isinstance(document, bytes) else json_line(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- quiet
        pass


class BeaconHTTP:
    """Serving: ``start()`` / ``stop()`` or a ``with`` block; ``url`` once started."""

    tamper: Tamper | None = None

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}"

    def start(self, port: int = 0) -> Self:
        """Serve on 127.0.0.1:``port`` (0: any free port; OSError when it is taken)."""
        server = _BeaconServer(("127.0.0.1", port), _Handler)
        server.daemon_threads = True
        server.beacon = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,),
                                        name="beacon-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, path: str, query: Mapping[str, str]) -> tuple[int, str, object]:
        """(status, route name, JSON document) for a GET."""
        prefix = "/eth/v1/beacon/"
        if not path.startswith(prefix):
            return _not_found(path)
        route = path[len(prefix):]
        if route == "genesis":
            return 200, "genesis", self.genesis()
        if route.startswith("light_client/bootstrap/"):
            found = self.bootstrap(route.rsplit("/", 1)[1].lower())
            return (200, "bootstrap", found) if found is not None else _not_found(path)
        if route == "light_client/updates":
            try:
                start, count = int(query["start_period"]), int(query["count"])
            except (KeyError, ValueError):
                return 400, "updates", {"code": 400, "message": "start_period and count"}
            return 200, "updates", self.updates(start, max(0, min(count, 128)))
        if route == "light_client/finality_update":
            return 200, "finality_update", self.finality_update()
        if route == "light_client/optimistic_update":
            return 200, "optimistic_update", self.optimistic_update()
        return _not_found(path)

    # overridden by the servers
    def genesis(self) -> object:
        raise NotImplementedError

    def bootstrap(self, root_hex: str) -> object | None:
        raise NotImplementedError

    def updates(self, start: int, count: int) -> Sequence[object]:
        raise NotImplementedError

    def finality_update(self) -> object:
        raise NotImplementedError

    def optimistic_update(self) -> object:
        raise NotImplementedError


def _not_found(path: str) -> tuple[int, str, object]:
    return 404, "error", {"code": 404, "message": f"not found: {path}"}


def genesis_json(network: Network) -> dict[str, Any]:
    return {"data": {
        "genesis_time": str(network.genesis_time or 0),
        "genesis_validators_root": hex_text(network.genesis_validators_root),
        "genesis_fork_version": hex_text(network.forks[0].version),
    }}


# ---------------------------------------------------------------------------------------
# Recorded data


class FixtureBeaconServer(BeaconHTTP):
    """Serve a recorded set: ``bootstrap.json`` for the root its header hashes to,
    ``updates.json`` filtered by period, ``finality.json``, ``optimistic.json``."""

    def __init__(self, folder: str | Path, network: Network, tamper: Tamper | None = None):
        super().__init__()
        folder = Path(folder)
        self.network = network
        self.tamper = tamper
        self._bootstrap, self._updates, self._finality, self._optimistic = (
            json.loads((folder / f"{name}.json").read_text())
            for name in ("bootstrap", "updates", "finality", "optimistic"))
        beacon = self._bootstrap["data"]["header"]["beacon"]
        self._bootstrap_root = "0x" + hash_tree_root(BeaconBlockHeader(
            slot=int(beacon["slot"]), proposer_index=int(beacon["proposer_index"]),
            parent_root=bytes.fromhex(beacon["parent_root"][2:]),
            state_root=bytes.fromhex(beacon["state_root"][2:]),
            body_root=bytes.fromhex(beacon["body_root"][2:]),
        )).hex()

    def genesis(self) -> object:
        return genesis_json(self.network)

    def bootstrap(self, root_hex: str) -> object | None:
        return self._bootstrap if root_hex == self._bootstrap_root else None

    def updates(self, start: int, count: int) -> Sequence[object]:
        def period(update: Any) -> int:  # an update document (JSON)
            return self.network.period_at_slot(int(update["data"]["attested_header"]["beacon"]
                                                   ["slot"]))
        return [update for update in self._updates if start <= period(update) < start + count]

    def finality_update(self) -> object:
        return self._finality

    def optimistic_update(self) -> object:
        return self._optimistic


def hex_text(data: bytes) -> str:
    """``0x``-prefixed lower-case hex, as the beacon API writes bytes."""
    return "0x" + bytes(data).hex()
