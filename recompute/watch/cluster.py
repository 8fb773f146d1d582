"""Segments on Dask (``dask.distributed``): ``--cluster tcp://HOST:8786`` (a running scheduler).
``--processes P`` runs P local worker processes without Dask (:mod:`recompute.watch.worker_pool`:
a worker starts at about a quarter of a Dask worker's CPU, and no scheduler runs). The checks are
CPU-bound Python, so processes, not threads, add throughput; inside a task, ``--workers``
threads only overlap the node's latency. docs/watch.md §Audits that outgrow one machine.

Dask does the scheduling and the fault handling: a worker that dies mid-segment has its task
re-run on another worker by the scheduler (up to its ``allowed-failures``, 3 by default); a task
that still fails (the scheduler gives up on it: ``KilledWorker``, or the worker could not run
it) comes back here as a failed :class:`~recompute.watch.segment.SegmentResult` whose blocks the
coordinator turns into UNVERIFIABLE lines (reason ``segment-failed``). A
:class:`~recompute.core.errors.UsageError` raised in a worker (a check that cannot be asked, or a
worker running another recompute version) stops the audit as a usage error.

Dask is imported only here, and only when ``--cluster`` is given.

Dask's messages are pickles: whoever answers for the scheduler runs code in the coordinator.
So a cluster is ``tls://HOST:PORT`` with Dask's mutual TLS (:func:`cluster_target`: the CA,
the client certificate and key from ``--cluster-ca/--cluster-cert/--cluster-key`` or from
Dask's own ``distributed.comm.tls.*`` configuration), or plain ``tcp://`` on loopback; plain
``tcp://`` to another address needs ``--insecure-cluster``. All of it is decided before any
connection.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from recompute.core.errors import OptionError, UsageError
from recompute.watch.linking import SEGMENT_FAILED
from recompute.watch.segment import SegmentResult, SegmentTask, evaluate_segment
from recompute.watch.worker_pool import LocalProcesses

if TYPE_CHECKING:  # Dask is imported only when --cluster or --processes is given
    from dask.typing import Key
    from distributed import Future
    from distributed.security import Security

CONNECT_TIMEOUT = "10s"
_TLS_CONFIG = {"ca": "distributed.comm.tls.ca-file", "cert": "distributed.comm.tls.client.cert",
               "key": "distributed.comm.tls.client.key"}


@dataclass(frozen=True)
class ClusterTarget:
    """A scheduler to connect to and, for ``tls://``, the files of its mutual TLS (None: Dask's
    configuration gives them)."""

    url: str
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    @property
    def tls(self) -> bool:
        return self.url.startswith("tls://")

    def security(self) -> Security | None:
        """Dask's ``Security`` for a ``tls://`` target (encryption required), else None."""
        if not self.tls:
            return None
        from distributed.security import Security

        if self.ca is None:  # from distributed.comm.tls.* (checked by cluster_target)
            return Security(require_encryption=True)
        return Security(tls_ca_file=self.ca, tls_client_cert=self.cert,
                        tls_client_key=self.key, require_encryption=True)


