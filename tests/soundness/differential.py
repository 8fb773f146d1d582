"""The fast evaluator against the reference one (recompute.evaluator.reference) over generated
chains: the helpers of test_reference_differential.py and of the mutation script
(tests/soundness/reuse_mutations.py). docs/design.md §Soundness.

A chain of our own (the devnet's AMM and meters histories on a fresh anvil: the shared session
devnet is read-only) is driven on by a list of operations: writes to the reference contracts
(pulses, demands and policy changes on the AMM registry, draws on the lying meter), storage
written with no transaction and no log (``anvil_setStorageAt``), the registry's code removed and
restored, quiet blocks, time jumps (some to the last second before a layer's status turns, read
from the honest registry's own ``layerStatus`` view) and reorgs (``evm_revert``). Several checks
share the contracts and their layouts (one layout also loaded a second time, from another
file). Anvil writes a storage or code change (``anvil_setStorageAt``, ``anvil_setCode``) into
the head block's own state, so that block's proofs no longer hash to its stateRoot: an empty
block takes it (Devchain._behind), and both paths must say UNVERIFIABLE (invalid-proof) there.
The expected lines are the reference evaluator's: fresh proofs of every read at every block,
nothing kept; the fast path must write exactly the same lines (verdict, reason, derived values,
evidence digest, detail, anchor), block after block, in every mode.
"""

from __future__ import annotations

import io
import json
import shutil
from functools import partial
from pathlib import Path

from web3 import Web3

from recompute.core.anchor import AnchoredBlock, anchor_block
from recompute.core.caching import SHARED_NODES
from recompute.core.errors import Unverifiable
from recompute.core.prover import prove_account, prove_account_plainly
from recompute.devnet import history_amm as ha
from recompute.devnet import history_meters as hm
from recompute.devnet.anvil import Anvil
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build
from recompute.devnet.contracts import connect, load_artifact
from recompute.evaluator.job import Job, step_many
from recompute.evaluator.reference import reference_step_many
from recompute.sources.cache import SharedSource
from recompute.sources.live import LiveSource
from recompute.watch.auditor import Auditor
from recompute.watch.config import Check, parse_config_text
from recompute.watch.evaluate import BlockEvaluator, Line
from recompute.watch.metrics import Metrics
from recompute.watch.sink import Sink
from tests.amm_view import layer_status_view

GAS = 3_000_000
STEP = 12  # seconds between ordinary blocks

# Operations (plain tuples, as hypothesis draws them):
#   ("quiet",)                   one empty block
#   ("jump", seconds)            one empty block ``seconds`` later
#   ("edge", subject, layer, d)  one empty block at the layer's deadline + d (d: -1 or 0): the
#                                last second before its status turns, or the second it turns
#   ("pulse", subject)           the subject pulses (AMM §Signals): a write with a log
#   ("demand", mask, due)        the controller demands layers ``mask`` due in ``due`` seconds
#   ("policy", index)            the controlled subject sets CONTROLLED_POLICIES[index]
#   ("draw", node, amount)       a draw on the lying meter's tree-1 (reverts past a node cap)
#   ("poke", which, value)       a slot written with no transaction and no log
#   ("nocode",) / ("code",)      the registry's code removed / restored (its storage stays)
#   ("reorg", depth[, draw])     the last ``depth`` operations undone (evm_revert) and as many
#                                blocks mined at their heights (other hashes): empty, or the
#                                first holding another draw (node, amount)
SUBJECTS = ("example", "controlled", "pulser")
PROBES = Path(__file__).resolve().parent / "probe_recipes.py"  # a user recipe module

