"""A chain of our own with the ERC-8312 meters (the devnet's meters history only), the lying
meter driven block by block, and the checks.toml entries the watch tests use on it.

Expected verdicts in the tests come from the meter's rule (spentRoot[root][period] <= cap,
cap 100 in recompute/devnet/history_meters.py) and the amounts the tests draw, never from the
code under test.
"""

from __future__ import annotations

from eth_hash.auto import keccak

from recompute.devnet import history_meters as hm
from recompute.devnet.anvil import Anvil, rpc_call
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build
from recompute.devnet.contracts import connect, load_artifact
from recompute.devnet.driver import Driver

W = 1 << 256


def chain_blocks(url: str) -> list[dict]:
    """Every block of the node's chain, genesis to head, as eth_getBlockByNumber gives them (a
    devnet beacon server signs them)."""
    head = int(rpc_call(url, "eth_blockNumber", []), 16)
    return [rpc_call(url, "eth_getBlockByNumber", [hex(n), False]) for n in range(head + 1)]


def start_meters_chain(**anvil_args) -> tuple[Anvil, dict]:
    node = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP, **anvil_args).start()
    try:
        return node, build(node, only=["meters"])
    except BaseException:
        node.stop()
        raise


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _mapping(key: bytes, slot: int) -> int:
    """Solidity: the slot of mapping-at-``slot``[key] is keccak256(key . uint256(slot))."""
    return int.from_bytes(keccak(key + _word(slot)), "big")


def lying_cap_check(name: str, manifest: dict, period: int) -> dict:
    """8312/cap-conservation of LyingAggregateBudgetMeter's spentRoot[root][period] (slot 0,
    nested mapping) against cap[root] (slot 1), as a raw struct:S:A:C shape: key = the period,
    S = keccak256(root . 0), A = 0, C = slot(cap[root]) - slot(spentRoot[root][period])."""
    root = bytes.fromhex(manifest["meters"]["aggregate_lying"]["trees"]["tree-1"]["root_id"][2:])
    inner = _mapping(root, 0)
    spent = _mapping(_word(period), inner)
    cap = _mapping(root, 1)
    return {"name": name, "recipe": "8312/cap-conservation",
            "address": manifest["contracts"][hm.LYING_AGGREGATE],
            "layout": "meter-aggregate-budget-lying",
            "params": {"key": "0x" + _word(period).hex(),
                       "shape": f"struct:{inner:#x}:0:{(cap - spent) % W:#x}"}}


def honest_key_check(name: str, manifest: dict) -> dict:
    """ReservedConfirmedMeter key-1: reserved + confirmed <= cap; the history leaves it at
    the cap exactly (1000 of 1000), and nothing here touches it: GOOD at every block."""
    key = manifest["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"]
    return {"name": name, "recipe": "8312/cap-conservation",
            "address": manifest["contracts"][hm.RESERVED_CONFIRMED],
            "params": {"shape": "reserved-confirmed", "key": key}}


class LyingTree:
    """Draws on the lying meter's tree-1 from the test, one transaction per block."""

    def __init__(self, node: Anvil, manifest: dict):
        self.w3 = connect(node.url)
        latest = self.w3.eth.get_block("latest")
        self.driver = Driver(self.w3, start_timestamp=latest["timestamp"])
        self.meter = self.w3.eth.contract(address=manifest["contracts"][hm.LYING_AGGREGATE],
                                          abi=load_artifact(hm.LYING_AGGREGATE)["abi"])
        tree = manifest["meters"]["aggregate_lying"]["trees"]["tree-1"]
        self.root = bytes.fromhex(tree["root_id"][2:])
        self.nodes = {n: bytes.fromhex(v["id"][2:]) for n, v in tree["nodes"].items()}
        self.agents = {n: v["agent"] for n, v in tree["nodes"].items()}
        self.owner = manifest["meters"]["aggregate_lying"]["owner"]

    def period_of(self, timestamp: int) -> int:
        """LyingAggregateBudgetMeter.currentPeriod: (t - anchor) / length (history constants)."""
        return (timestamp - hm.PERIOD_ANCHOR) // hm.PERIOD_LENGTH

    @property
    def now(self) -> int:
        return self.driver.now

    def mine(self) -> int:
        self.driver.mine()
        return self.w3.eth.block_number

    def draw(self, node: str, amount: int) -> int:
        call = self.meter.functions.draw(self.root, self.nodes[node], amount)
        return self.driver.tx(call, sender=self.agents[node], gas=hm.DRAW_GAS)["blockNumber"]

    def overdraw(self, node: str, amount: int) -> int:
        """The owner's privileged draw past the root cap (LyingAggregateBudgetMeter.sol)."""
        call = self.meter.functions.overdraw(self.root, self.nodes[node], amount)
        return self.driver.tx(call, sender=self.owner, gas=hm.DRAW_GAS)["blockNumber"]


# The meters history is dated from the devnet's genesis timestamp (days of chain time in
# 2025) and the tests mine on from its own clock: follow-mode tests take its head as the
# present, so the first block, reached by `latest`, is accepted whatever its age by the
# system clock (docs/lightclient.md §Clock: a max age suited to the chain, said here).
HISTORY_AGE = ("--max-anchor-age", str(10**10))