def cluster_target(url: str, *, insecure: bool = False, ca: str | None = None,
                   cert: str | None = None, key: str | None = None) -> ClusterTarget:
    """``--cluster URL`` and its security options, checked before any connection: one
    UsageError line for a scheme other than tls/tcp, a tls cluster without certificates, TLS
    files with tcp, or plain tcp to a host that is not loopback without ``--insecure-cluster``."""
    text = url if "://" in url else f"tcp://{url}"  # Dask's own default scheme
    parsed = urlparse(text)
    try:
        port = parsed.port
    except ValueError:
        port = None
    if parsed.scheme not in ("tls", "tcp") or not parsed.hostname or port is None:
        raise OptionError("{cluster} {url}: give tls://HOST:PORT (Dask with TLS; tcp://HOST:PORT "
                          "on this machine only)", ("cluster",), url=url)
    given = {"cluster_ca": ca, "cluster_cert": cert, "cluster_key": key}
    if parsed.scheme == "tcp":
        named = [name for name, value in given.items() if value is not None]
        if named:
            raise OptionError("{" + named[0] + "} is for a tls:// cluster, not {url}", (named[0],),
                              url=url)
        if not insecure and not _loopback(parsed.hostname, port):
            raise OptionError(
                "{cluster} {url}: plain tcp is unauthenticated pickle (whoever answers runs code "
                "here); use tls://HOST:PORT with {cluster_ca}/{cluster_cert}/{cluster_key}, or "
                "add {insecure_cluster} on a network you trust",
                ("cluster", "cluster_ca", "cluster_cert", "cluster_key", "insecure_cluster"),
                url=url)
        return ClusterTarget(text)
    if insecure:
        raise OptionError("{insecure_cluster} is for a plain tcp:// cluster; a tls:// one is "
                          "authenticated", ("insecure_cluster",))
    if ca is None and cert is None and key is None:
        from dask import config

        missing = [name for name, setting in _TLS_CONFIG.items() if name != "key"
                   and not config.get(setting, None)]
        if missing:
            raise OptionError("{cluster} {url} needs {cluster_ca}, {cluster_cert} and "
                              "{cluster_key} (or Dask's distributed.comm.tls.ca-file, "
                              ".client.cert and .client.key configuration)",
                              ("cluster", "cluster_ca", "cluster_cert", "cluster_key"), url=url)
        return ClusterTarget(text)
    if ca is None or cert is None:
        raise OptionError("{cluster} {url} needs {cluster_ca} and {cluster_cert} (and "
                          "{cluster_key} unless the certificate file holds the key)",
                          ("cluster", "cluster_ca", "cluster_cert", "cluster_key"), url=url)
    for name, value in given.items():
        if value is not None and not Path(value).is_file():
            raise OptionError("{" + name + "} {value}: no such file", (name,), value=value)
    return ClusterTarget(text, ca, cert, key)


def _loopback(host: str, port: int) -> bool:
    """Whether every address ``host`` names is a loopback one (a name is resolved; a name
    that does not resolve is one UsageError line)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise OptionError("{cluster}: the host {host!r} does not resolve ({exc})", ("cluster",),
                          host=host, exc=exc) from None
    return all(ipaddress.ip_address(str(a[-1][0]).split("%")[0]).is_loopback for a in found)


def segment_executor(*, cluster: ClusterTarget | None, processes: int | None
                     ) -> DaskExecutor | LocalProcesses:
    """The executor of ``--cluster`` (Dask) or of ``--processes`` (local workers, no Dask)."""
    if cluster is not None:
        return DaskExecutor(cluster=cluster)
    assert processes is not None
    return LocalProcesses(processes)


class DaskExecutor:
    """Hands tasks to a Dask cluster; yields results as they finish."""

    def __init__(self, *, cluster: ClusterTarget):
        try:
            from distributed import Client
        except ImportError:
            raise OptionError("{cluster} needs dask.distributed: "
                              "pip install 'dask[distributed]'", ("cluster",)) from None
        try:
            self.client = Client(cluster.url, timeout=CONNECT_TIMEOUT,
                                 security=cluster.security(), set_as_default=False)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise OptionError("{cluster} {url}: no Dask scheduler answered ({said})",
                              ("cluster",), url=cluster.url,
                              said=str(exc).splitlines()[0] if str(exc) else repr(exc)
                              ) from None
        self.where = f"the Dask cluster {cluster.url}"
        self.audit_id = uuid.uuid4().hex[:12]

    def __call__(self, tasks: list[SegmentTask], stop: threading.Event
                 ) -> Iterator[tuple[SegmentTask, SegmentResult]]:
        from distributed import as_completed

        futures: dict[Key, tuple[Future[SegmentResult], SegmentTask]] = {}
        for task in tasks:
            future = self.client.submit(evaluate_segment, task, pure=False, retries=1,
                                        key=f"recompute-segment-{self.audit_id}-{task.lo}")
            futures[future.key] = (future, task)
        try:
            for future in as_completed([f for f, _ in futures.values()],
                                       loop=self.client.loop):
                task = futures[future.key][1]
                yield task, self._result(future, task)
                if stop.is_set():
                    return
        finally:
            for future, _ in futures.values():
                if not future.done():
                    future.cancel()

    @staticmethod
    def _result(future: Future[SegmentResult], task: SegmentTask) -> SegmentResult:
        try:
            result = future.result()
            if not isinstance(result, SegmentResult):  # what evaluate_segment returns
                raise TypeError(f"a worker returned {type(result).__name__}")
            return result
        except UsageError:
            raise
        except Exception as exc:  # the scheduler gave up on the task (KilledWorker, …)
            text = str(exc).splitlines()[0] if str(exc) else ""
            return SegmentResult(task.lo, task.hi, failure=(
                SEGMENT_FAILED, f"{type(exc).__name__}: {text}"[:300]))

    def close(self) -> None:
        self.client.close()