# A fixed history with every kind of operation (a status turned by the clock alone, a write
# without a log, a policy change, code removed and restored, a reorg of depth 2 back to an
# earlier storageRoot, one of depth 3 that takes a draw and its log away, one of depth 2 that
# puts another draw at the same height), for the segmented
# audit (worker processes take seconds to start) and the mutations.
FIXED = [("pulse", "pulser"), ("quiet",), ("edge", "controlled", 3, -1),
         ("edge", "controlled", 3, 0), ("draw", "A", 20), ("draw", "B", 25), ("poke", 0, 7),
         ("policy", 1), ("demand", 3, 100), ("reorg", 2), ("nocode",), ("quiet",), ("code",),
         ("pulse", "controlled"), ("quiet",), ("draw", "A", 10), ("quiet",), ("draw", "C", 20),
         ("reorg", 3), ("draw", "C", 5), ("draw", "B", 1), ("quiet",), ("reorg", 2, ("B", 2)),
         ("jump", 86_400), ("draw", "A", 3), ("pulse", "pulser"), ("edge", "pulser", 0, -1),
         ("edge", "pulser", 0, 0), ("quiet",)]


def rpc(url: str, method: str, *params):
    from recompute.devnet.anvil import rpc_call

    return rpc_call(url, method, list(params))


