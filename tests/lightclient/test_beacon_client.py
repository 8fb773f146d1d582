"""The beacon REST client against misbehaving servers: URLs, unreachable nodes, slow
drips (headers and body) cut at the whole-request deadline, byte caps, HTTP errors,
compression it did not ask for, and keep-alive."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from recompute.devnet.beacon_http import FixtureBeaconServer
from recompute.lightclient import MAINNET
from recompute.lightclient.failures import Unverifiable, UsageError
from recompute.sources.beacon import BeaconClient, check_beacon_url
from tests.lightclient.data import FIXTURES


class RawServer:
    """A loopback TCP server running ``behave(connection)`` for each connection."""

    def __init__(self, behave):
        self.behave = behave
        self.accepted = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self):
        while not self._closed.is_set():
            try:
                connection, _ = self._sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._run, args=(connection,), daemon=True).start()

    def _run(self, connection):
        try:
            self.behave(connection, self._closed)
        except OSError:
            pass
        finally:
            connection.close()

    def close(self):
        self._closed.set()
        self._sock.close()


@pytest.fixture
def raw_server():
    servers = []

    def make(behave):
        servers.append(RawServer(behave))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def read_request(connection) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(4096)
        if not chunk:
            return b""
        data += chunk
    return data


def answer(status: str, body: bytes, extra: str = "") -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n").encode() + body


@pytest.mark.parametrize("url", ["ftp://example.org", "", "127.0.0.1:5052", "http://",
                                 "http://host:99999", "http://a b", "file:///etc/passwd",
                                 "http://host\n:1"])
def test_urls_refused(url):
    with pytest.raises(UsageError) as caught:
        BeaconClient(url)
    assert "\n" not in str(caught.value)


def test_urls_accepted():
    assert check_beacon_url("https://beacon.example:5052/") == "https://beacon.example:5052"
    assert check_beacon_url("http://127.0.0.1:5052") == "http://127.0.0.1:5052"


def test_unreachable():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with BeaconClient(f"http://127.0.0.1:{port}", timeout=5) as client:
        with pytest.raises(Unverifiable) as caught:
            client.genesis()
    assert caught.value.reason == "rpc-unreachable"


def _drip_headers(connection, closed):
    read_request(connection)
    connection.sendall(b"HTTP/1.1 200 OK\r\n")
    while not closed.is_set():
        connection.sendall(b"X-Slow: a\r\n")
        time.sleep(0.05)


def _drip_body(connection, closed):
    read_request(connection)
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n[")
    while not closed.is_set():
        connection.sendall(b"1,")
        time.sleep(0.05)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("behave", [_drip_headers, _drip_body], ids=["headers", "body"])
def test_a_slow_drip_hits_the_whole_request_deadline(raw_server, behave):
    """Each byte arrives well within any per-read timeout; the whole request does not."""
    server = raw_server(behave)
    with BeaconClient(server.url, timeout=1.0) as client:
        with pytest.raises(Unverifiable) as caught:
            client.genesis()
    assert caught.value.reason == "rpc-unreachable"
    assert "within 1 s" in caught.value.detail


def test_byte_cap_declared(raw_server):
    def behave(connection, closed):
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n{}")

    with BeaconClient(raw_server(behave).url, max_bytes=1000) as client:
        with pytest.raises(Unverifiable, match="rpc-malformed.*cap"):
            client.genesis()


def test_byte_cap_undeclared(raw_server):
    def behave(connection, closed):
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        connection.sendall(b"[" + b"0," * 5000 + b"0]")

    with BeaconClient(raw_server(behave).url, max_bytes=1000) as client:
        with pytest.raises(Unverifiable, match="rpc-malformed.*cap"):
            client.genesis()


@pytest.mark.parametrize("status, reason, message", [
    ("500 Internal Server Error", "rpc-error", "no way"),
    ("404 Not Found", "block-unknown", "no way"),
    ("302 Found", "rpc-error", "redirects are not followed"),
])
def test_http_errors(raw_server, status, reason, message):
    def behave(connection, closed):
        read_request(connection)
        connection.sendall(answer(status, b'{"code": 1, "message": "no\\nway"}',
                                  "Location: http://elsewhere/\r\n"))

    with BeaconClient(raw_server(behave).url) as client:
        with pytest.raises(Unverifiable) as caught:
            client.bootstrap(bytes(32), MAINNET)
    assert caught.value.reason == reason
    assert message in caught.value.detail and "\n" not in caught.value.detail


def test_compressed_answer_refused(raw_server):
    def behave(connection, closed):
        read_request(connection)
        connection.sendall(answer("200 OK", b"\x1f\x8b", "Content-Encoding: gzip\r\n"))

    with BeaconClient(raw_server(behave).url) as client:
        with pytest.raises(Unverifiable, match="rpc-malformed.*compressed"):
            client.genesis()


@pytest.mark.parametrize("body", [b"not json", b"[" * 100 + b"]" * 100, b'{"data": 1}',
                                  b'{"data": {"genesis_time": "1", "genesis_validators_root":'
                                  b' "0x00", "genesis_fork_version": "0x00000000"}}'])
def test_malformed_answers(raw_server, body):
    def behave(connection, closed):
        read_request(connection)
        connection.sendall(answer("200 OK", body))

    with BeaconClient(raw_server(behave).url) as client:
        with pytest.raises(Unverifiable) as caught:
            client.genesis()
    assert caught.value.reason == "rpc-malformed"


def test_keep_alive(raw_server):
    body = (b'{"data": {"genesis_time": "1606824023", "genesis_validators_root": "0x'
            + b"4b" * 32 + b'", "genesis_fork_version": "0x00000000"}}')

    def behave(connection, closed):
        while read_request(connection):
            connection.sendall(answer("200 OK", body))

    server = raw_server(behave)
    with BeaconClient(server.url) as client:
        for _ in range(3):
            genesis = client.genesis()
    assert genesis.genesis_time == 1606824023
    assert client.requests == 3
    assert server.accepted == 1


def test_fixture_server_unknown_bootstrap_root():
    with FixtureBeaconServer(FIXTURES / "portal-mainnet-deneb", MAINNET) as server, \
            BeaconClient(server.url) as client:
        with pytest.raises(Unverifiable) as caught:
            client.bootstrap(b"\x01" * 32, MAINNET)
        assert caught.value.reason == "block-unknown"
        assert client.genesis().genesis_validators_root == MAINNET.genesis_validators_root
