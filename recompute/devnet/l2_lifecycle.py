"""``devnet up --l2`` / ``devnet down``: the L2's processes beside the L1 devnet's.

In the state dir the L2 keeps ``l2-anvil.pid``, ``l2-anvil.log``, ``l2-state.json`` (its anvil's
dump, as ``state.json`` is L1's) and ``l2-anvil-cache/``; the lying L2 node (recompute/devnet/
l2_lie.py) ``l2-lie.pid``, ``l2-lie.log`` and ``l2-lie.json``. ``down`` stops both (the L1's
helpers are stopped the same way, by their pid files).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from recompute.devnet import l2_games
from recompute.devnet.anvil import Anvil
from recompute.devnet.l2_chain import build_l2, l2_anvil
from recompute.devnet.l2_moments import describe_l2
from recompute.devnet.lifecycle import (
    L2_HELPERS,
    DevnetError,
    Extension,
    _start_helper,
    _stop_helper,
    port_is_free,
    read_manifest,
    running_pid,
)
from recompute.disk.whole_file import write_whole

LIE_REGISTRY = "AgentMeditationRegistry"  # the contract the lying L2 node lies about
DEFAULT_L2_PORT = 9545  # the OP stack's local devnets serve their L2 there


def extension(wanted: bool) -> Extension:
    """What ``up`` runs after the L1 history (recompute.devnet.lifecycle.Extension): resume the
    stopped devnet's L2 if it has one, else start one when ``wanted``."""
    def attach(state_dir: Path, node: Anvil, manifest: dict[str, Any]) -> None:
        if "l2" in manifest:
            manifest["l2"] = resume_l2(state_dir, manifest["l2"], node.url)
        elif wanted:
            manifest["l2"] = start_l2(state_dir, node.url)
    return attach


def check_resumable(state_dir: Path) -> None:
    """``up --l2`` without ``--fresh``: a stopped devnet there must have an L2 to resume."""
    stopped = (state_dir / "state.json").is_file() and (state_dir / "manifest.json").is_file()
    if stopped and running_pid(state_dir) is None and "l2" not in read_manifest(state_dir):
        raise DevnetError(f"the stopped devnet in {state_dir} has no L2: `recompute devnet up "
                          "--l2 --fresh` builds one")


def start_l2(state_dir: Path, l1_rpc: str) -> dict[str, Any]:
    """Start the L2 anvil, replay the L2 history, play the games on the L1 at ``l1_rpc``,
    start the lying node; the manifest's ``l2`` section. On failure nothing is left running."""
    node = _start(state_dir, None)
    try:
        section = build_l2(node)
        section.update(l2_games.run(l1_rpc, node, section))
        section["rpc"], section["port"] = node.url, node.port
        _serve(state_dir, section, l1_rpc)
    except Exception:
        stop_l2(state_dir)
        raise
    return section


def resume_l2(state_dir: Path, section: dict[str, Any], l1_rpc: str) -> dict[str, Any]:
    """Start a stopped L2 again from its state, on its port, with its lying node."""
    node = _start(state_dir, section.get("port"))
    section["rpc"], section["port"] = node.url, node.port
    try:
        _check_same_chain(state_dir, node, section)
        _serve(state_dir, section, l1_rpc)
    except DevnetError:
        stop_l2(state_dir)
        raise
    return section


def _check_same_chain(state_dir: Path, node: Anvil, section: dict[str, Any]) -> None:
    """The resumed L2 holds the blocks the games propose (its state dump may be gone)."""
    for name, game in section["games"].items():
        block = node.rpc("eth_getBlockByNumber", hex(game["l2_block"]), False)
        if block is None or block.get("hash") != game["output_root"]["block_hash"]:
            raise DevnetError(f"the L2 in {state_dir} lost its chain ({state_dir / 'l2-state.json'}"
                              f" does not hold game {name}'s block): `recompute devnet up --l2 "
                              "--fresh` builds a new devnet")


def _start(state_dir: Path, port: int | None) -> Anvil:
    """The L2 anvil detached on ``port``, else :data:`DEFAULT_L2_PORT` when it is free, else
    any free port."""
    preferred = port is None and port_is_free(DEFAULT_L2_PORT)
    node = l2_anvil(state_dir, DEFAULT_L2_PORT if preferred else port, detach=True)
    try:
        try:
            node.start()
        except RuntimeError:
            if not preferred:
                raise
            node.port = None  # taken between the check and anvil's bind: any free port
            node.start()
    except RuntimeError as exc:
        raise DevnetError(f"the L2 anvil did not start ({exc}); see "
                          f"{state_dir / 'l2-anvil.log'}") from None
    write_whole(state_dir / "l2-anvil.pid", f"{node.pid}\n")
    node.process = None  # detached: `down` stops it by pid
    return node


def _serve(state_dir: Path, section: dict[str, Any], l1_rpc: str) -> None:
    """Start the lying L2 node in front of the L2 anvil; fill in the moments' commands."""
    ready = state_dir / "l2-lie.json"
    ready.unlink(missing_ok=True)
    command = [sys.executable, "-P", "-m", "recompute.devnet.l2_lie", "--upstream",
               section["rpc"], "--address", section["contracts"][LIE_REGISTRY],
               "--out", str(ready)]
    _start_helper(state_dir, "l2-lie", command, ready, "the lying L2 node")
    section["lying_rpc"] = json.loads(ready.read_text())["url"]
    section["lies_about"] = {"contract": LIE_REGISTRY,
                             "address": section["contracts"][LIE_REGISTRY],
                             "how": "every storage value of eth_getProof and eth_getStorageAt "
                                    "raised by one; headers and proofs as the honest node's"}
    describe_l2(section, l1_rpc)


def stop_l2(state_dir: Path) -> None:
    """Stop the lying L2 node and the L2 anvil (it dumps its state on SIGTERM), as ``down``
    does."""
    for helper in L2_HELPERS:
        _stop_helper(state_dir, helper, 15.0)
    shutil.rmtree(state_dir / "l2-anvil-cache", ignore_errors=True)
