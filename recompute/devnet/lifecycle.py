"""``devnet up`` / ``devnet down``: a detached anvil, its state dir and its manifest.

The state dir holds ``manifest.json`` (what was deployed and the named moments),
``anvil.pid``, ``anvil.log`` and ``state.json`` (anvil's own dump, with historical states,
so a stopped devnet comes back with the same chain and the same proofs). A living devnet
(``up --live``) adds the producer (recompute/devnet/producer.py: ``producer.pid``,
``producer.log``, ``live.json``) and its beacon's network file (``network.json``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from recompute.core.boundedjson import load_file, read_limited
from recompute.core.errors import RecomputeError, UsageError
from recompute.core.jsontext import json_document
from recompute.core.schema import Integer, ListOf, MapOf, Record, Text, check
from recompute.devnet import started
from recompute.devnet.anvil import Anvil
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, MANIFEST_FORMAT, build
from recompute.disk.whole_file import open_log, write_whole
from recompute.lightclient.networks import DEVNET

BEACON_START_TIMEOUT = 60.0

DEFAULT_STATE_DIR = Path(".devnet")
ANVIL_CACHE = "anvil-cache"  # anvil's --cache-path in the state directory (devnet/anvil.py)

# Where the documentation's commands expect the devnet: the JSON-RPC port every Ethereum tool
# defaults to, and the beacon API port of the consensus clients (Lighthouse's default).
DEFAULT_PORT = 8545
DEFAULT_BEACON_PORT = 5052


class DevnetError(RecomputeError):
    """The devnet could not be brought up or down (exit 2 at the CLI)."""

    exit_code = 2


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs. One that exited but is not reaped yet (a zombie: a detached
    helper's parent is init, which may reap it late) has closed its ports and written its state:
    not running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _exited_unreaped(pid)


def _exited_unreaped(pid: int) -> bool:
    """Whether Linux's /proc says ``pid`` exited whole: a zombie with no thread left but itself
    (a thread-group leader that exited first is a zombie while its other threads still hold
    the process's files, its ports among them); False where there is no /proc."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            fields = dict(line.partition(b":")[::2] for line in status.read(8192).splitlines())
    except OSError:
        return False
    return (fields.get(b"State", b"").split()[:1] == [b"Z"]
            and fields.get(b"Threads", b"").strip() == b"1")


MAX_PID = 1 << 22  # the highest pid_max Linux allows


def read_pid(pid_file: Path) -> int | None:
    """The process id a pid file holds, or None: read bounded (a FIFO or a huge file is no
    pid), and only a plain number of one process above init, never 0 or a negative number,
    which signal a process group or every process."""
    try:
        text = read_limited(pid_file, str(pid_file), OSError, 32)
    except OSError:
        return None
    if re.fullmatch(rb"\s*[0-9]{1,7}\s*", text) is None:
        return None
    pid = int(text)
    return pid if 1 < pid <= MAX_PID else None


def running_pid(state_dir: Path) -> int | None:
    pid = read_pid(state_dir / "anvil.pid")
    return pid if pid is not None and _pid_alive(pid) else None


_HASH = Text(r"0x[0-9a-fA-F]{64}", "a 0x hash of 32 bytes")
_LINE = Text(r"[^\x00-\x1f\x7f]{0,2000}", "one line of text")  # printed by `devnet up`
_URL = Text(r"http://127\.0\.0\.1:[0-9]{1,5}", "a loopback URL")
_ADDRESS = Text(r"0x[0-9a-fA-F]{40}", "a 0x address")
# What `devnet up` reads and prints of an L2's section (recompute/devnet/l2_lifecycle.py)
_L2_SHAPE = Record(
    {"rpc": _URL, "lying_rpc": _URL, "port": Integer(1, 1 << 16), "chain_id": Integer(0, 1 << 64),
     "contracts": MapOf(_ADDRESS, key=_LINE),
     "l1": Record({"package": _LINE, "dispute_game_finality_delay": Integer(0, 1 << 64),
                   "contracts": MapOf(_ADDRESS, key=_LINE)}, open=True),
     "games": MapOf(Record({"address": _ADDRESS}, open=True), key=_LINE),
     "moments": MapOf(Record({"game": _LINE, "l2_block": Integer(0, 1 << 64),
                              "verdict": _LINE, "text": _LINE, "argv": ListOf(_LINE)},
                             {"reason": _LINE}, open=True), key=_LINE)},
    open=True)
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
     "as_of": Record({"at": Integer(0, 1 << 64), "block": Integer(0, 1 << 64)}, open=True),
     "live": Record({"producer_pid": Integer(1, 1 << 32), "block_time": Integer(1, 60),
                     "first_block": Integer(0, 1 << 64), "log": Text(),
                     "stream": Record({"lie": _LINE}, open=True)},
                    open=True),
     "l2": _L2_SHAPE},
    open=True)
