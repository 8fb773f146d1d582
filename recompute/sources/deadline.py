"""A deadline on a whole HTTP exchange (connect, send, headers and body), for the clients of
outside endpoints that must not hang on one (the beacon node's, a webhook receiver's).

``requests``' ``timeout`` bounds each socket operation, not the exchange: a peer that answers
one byte a second keeps a request alive forever. :class:`SocketDeadline` holds the socket of
the request in flight and a timer that shuts it down at the deadline, so a blocked read ends at
once; :func:`deadline_adapter` is the ``requests`` adapter whose connections report their socket
to it as soon as the request is sent.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool


class SocketDeadline:
    """The socket of the request in flight, and a timer that shuts it down at the request's
    deadline: a blocked read (connect, headers or body) then ends at once."""

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.expired = False
        self._lock = threading.Lock()

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self.sock = sock
            if self.expired and sock is not None:
                _shutdown(sock)

    def expire(self) -> None:
        """The deadline has come (or the caller gives up): the socket in flight is shut."""
        with self._lock:
            self.expired = True
            if self.sock is not None:
                _shutdown(self.sock)

    @contextmanager
    def running(self, seconds: float) -> Iterator[SocketDeadline]:
        """One exchange, shut down ``seconds`` from now if it has not ended (then
        :attr:`expired` is true)."""
        with self._lock:
            self.expired = False
            self.sock = None
        timer = threading.Timer(seconds, self.expire)
        timer.daemon = True
        timer.start()
        try:
            yield self
        finally:
            timer.cancel()
            self.attach(None)


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def deadline_adapter(deadline: SocketDeadline) -> HTTPAdapter:
    """A requests adapter (no retries) whose connections report their socket to ``deadline``
    as soon as a request is sent (before the answer's headers are read)."""

    class Connection(HTTPConnection):
        def request(self, *args: Any, **kwargs: Any) -> None:
            super().request(*args, **kwargs)
            deadline.attach(self.sock)

    class SecureConnection(HTTPSConnection):
        def request(self, *args: Any, **kwargs: Any) -> None:
            super().request(*args, **kwargs)
            deadline.attach(self.sock)

    class Pool(HTTPConnectionPool):
        ConnectionCls = Connection

    class SecurePool(HTTPSConnectionPool):
        ConnectionCls = SecureConnection

    class Adapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": Pool, "https": SecurePool}

    return Adapter(max_retries=0)