class Devchain:
    """The fresh anvil with the AMM and meters histories, and the operations above."""

    def __init__(self) -> None:
        self.node = Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP).start()
        try:
            self.manifest = build(self.node, only=["amm", "meters"])
        except BaseException:
            self.node.stop()
            raise
        self.url = self.node.url
        self.w3: Web3 = connect(self.url)
        contracts = self.manifest["contracts"]
        self.registry_address = contracts[ha.REGISTRY]
        self.registry = self.w3.eth.contract(address=self.registry_address,
                                             abi=load_artifact(ha.REGISTRY)["abi"])
        self.code = rpc(self.url, "eth_getCode", self.registry_address, "latest")
        self.meter_address = contracts[hm.LYING_AGGREGATE]
        self.meter = self.w3.eth.contract(address=self.meter_address,
                                          abi=load_artifact(hm.LYING_AGGREGATE)["abi"])
        amm = self.manifest["amm"]
        self.subjects = {name: amm["subjects"][name]["address"] for name in SUBJECTS}
        self.roles = amm["roles"]
        tree = self.manifest["meters"]["aggregate_lying"]["trees"]["tree-1"]
        self.tree = tree
        self.first = self.head() + 1
        # the lying meter's period at the first block after the histories (its draws land in
        # it, until a time jump moves the chain on): LyingAggregateBudgetMeter.currentPeriod
        self.period = (self.now() + STEP - hm.PERIOD_ANCHOR) // hm.PERIOD_LENGTH
        self.base = rpc(self.url, "evm_snapshot")
        self.snapshots: list[tuple[int, str]] = []  # (head before an operation, its snapshot)

    def stop(self) -> None:
        self.node.stop()

    # ---- chain plumbing ------------------------------------------------------------------

    def head(self) -> int:
        return int(rpc(self.url, "eth_blockNumber"), 16)

    def now(self) -> int:
        return int(rpc(self.url, "eth_getBlockByNumber", "latest", False)["timestamp"], 16)

    def reset(self) -> None:
        """Back to the histories' head (a new snapshot for the next reset)."""
        assert rpc(self.url, "evm_revert", self.base) is True
        self.base = rpc(self.url, "evm_snapshot")
        self.snapshots = []
        # the registry's code, in case an example left it removed (a revert restores it too)
        assert self.head() == self.first - 1

    def block_hash(self, number: int) -> str:
        return rpc(self.url, "eth_getBlockByNumber", hex(number), False)["hash"]

    def _at(self, timestamp: int) -> None:
        rpc(self.url, "evm_setNextBlockTimestamp", timestamp)

    def _mine(self, timestamp: int | None = None) -> None:
        self._at(timestamp if timestamp is not None else self.now() + STEP)
        rpc(self.url, "evm_mine")

    def _send(self, call, sender: str, timed: bool = True) -> None:
        """One transaction in its own block; a revert still mines the block (the sender's
        nonce and balance change, not the contract's storage)."""
        if timed:
            self._at(self.now() + STEP)
        try:
            tx = call.transact({"from": sender, "gas": GAS})
        except Exception:  # web3 estimates nothing (gas given); anvil refused it outright
            self._mine()
            return
        self.w3.eth.wait_for_transaction_receipt(tx)

    # ---- operations ------------------------------------------------------------------------

    def apply(self, op: tuple) -> list[int]:
        """Apply one operation; the numbers of the blocks a follower sees after it (the new
        head, or every block of a reorged branch)."""
        before = self.head()
        if op[0] == "reorg":
            return self._reorg(*op[1:])
        self.snapshots.append((before, rpc(self.url, "evm_snapshot")))  # for a later reorg
        getattr(self, "_" + op[0])(*op[1:])
        return list(range(before + 1, self.head() + 1))

    def _quiet(self) -> None:
        self._mine()

    def _jump(self, seconds: int) -> None:
        self._mine(self.now() + seconds)

    def _edge(self, subject: str, layer: int, delta: int) -> None:
        view = layer_status_view(self.url, self.registry_address, self.subjects[subject],
                                 layer, self.head())
        at = int(view["deadline"]) + delta
        self._mine(at if at > self.now() else None)

    def _pulse(self, subject: str) -> None:
        address = self.subjects[subject]
        self._send(self.registry.functions.pulse(address, 0), address)

    def _demand(self, mask: int, due: int) -> None:
        call = self.registry.functions.demand(self.subjects["controlled"], mask,
                                              self.now() + due)
        self._send(call, self.roles["controller"])

    def _policy(self, index: int) -> None:
        controlled = self.subjects["controlled"]
        call = self.registry.functions.setPolicy(controlled, ha.CONTROLLED_POLICIES[index])
        self._send(call, controlled)

    def _draw(self, node: str, amount: int, timed: bool = True) -> None:
        entry = self.tree["nodes"][node]
        call = self.meter.functions.draw(bytes.fromhex(self.tree["root_id"][2:]),
                                         bytes.fromhex(entry["id"][2:]), amount)
        self._send(call, entry["agent"], timed)

    def _poke(self, which: int, value: int) -> None:
        address, slot = self._poked(which)
        self._behind(lambda: rpc(self.url, "anvil_setStorageAt", address, hex(slot),
                                 "0x" + f"{value:064x}"))

    def _nocode(self) -> None:
        self._behind(lambda: rpc(self.url, "anvil_setCode", self.registry_address, "0x"))

    def _code(self) -> None:
        self._behind(lambda: rpc(self.url, "anvil_setCode", self.registry_address, self.code))

    def _behind(self, change) -> None:
        """A change made with no transaction, in the next block. Anvil writes it into the head
        block's own state too (its proofs then no longer hash to its stateRoot), so an empty
        block is mined first to take that, before anyone has asked about it: every mode sees
        it the same way (UNVERIFIABLE: invalid-proof). Were it the block a watch had already
        read, the fast path would hold its earlier, valid answer and the reference would ask
        again: a node that changes its answer about one block, not a disagreement of theirs."""
        self._mine()
        change()
        self._mine()

    def _reorg(self, depth: int, draw: tuple[str, int] | None = None) -> list[int]:
        """evm_revert to the state below the last ``depth`` operations' blocks, then as many
        blocks at their heights (1 s later: other hashes): empty, or the first holding
        ``draw`` (node, amount): another block whose logs match the same query."""
        depth = min(depth, len(self.snapshots))
        if depth < 1:
            self._mine()
            return [self.head()]
        number, snapshot = self.snapshots[-depth]
        del self.snapshots[-depth:]
        assert rpc(self.url, "evm_revert", snapshot) is True
        for i in range(depth):
            if i == 0 and draw is not None:
                self._at(self.now() + STEP + 1)
                self._draw(*draw, timed=False)
            else:
                self._mine(self.now() + STEP + 1)
        return list(range(number + 1, self.head() + 1))

    def _poked(self, which: int) -> tuple[str, int]:
        """A slot a check reads: the lying meter's spentRoot[root][period] (0), its cap[root]
        (1)."""
        from tests.watch.meters import _mapping, _word

        root = bytes.fromhex(self.tree["root_id"][2:])
        if which == 0:
            return self.meter_address, _mapping(_word(self.period), _mapping(root, 0))
        return self.meter_address, _mapping(root, 1)

    # ---- the checks --------------------------------------------------------------------------

    def config(self, folder: Path) -> str:
        """The checks (TOML, as a user writes them): AMM layer and signal statuses and state
        roots on one registry (one layout, also loaded again from a copy: another object of
        the same digest; and a layout placing two paths otherwise), the meters' raw-slot and
        log-reading checks."""
        copy = folder / "amm-registry-copy.json"
        shutil.copy(_bundled_layout("amm-registry"), copy)
        # a layout of the same contract that places two paths otherwise (heads and
        # checkpoints swapped): the same path texts, other slots, other values
        swapped = json.loads(_bundled_layout("amm-registry").read_text())
        slots = {e["label"]: e["slot"] for e in swapped["storage"]}
        for entry in swapped["storage"]:
            if entry["label"] in ("heads", "checkpoints"):
                entry["slot"] = slots["checkpoints" if entry["label"] == "heads" else "heads"]
        swapped_path = folder / "amm-registry-swapped.json"
        swapped_path.write_text(json.dumps(swapped))
        registry = self.registry_address
        lines = []

        def check(name: str, recipe: str, address: str, params: str,
                  layout: str | None = None) -> None:
            lines.extend(["[[check]]", f'name = "{name}"', f'recipe = "{recipe}"',
                          f'address = "{address}"', f"params = {{ {params} }}"])
            if layout:
                lines.append(f'layout = "{layout}"')
            lines.append("")

        for subject in SUBJECTS:
            address = self.subjects[subject]
            for layer in range(4):
                other = str(copy) if (subject, layer) == ("controlled", 3) else None
                check(f"{subject}/layer-{layer}", "amm/layer-status", registry,
                      f'subject = "{address}", layer = {layer}', other)
            check(f"{subject}/signal", "amm/signal-status", registry, f'subject = "{address}"')
        check("controlled/root", "amm/state-root", registry,
              f'subject = "{self.subjects["controlled"]}"')
        check("controlled/layer-3-again", "amm/layer-status", registry,
              f'subject = "{self.subjects["controlled"]}", layer = 3')
        check("controlled/layer-3-swapped", "amm/layer-status", registry,
              f'subject = "{self.subjects["controlled"]}", layer = 3', str(swapped_path))
        for entry in (_lying_cap(self.manifest, self.period), _honest_key(self.manifest)):
            params = ", ".join(f'{k} = "{v}"' for k, v in entry["params"].items())
            check(entry["name"], entry["recipe"], entry["address"], params, entry.get("layout"))
        check("lying/budget", "8312/aggregate-budget", self.meter_address,
              f'root = "{self.tree["root_id"]}", period = {self.period}, '
              f"from_block = {self.first - 8}",
              "meter-aggregate-budget-lying")
        cap_slot = self._poked(1)[1]
        check("lying/spent-then-cap", "probe/spent-then-cap-slot", self.meter_address,
              f'root = "{self.tree["root_id"]}", period = {self.period}, '
              f'cap_slot = "{cap_slot:#x}"')
        check("lying/spent-before", "probe/spent-before", self.meter_address,
              f'root = "{self.tree["root_id"]}", period = {self.period}')
        return "\n".join([f'recipes = ["{PROBES}"]', "", *lines])

    def checks(self, folder: Path) -> list[Check]:
        path = folder / "checks.toml"
        path.write_text(self.config(folder))
        return parse_config_text(path.read_text(), path, [str(PROBES)])


