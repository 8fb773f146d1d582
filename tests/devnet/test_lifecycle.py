"""`recompute devnet up|down` as a user runs them: detached anvil, manifest, resume, refusal."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from recompute.devnet.anvil import free_port, rpc_call
from recompute.devnet.lifecycle import _pid_alive, running_pid
from tests.cli import run_cli


def _hold_8545(patience: float = 10.0) -> socket.socket | None:
    """Listen on 127.0.0.1:8545 (the devnet's default port), waiting up to ``patience`` seconds
    for a devnet still shutting down to let it go; None when somebody else keeps it. Bound as
    anvil binds (SO_REUSEADDR: connections in TIME_WAIT do not block it)."""
    deadline = time.monotonic() + patience
    while True:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", 8545))
            sock.listen(1)
        except OSError:
            sock.close()
            if time.monotonic() > deadline:
                return None
            time.sleep(0.2)
            continue
        return sock


def test_up_down_resume_and_a_second_up(tmp_path):
    state = str(tmp_path / "dn")
    held = _hold_8545()
    try:  # 8545 taken: a free port, said in one line
        first = run_cli("devnet", "up", "--state-dir", state, "--json")
    finally:
        if held is not None:
            held.close()
    try:
        assert first.returncode == 0, first.stderr
        manifest = json.loads(first.stdout)
        assert manifest["rpc"].startswith("http://127.0.0.1:")
        if held is not None:  # only a port this test held is known to have been taken
            assert manifest["port"] != 8545
        if manifest["port"] != 8545:
            assert first.stderr.splitlines() == [
                f"note: the devnet listens on {manifest['rpc']}, not port 8545 (8545 was in use "
                "or the stopped devnet had this port): use that URL in the commands"]
        assert manifest["chain_id"] == 31337
        pid = int((tmp_path / "dn" / "anvil.pid").read_text())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        cache = argv[argv.index(b"--cache-path") + 1]
        assert cache == str(tmp_path / "dn" / "anvil-cache").encode()
        saved = json.loads((tmp_path / "dn" / "manifest.json").read_text())
        assert saved["moments"] == manifest["moments"]
        head = rpc_call(manifest["rpc"], "eth_getBlockByNumber", ["latest", False])
        # the devnet's time, for --at: its head's (the node's own answer)
        assert manifest["as_of"] == {"at": int(head["timestamp"], 16),
                                     "block": int(head["number"], 16)}
        _check_beacon_side(manifest, head)

        again = run_cli("devnet", "up", "--state-dir", state)
        assert again.returncode == 0
        assert "already running" in again.stderr and manifest["rpc"] in again.stderr
    finally:
        stopped = run_cli("devnet", "down", "--state-dir", state)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    # anvil's moved-out block states lived in the state directory and left with it
    assert not (tmp_path / "dn" / "anvil-cache").exists()
    assert run_cli("devnet", "down", "--state-dir", state).stdout.startswith("no devnet")

    resumed = run_cli("devnet", "up", "--state-dir", state, "--json")
    try:
        assert resumed.returncode == 0, resumed.stderr
        back = json.loads(resumed.stdout)
        # the same chain came back from anvil's state dump: same head, same moments
        same_head = rpc_call(back["rpc"], "eth_getBlockByNumber", [head["number"], False])
        assert same_head["hash"] == head["hash"]
        assert back["moments"] == manifest["moments"]
        # the beacon side came back over the same chain: the same trusted root
        assert back["beacon"]["trusted_root"] == manifest["beacon"]["trusted_root"]
        # new blocks continue from the last block's time, not anvil's --timestamp;
        # (the beacon check above mined blocks of its own: compare with the resumed tip)
        tip = rpc_call(back["rpc"], "eth_getBlockByNumber", ["latest", False])
        assert int(tip["timestamp"], 16) >= int(head["timestamp"], 16)
        rpc_call(back["rpc"], "evm_mine", [])
        new = rpc_call(back["rpc"], "eth_getBlockByNumber", ["latest", False])
        assert int(new["number"], 16) == int(tip["number"], 16) + 1
        assert int(new["timestamp"], 16) > int(tip["timestamp"], 16)
    finally:
        run_cli("devnet", "down", "--state-dir", state)


def _check_beacon_side(manifest: dict, head: dict) -> None:
    """The devnet's beacon side signs the anvil chain's blocks, new ones included; a proof
    pinned by it is GOOD (expected value: the node's own eth_getStorageAt)."""
    beacon = manifest["beacon"]
    assert beacon["network"] == "devnet" and "public seed" in beacon["keys"]
    assert beacon["fork_versions"]["electra"] == "0xdec0de05"
    # the devnet's history is recorded (dated from its genesis timestamp): judged as of a
    # minute after its head, its trusted root (block 0, days of chain time before) accepted
    lc = ["--beacon", beacon["url"], "--trusted-root", beacon["trusted_root"],
          "--network", "devnet", "--at", str(int(head["timestamp"], 16) + 60),
          "--accept-old-checkpoint"]
    synced = run_cli("lightclient", "sync", *lc, "--json")
    assert synced.returncode == 0, synced.stdout + synced.stderr
    summary = json.loads(synced.stdout)
    number = int(head["number"], 16)
    assert summary["optimistic"]["block_hash"] == head["hash"]  # the head is signed
    assert summary["finalized"]["block_number"] == number - 1
    rpc_call(manifest["rpc"], "evm_mine", [])
    mined = rpc_call(manifest["rpc"], "eth_getBlockByNumber", ["latest", False])
    deadline = time.monotonic() + 20
    while True:
        summary = json.loads(run_cli("lightclient", "sync", *lc, "--json").stdout)
        if summary["optimistic"]["block_hash"] == mined["hash"] or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert summary["optimistic"]["block_hash"] == mined["hash"]  # a new block is signed too
    contract = manifest["contracts"]["AgentMeditationRegistry"]
    want = int(rpc_call(manifest["rpc"], "eth_getStorageAt", [contract, "0x0", hex(number)]),
               16)
    proof = run_cli("proof", "--rpc", manifest["rpc"], *lc, "--address", contract,
                    "--expect", f"0={want:#x}", "--json")
    assert proof.returncode == 0, proof.stdout + proof.stderr
    out = json.loads(proof.stdout)
    assert out["evidence"]["block"]["number"] == number  # finalized: the block below the head
    assert out["evidence"]["anchor"]["method"] == "light-client"


def test_two_fresh_devnets_have_identical_block_hashes(tmp_path):
    manifests = []
    for name in ("one", "two"):
        state = str(tmp_path / name)
        port = str(free_port())  # two different nodes, whatever holds the default port
        result = run_cli("devnet", "up", "--state-dir", state, "--json", "--port", port)
        try:
            assert result.returncode == 0, result.stderr
            manifests.append(json.loads(result.stdout))
        finally:
            run_cli("devnet", "down", "--state-dir", state)
    one, two = manifests
    assert one["rpc"] != two["rpc"]  # two different nodes…
    assert len(one["moments"]) >= 50
    assert one["moments"] == two["moments"]  # …the same chain: every named moment's hash
    assert one["contracts"] == two["contracts"]


def _gone(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" in status.read_text()


def test_down_finds_a_devnet_started_in_another_folder(tmp_path):
    """`devnet up --state-dir D` prints the `down` that stops it, and a bare `devnet down` run
    anywhere finds it (the registry of folders `up` started), stops every process of it and
    says which."""
    state = tmp_path / "elsewhere"
    up_done = run_cli("devnet", "up", "--state-dir", state, cwd=tmp_path)
    try:
        assert up_done.returncode == 0, up_done.stderr
        tries = up_done.stdout.split("try next:\n", 1)[1].splitlines()
        assert tries[-1] == "  recompute devnet down --state-dir elsewhere"
        pids = {name: int((state / f"{name}.pid").read_text()) for name in ("anvil", "beacon")}
        assert not any(_gone(pid) for pid in pids.values())
        other = tmp_path / "other"
        other.mkdir()
        done = run_cli("devnet", "down", cwd=other)  # no .devnet there
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == [
            f"stopped the devnet of {state.resolve()}: beacon (pid {pids['beacon']}), "
            f"anvil (pid {pids['anvil']})"]
        assert all(_gone(pid) for pid in pids.values())
        again = run_cli("devnet", "down", cwd=other)
        assert again.stdout.splitlines() == [
            "no devnet is running from .devnet nor any folder `recompute devnet up` recorded"]
    finally:
        run_cli("devnet", "down", "--state-dir", state)


def test_a_failed_up_leaves_no_folder_and_no_process(tmp_path):
    """anvil cannot bind the port asked for: exit 2, and neither the state folder `up` made nor
    any process of it is left."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    try:
        state = tmp_path / "new"
        done = run_cli("devnet", "up", "--port", held.getsockname()[1], "--state-dir", state)
    finally:
        held.close()
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: anvil did not start")
    assert not state.exists()


def test_a_living_devnet_suggests_following_it_with_the_live_checks(tmp_path):
    from recompute.cli.devnet_cmd import _next_commands

    manifest = {"rpc": "http://127.0.0.1:8545", "contracts": {}, "moments": {},
                "state_dir": str(tmp_path / ".devnet-live"), "live": {"producer_pid": 7}}
    tries = _next_commands(manifest)
    assert ("  recompute watch -r http://127.0.0.1:8545 --config examples/live-watch.toml "
            "--on-bad 'echo \"lie at block $RECOMPUTE_BLOCK\"'") in tries
    assert tries[-1] == f"  recompute devnet down --state-dir {tmp_path / '.devnet-live'}"
    del manifest["live"]
    assert not any("live-watch" in line for line in _next_commands(manifest))


def test_a_pid_file_naming_a_process_group_stops_nothing(tmp_path):
    """A state dir's pid files are data: 0 or -1 would signal a whole process group (ours, or
    every process we may signal); `down` takes neither for a devnet's process."""
    from recompute.devnet.lifecycle import down

    for name, text in (("anvil", "0"), ("beacon", "-1"), ("producer", "1")):
        (tmp_path / f"{name}.pid").write_text(text + "\n")
    assert down(tmp_path) == []  # and this test process is still here to see it
    assert not list(tmp_path.glob("*.pid"))


def test_an_exited_process_not_yet_reaped_is_not_running(tmp_path):
    """A helper that exited is gone even while nobody has reaped it yet (a zombie: a detached
    helper's parent is init, which may reap late): `devnet down` does not wait out its timeout
    for it, and a pid file naming it names no running devnet."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, left unreaped
        assert "zombie" in Path(f"/proc/{child.pid}/status").read_text()
        assert not _pid_alive(child.pid)
        (tmp_path / "anvil.pid").write_text(f"{child.pid}\n")
        assert running_pid(tmp_path) is None
    finally:
        child.wait()
    assert _pid_alive(os.getpid())  # this process runs
