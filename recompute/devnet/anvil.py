"""Start and stop a real anvil node on a loopback port.

anvil comes from where the user put it (:func:`find_anvil`, docs/executables.md); in a
checkout, the npm package ``@foundry-rs/anvil`` pinned in ``package.json``, whose platform
package ships the Linux binary, run directly (no node wrapper, no download), named by the
Makefile and the tests through ``RECOMPUTE_ANVIL``. Tests, the devnet and the benchmarks all
start anvil through :class:`Anvil`.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recompute.core import executables
from recompute.core.errors import UsageError
from recompute.core.jsontext import json_line
from recompute.disk.whole_file import open_log

# The devnet's accounts: anvil's well-known test mnemonic, so addresses are deterministic.
DEFAULT_MNEMONIC = "test test test test test test test test test test test junk"
DEFAULT_CHAIN_ID = 31337
# 2026-01-01T00:00:00Z: a fixed genesis timestamp, for chains whose histories must be
# identical (the devnet itself starts at recompute.devnet.build.DEVNET_GENESIS_TIMESTAMP).
DEFAULT_GENESIS_TIMESTAMP = 1767225600


def _platform_package() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    system = platform.system().lower()
    return f"anvil-{system}-{arch}"


def find_anvil() -> Path:
    """The anvil binary, from where the user put it (docs/executables.md):

    - ``$RECOMPUTE_ANVIL``: the binary itself, or a ``node_modules`` folder holding the npm
      package ``@foundry-rs/anvil`` (its platform package's ``bin/anvil``), as a checkout's
      Makefile and tests name the checkout's own;
    - else ``anvil`` in an absolute folder of ``PATH``.

    Never the working directory's ``node_modules`` nor one derived from where Python lives:
    a folder a command runs in may have been prepared by someone else."""
    override = os.environ.get("RECOMPUTE_ANVIL")
    if override:
        path = Path(override)
        if path.is_dir():
            path = path / "@foundry-rs" / _platform_package() / "bin" / "anvil"
            if not path.is_file():
                raise UsageError(f"RECOMPUTE_ANVIL={override} holds no {path.relative_to(override)}"
                                 " (run `npm install @foundry-rs/anvil` there, or name the binary)")
        if not path.is_file():
            raise UsageError(f"RECOMPUTE_ANVIL={override} is not a file: name the anvil binary or "
                             "the node_modules folder holding @foundry-rs/anvil")
        return path
    on_path = executables.on_path("anvil")
    if on_path is not None:
        return on_path
    raise UsageError(
        "anvil not found: put anvil on PATH (foundryup, or `npm install @foundry-rs/anvil`), or "
        "set RECOMPUTE_ANVIL to the binary or to the node_modules folder holding it (in a "
        "checkout, `make` sets it to the checkout's node_modules)"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def rpc_call(url: str, method: str, params: list[Any] | None = None,
             timeout: float = 10.0) -> Any:
    """One JSON-RPC call over plain HTTP; for driving a devnet, not for verified reads."""
    body = json_line({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []})
    request = urllib.request.Request(
        url, data=body.encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        reply = json.loads(response.read())
    if "error" in reply:
        raise RuntimeError(f"{method}: {reply['error']}")
    return reply["result"]


@dataclass
class Anvil:
    """A running anvil process. Use as a context manager, or call :meth:`start`/:meth:`stop`."""

    port: int | None = None
    chain_id: int = DEFAULT_CHAIN_ID
    # None: anvil's own clock (a chain mined now, whose `latest` is current by the system
    # clock), then the genesis timestamp it chose once started; a fixed number for a
    # reproducible history (recorded data, judged with --at)
    timestamp: int | None = None
    accounts: int = 10
    mnemonic: str = DEFAULT_MNEMONIC
    hardfork: str = "prague"  # an OP-stack chain (``--network optimism``) names its own: isthmus
    state_path: Path | None = None
    extra_args: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    detach: bool = False  # own session: survives the Python process that started it
    # Where anvil writes the block states it moves out of memory (``--cache-path``). Left to
    # itself it writes them under ~/.foundry/anvil/tmp and never removes them: tens of MB for
    # each devnet-sized chain, on every start. None: a private temporary folder, removed by
    # :meth:`stop`; a detached anvil outlives this process, so the devnet passes a folder of
    # its state directory, removed by ``devnet down``.
    cache_dir: Path | None = None
    _own_cache: Path | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        """The started anvil's process id."""
        if self.process is None:
            raise RuntimeError("anvil is not started")
        return self.process.pid

    def command(self) -> list[str]:
        args = [
            str(find_anvil()),
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--chain-id", str(self.chain_id),
            "--accounts", str(self.accounts),
            "--mnemonic", self.mnemonic,
            "--hardfork", self.hardfork,
        ]
        cache = self.cache_dir if self.cache_dir is not None else self._own_cache
        if cache is not None:
            args += ["--cache-path", str(cache)]
        if self.timestamp is not None:
            args += ["--timestamp", str(self.timestamp)]
        if self.state_path is not None:
            args += ["--state", str(self.state_path), "--preserve-historical-states"]
        return args + list(self.extra_args)

    def start(self, timeout: float = 20.0) -> Anvil:
        attempts = 3 if self.port is None else 1
        last_error = ""
        if self.cache_dir is None and self._own_cache is None and not self.detach:
            self._own_cache = Path(tempfile.mkdtemp(prefix="recompute-anvil-"))
        for _ in range(attempts):
            if self.port is None or attempts > 1:
                self.port = free_port()
            log = open_log(self.log_path) if self.log_path else None
            self.process = subprocess.Popen(
                self.command(), stdout=subprocess.DEVNULL if log is None else log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=self.detach,
            )
            if log is not None:
                log.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    last_error = f"anvil exited with code {self.process.returncode}"
                    break
                try:
                    rpc_call(self.url, "eth_chainId", timeout=1.0)
                    if self.timestamp is None:  # the genesis anvil's clock chose
                        genesis = rpc_call(self.url, "eth_getBlockByNumber", ["0x0", False])
                        self.timestamp = int(genesis["timestamp"], 16)
                    return self
                except (urllib.error.URLError, ConnectionError, OSError):
                    time.sleep(0.05)
            else:
                last_error = f"anvil did not answer on {self.url} within {timeout}s"
            self.stop()
        raise RuntimeError(last_error)

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(timeout=10)
            self.process = None
        if self._own_cache is not None:
            shutil.rmtree(self._own_cache, ignore_errors=True)
            self._own_cache = None

    def rpc(self, method: str, *params: Any) -> Any:
        return rpc_call(self.url, method, list(params))

    def __enter__(self) -> Anvil:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