def _bundled_layout(name: str) -> Path:
    from recompute import data

    return Path(data.__file__).parent / "layouts" / f"{name}.json"


def _lying_cap(manifest: dict, period: int) -> dict:
    from tests.watch.meters import lying_cap_check

    return lying_cap_check("lying/cap", manifest, period)


def _honest_key(manifest: dict) -> dict:
    from tests.watch.meters import honest_key_check

    return honest_key_check("honest/key", manifest)


# ---- the modes ---------------------------------------------------------------------------


class Forging(LiveSource):
    """A node that lies about some blocks, the same way every time it is asked: where a block's
    hash ends in the digit 0 or 1, every account proof's first node (the state root's) has one
    digit changed. Both paths must then say UNVERIFIABLE (invalid-proof) there, whatever they
    hold of other blocks with the same roots: every check needs its contract's account proven
    at every block, fast or plain. (A forged *storage* proof is another matter: where the
    account proof shows the storageRoot of values proven before, the fast path carries them and
    asks for no storage proof, so it gives a verdict, soundly, where the reference, asking, is
    told lies and says UNVERIFIABLE.)"""

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict:
        return _forged(super().get_proof(address, slots, block_hash), block_hash)

    # The same lie whichever way the proofs are asked: one at a time, or in JSON-RPC batches
    # (a block's account proofs together; a header with the proofs at its number).
    def get_proofs(self, wanted, block_hash):
        return [_forged(answer, block_hash) for answer in super().get_proofs(wanted, block_hash)]

    def block_and_accounts(self, number, addresses):
        answers = super().block_and_accounts(number, addresses)
        block = answers[0]
        if not isinstance(block, dict) or not isinstance(block.get("hash"), str):
            return answers
        block_hash = bytes.fromhex(block["hash"][2:])
        return [block, *(_forged(answer, block_hash) for answer in answers[1:])]


