"""JSON-RPC transport: one endpoint, raw answers, failures mapped to reason codes.

Everything this module returns is *untrusted*: plain JSON as the node sent it. It only
decides what kind of failure a failure is (unreachable, error, pruned state, malformed),
so that the verdict can say so. Requests go out over :mod:`http.client` with one deadline
for the whole request (a node that drips one byte a second is cut off at the timeout, not
between bytes), the answer is read up to :data:`MAX_ANSWER_BYTES`, and its JSON is bounded in
values and depth before it is parsed (:mod:`recompute.core.boundedjson`). Answers share one
memory budget across threads: a large one is read on and parsed only in its turn
(:mod:`recompute.sources.answer_budget`).

Passing trouble is asked again, a lie never (docs/connection.md §Retries): an HTTP 429, 502, 503
or 504, or a connection reset or closed without an answer, is retried after
:data:`RETRY_WAITS` (or the answer's ``Retry-After``, up to :data:`MAX_RETRY_AFTER`), batched
or not; past them it is ``rpc-error`` (a status) or ``rpc-unreachable`` (a connection). An
answer that is not what was asked stays ``rpc-malformed`` at once.
"""

from __future__ import annotations

import functools
import http.client
import ipaddress
import itertools
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from recompute.core.boundedjson import loads as bounded_loads
from recompute.core.errors import OptionError, Unverifiable, malformed
from recompute.core.jsontext import json_line
from recompute.core.outside_text import visible
from recompute.sources.answer_budget import SMALL_BYTES, SMALL_VALUES, AnswerShare

MAX_ANSWER_BYTES = 64 * 1024 * 1024  # a block of receipts is a few MB on mainnet
# Calls in one JSON-RPC batch: more go in several batches (providers cap a batch at 100-1000).
MAX_BATCH = 100
_ids = itertools.count(1)
# HTTP statuses of a node or its gateway in passing trouble (rate limited, bad gateway,
# unavailable, gateway timeout): the request is sent again
TRANSIENT_STATUS = frozenset({429, 502, 503, 504})
# The waits before each retry of passing trouble: 4 retries, 7.5 s of waiting at most
RETRY_WAITS = (0.5, 1.0, 2.0, 4.0)
MAX_RETRY_AFTER = 10.0  # a Retry-After longer than this is waited this long

# Messages nodes give when the state of an old block is gone (geth, erigon, reth, nethermind,
# anvil). Matched case-insensitively; anything else is a plain `rpc-error`.
_PRUNED = re.compile(
    r"missing trie node|pruned|state.*not available|state.*unavailable|historical state|"
    r"not archive|state histories|required historical state|no state|state root not found|"
    r"state for block .* is not available|failed to get state",
    re.IGNORECASE,
)
_UNKNOWN_BLOCK = re.compile(
    r"header not found|unknown block|block not found|block .* not found|resource not found|"
    r"could not find block|invalid block number",
    re.IGNORECASE,
)


def check_url(url: str) -> str:
    """An http(s) URL with a host, or a one-line UsageError."""
    try:
        parsed = urlparse(url)
        parsed.hostname  # noqa: B018 -- raises ValueError on 'http://[::1'
    except ValueError:
        raise OptionError("{rpc} {url!r} is not a valid URL", ("rpc",), url=url) from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise OptionError("{rpc} {url!r} is not an http(s) URL (e.g. http://127.0.0.1:8545)",
                          ("rpc",), url=url)
    try:
        parsed.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        raise OptionError("{rpc} {url!r} has an invalid port", ("rpc",), url=url) from None
    return url


def normalise_url(url: str) -> str:
    """The endpoint a URL names, for telling endpoints apart: scheme and host lower-cased,
    the default port made explicit, a trailing ``/`` dropped (README §Trust model, quorum)."""
    parsed = urlparse(check_url(url))
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    host = (parsed.hostname or "").lower()  # check_url: there is one
    host = f"[{host}]" if ":" in host else host
    path = parsed.path.rstrip("/")
    query = f"?{parsed.query}" if parsed.query else ""
    return f"{parsed.scheme.lower()}://{host}:{port}{path}{query}"


@functools.lru_cache(maxsize=256)
def endpoint_addresses(url: str) -> frozenset[tuple[str, int]]:
    """Every (address, port) a URL's host resolves to (getaddrinfo), for telling the hosts of
    a quorum apart: ``localhost`` and ``127.0.0.1`` are one host (README §Trust model,
    quorum). A name that does not resolve is one UsageError line."""
    parsed = urlparse(check_url(url))
    host = parsed.hostname
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise OptionError("{rpc} {url}: the host {host!r} does not resolve ({reason}); a "
                          "quorum compares the addresses of its endpoints", ("rpc",), url=url,
                          host=host, reason=reason) from None
    out = set()
    for *_, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        out.add((str(address), port))
    return frozenset(out)


