"""``python -m recompute watch`` as a real subprocess, its stdout JSON lines collected as they
come, and small helpers for driving the anvil nodes the watch tests start."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from recompute.devnet.anvil import rpc_call
from tests import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "devnet-watch.toml"


class Watch:
    """A running ``recompute watch``; ``lines`` are its stdout JSON objects so far."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "recompute", "watch", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
        self.lines: list[dict] = []
        self.stderr: list[str] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._read_out, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_out(self) -> None:
        for text in self.process.stdout:
            with self._lock:
                self.lines.append(json.loads(text))

    def _read_err(self) -> None:
        for text in self.process.stderr:
            with self._lock:
                self.stderr.append(text.rstrip("\n"))

    def snapshot(self) -> list[dict]:
        with self._lock:
            return list(self.lines)

    def wait_for(self, predicate, timeout: float = 30.0, what: str = "") -> list[dict]:
        """Wait until ``predicate(lines)`` holds; the lines then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.snapshot()
            if predicate(lines):
                return lines
            if self.process.poll() is not None:
                time.sleep(0.2)  # let the readers drain
                lines = self.snapshot()
                if predicate(lines):
                    return lines
                raise AssertionError(f"watch exited {self.process.returncode} before {what}: "
                                     + "\n".join(self.stderr[-15:]))
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; stderr:\n"
                             + "\n".join(self.stderr[-15:]))

    def wait_for_block(self, number: int, checks: int, timeout: float = 30.0) -> list[dict]:
        """Until the first lines of block ``number`` (one per check) are out."""
        return self.wait_for(
            lambda ls: sum(1 for x in ls if x.get("block") == number and x.get("hash")
                           and not x["final"]) >= checks,
            timeout, f"block {number}")

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        self.process.send_signal(signum)
        code = self.process.wait(timeout)
        for thread in self._threads:
            thread.join(5)
        return code

    def finish(self, timeout: float = 60.0) -> int:
        code = self.process.wait(timeout)
        for thread in self._threads:
            thread.join(5)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def write_config(path: Path, checks: list[dict]) -> Path:
    """checks.toml from plain dicts (every value a string or an int)."""
    out = []
    for check in checks:
        out.append("[[check]]")
        for key, value in check.items():
            if isinstance(value, dict):
                inner = ", ".join(f"{k} = {_toml(v)}" for k, v in value.items())
                out.append(f"{key} = {{ {inner} }}")
            else:
                out.append(f"{key} = {_toml(value)}")
        out.append("")
    path.write_text("\n".join(out))
    return path


def _toml(value) -> str:
    return str(value) if isinstance(value, int) else json.dumps(value)


def head(url: str) -> dict:
    return rpc_call(url, "eth_getBlockByNumber", ["latest", False])


def block_hash(url: str, number: int) -> str:
    return rpc_call(url, "eth_getBlockByNumber", [hex(number), False])["hash"]
