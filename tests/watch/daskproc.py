"""A real Dask cluster on 127.0.0.1 for the tests: ``dask scheduler`` and ``dask worker``
commands from the project's virtualenv, every port on loopback (the HTTP endpoints too, on
free ports), stopped by process id when the test is done."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from recompute.devnet.anvil import free_port
from tests import REPO_ROOT

BIN = Path(sys.executable).parent


def _executing(dask_worker) -> list[str]:
    """Run on a worker by ``Client.run``: the keys of the tasks it is executing right now."""
    return [str(ts.key) for ts in dask_worker.state.executing]


class DaskCluster:
    """A scheduler and ``workers`` nanny-supervised workers (a killed worker process is
    restarted by its nanny), one thread each."""

    def __init__(self, workers: int, directory: Path, allowed_failures: int = 3):
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.directory = directory
        self.env = {**os.environ, "PYTHONPATH": str(REPO_ROOT),
                    "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": str(allowed_failures)}
        self.processes: list[subprocess.Popen] = []
        self.client = None
        try:
            self._start(BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port",
                        str(self.port), "--dashboard-address", "127.0.0.1:0")
            for n in range(workers):
                self._start(BIN / "dask", "worker", self.address, "--host", "127.0.0.1",
                            "--dashboard-address", "127.0.0.1:0", "--nthreads", "1",
                            "--name", f"w{n}", "--local-directory", str(directory))
            from distributed import Client

            self.client = Client(self.address, timeout="30s", set_as_default=False)
            self.client.wait_for_workers(workers, timeout=60)
        except BaseException:
            self.stop()
            raise

    def _start(self, *args) -> None:
        log = open(self.directory / f"dask-{len(self.processes)}.log", "w")  # noqa: SIM115
        self.processes.append(subprocess.Popen([str(a) for a in args], stdout=log,
                                               stderr=subprocess.STDOUT, env=self.env,
                                               cwd=self.directory))
        log.close()

    def worker_pids(self) -> dict[str, int]:
        return self.client.run(os.getpid)

    def executing(self) -> dict[str, list[str]]:
        return self.client.run(_executing)

    def wait_executing(self, prefix: str, timeout: float = 60.0,
                       other_than: str | None = None) -> tuple[str, str]:
        """(worker address, key) of a task whose key starts with ``prefix`` as soon as one
        executes (on a worker other than ``other_than``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                running = self.executing()
            except (OSError, TimeoutError):
                running = {}  # a worker just died
            for address, keys in running.items():
                for key in keys:
                    if key.startswith(prefix) and address != other_than:
                        return address, key
            time.sleep(0.01)
        raise AssertionError(f"no task {prefix}… executed within {timeout}s")

    def kill_worker(self, address: str) -> None:
        os.kill(self.worker_pids()[address], signal.SIGKILL)

    def stop(self) -> None:
        pids = []
        if self.client is not None:
            try:
                pids = list(self.worker_pids().values())
            except Exception:  # noqa: BLE001  (best effort: the nannies stop theirs too)
                pids = []
            self.client.close()
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        for pid in pids:  # a worker process left behind by its nanny
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def tls_files(directory: Path, name: str = "node") -> dict[str, Path]:
    """A throwaway CA and one certificate it signed (P-256, a day long), made with the system's
    ``openssl``: ``{"ca", "cert", "key"}`` paths. Dask's TLS checks the chain, not host names,
    so one certificate serves the scheduler, the workers and the client."""
    files = {"ca": directory / f"{name}-ca.pem", "ca_key": directory / f"{name}-ca.key",
             "cert": directory / f"{name}.pem", "key": directory / f"{name}.key"}
    csr = directory / f"{name}.csr"
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for command in (
        ["req", "-x509", *curve, "-keyout", files["ca_key"], "-out", files["ca"], "-days", "1",
         "-subj", f"/CN={name} test CA"],
        ["req", *curve, "-keyout", files["key"], "-out", csr, "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", csr, "-CA", files["ca"], "-CAkey", files["ca_key"],
         "-CAcreateserial", "-out", files["cert"], "-days", "1"],
    ):
        subprocess.run(["openssl", *map(str, command)], check=True, capture_output=True,
                       cwd=directory)
    return files
