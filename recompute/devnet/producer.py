"""The living devnet's producer (``recompute devnet up --live``): after the scripted history,
a block every ``--block-time`` seconds at the wall clock's time, playing the stream below, and
with ``--reorg-every K`` a reorganisation of depth 1, 2, 3, 1, … every K blocks.

The stream (docs/devnet.md §The living devnet), by the block's timestamp ``ts``:

- The first live block enrolls the **live subject** (accounts[8]) on the
  LyingMeditationRegistry with a pulse interval of :data:`PULSE_INTERVAL` seconds and no
  required layer (once: a resumed devnet finds it enrolled).
- In the first half of every wall-clock minute (``ts % 60 < 30``) the live subject pulses
  whenever :data:`PULSE_EVERY` seconds have passed since its last signal: PRESENT.
- In the second half it stays silent; from ``lastSignalAt + PULSE_INTERVAL`` on its signal is
  SILENT by the chain's own storage (AMM §Status derivation) while the lying registry's
  ``signalStatus`` view still answers PRESENT. That is **the lie**, once a minute: the check
  ``amm/live/signal`` of ``examples/devnet-watch.toml`` reports VERIFIED-BAD until the next
  minute's first pulse makes it VERIFIED-GOOD again.
- Every other block carries one honest change, in turn: the pulser (accounts[7]) pulses on the
  honest registry; an edge of the honest AggregateBudgetMeter tree draws 1 in the current
  period (A, B, C in turn; refused on chain, a status-0 transaction, once the period's root
  cap of 100 is reached); the agent of MandateMeter's mandate-1 records an execution of 1;
  an empty block.
- A reorg rolls the chain back ``depth`` blocks (``anvil_rollback``) and mines ``depth + 1``
  blocks in their place, timestamps spread between the fork point's and now (the head's number
  goes up by one); the orphaned blocks' transactions are dropped, the last new block carries
  the stream's next change. The live subject's enrolment block is never reorganised.

Every block's timestamp is the wall clock's second (at least its parent's + 1), so the chain
is never ahead of the clock. ``state_dir/live.json`` says where the stream began; each block,
reorg and lie is logged as one JSON line in ``state_dir/producer.log``.

    python -m recompute.devnet.producer --rpc URL --state-dir DIR [--block-time 2] [--reorg-every K]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from eth_typing import HexStr

from recompute.core.jsontext import json_line
from recompute.devnet.anvil import rpc_call
from recompute.devnet.contracts import connect, load_artifact
from recompute.disk.whole_file import write_whole

if TYPE_CHECKING:
    from eth_typing import ChecksumAddress
    from web3.contract import Contract
    from web3.contract.contract import ContractFunction

LIVE_SUBJECT_ACCOUNT = 8
CYCLE = 60  # seconds: a lie in each (tests shorten it; the pulse timings scale with it)
PULSE_INTERVAL = 20  # the live subject's policy: SILENT CYCLE / 3 s after its last signal
PULSE_EVERY = 12  # seconds between its pulses in the first half of a cycle (CYCLE / 5)
HONEST_STEPS = ("pulser-pulse", "meter-draw", "mandate-execution", "empty")
GAS = 500_000

STREAM = {
    "live_subject": f"accounts[{LIVE_SUBJECT_ACCOUNT}] on LyingMeditationRegistry, pulse "
                    f"interval {PULSE_INTERVAL} s, enrolled by the first live block",
    "lie": "every wall-clock minute: pulses (every >= 12 s) while ts % 60 < 30, then silence: "
           f"SILENT from lastSignalAt + {PULSE_INTERVAL} s while the lying registry's "
           "signalStatus view says PRESENT; check amm/live/signal of "
           "examples/devnet-watch.toml is VERIFIED-BAD until the next minute's first pulse",
    "honest": "the other blocks in turn: " + ", ".join(HONEST_STEPS) + " (pulser = accounts[7] "
              "on AgentMeditationRegistry; meter-draw = 1 from edge A, B, C in turn of "
              "AggregateBudgetMeter tree-1, refused on chain past the period's cap 100; "
              "mandate-execution = 1 on MandateMeter mandate-1)",
    "reorgs": "with --reorg-every K: every K blocks, anvil_rollback of depth 1, 2, 3, 1, … and "
              "depth + 1 new blocks (timestamps between the fork point's and now); the "
              "orphaned transactions are dropped",
}


class Producer:
    def __init__(self, rpc: str, manifest: dict[str, Any], block_time: int,
                 reorg_every: int | None, log: TextIO | None = None, cycle: int = CYCLE):
        self.rpc = rpc
        self.cycle = cycle
        self.pulse_interval = cycle // 3
        self.pulse_every = cycle // 5
        self.block_time = block_time
        self.reorg_every = reorg_every
        self.log = log or sys.stdout
        self.w3 = connect(rpc)
        acc = manifest["accounts"]
        self.accounts = acc
        self.subject = acc[LIVE_SUBJECT_ACCOUNT]
        contracts = manifest["contracts"]

        def bound(name: str) -> Contract:
            address: ChecksumAddress = contracts[name]
            return self.w3.eth.contract(address=address, abi=load_artifact(name)["abi"])

        self.lying = bound("LyingMeditationRegistry")
        self.honest = bound("AgentMeditationRegistry")
        self.meter = bound("AggregateBudgetMeter")
        self.mandate = bound("MandateMeter")
        tree = manifest["meters"]["aggregate"]["trees"]["tree-1"]
        self.root = bytes.fromhex(tree["root_id"][2:])
        self.edges = [(bytes.fromhex(node["id"][2:]), node["agent"])
                      for _, node in sorted(tree["nodes"].items())]
        mandate = manifest["meters"]["mandate"]["mandates"]["mandate-1"]
        self.mandate_agent, self.mandate_principal = mandate["agent"], mandate["principal"]
        self.pulser = manifest["amm"]["roles"]["pulser"]
        self.produced = 0  # live blocks mined by this producer (the reorgs' clock)
        self.reorgs = 0
        self.first_block: int | None = None

    # ---- chain access ------------------------------------------------------------------

    def _call(self, method: str, *params: Any) -> Any:
        return rpc_call(self.rpc, method, list(params))

    def _head(self) -> dict[str, Any]:
        head: dict[str, Any] = self._call("eth_getBlockByNumber", "latest", False)
        return head

    def _emit(self, **event: object) -> None:
        self.log.write(json_line({"time": round(time.time(), 3), **event}) + "\n")
        self.log.flush()

    def _next_timestamp(self, parent_ts: int, at: int | None = None) -> int:
        ts = max(parent_ts + 1, int(time.time()) if at is None else at)
        self._call("evm_setNextBlockTimestamp", ts)
        return ts

    def _send(self, call: ContractFunction, sender: str) -> dict[str, Any]:
        """Send a transaction and return the block that holds it. anvil answers
        ``eth_sendTransaction`` once the transaction is in its pool, which may be before the
        block is mined: the head read right after can still be the parent (the log then named
        the parent, a block without this step's change, at an earlier time)."""
        tx = call.transact({"from": sender, "gas": GAS}).to_0x_hex()
        return self._block_of(tx)

    def _block_of(self, tx: str, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while (receipt := self._call("eth_getTransactionReceipt", tx)) is None:
            if time.monotonic() > deadline:
                raise RuntimeError(f"transaction {tx} not mined within {timeout} s")
            time.sleep(0.01)
        block: dict[str, Any] = self._call("eth_getBlockByHash", receipt["blockHash"], False)
        return block

    def _mine(self) -> dict[str, Any]:
        """Mine an empty block and return it (``evm_mine`` returns once it is mined)."""
        self._call("evm_mine")
        return self._head()

    # ---- the stream --------------------------------------------------------------------

    def enrolled(self) -> bool:
        return bool(self.lying.functions.headOf(self.subject).call()[0])

    def enroll(self) -> int:
        """The live subject's enrolment (the first live block)."""
        head = self._head()
        self._next_timestamp(int(head["timestamp"], 16))
        policy = (b"\x00" * 32, "", 0x0F, 0, 0x0F, 0, 0, self.pulse_interval, [0, 0, 0, 0])
        baseline = [bytes([1 + i]) * 32 for i in range(4)]
        block = self._send(self.lying.functions.enroll(baseline, policy,
                                                       "0x" + "00" * 20, 0), self.subject)
        number = int(block["number"], 16)
        self._emit(block=number, hash=block["hash"], ts=int(block["timestamp"], 16),
                   step="live-subject-enrolled", subject=self.subject)
        return number

    def step(self, at: int | None = None) -> None:
        """Mine the stream's next block (at the wall clock, or at ``at``) and log it: the block
        that holds the step's change, and whether it is a lie, judged at that block."""
        head = self._head()
        ts = self._next_timestamp(int(head["timestamp"], 16), at)
        last_signal = self._last_signal_at(head["hash"])
        if ts % self.cycle < self.cycle // 2 and ts - last_signal >= self.pulse_every:
            block = self._send(self.lying.functions.pulse(self.subject, 0), self.subject)
            what = "live-pulse"
        else:
            what = HONEST_STEPS[self.produced % len(HONEST_STEPS)]
            if what == "pulser-pulse":
                block = self._send(self.honest.functions.pulse(self.pulser, 0), self.pulser)
            elif what == "meter-draw":
                node, agent = self.edges[(self.produced // len(HONEST_STEPS)) % len(self.edges)]
                block = self._send(self.meter.functions.draw(self.root, node, 1), agent)
            elif what == "mandate-execution":
                block = self._send(self.mandate.functions.recordExecution(
                    self.mandate_principal, 1), self.mandate_agent)
            else:
                block = self._mine()
        self.produced += 1
        self._log_block(block, what)

    def _log_block(self, block: dict[str, Any], what: str) -> None:
        """One line for a mined block: the block, its own time, and whether the live subject
        is SILENT there by the block's own time and storage (AMM §Status derivation: SILENT
        when clock() exceeds lastSignalAt + pulseInterval), not by what the step meant."""
        mined_ts = int(block["timestamp"], 16)
        event = {"block": int(block["number"], 16), "hash": block["hash"], "ts": mined_ts,
                 "step": what}
        if mined_ts - self._last_signal_at(block["hash"]) > self.pulse_interval:
            event["lie"] = "amm/live/signal: SILENT in storage, PRESENT by the lying view"
        self._emit(**event)

    def _last_signal_at(self, block_hash: str) -> int:
        """The live subject's lastSignalAt in the state of the block ``block_hash``."""
        head = self.lying.functions.headOf(self.subject).call(
            block_identifier=HexStr(block_hash))
        return int(head[9])

    def reorg(self) -> None:
        """Roll back 1, 2 or 3 blocks and mine one more than that in their place."""
        depth = 1 + self.reorgs % 3
        head = self._head()
        number = int(head["number"], 16)
        if self.first_block is not None and number - depth <= self.first_block:
            self.step()
            return
        orphaned = [self._call("eth_getBlockByNumber", hex(n), False)["hash"]
                    for n in range(number - depth + 1, number + 1)]
        self._call("anvil_rollback", depth)
        fork = self._head()
        fork_ts, now = int(fork["timestamp"], 16), int(time.time())
        self.reorgs += 1
        self._emit(reorg=self.reorgs, fork_point=int(fork["number"], 16), depth=depth,
                   orphaned=orphaned)
        span = max(now - fork_ts, depth + 1)
        parent_ts = fork_ts
        for i in range(depth):  # spread between the fork point's time and now, never ahead
            self._next_timestamp(parent_ts, fork_ts + (i + 1) * span // (depth + 1))
            block = self._mine()
            parent_ts = int(block["timestamp"], 16)
            self._log_block(block, "reorg-empty")  # a lie there is one too: the watch says so
        self.step()

    def tick(self) -> None:
        if self.first_block is None:
            self.first_block = self.enroll() if not self.enrolled() else \
                int(self._head()["number"], 16)
            return
        if self.reorg_every and self.produced and self.produced % self.reorg_every == 0:
            self.produced += 1  # the reorg takes this turn; the step after it the next
            self.reorg()
        else:
            self.step()

    def run(self, stop: threading.Event) -> None:
        started = time.monotonic()
        ticks = 0
        while not stop.is_set():
            try:
                self.tick()
            except Exception as exc:  # anvil restarting, or gone: try again next tick
                self._emit(error=f"{type(exc).__name__}: {str(exc)[:200]}")
            ticks += 1
            wait = started + ticks * self.block_time - time.monotonic()
            if wait < 0:  # behind (the node was away): start counting again from now
                started, ticks, wait = time.monotonic(), 0, self.block_time
            stop.wait(wait)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m recompute.devnet.producer")
    parser.add_argument("--rpc", required=True)
    parser.add_argument("--state-dir", required=True, type=Path)
    parser.add_argument("--block-time", type=int, default=2)
    parser.add_argument("--reorg-every", type=int)
    parser.add_argument("--cycle", type=int, default=CYCLE)
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    manifest = json.loads((args.state_dir / "manifest.json").read_text())
    producer = Producer(args.rpc, manifest, args.block_time, args.reorg_every,
                        cycle=args.cycle)
    while producer.first_block is None and not stop.is_set():
        try:
            producer.tick()
        except Exception as exc:  # the node is not there yet
            producer._emit(error=f"{type(exc).__name__}: {str(exc)[:200]}")
            stop.wait(0.5)
    out = args.state_dir / "live.json"
    write_whole(out, json_line({"pid": os.getpid(), "first_block": producer.first_block,
                                "cycle": producer.cycle,
                                "pulse_interval": producer.pulse_interval}))
    producer.run(stop)


if __name__ == "__main__":
    main()