def _forged(answer, block_hash: bytes):
    if isinstance(answer, dict) and block_hash.hex()[-1] in "01" and answer.get("accountProof"):
        answer["accountProof"][0] = _flip(answer["accountProof"][0])
    return answer


def _flip(text: str) -> str:
    return text[:-1] + ("1" if text[-1] != "1" else "2")


def shared(url: str, forging: bool = False) -> SharedSource:
    return SharedSource(Forging(url) if forging else LiveSource(url))


def anchored(source, block_hash: str) -> AnchoredBlock:
    """The block pinned by its hash (no clock: a hash is not aged by the wall clock; the
    chain runs ahead of it after time jumps)."""
    return anchor_block([source], block_hash=bytes.fromhex(block_hash[2:]))


def texts(lines: list[Line]) -> list[str]:
    return [json.dumps(line.to_json(), sort_keys=True) for line in lines]


class Follow:
    """Follow mode as the follower evaluates: one evaluator and one shared source for the
    whole run, every block the node shows, in the order it shows them (a reorged branch's
    blocks too); beside it the reference evaluator on the very same anchored blocks."""

    def __init__(self, url: str, checks: list[Check], forging: bool = False):
        self.source = shared(url, forging)
        self.fast = BlockEvaluator(checks)
        self.reference = BlockEvaluator(checks, reference=True)
        self.disagreements: list[tuple[str, str]] = []
        self.lines = 0

    def see(self, block_hash: str) -> None:
        block = anchored(self.source, block_hash)
        self.fast.prepare(block)  # the follower's fetch-ahead (lookahead helper thread)
        fast, reference = texts(self.fast.evaluate(block)), texts(self.reference.evaluate(block))
        self.lines += len(reference)
        self.disagreements += _differences(fast, reference)


def _differences(fast: list[str], reference: list[str]) -> list[tuple[str, str]]:
    if fast == reference:
        return []
    out = [(f, r) for f, r in zip(fast, reference, strict=False) if f != r]
    return out or [(str(len(fast)), str(len(reference)))]


def audit(url: str, checks: list[Check], first: int, last: int, *, reference: bool = False,
          workers: int = 4, forging: bool = False) -> list[str]:
    """A range audit (``watch --from --to``, confirmations 0): its stdout lines."""
    source = shared(url, forging)
    out = io.StringIO()
    sink = Sink(Metrics(), out=out, err=io.StringIO())
    top = anchor_block([source], block=last)
    Auditor(BlockEvaluator(checks, reference=reference), sink, workers=workers,
            confirmations=0).run(top, first, last)
    return out.getvalue().splitlines()