class RpcClient:
    """One endpoint. :meth:`request` returns the ``result`` member or raises Unverifiable."""

    def __init__(self, url: str, timeout: float = 30.0):
        self.url = check_url(url)
        self.timeout = timeout
        self.calls = 0  # requests sent, for evidence and benchmarks
        # None until the first batch: then whether this endpoint takes JSON-RPC batches (one
        # that refuses them is asked one call at a time from then on, and said so)
        self.batches: bool | None = None
        self.on_refused: Callable[[], object] | None = None  # told once, when it refuses
        self._local = threading.local()  # one kept-alive connection per thread
        self._count = threading.Lock()  # threads (the prover's prefetch) share the count

    def _post(self, body: bytes, share: AnswerShare) -> tuple[int, bytes, str | None]:
        """One exchange on this thread's kept-alive connection; a connection the server closed
        while idle is replaced once (every method asked here is a read: safe to resend)."""
        deadline = time.monotonic() + self.timeout
        for attempt in (0, 1):
            connection = getattr(self._local, "connection", None)
            reused = connection is not None
            if connection is None:
                connection = self._local.connection = _connect(self.url, self.timeout)
            try:
                status, raw, keep, after = post(connection, self.url, body, deadline, share)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self._drop()
                if not reused or attempt:
                    raise
                continue
            except BaseException:
                self._drop()
                raise
            if not keep:
                self._drop()
            return status, raw, after
        raise AssertionError("unreachable")

    def _drop(self) -> None:
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    def request(self, method: str, params: list[Any]) -> Any:
        with self._count:
            self.calls += 1
        body = json_line({"jsonrpc": "2.0", "method": method, "params": params,
                          "id": next(_ids)}).encode()
        with AnswerShare(self.timeout) as share:
            status, raw = self._exchange(body, method, share)
            http_error = status >= 400 and not raw.lstrip().startswith(b"{")
            reply = None if http_error else self._parse(raw, method, share)
            del raw  # raised below, an error's frames keep their locals: not the answer
        if http_error:
            raise Unverifiable("rpc-error", f"{self.url} {method}: HTTP {status}{_tried(status)}")
        if isinstance(reply, Unverifiable):
            raise reply
        if not isinstance(reply, dict):
            raise Unverifiable("rpc-malformed", f"{self.url} {method}: answer is not an object")
        return _result(self.url, method, reply)

    def _parse(self, raw: bytes, what: str, share: AnswerShare) -> Any:
        """The answer's JSON, bounded (:func:`recompute.core.boundedjson.loads`), parsed in
        its turn when it is large (:mod:`recompute.sources.answer_budget`); or the
        Unverifiable it fails with, *returned* without its traceback, for the caller to raise
        once ``raw`` is gone (a traceback keeps its frames' locals: a kept error would keep a
        64 MiB answer alive)."""
        try:
            share.parse(raw)
            return bounded_loads(raw, f"{self.url} {what}: the answer", malformed,
                                 max_bytes=MAX_ANSWER_BYTES)
        except TimeoutError:
            return Unverifiable(
                "rpc-unreachable",
                f"{self.url} {what}: a large answer waited over {self.timeout:g}s for its turn "
                f"(answers over {SMALL_BYTES >> 20} MiB or {SMALL_VALUES:,} values are parsed "
                "one at a time)")
        except Unverifiable as exc:
            return exc.with_traceback(None)

    def batch(self, calls: list[tuple[str, list[Any]]]) -> list[object]:
        """Every call of ``calls`` in JSON-RPC batches of at most :data:`MAX_BATCH` (one HTTP
        request each): per call its ``result``, or the :class:`Unverifiable` its error maps to
        (one call's failure is that call's alone). An endpoint that refuses batches is asked
        one call at a time, from its first refusal on (:attr:`batches`).

        The answer is untrusted like any other: bounded in size and depth, and matched to the
        calls by id; an answer that is not a list of one reply per id asked (an id missing,
        repeated, or not asked) fails the whole batch as ``rpc-malformed``, so that no call's
        answer can stand for another's."""
        out: list[object] = []
        for start in range(0, len(calls), MAX_BATCH):
            out.extend(self._batch(calls[start : start + MAX_BATCH]))
        return out

    def _batch(self, calls: list[tuple[str, list[Any]]]) -> list[object]:
        if self.batches is False or len(calls) == 1:
            return [self._one(method, params) for method, params in calls]
        ids = [next(_ids) for _ in calls]
        body = json_line([{"jsonrpc": "2.0", "method": method, "params": params, "id": i}
                          for (method, params), i in zip(calls, ids, strict=True)]).encode()
        with self._count:
            self.calls += 1
        what = f"a batch of {len(calls)} calls ({calls[0][0]}, ...)"
        with AnswerShare(self.timeout) as share:
            try:
                status, raw = self._exchange(body, what, share, dropped=self.batches is None)
            except _Dropped:
                # the endpoint closed the connection on its first batch, without an answer
                # (a server that cannot parse a JSON array): one that does not take batches
                return self._refused(calls)
            reply = None
            if raw.lstrip().startswith((b"[", b"{")):
                reply = self._parse(raw, what, share)
            del raw  # raised below, an error's frames keep their locals: not the answer
        if isinstance(reply, Unverifiable):
            raise reply
        if not isinstance(reply, list):
            if self.batches is None and (status >= 400 or isinstance(reply, dict)):
                # an HTTP error or one error object for the whole batch, before any batch
                # was answered: an endpoint that does not take batches
                return self._refused(calls)
            if status >= 400:  # an HTTP error (passing trouble past its retries): no lie
                raise Unverifiable("rpc-error", f"{self.url} {what}: HTTP {status}"
                                                f"{_tried(status)}")
            raise Unverifiable("rpc-malformed", f"{self.url} {what}: the answer is not a list "
                                                "of replies")
        self.batches = True
        by_id = self._by_id(reply, ids, what)
        out: list[object] = []
        for (method, _), i in zip(calls, ids, strict=True):
            try:
                out.append(_result(self.url, method, by_id[i]))
            except Unverifiable as exc:
                out.append(exc)
        return out

    def _by_id(self, reply: list[Any], ids: list[int], what: str) -> dict[int, dict[str, Any]]:
        """A batch answer's replies by id: one per id asked, or ``rpc-malformed``."""
        by_id: dict[int, dict[str, Any]] = {}
        for entry in reply:
            key = entry.get("id") if isinstance(entry, dict) else None
            if type(key) is not int or key not in ids or key in by_id:
                raise Unverifiable("rpc-malformed", f"{self.url} {what}: the answer has a reply "
                                                    f"with an id not asked, or twice ({key!r})")
            by_id[key] = entry
        if len(by_id) != len(ids):
            raise Unverifiable("rpc-malformed", f"{self.url} {what}: the answer has "
                                                f"{len(by_id)} replies for {len(ids)} calls")
        return by_id

    def _refused(self, calls: list[tuple[str, list[Any]]]) -> list[object]:
        """The endpoint refused its first batch: said once, then every call on its own."""
        self.batches = False
        if self.on_refused is not None:
            self.on_refused()
        return [self._one(method, params) for method, params in calls]

    def _one(self, method: str, params: list[Any]) -> object:
        try:
            return self.request(method, params)
        except Unverifiable as exc:
            if exc.reason == "rpc-unreachable":
                raise
            return exc

    def _exchange(self, body: bytes, what: str, share: AnswerShare,
                  dropped: bool = False) -> tuple[int, bytes]:
        """One exchange, passing trouble retried (:data:`RETRY_WAITS`), its failures mapped
        to ``rpc-unreachable``; with ``dropped``, a connection the server closed without an
        answer raises :class:`_Dropped` instead (a server that cannot parse a batch)."""
        for wait in (*RETRY_WAITS, None):
            try:
                status, raw, after = self._post(body, share)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                failure, reset = _short(exc), True
            except TimeoutError:
                failure, reset = "", False
            except (OSError, http.client.HTTPException) as exc:
                failure, reset = _short(exc), False
            else:
                if status not in TRANSIENT_STATUS or wait is None:
                    return status, raw
                del raw  # no answer held while waiting
                share.release()
                time.sleep(retry_wait(after, wait))
                continue
            # raised outside the except clauses: with no context, whose traceback would keep
            # the frames of a half-read answer (and the answer) alive while the error is kept
            if reset and dropped:
                raise _Dropped
            if reset and wait is not None:
                share.release()
                time.sleep(wait)
                continue
            if not failure:
                raise Unverifiable(
                    "rpc-unreachable",
                    f"{self.url} did not answer {what} within {self.timeout:g}s; check that the "
                    "node runs and the URL is right")
            tried = f" ({len(RETRY_WAITS) + 1} tries)" if reset else ""
            raise Unverifiable(
                "rpc-unreachable",
                f"{self.url} did not answer {what}: {failure}{tried}; check that the node runs "
                "and the URL is right")
        raise AssertionError("unreachable")


