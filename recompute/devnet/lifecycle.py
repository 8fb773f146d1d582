"""``devnet up`` / ``devnet down``: a detached anvil, its state dir and its manifest.

The state dir holds ``manifest.json`` (what was deployed and the named moments),
``anvil.pid``, ``anvil.log`` and ``state.json`` (anvil's own dump, with historical states,
so a stopped devnet comes back with the same chain and the same proofs).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from recompute.core.boundedjson import load_file
from recompute.core.errors import RecomputeError, UsageError
from recompute.core.schema import Integer, ListOf, MapOf, Record, Text, check
from recompute.devnet.anvil import Anvil
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, MANIFEST_FORMAT, build
from recompute.lightclient.params import DEVNET

BEACON_START_TIMEOUT = 60.0

DEFAULT_STATE_DIR = Path(".devnet")

# Where the documentation's commands expect the devnet: the JSON-RPC port every Ethereum tool
# defaults to, and the beacon API port of the consensus clients (Lighthouse's default).
DEFAULT_PORT = 8545
DEFAULT_BEACON_PORT = 5052


class DevnetError(RecomputeError):
    """The devnet could not be brought up or down (exit 2 at the CLI)."""

    exit_code = 2


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_pid(state_dir: Path) -> int | None:
    pid_file = state_dir / "anvil.pid"
    if not pid_file.is_file():
        return None
    try:
        pid = int(pid_file.read_text().strip())
    except ValueError:
        return None
    return pid if _pid_alive(pid) else None


_HASH = Text(r"0x[0-9a-fA-F]{64}", "a 0x hash of 32 bytes")
_LINE = Text(r"[^\x00-\x1f\x7f]{0,2000}", "one line of text")  # printed by `devnet up`
# What the commands read of a manifest (recompute/devnet/build.py writes it); a history's own
# section (amm, meters, swarm) is its builder's business and stays open.
MANIFEST_SHAPE = Record(
    {"format": Text(choices=(MANIFEST_FORMAT,)),
     "rpc": Text(r"http://127\.0\.0\.1:[0-9]{1,5}", "the devnet's http://127.0.0.1:PORT"),
     "chain_id": Integer(0, 1 << 64),
     "contracts": MapOf(Text(r"0x[0-9a-fA-F]{40}", "a 0x address"), key=_LINE),
     "moments": MapOf(Record({"number": Integer(0, 1 << 64), "hash": _HASH},
                             {"about": Record({"recipe": _LINE, "verdict": _LINE,
                                               "text": _LINE}, open=True)}, open=True),
                      key=_LINE)},
    {"port": Integer(1, 1 << 16), "genesis_timestamp": Integer(0, 1 << 64),
     "accounts": ListOf(Text(r"0x[0-9a-fA-F]{40}", "a 0x address")), "state_dir": Text(),
     "beacon": Record({"url": Text(r"http://127\.0\.0\.1:[0-9]{1,5}", "a loopback URL"),
                       "trusted_root": _HASH}, open=True),
     "as_of": Record({"at": Integer(0, 1 << 64), "block": Integer(0, 1 << 64)}, open=True)},
    open=True)
MAX_MANIFEST_BYTES = 16 << 20


def read_manifest(state_dir: Path) -> dict:
    """The manifest.json of a state dir: bounded, and every field the commands read checked for
    its type (one UsageError line naming the field)."""
    path = state_dir / "manifest.json"
    if not path.exists():
        raise UsageError(f"no devnet manifest in {state_dir}: run `recompute devnet up`")
    manifest = load_file(path, f"devnet manifest {path}", UsageError,
                         max_bytes=MAX_MANIFEST_BYTES)
    check(manifest, MANIFEST_SHAPE, f"devnet manifest {path}")
    return manifest


def port_is_free(port: int) -> bool:
    """True when nothing listens on 127.0.0.1:``port`` and we may bind it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as anvil binds
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def up(state_dir: Path = DEFAULT_STATE_DIR, port: int | None = None,
       fresh: bool = False, preferred_port: int | None = None) -> tuple[dict, bool]:
    """Start the devnet (or find it running); returns ``(manifest, started_now)``.

    ``port`` None: the port the stopped devnet had (resuming), else ``preferred_port`` when it
    is free, else any free port."""
    state_dir = Path(state_dir)
    pid = running_pid(state_dir)
    if pid is not None:
        return read_manifest(state_dir), False
    if fresh and state_dir.exists():
        shutil.rmtree(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    state_file = state_dir / "state.json"
    resume = state_file.is_file() and (state_dir / "manifest.json").is_file()
    if resume and port is None:
        port = read_manifest(state_dir).get("port")
    preferred = (port is None and preferred_port is not None
                 and port_is_free(preferred_port))
    node = Anvil(port=preferred_port if preferred else port, timestamp=DEVNET_GENESIS_TIMESTAMP,
                 state_path=state_file, log_path=state_dir / "anvil.log", detach=True)
    try:
        try:
            node.start()
        except RuntimeError:
            if not preferred:
                raise
            node.port = None  # taken between the check and anvil's bind: any free port
            node.start()
    except RuntimeError as exc:
        raise DevnetError(f"anvil did not start ({exc}); see {state_dir / 'anvil.log'}") from None
    (state_dir / "anvil.pid").write_text(f"{node.process.pid}\n")
    if resume:
        continue_clock(node)
        manifest = read_manifest(state_dir)
        manifest["rpc"], manifest["port"] = node.url, node.port
    else:
        try:
            manifest = build(node)
        except Exception:
            node.stop()
            (state_dir / "anvil.pid").unlink(missing_ok=True)
            raise
        manifest["port"] = node.port
    manifest["state_dir"] = str(state_dir.resolve())
    manifest["as_of"] = as_of(node)
    try:
        manifest["beacon"] = start_beacon(state_dir, node.url)
    except DevnetError:
        node.stop()
        (state_dir / "anvil.pid").unlink(missing_ok=True)
        raise
    (state_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    node.process = None  # detached: it outlives us; `down` stops it by pid
    return manifest, True


def start_beacon(state_dir: Path, rpc: str) -> dict:
    """Start the devnet's beacon side detached (recompute/devnet/beacon_serve.py): a beacon
    light-client API signing the anvil chain's blocks with the devnet's sync committee, whose
    keys come from a fixed public seed (say so wherever a devnet pin is shown)."""
    out = state_dir / "beacon.json"
    out.unlink(missing_ok=True)
    with open(state_dir / "beacon.log", "ab") as log:
        process = subprocess.Popen(beacon_command(rpc, out), stdout=log, stderr=log,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    (state_dir / "beacon.pid").write_text(f"{process.pid}\n")
    deadline = time.monotonic() + BEACON_START_TIMEOUT
    while not out.is_file():
        if process.poll() is not None or time.monotonic() > deadline:
            _stop_pid(process.pid, 5.0)
            raise DevnetError(f"the devnet beacon server did not start; see "
                              f"{state_dir / 'beacon.log'}")
        time.sleep(0.05)
    served = json.loads(out.read_text())
    return {
        "url": served["url"],
        "trusted_root": served["trusted_root"],
        "network": "devnet",
        "genesis_validators_root": "0x" + DEVNET.genesis_validators_root.hex(),
        "fork_versions": {fork.name: "0x" + fork.version.hex() for fork in DEVNET.forks},
        "keys": "the devnet's own sync committee keys, from a fixed public seed "
                "(recompute/devnet/beacon.py): a devnet pin proves nothing about a real chain",
    }


def beacon_command(rpc: str, out: Path) -> list[str]:
    """The beacon server's command line: this Python with ``-P``, so that the working
    directory is not put first on ``sys.path`` (``python -m`` would put it there, and a folder
    the devnet is started in may hold a planted ``recompute/`` or a dependency's module:
    docs/executables.md)."""
    return [sys.executable, "-P", "-m", "recompute.devnet.beacon_serve", "--rpc", rpc,
            "--out", str(out), "--prefer-port", str(DEFAULT_BEACON_PORT)]


def _stop_pid(pid: int, timeout: float) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not _gone_within(pid, timeout):
        os.kill(pid, signal.SIGKILL)


def _gone_within(pid: int, timeout: float) -> bool:
    """Wait (reaping it if it is our child) until process ``pid`` has exited; False if it is
    still running after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            waited, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            waited = 0
        if waited == pid or not _pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def _stop_beacon(state_dir: Path) -> None:
    pid_file = state_dir / "beacon.pid"
    if pid_file.is_file():
        try:
            pid = int(pid_file.read_text().strip())
        except ValueError:
            pid = None
        if pid is not None and _pid_alive(pid):
            _stop_pid(pid, 5.0)
        pid_file.unlink(missing_ok=True)


def continue_clock(node: Anvil) -> None:
    """A resumed chain goes on from its last block's time. anvil restarted on its state dump
    with ``--timestamp`` (the genesis time, for identical histories) would otherwise mine new
    blocks back at the genesis time, before the blocks already there (issue #11)."""
    last = node.rpc("eth_getBlockByNumber", "latest", False)
    node.rpc("evm_setNextBlockTimestamp", int(last["timestamp"], 16) + 1)


def as_of(node: Anvil) -> dict:
    """The devnet's own time: its head's. The history has fixed timestamps (identical hashes on
    every machine) and the chain does not move, so a tag (``-b latest``) or follow mode is
    judged with ``--at`` this time (docs/lightclient.md §Clock); its trusted root, the genesis,
    is then older than the weak-subjectivity bound (``--accept-old-checkpoint``)."""
    head = node.rpc("eth_getBlockByNumber", "latest", False)
    return {"at": int(head["timestamp"], 16), "block": int(head["number"], 16)}


def down(state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 15.0) -> bool:
    """Stop the devnet of ``state_dir``; False when none was running."""
    state_dir = Path(state_dir)
    _stop_beacon(state_dir)
    pid = running_pid(state_dir)
    if pid is None:
        (state_dir / "anvil.pid").unlink(missing_ok=True)  # a stale pid file, if any
        return False
    os.kill(pid, signal.SIGTERM)  # anvil dumps its state on SIGTERM
    if not _gone_within(pid, timeout):
        os.kill(pid, signal.SIGKILL)
    (state_dir / "anvil.pid").unlink(missing_ok=True)
    return True