def step_many_in_order(url: str, checks: list[Check], hashes: list[str],
                       reference: bool, forging: bool = False) -> list[str]:
    """``step_many`` over the blocks in the order given, with the same jobs (their kept plans)
    and one shared source: each job's verdict, reason, detail, derived values and digest."""
    source = shared(url, forging)
    jobs = [Job(c.recipe, c.params, c.address, c.layout, c.expect) for c in checks]
    out = []
    for block_hash in hashes:
        block = anchored(source, block_hash)
        outcomes = (reference_step_many if reference else step_many)(block, jobs)
        for check, outcome in zip(checks, outcomes, strict=True):
            if isinstance(outcome, Exception):
                out.append(f"{block_hash} {check.name} {type(outcome).__name__} "
                           f"{getattr(outcome, 'reason', '')} {outcome}")
                continue
            evidence = outcome.evidence
            out.append(json.dumps([block_hash, check.name, outcome.verdict.value,
                                   outcome.reason, outcome.detail, evidence["derived"],
                                   evidence["evidence_digest"]], sort_keys=True))
    return out


def layouts_shared(checks: list[Check]) -> bool:
    """At least two layout objects of one digest among the checks (the copy)."""
    seen: dict[str, set[int]] = {}
    for c in checks:
        seen.setdefault(c.layout.digest, set()).add(id(c.layout))
    return any(len(ids) > 1 for ids in seen.values())


# ---- forged storage proofs: the fast walk against the plain walk ------------------------------


class ForgedTop:
    """A node that lists every storage proof of more than two nodes with its first node (the
    storage root's) changed by one digit: every walk of it must refuse it (invalid-proof).
    ``account``: the account proof's first node (the state root's) instead."""

    def __init__(self, source: LiveSource, account: bool = False):
        self.source = source
        self.forged = 0
        self.account = account

    def get_proof(self, address: bytes, slots: list[int], block_hash: bytes) -> dict:
        answer = self.source.get_proof(address, slots, block_hash)
        if self.account:
            answer["accountProof"][0] = _flip(answer["accountProof"][0])
            self.forged += 1
            return answer
        for entry in answer.get("storageProof") or []:
            if len(entry.get("proof") or []) > 2:
                entry["proof"][0] = _flip(entry["proof"][0])
                self.forged += 1
        return answer


def forged_storage_proofs(url: str, checks: list[Check], block_hash: str,
                          account: bool = False) -> tuple[list[str], int]:
    """The slots every check reads at the block (from the reference's evidence), per
    contract: proven honestly by the fast prover (its node cache then holds their top walks:
    ``core.mpt.verify_many``), then asked again of a node that forges the first node of each
    storage proof (ForgedTop), by the fast prover and by the plain one (the reference's). Both
    must refuse (UNVERIFIABLE); the differences ``fast: ... / plain: ...``, and how many storage
    proofs were forged. ``account``: the account proofs' first node forged instead (the node
    cache then holds the honest state root node under the same hash)."""
    live = LiveSource(url)
    block = anchored(live, block_hash)
    jobs = [Job(c.recipe, c.params, c.address, c.layout, c.expect) for c in checks]
    wanted: dict[bytes, list[int]] = {}
    for outcome in reference_step_many(block, jobs):
        if isinstance(outcome, Exception):
            continue
        for entry in outcome.evidence["reads"]:
            if entry.get("block") is None and int(entry["value"], 16):
                wanted.setdefault(bytes.fromhex(entry["address"][2:]), []).append(
                    int(entry["slot"], 16))
    differences = []
    forging = ForgedTop(live, account)
    for address, slots in wanted.items():
        slots = list(dict.fromkeys(slots))
        fast = partial(prove_account, nodes=SHARED_NODES)  # the fast path's node cache
        fast(block, address, slots, source=live)  # the honest walk, kept
        said = []
        for prove in (fast, prove_account_plainly):
            try:
                account = prove(block, address, slots, source=forging)
                said.append(f"proven {sorted(account.storage.items())}")
            except Unverifiable as exc:
                said.append(f"UNVERIFIABLE {exc.reason}")
        if said[0] != said[1]:
            differences.append(f"0x{address.hex()}: fast: {said[0][:200]} / plain: {said[1]}")
    return differences, forging.forged