def retry_wait(after: str | None, wait: float) -> float:
    """Seconds to wait before a retry: the answer's ``Retry-After`` (seconds) when it gives
    one, at most :data:`MAX_RETRY_AFTER`; else ``wait``."""
    text = (after or "").strip()
    if text.isascii() and text.isdigit() and len(text) <= 9:
        return min(float(text), MAX_RETRY_AFTER)
    return wait


def _tried(status: int) -> str:
    return f" ({len(RETRY_WAITS) + 1} tries)" if status in TRANSIENT_STATUS else ""


class _Dropped(Exception):
    """The server closed the connection without answering (RpcClient._exchange)."""


def _result(url: str, method: str, reply: dict[str, Any]) -> Any:
    """The ``result`` of one reply object, or the Unverifiable its ``error`` says."""
    if "error" in reply and reply["error"] is not None:
        raise classify_error(url, method, reply["error"])
    if "result" not in reply:
        raise Unverifiable("rpc-malformed", f"{url} {method}: answer has no result")
    return reply["result"]


def _connect(url: str, timeout: float) -> http.client.HTTPConnection:
    parsed = urlparse(url)
    kind = http.client.HTTPSConnection if parsed.scheme == "https" else http.client.HTTPConnection
    return kind(parsed.hostname or "", parsed.port, timeout=timeout)  # check_url: a host


