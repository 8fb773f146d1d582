"""Prometheus metrics of a watch, served on 127.0.0.1 or the address named (docs/watch.md
§Metrics).

The families are ``prometheus_client`` collectors in a registry of the watch's own, exposed in
Prometheus' text format by the library's own encoder on ``GET /metrics`` (and ``/``) from a
daemon thread. The follower, the auditor and the sink keep calling :meth:`Metrics.inc`,
:meth:`Metrics.set` and :meth:`Metrics.observe` by family name; ``up``, ``checks{health}`` and
the age of the last verified block are derived here, at scrape time.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from recompute.core.errors import OptionError
from recompute.core.outside_text import visible

PREFIX = "recompute_watch_"

# name -> (type, help, label names)
FAMILIES = {
    "verdicts_total": ("counter", "Lines per check and verdict, each evaluation of a block once "
                                  "(re-evaluations after a reorg included).", ("check", "verdict")),
    "final_verdicts_total": ("counter", "Final lines per check and verdict.", ("check", "verdict")),
    "check_healthy": ("gauge", "1 if the check's last verified verdict was healthy, 0 if not.",
                      ("check",)),
    "checks": ("gauge", "Checks by health of their last verified verdict (healthy, unhealthy).",
               ("health",)),
    "up": ("gauge", "1 while the node answers (the last block was verified or the head read), "
                    "0 after node trouble or while no block is verified past "
                    "--max-anchor-age, until it answers again.", ()),
    "last_verified_block": ("gauge", "Number of the last block whose checks were evaluated.", ()),
    "last_verified_block_timestamp_seconds": ("gauge", "Header timestamp of the last verified "
                                                       "block (Unix seconds).", ()),
    "last_verified_block_age_seconds": ("gauge", "Seconds from the last verified block's header "
                                                 "timestamp to this scrape.", ()),
    "last_final_block": ("gauge", "Number of the last block whose lines are final.", ()),
    "head_block": ("gauge", "The node's head block number as last seen.", ()),
    "lag_blocks": ("gauge", "Head block minus last verified block.", ()),
    "rpc_errors_total": ("counter", "Node failures that stopped an evaluation, by reason.",
                         ("reason",)),
    "reorgs_total": ("counter", "Reorgs detected.", ()),
    "stale_alerts_total": ("counter", "Outages alerted: no block verified for longer than "
                                      "--max-anchor-age (once per outage).", ()),
    "orphaned_blocks_total": ("counter", "Verified blocks that a reorg orphaned.", ()),
    "retracted_final_lines_total": ("counter", "Final lines about blocks a reorg deeper than "
                                               "--confirmations orphaned, or an L2 game "
                                               "lost after they rested on it.", ()),
    "l2_retractions_total": ("counter", "L2: games lost (blacklisted, CHALLENGER_WINS, retired, "
                                        "type no longer respected) after lines rested on them, "
                                        "by reason.", ("reason",)),
    "l2_game_block": ("gauge", "L2: the L2 block of the newest game lines rest on, by its tier "
                               "(final, resolved, proposed).", ("tier",)),
    "blocks_total": ("counter", "Block evaluations completed.", ()),
    "evaluation_seconds": ("histogram", "Seconds from a block's anchoring to its lines, follow "
                                        "mode.", ()),
    "last_success_timestamp_seconds": ("gauge", "Unix time of the last block verified.", ()),
    "alerts_undelivered_total": ("counter", "Alerts not delivered (a webhook POST that failed "
                                            "every attempt or missed its deadline, a command "
                                            "that failed, ran over its limit or was cut off at "
                                            "close), by hook.", ("hook",)),
}
# Derived at scrape time, never set by a caller.
_DERIVED = {"checks", "up", "last_verified_block_age_seconds"}
# Seconds: a block's checks take from tens of milliseconds to a slow node's many seconds.
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

# The library would add a `_created` series per counter; the documented names stand alone.
prometheus_client.disable_created_metrics()


# A series: (family name, its labels sorted by name).
Key = tuple[str, tuple[tuple[str, str], ...]]
Family = Counter | Gauge | Histogram  # a metric of the exposition, or one of its series


def series_key(name: str, **labels: str) -> Key:
    return (name, tuple(sorted((k, visible(v)) for k, v in labels.items())))


class Series:
    """One series' value as :meth:`Metrics.get` reads it, and what :meth:`Metrics.apply`
    counted or set in it since the exposition last saw it. One per key, made once
    (:meth:`Metrics.series`): the sink keeps it per check, so counting a line hashes no key."""

    __slots__ = ("key", "value", "counted", "is_set")

    def __init__(self, key: Key):
        self.key = key
        self.value: float | None = None  # never set or counted: None
        self.counted: float = 0  # apply()'s counts not yet in the exposition's series
        self.is_set = False  # apply() set it since the exposition last saw it


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[Key, Series] = {}
        self._up = 1
        self.registry = CollectorRegistry(auto_describe=True)
        self._families: dict[str, Family] = {}
        self._series: dict[Key, Family] = {}
        gauges: dict[str, Gauge] = {}
        for name, (kind, help_text, labels) in FAMILIES.items():
            family: Family
            if kind == "counter":
                family = Counter(PREFIX + name.removesuffix("_total"), help_text, labels,
                                 registry=self.registry)
            elif kind == "histogram":
                family = Histogram(PREFIX + name, help_text, labels, buckets=LATENCY_BUCKETS,
                                   registry=self.registry)
            else:
                family = gauges[name] = Gauge(PREFIX + name, help_text, labels,
                                              registry=self.registry)
            self._families[name] = family
        gauges["up"].set_function(lambda: self._up)
        gauges["last_verified_block_age_seconds"].set_function(self._age)
        for health in ("healthy", "unhealthy"):
            gauges["checks"].labels(health=health).set_function(
                partial(self._count_health, health == "healthy"))

    def _counting(self, key: Key) -> Counter | Gauge:
        family = self._family(key)
        if isinstance(family, Histogram):
            raise KeyError(f"{key[0]!r} is a histogram: observe it")
        return family

    def _gauge(self, key: Key) -> Gauge:
        family = self._family(key)
        if not isinstance(family, Gauge):
            raise KeyError(f"{key[0]!r} is not a gauge")
        return family

    def _family(self, key: Key) -> Family:
        """The series of ``(name, sorted labels)``, looked up once (``labels()`` of the library
        is slow, and the watch counts every line of every block)."""
        series = self._series.get(key)
        if series is None:
            name, labels = key
            if name not in FAMILIES or name in _DERIVED:
                raise KeyError(f"no settable metric {name!r}")
            family = self._families[name]
            series = self._series[key] = family.labels(**dict(labels)) if labels else family
        return series

    def inc(self, name: str, amount: float = 1, **labels: str) -> None:
        with self._lock:
            self._inc(series_key(name, **labels), amount)

    def set(self, name: str, value: float, **labels: str) -> None:
        with self._lock:
            self._set(series_key(name, **labels), value)

    def series(self, key: Key) -> Series:
        """The :class:`Series` of a settable ``key`` (from :func:`series_key`), to count in with
        :meth:`apply`; an unknown or derived name fails here, as in :meth:`inc`."""
        with self._lock:
            self._family(key)
            return self._cell(key)

    def _cell(self, key: Key) -> Series:
        cell = self._values.get(key)
        if cell is None:
            cell = self._values[key] = Series(key)
        return cell

    def apply(self, incs: list[tuple[Series, float]], sets: list[tuple[Series, float]]) -> None:
        """Many :meth:`inc` and :meth:`set` of labelled series at once (each from
        :meth:`series`): the sink counts every line of a block in one call. The values are
        what :meth:`get` reads at once; the exposition's series are brought up to date when
        scraped (:meth:`render`), not line by line."""
        with self._lock:
            for cell, amount in incs:
                cell.value = (cell.value or 0) + amount
                cell.counted += amount
            for cell, value in sets:
                cell.value = value
                cell.is_set = True

    def _flush(self) -> None:
        """Push what :meth:`apply` counted and set into the exposition's series (lock
        held)."""
        for cell in self._values.values():
            if cell.counted:
                self._counting(cell.key).inc(cell.counted)
                cell.counted = 0
            if cell.is_set and cell.value is not None:  # set: never None
                self._gauge(cell.key).set(cell.value)
                cell.is_set = False

    def _inc(self, key: Key, amount: float) -> None:
        cell = self._cell(key)
        cell.value = (cell.value or 0) + amount
        self._counting(key).inc(amount)
        if key[0] == "rpc_errors_total":
            self._up = 0

    def _set(self, key: Key, value: float) -> None:
        name = key[0]
        self._cell(key).value = value
        if name == "up":  # derived gauge: the follower says so directly, too
            self._up = 1 if value else 0
            return
        self._gauge(key).set(value)
        if name in ("last_verified_block", "head_block"):
            self._up = 1

    def observe(self, name: str, value: float) -> None:
        with self._lock:
            family = self._family((name, ()))
            if not isinstance(family, Histogram):
                raise KeyError(f"{name!r} is not a histogram")
            family.observe(value)

    def get(self, name: str, **labels: str) -> float | None:
        """The value last set or counted: what the follower reads back. A counter never
        counted is 0 (as Prometheus shows it); any other metric never set is None."""
        with self._lock:
            cell = self._values.get(series_key(name, **labels))
            value = None if cell is None else cell.value
        if value is None and FAMILIES.get(name, ("",))[0] == "counter":
            return 0
        return value

    def _age(self) -> float:
        stamp = self.get("last_verified_block_timestamp_seconds")
        return float("nan") if stamp is None else max(time.time() - stamp, 0.0)

    def _count_health(self, healthy: bool) -> int:
        with self._lock:
            return sum(1 for (name, _), cell in self._values.items()
                       if name == "check_healthy" and cell.value is not None
                       and bool(cell.value) is healthy)

    def render(self) -> str:
        with self._lock:
            self._flush()
        return generate_latest(self.registry).decode()


class _Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def metrics_address(addr: str) -> str:
    """``--metrics-addr``: an IPv4 or IPv6 address to bind (``0.0.0.0``, ``::`` for every
    interface), checked before anything is asked of anyone."""
    try:
        return str(ipaddress.ip_address(addr.strip("[]")))
    except ValueError:
        raise OptionError("{metrics_addr} {addr!r} is not an IP address (127.0.0.1, 0.0.0.0, "
                          "::1, …)", ("metrics_addr",), addr=addr) from None


def metrics_url(server: ThreadingHTTPServer) -> str:
    host, port = str(server.server_address[0]), server.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/metrics"


def serve(metrics: Metrics, port: int, addr: str = "127.0.0.1") -> ThreadingHTTPServer:
    """Serve ``metrics`` on ``addr``:``port`` from a daemon thread; the server is returned
    (``server.server_address[1]`` is the port, useful with port 0)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 -- http.server's naming
            if self.path.split("?")[0] not in ("/metrics", "/"):
                self.send_error(404, "only /metrics is served")
                return
            body = metrics.render().encode()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE_LATEST)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- keep stderr for the watch's own lines
            pass

    if not 0 <= port <= 65535:
        raise OptionError("{metrics_port} {port} is not a TCP port", ("metrics_port",),
                          port=port)
    try:
        host = metrics_address(addr)
        kind = _Server6 if ":" in host else ThreadingHTTPServer
        server = kind((host, port), Handler)
    except OSError as exc:
        raise OptionError("{metrics_addr} {addr} {metrics_port} {port}: {problem}",
                          ("metrics_addr", "metrics_port"), addr=addr, port=port,
                          problem=exc.strerror or exc) from None
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="watch-metrics", daemon=True).start()
    return server
