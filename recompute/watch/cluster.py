"""Segments on Dask (``dask.distributed``): ``--cluster tcp://HOST:8786`` (a running scheduler)
or ``--processes P`` (a local cluster of P worker processes, one Dask thread each: the checks are
CPU-bound Python, so processes, not threads, add throughput; inside a task, ``--workers``
threads only overlap the node's latency). docs/watch.md §Audits that outgrow one machine.

Dask does the scheduling and the fault handling: a worker that dies mid-segment has its task
re-run on another worker by the scheduler (up to its ``allowed-failures``, 3 by default); a task
that still fails (the scheduler gives up on it: ``KilledWorker``, or the worker could not run
it) comes back here as a failed :class:`~recompute.watch.segment.SegmentResult` whose blocks the
coordinator turns into UNVERIFIABLE lines (reason ``segment-failed``). A
:class:`~recompute.core.errors.UsageError` raised in a worker (a check that cannot be asked, or a
worker running another recompute version) stops the audit as a usage error.

The local cluster listens on 127.0.0.1 only (its HTTP endpoint on a free loopback port). Dask
is imported only here, and only when one of the two options is given.

Dask's messages are pickles: whoever answers for the scheduler runs code in the coordinator.
So a cluster is ``tls://HOST:PORT`` with Dask's mutual TLS (:func:`cluster_target`: the CA,
the client certificate and key from ``--cluster-ca/--cluster-cert/--cluster-key`` or from
Dask's own ``distributed.comm.tls.*`` configuration), or plain ``tcp://`` on loopback; plain
``tcp://`` to another address needs ``--insecure-cluster``. All of it is decided before any
connection.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from recompute.core.errors import UsageError
from recompute.watch.linking import SEGMENT_FAILED
from recompute.watch.segment import SegmentResult, SegmentTask, evaluate_segment

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
        raise UsageError(f"--cluster {url}: give tls://HOST:PORT (Dask with TLS; tcp://HOST:PORT "
                         "on this machine only)")
    given = {"--cluster-ca": ca, "--cluster-cert": cert, "--cluster-key": key}
    if parsed.scheme == "tcp":
        named = [name for name, value in given.items() if value is not None]
        if named:
            raise UsageError(f"{named[0]} is for a tls:// cluster, not {url}")
        if not insecure and not _loopback(parsed.hostname, port):
            raise UsageError(
                f"--cluster {url}: plain tcp is unauthenticated pickle (whoever answers runs "
                "code here); use tls://HOST:PORT with --cluster-ca/--cluster-cert/"
                "--cluster-key, or add --insecure-cluster on a network you trust")
        return ClusterTarget(text)
    if insecure:
        raise UsageError("--insecure-cluster is for a plain tcp:// cluster; a tls:// one is "
                         "authenticated")
    if ca is None and cert is None and key is None:
        from dask import config

        missing = [name for name, setting in _TLS_CONFIG.items() if name != "key"
                   and not config.get(setting, None)]
        if missing:
            raise UsageError(f"--cluster {url} needs --cluster-ca, --cluster-cert and "
                             "--cluster-key (or Dask's distributed.comm.tls.ca-file, "
                             ".client.cert and .client.key configuration)")
        return ClusterTarget(text)
    if ca is None or cert is None:
        raise UsageError(f"--cluster {url} needs --cluster-ca and --cluster-cert (and "
                         "--cluster-key unless the certificate file holds the key)")
    for name, value in given.items():
        if value is not None and not Path(value).is_file():
            raise UsageError(f"{name} {value}: no such file")
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
        raise UsageError(f"--cluster: the host {host!r} does not resolve ({exc})") from None
    return all(ipaddress.ip_address(str(a[-1][0]).split("%")[0]).is_loopback for a in found)


class DaskExecutor:
    """Hands tasks to a Dask cluster; yields results as they finish."""

    def __init__(self, *, cluster: ClusterTarget | None = None,
                 processes: int | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("--cluster and --processes need dask.distributed: "
                             "pip install 'dask[distributed]'") from None
        self.local = None
        if cluster is not None:
            try:
                self.client = Client(cluster.url, timeout=CONNECT_TIMEOUT,
                                     security=cluster.security(), set_as_default=False)
            except (OSError, TimeoutError, ValueError, TypeError) as exc:
                raise UsageError(f"--cluster {cluster.url}: no Dask scheduler answered "
                                 f"({str(exc).splitlines()[0] if str(exc) else exc!r})"
                                 ) from None
            self.where = f"the Dask cluster {cluster.url}"
        else:
            self.local = LocalCluster(n_workers=processes, threads_per_worker=1,
                                      processes=True, host="127.0.0.1", scheduler_port=0,
                                      dashboard_address="127.0.0.1:0",
                                      silence_logs=logging.ERROR)
            self.client = Client(self.local, set_as_default=False)
            self.where = f"{processes} local worker process(es)"
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
        try:
            self.client.close()
        finally:
            if self.local is not None:
                self.local.close()