MAX_MANIFEST_BYTES = 16 << 20


def read_manifest(state_dir: Path) -> dict[str, Any]:
    """The manifest.json of a state dir: bounded, and every field the commands read checked for
    its type (one UsageError line naming the field)."""
    path = state_dir / "manifest.json"
    if not path.exists():
        raise UsageError(f"no devnet manifest in {state_dir}: run `recompute devnet up`")
    manifest = load_file(path, f"devnet manifest {path}", UsageError,
                         max_bytes=MAX_MANIFEST_BYTES)
    check(manifest, MANIFEST_SHAPE, f"devnet manifest {path}")
    return cast(dict[str, Any], manifest)  # check() has walked it against MANIFEST_SHAPE


def port_is_free(port: int) -> bool:
    """True when nothing listens on 127.0.0.1:``port`` and we may bind it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as anvil binds
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# What ``up`` runs on the L1 node after its history is built or resumed, before the beacon
# starts: ``devnet up --l2`` passes recompute.devnet.l2_lifecycle.extension (its processes'
# pid files are stopped by ``down``: L2_HELPERS).
Extension = Callable[[Path, Anvil, dict[str, Any]], None]
L2_HELPERS = ("l2-lie", "l2-anvil")


def up(state_dir: Path = DEFAULT_STATE_DIR, port: int | None = None,
       fresh: bool = False, live: LiveOptions | None = None,
       preferred_port: int | None = None,
       extension: Extension | None = None) -> tuple[dict[str, Any], bool]:
    """Start the devnet (or find it running); returns ``(manifest, started_now)``. With
    ``live``, the chain goes on at the wall clock (recompute/devnet/producer.py); ``extension``
    adds to the chain and the manifest (the L2).

    ``port`` None: the port the stopped devnet had (resuming), else ``preferred_port`` when it
    is free, else any free port."""
    state_dir = Path(state_dir)
    pid = running_pid(state_dir)
    if pid is not None:
        return read_manifest(state_dir), False
    if fresh and state_dir.exists():
        shutil.rmtree(state_dir)
    created = not state_dir.exists()
    state_dir.mkdir(parents=True, exist_ok=True)
    started.record(state_dir)
    try:
        return _up(state_dir, port, live, preferred_port, extension), True
    except BaseException:  # a failed up leaves no process, and no folder it made
        down(state_dir)
        if created:
            shutil.rmtree(state_dir, ignore_errors=True)
        raise


def _up(state_dir: Path, port: int | None, live: LiveOptions | None,
        preferred_port: int | None, extension: Extension | None) -> dict[str, Any]:
    state_file = state_dir / "state.json"
    resume = state_file.is_file() and (state_dir / "manifest.json").is_file()
    if resume and port is None:
        port = read_manifest(state_dir).get("port")
    node = _start_anvil(state_dir, port, preferred_port)
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
    if extension is not None:  # a failure: up's own handler stops everything
        extension(state_dir, node, manifest)
    manifest["state_dir"] = str(state_dir.resolve())
    manifest.pop("live", None)
    if live is None:
        manifest["as_of"] = as_of(node)
    else:  # the chain moves at the wall clock: no fixed time to judge it as of
        manifest.pop("as_of", None)
    try:
        manifest["beacon"] = start_beacon(state_dir, node.url,
                                          live.block_time if live is not None else None)
    except DevnetError:
        down(state_dir)  # the anvil and whatever the extension started
        raise
    _write_manifest(state_dir, manifest)
    node.process = None  # detached: it outlives us; `down` stops it by pid
    if live is not None:
        manifest["live"] = start_producer(state_dir, node.url, live)
        _write_manifest(state_dir, manifest)
    return manifest


def _start_anvil(state_dir: Path, port: int | None, preferred_port: int | None) -> Anvil:
    """Anvil detached on ``port``, else ``preferred_port`` when it is free, else any free
    port; its pid in ``anvil.pid``."""
    preferred = (port is None and preferred_port is not None
                 and port_is_free(preferred_port))
    node = Anvil(port=preferred_port if preferred else port, timestamp=DEVNET_GENESIS_TIMESTAMP,
                 state_path=state_dir / "state.json", log_path=state_dir / "anvil.log",
                 cache_dir=state_dir / ANVIL_CACHE, detach=True)
    return start_detached(node, state_dir, "anvil", preferred)


def start_detached(node: Anvil, state_dir: Path, name: str, preferred: bool) -> Anvil:
    """Start ``node`` (on its port; on any free port when that ``preferred`` port was taken
    between the check and anvil's bind), its pid in ``<name>.pid``; a failure is one line
    naming its ``<name>.log``."""
    try:
        try:
            node.start()
        except RuntimeError:
            if not preferred:
                raise
            node.port = None  # taken between the check and anvil's bind: any free port
            node.start()
    except RuntimeError as exc:
        raise DevnetError(f"{name} did not start ({exc}); see {state_dir / f'{name}.log'}"
                          ) from None
    write_whole(state_dir / f"{name}.pid", f"{node.pid}\n")
    return node


def _write_manifest(state_dir: Path, manifest: dict[str, Any]) -> None:
    path = state_dir / "manifest.json"
    write_whole(path, json_document(manifest, sort_keys=True) + "\n")


@dataclass(frozen=True)
class LiveOptions:
    """``devnet up --live``: a block every ``block_time`` seconds; with ``reorg_every`` K, a
    reorg of depth 1 to 3 every K blocks."""

    block_time: int = 2
    reorg_every: int | None = None
    cycle: int = 60  # seconds between lies (the stream's "minute"; tests shorten it)


def start_producer(state_dir: Path, rpc: str, live: LiveOptions) -> dict[str, Any]:
    """Start the living devnet's producer detached; wait for its first block (the live
    subject's enrolment); returns the manifest's ``live`` section."""
    from recompute.devnet.producer import STREAM

    ready = state_dir / "live.json"
    ready.unlink(missing_ok=True)
    command = [sys.executable, "-P", "-m", "recompute.devnet.producer", "--rpc", rpc, "--state-dir",
               str(state_dir), "--block-time", str(live.block_time), "--cycle", str(live.cycle)]
    if live.reorg_every:
        command += ["--reorg-every", str(live.reorg_every)]
    pid = _start_helper(state_dir, "producer", command, ready, "the living devnet's producer")
    started = json.loads(ready.read_text())
    return {"producer_pid": pid, "block_time": live.block_time,
            "reorg_every": live.reorg_every, "first_block": started["first_block"],
            "cycle": started["cycle"], "pulse_interval": started["pulse_interval"],
            "stream": STREAM,
            "log": str((state_dir / "producer.log").resolve())}


def _start_helper(state_dir: Path, name: str, command: list[str], ready: Path,
                  what: str) -> int:
    """Start a detached helper process (``<name>.log``, ``<name>.pid`` in the state dir) and
    wait until it writes ``ready``; its pid."""
    with open_log(state_dir / f"{name}.log") as log:
        process = subprocess.Popen(command, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    write_whole(state_dir / f"{name}.pid", f"{process.pid}\n")
    deadline = time.monotonic() + BEACON_START_TIMEOUT
    while not ready.is_file():
        if process.poll() is not None or time.monotonic() > deadline:
            _stop_pid(process.pid, 5.0)
            raise DevnetError(f"{what} did not start; see {state_dir / f'{name}.log'}")
        time.sleep(0.05)
    return process.pid


def start_beacon(state_dir: Path, rpc: str, live: int | None = None) -> dict[str, Any]:
    """Start the devnet's beacon side detached (recompute/devnet/beacon_serve.py): a beacon
    light-client API signing the anvil chain's blocks with the devnet's sync committee, whose
    keys come from a fixed public seed (say so wherever a devnet pin is shown). ``live``: its
    slots follow the wall clock, that many seconds a slot (``network.json`` in the state dir
    is its network, with that genesis time, for ``--network``)."""
    out = state_dir / "beacon.json"
    out.unlink(missing_ok=True)
    command = beacon_command(rpc, out)
    if live is not None:
        command += ["--live", str(live)]
    _start_helper(state_dir, "beacon", command, out, "the devnet beacon server")
    served = json.loads(out.read_text())
    clock = {}
    if live is not None:
        network_file = state_dir / "network.json"
        write_whole(network_file, json_document(_network_json(
            served["genesis_time"], served["seconds_per_slot"])) + "\n")
        clock = {"genesis_time": served["genesis_time"],
                 "seconds_per_slot": served["seconds_per_slot"],
                 "network_file": str(network_file.resolve()),
                 "finality": "the finalized header lags its attested one by two epochs "
                             "(16 to 24 slots)"}
    return {
        **clock,
        "url": served["url"],
        "trusted_root": served["trusted_root"],
        "network": "devnet",
        "genesis_validators_root": "0x" + DEVNET.genesis_validators_root.hex(),
        "fork_versions": {fork.name: "0x" + fork.version.hex() for fork in DEVNET.forks},
        "keys": "the devnet's own sync committee keys, from a fixed public seed "
                "(recompute/devnet/beacon_server.py): a devnet pin proves nothing about a real "
                "chain",
    }


def _network_json(genesis_time: int, seconds_per_slot: int) -> dict[str, Any]:
    """The devnet's network (recompute.lightclient.networks.DEVNET) with the living devnet's
    clock, as ``--network FILE`` reads it."""
    return {"name": "devnet",
            "genesis_validators_root": "0x" + DEVNET.genesis_validators_root.hex(),
            "genesis_time": genesis_time, "seconds_per_slot": seconds_per_slot,
            "slots_per_epoch": DEVNET.slots_per_epoch,
            "epochs_per_sync_committee_period": DEVNET.epochs_per_sync_committee_period,
            "sync_committee_size": DEVNET.sync_committee_size,
            "forks": [{"name": fork.name, "version": "0x" + fork.version.hex(),
                       "epoch": fork.epoch} for fork in DEVNET.forks]}


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


def _stop_helper(state_dir: Path, name: str = "beacon", timeout: float = 5.0) -> int | None:
    """Stop the detached helper process whose pid is in ``<name>.pid`` (beacon, producer, the
    L2's, …), SIGKILL after ``timeout`` seconds; its pid when it was running."""
    pid_file = state_dir / f"{name}.pid"
    if not pid_file.is_file():
        return None
    pid = read_pid(pid_file)
    running = pid is not None and _pid_alive(pid)
    if running and pid is not None:
        _stop_pid(pid, timeout)
    pid_file.unlink(missing_ok=True)
    return pid if running else None


def continue_clock(node: Anvil) -> None:
    """A resumed chain goes on from its last block's time. anvil restarted on its state dump
    with ``--timestamp`` (the genesis time, for identical histories) would otherwise mine new
    blocks back at the genesis time, before the blocks already there."""
    last = node.rpc("eth_getBlockByNumber", "latest", False)
    node.rpc("evm_setNextBlockTimestamp", int(last["timestamp"], 16) + 1)


def restart_node(state_dir: Path = DEFAULT_STATE_DIR, pause: float = 0.0,
                 timeout: float = 15.0) -> int:
    """Stop the devnet's anvil (SIGTERM: it dumps its state), wait ``pause`` seconds, start it
    again on the same port from that state (the same chain, historical states included); the
    beacon side and a living devnet's producer ride it out. Returns the new anvil's pid. For
    chaos runs (benchmarks/soak_watch.py)."""
    state_dir = Path(state_dir)
    manifest = read_manifest(state_dir)
    pid = running_pid(state_dir)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        if not _gone_within(pid, timeout):
            raise DevnetError(f"anvil (pid {pid}) did not stop within {timeout} s")
    time.sleep(pause)
    node = Anvil(port=manifest["port"], timestamp=DEVNET_GENESIS_TIMESTAMP,
                 state_path=state_dir / "state.json", log_path=state_dir / "anvil.log",
                 cache_dir=state_dir / ANVIL_CACHE, detach=True)
    try:
        node.start()
    except RuntimeError as exc:
        raise DevnetError(f"anvil did not start again ({exc}); see "
                          f"{state_dir / 'anvil.log'}") from None
    write_whole(state_dir / "anvil.pid", f"{node.pid}\n")
    new_pid = node.pid
    node.process = None  # detached, as `up` leaves it
    return new_pid


def as_of(node: Anvil) -> dict[str, Any]:
    """The devnet's own time: its head's. The history has fixed timestamps (identical hashes on
    every machine) and the chain does not move, so a tag (``-b latest``) or follow mode is
    judged with ``--at`` this time (docs/lightclient.md §Clock); its trusted root, the genesis,
    is then older than the weak-subjectivity bound (``--accept-old-checkpoint``)."""
    head = node.rpc("eth_getBlockByNumber", "latest", False)
    return {"at": int(head["timestamp"], 16), "block": int(head["number"], 16)}


def down(state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 15.0) -> list[str]:
    """Stop every process of the devnet of ``state_dir``: each helper whose pid is in a
    ``<name>.pid`` there (the producer first: it mines on the node; then the others, the beacon
    server among them), then anvil (SIGTERM: it dumps its state). Returns what was stopped,
    ``name (pid N)`` each; empty when nothing was running. The state stays (``up`` resumes)."""
    state_dir = Path(state_dir)
    stopped: list[str] = []
    helpers = sorted(p.stem for p in state_dir.glob("*.pid") if p.stem != "anvil")
    # the producer first (it mines on the node); an L2's anvil dumps its state (more time)
    for name in sorted(helpers, key=lambda n: n != "producer"):
        pid = _stop_helper(state_dir, name, timeout if name in L2_HELPERS else 5.0)
        if pid is not None:
            stopped.append(f"{name} (pid {pid})")
    shutil.rmtree(state_dir / "l2-anvil-cache", ignore_errors=True)
    pid = running_pid(state_dir)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)  # anvil dumps its state on SIGTERM
        if not _gone_within(pid, timeout):
            os.kill(pid, signal.SIGKILL)
        stopped.append(f"anvil (pid {pid})")
    (state_dir / "anvil.pid").unlink(missing_ok=True)  # a stale pid file, if any
    if pid is not None:
        shutil.rmtree(state_dir / ANVIL_CACHE, ignore_errors=True)  # states moved out of memory
    started.forget(state_dir)
    return stopped