def post(connection: http.client.HTTPConnection, url: str, body: bytes, deadline: float,
         share: AnswerShare) -> tuple[int, bytes, bool, str | None]:
    """POST ``body``; ``(HTTP status, answer bytes, connection reusable, Retry-After)``. One
    deadline for the whole exchange (connect, send, every read): past it, TimeoutError. An
    answer longer than :data:`MAX_ANSWER_BYTES` is cut there (and then fails as JSON, too
    large); one longer than :data:`~recompute.sources.answer_budget.SMALL_BYTES` is read on
    only in its turn (``share``)."""
    parsed = urlparse(url)
    path = (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")
    connection.timeout = _remaining(connection, deadline)  # for the connect, if there is one
    connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    _remaining(connection, deadline)
    response = connection.getresponse()
    # one growing buffer, not a list of 64 KiB chunks: a thread's freed chunks would stay in
    # its malloc arena, and a run's threads in turn would keep 64 MiB each (RSS, not leaks)
    answer, whole = bytearray(), False
    while len(answer) <= MAX_ANSWER_BYTES:
        _remaining(connection, deadline)
        chunk = response.read1(1 << 16)
        if not chunk:
            whole = True
            break
        answer += chunk
        share.read(len(answer), deadline)
    if whole:  # read1 leaves an answer read to its end open: close it, the connection stays
        response.close()
    keep = whole and response.isclosed() and not response.will_close
    return response.status, bytes(answer), keep, response.getheader("Retry-After")


def _remaining(connection: http.client.HTTPConnection, deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    if connection.sock is not None:
        connection.sock.settimeout(left)
    return left


# anvil: "BlockOutOfRangeError: block height is 301 but requested was 1" for both a pruned
# block (below the height) and a future one (above it).
_OUT_OF_RANGE = re.compile(r"block height is (\d+) but requested was (\d+)")


def classify_error(url: str, method: str, error: object) -> Unverifiable:
    message = error.get("message", "") if isinstance(error, dict) else str(error)
    message = visible(message, 200)  # the node's words: text, whatever it sent
    out_of_range = _OUT_OF_RANGE.search(message)
    if out_of_range and int(out_of_range.group(2)) > int(out_of_range.group(1)):
        return Unverifiable("block-unknown", f"{url} does not have that block yet ({message})")
    if out_of_range:
        return Unverifiable(
            "state-unavailable",
            f"{url} no longer has that block's state ({method}: {message}); "
            "use an archive node or a more recent block",
        )
    if _PRUNED.search(message):
        return Unverifiable(
            "state-unavailable",
            f"{url} no longer has that block's state ({method}: {message}); "
            "use an archive node or a more recent block",
        )
    if _UNKNOWN_BLOCK.search(message):
        return Unverifiable("block-unknown", f"{url} does not know that block ({message})")
    return Unverifiable("rpc-error", f"{url} {method}: {message}")


def _short(exc: Exception) -> str:
    text = str(exc)
    reason = re.search(r"\[Errno -?\d+\] [^'\")]*|Read timed out|timed out", text)
    return visible(reason.group(0) if reason else text.splitlines()[0][:160] if text
                   else type(exc).__name__)
