"""``recompute demo`` (``make demo``): the embedded devnet, proven and re-derived, in a minute.

Brings a devnet up in a temporary state dir (anvil + the reference registries + the scripted
history), then at named moments: reads registry storage through layouts with proofs pinned by
block hash, re-derives what the registries claim with the recipes, and sets each registry's
own view beside it, so the lying variants show up as view-disagrees findings. It also proves
real go-ethereum state (the bundled execution-apis fixtures) and shows that a lying node gets
UNVERIFIABLE, and the devnet's OP-stack L2 (recompute/cli/demo_l2.py): its blocks pinned through
L1's dispute games. Stops the devnet at the end.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recompute.cli.demo_l2 import run_l2_part
from recompute.cli.flags import cli_detail
from recompute.core.anchor import AnchoredBlock, anchor_block
from recompute.core.clock import Clock
from recompute.core.errors import Unverifiable
from recompute.core.header import Header
from recompute.core.prover import prove_account
from recompute.data import FIXTURE_CHAIN
from recompute.devnet.l2_lifecycle import extension
from recompute.devnet.lifecycle import down, up
from recompute.evaluator.job import step
from recompute.layout import load_layout, read_all
from recompute.lightclient import DEVNET
from recompute.lightclient.anchored_header import by_light_client
from recompute.recipes.registry import load_recipes
from recompute.sources.beacon import BeaconClient, sync_light_client
from recompute.sources.fixture_node import FixtureNode
from recompute.sources.live import LiveSource

GETH_CONTRACT = bytes.fromhex("7dcd17433742f4c0ca53122ab541d0ba67fc27df")


def _short(value: object) -> str:
    text = str(value)
    if text.startswith("0x") and len(text) > 18:
        return text[:10] + "…" + text[-4:]
    return text if len(text) <= 40 else text[:37] + "…"


class Demo:
    def __init__(self, manifest: dict[str, Any], echo: Callable[[str], None]) -> None:
        self.manifest = manifest
        self.echo = echo
        self.source = LiveSource(manifest["rpc"])
        self.recipes = load_recipes()
        self.findings = 0

    def block(self, moment: str) -> AnchoredBlock:
        pinned = bytes.fromhex(self.manifest["moments"][moment]["hash"][2:])
        return anchor_block([self.source], block_hash=pinned)

    def read(self, moment: str, contract: str, layout: str, paths: list[str],
             title: str) -> None:
        block = self.block(moment)
        address = bytes.fromhex(self.manifest["contracts"][contract][2:])
        results = read_all(load_layout(layout), paths,
                           lambda slots: dict(prove_account(block, address, sorted(slots))
                                              .storage))
        values = ", ".join(f"{r.path.split('.')[-1].split('[')[0]}={_short(_plain(r.value))}"
                           for r in results)
        self.echo(f"PROVEN         {title} @ {moment} (block {block.number}): {values}")

    def step(self, moment: str, recipe: str, contract: str, params: dict[str, object],
             title: str, layout: str | None = None) -> None:
        if recipe not in self.recipes:
            return
        block = self.block(moment)
        chosen = self.recipes[recipe]
        address = bytes.fromhex(self.manifest["contracts"][contract][2:])
        parsed = chosen.parse_params({k: str(v) for k, v in params.items()})
        outcome = step(chosen, parsed, block, address, load_layout(layout or chosen.layout),
                       compare_views=True)
        derived = outcome.evidence["derived"]
        shown = ", ".join(f"{k}={_short(v)}" for k, v in list(derived.items())[:4])
        self.echo(f"{outcome.verdict.value:<14} {title} @ {moment} (block {block.number}): "
                  f"{shown}")
        for finding in outcome.evidence["findings"]:
            if finding.get("finding") == "view-disagrees":
                self.findings += 1
                self.echo(f"  ! view-disagrees: {finding['view']} says {finding.get('value')}="
                          f"{_short(finding.get('view_says'))}, proven storage says "
                          f"{_short(finding.get('storage_says'))}")


def _plain(value: object) -> object:
    return "0x" + value.hex() if isinstance(value, bytes) else value


def run_devnet_part(manifest: dict[str, Any], echo: Callable[[str], None]) -> int:
    demo = Demo(manifest, echo)
    amm = manifest["amm"]["subjects"]
    example, pulser = amm["example"]["address"], amm["pulser"]["address"]
    liar_subject = amm["lying-example"]["address"]
    echo("Agent Meditation registry (AMM): the worked example, then status from storage")
    demo.read("amm.after-cycle-1", "AgentMeditationRegistry", "amm-registry",
              [f"heads[{example}].stateVersion", f"heads[{example}].root",
               f"stateRoots[{example}][1]"], "head of the worked example")
    demo.step("amm.after-cycle-1", "amm/state-root", "AgentMeditationRegistry",
              {"subject": example}, "root == computeRoot(checkpoints)")
    demo.step("amm.overdue", "amm/layer-status", "AgentMeditationRegistry",
              {"subject": pulser, "layer": 0}, "a subject that only pulses, layer 0")
    demo.step("amm.overdue", "amm/signal-status", "LyingMeditationRegistry",
              {"subject": liar_subject}, "signal of the lying registry's subject",
              layout="amm-registry-lying")
    demo.step("amm.false-restore", "amm/restore-claim", "LyingMeditationRegistry",
              {"subject": liar_subject,
               "block": manifest["moments"]["amm.false-restore"]["number"]},
              "restore claim the lying registry accepted", layout="amm-registry-lying")
    if "8312/aggregate-budget" in demo.recipes and manifest.get("meters"):
        echo("\nERC-8312 meters: cap conservation from proven storage and events")
        _meter_steps(demo, manifest)
    if "sai/roster" in demo.recipes and manifest.get("swarm"):
        echo("\nERC-8447 swarms: roster conditions from the proven ledger")
        _swarm_steps(demo, manifest)
    return demo.findings


def _meter_steps(demo: Demo, manifest: dict[str, Any]) -> None:
    tree = manifest["meters"]["aggregate_lying"]["trees"]["tree-1"]
    over = manifest["moments"]["meter.over-cap"]
    demo.step("meter.over-cap", "8312/aggregate-budget", "LyingAggregateBudgetMeter",
              {"root": tree["root_id"], "period": 0,
               "from_block": manifest["moments"]["meter.period-0"]["number"] - 12
               if "meter.period-0" in manifest["moments"] else over["number"] - 12},
              "Σ Drawn of the lying meter's root vs its cap", layout="meter-aggregate-budget-lying")


def _swarm_steps(demo: Demo, manifest: dict[str, Any]) -> None:
    lying = manifest["swarm"]["swarms"]["lying"]
    demo.step("swarm.roster-lies", "sai/roster", "LyingSwarmRegistry",
              {"swarm": lying["id"], "from_block": lying["formed_block"]},
              "roster of the lying registry's swarm", layout="swarm-registry-lying")


def run_light_client_part(manifest: dict[str, Any], echo: Callable[[str], None]) -> None:
    """A block pinned by the light client (the devnet's beacon side), then proven."""
    beacon = manifest["beacon"]
    root = bytes.fromhex(beacon["trusted_root"][2:])
    # the devnet's history is recorded (its blocks are dated from its genesis timestamp, not
    # today): it is judged as of its own head's time, as `--at` does on the command line
    source = LiveSource(manifest["rpc"])
    clock = Clock(at=Header.from_rpc(source.block_by_number("latest")).timestamp)
    with BeaconClient(beacon["url"]) as client:
        store = sync_light_client(client, DEVNET, root,
                                  current_slot=DEVNET.slot_at_time(clock.now()))
    block = by_light_client(source, store, root, clock=clock)
    contract = manifest["contracts"]["AgentMeditationRegistry"]
    account = prove_account(block, bytes.fromhex(contract[2:]), [0])
    signers, size = store.last_participation or (None, None)
    echo(f"VERIFIED-GOOD  block {block.number} pinned by the light client (trusted root "
         f"{_short(beacon['trusted_root'])}, finalized beacon slot "
         f"{store.finalized_header.slot}, {signers}/{size} of the sync committee signed): "
         f"AgentMeditationRegistry slot 0 = {account.storage[0]:#x}")
    echo(f"  = recompute proof --rpc {manifest['rpc']} --beacon {beacon['url']} --trusted-root "
         f"{beacon['trusted_root']} --network devnet --at {int(clock.now())} --address {contract} "
         "--slot 0")
    echo("  (the devnet's sync committee keys come from a public seed: this shows the "
         "light-client anchor end to end, not a real chain's consensus)")


def run_geth_part(echo: Callable[[str], None]) -> None:
    with FixtureNode(FIXTURE_CHAIN) as node:
        # recorded data: the fixture chain's head is pinned by its hash (judged as asked)
        head = Header.from_rpc(LiveSource(node.url).block_by_number("latest"))
        pinned = anchor_block([LiveSource(node.url)], block_hash=head.hash)
        account = prove_account(pinned, GETH_CONTRACT, [0])
        echo(f"VERIFIED-GOOD  real go-ethereum state (execution-apis fixtures, replayed "
             f"offline), block {pinned.number}: balance {account.balance}, "
             f"slot 0 = {account.storage[0]:#x}")

        class Liar(LiveSource):
            def get_proof(self, address: bytes, slots: list[int],
                          block_hash: bytes) -> dict[str, Any]:
                answer = super().get_proof(address, slots, block_hash)
                answer["storageProof"][0]["value"] = "0x39"
                return answer

        try:
            prove_account(anchor_block([Liar(node.url)], block_hash=head.hash),
                          GETH_CONTRACT, [0])
            echo("VERIFIED-GOOD  a lying node  <- must never happen")
        except Unverifiable as exc:
            echo(f"UNVERIFIABLE   a node that lies about that slot ({exc.reason}): "
                 f"{cli_detail(exc)}")


def run(echo: Callable[[str], None] = print) -> int:
    with tempfile.TemporaryDirectory(prefix="recompute-demo-") as state:
        echo("recompute demo: starting the devnet (anvil + reference registries + scripted "
             "history, and an OP-stack L2)…")
        manifest, _ = up(Path(state), extension=extension(True))
        try:
            echo(f"devnet at {manifest['rpc']}, chain {manifest['chain_id']}, "
                 f"{len(manifest['moments'])} named moments; every block below is pinned by "
                 "its hash\n")
            findings = run_devnet_part(manifest, echo)
            echo("\nLight-client anchor: the block pinned by the beacon chain's sync committee")
            run_light_client_part(manifest, echo)
            echo("")
            run_l2_part(manifest, echo)
        finally:
            down(Path(state))
    echo("")
    run_geth_part(echo)
    echo(f"\n{findings} view function(s) disagreed with proven storage: the registry answered "
         "one thing, its own storage proves another. Verdicts follow storage.")
    echo("Every value above comes from Merkle-Patricia proofs against the stateRoot (and "
         "receipts against the receiptsRoot) of a header whose hash was recomputed; see "
         "README §Trust model. The devnet was stopped.")
    return 0
