"""What a range audit shares from block to block (blocks evaluated in order, reads
carried while the registry's storageRoot is the same, the next blocks' account proofs fetched
ahead, evidence parts kept) must never stand in for what a block says:

- every write between two blocks is seen at the block that has it, and a status that changes
  with the clock alone changes at the block whose timestamp changes it: every line of an
  audit over the AMM history equals the honest registry's own ``layerStatus`` view at that
  block (the expected values: the contract, through ``eth_call``, not this code);
- a node that answers a block's account proof with the one of the block before (the storageRoot
  the carried reads were proven under) gets UNVERIFIABLE lines for that block, never a verdict
  on the stale values; the next honest block shows the write.
"""

from __future__ import annotations

import io
import json

from recompute.core.anchor import anchor_block
from recompute.core.verdict import Verdict
from recompute.devnet.anvil import rpc_call
from recompute.devnet.contracts import connect, deploy
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.cache import SharedSource
from recompute.sources.live import LiveSource
from recompute.watch.auditor import Auditor
from recompute.watch.config import Check
from recompute.watch.evaluate import BlockEvaluator
from recompute.watch.metrics import Metrics
from recompute.watch.sink import Sink
from tests.amm_view import layer_status_view
from tests.rpcproxy import RpcProxy


def _storage_hash(url: str, address: str, block: int) -> str:
    return rpc_call(url, "eth_getProof", [address, [], hex(block)])["storageHash"]


def _audit(source, checks: list[Check], first: int, last: int) -> tuple[list[dict], int]:
    """A range audit as ``watch --from --to`` runs it (the auditor, its fetch-ahead threads, a
    shared source): its stdout lines, and the eth_getProof requests it sent."""
    shared = SharedSource(source)
    out = io.StringIO()
    sink = Sink(Metrics(), out=out, err=io.StringIO())
    top = anchor_block([shared], block=last)
    Auditor(BlockEvaluator(checks), sink, workers=4, confirmations=0).run(top, first, last)

    return [json.loads(text) for text in out.getvalue().splitlines()], shared.proof_calls


def test_every_line_of_an_audit_is_the_registry_view_at_its_block(devnet):
    node, manifest = devnet
    recipe = get_recipe("amm/layer-status")
    layout = load_layout(recipe.layout)
    registry = manifest["contracts"]["AgentMeditationRegistry"]
    subject = manifest["amm"]["subjects"]["controlled"]["address"]
    checks = [Check(f"layer-{n}", recipe, recipe.parse_params({"subject": subject,
                                                                "layer": str(n)}),
                    bytes.fromhex(registry[2:]), layout) for n in range(4)]
    first = manifest["moments"]["amm.enrolled"]["number"]
    last = max(m["number"] for m in manifest["moments"].values())
    lines, proof_calls = _audit(LiveSource(node.url), checks, first, last)
    assert len(lines) == 4 * (last - first + 1)

    clock_only = 0  # a status change between two blocks with the same storageRoot
    roots = {n: _storage_hash(node.url, registry, n) for n in range(first, last + 1)}
    before: dict[str, dict] = {}
    for line in lines:
        layer = int(line["check"].rsplit("-", 1)[1])
        view = layer_status_view(node.url, registry, subject, layer, line["block"])
        assert line["verdict"] != Verdict.UNVERIFIABLE.value, line
        got = {k: line["derived"][k] for k in ("status", "deadline", "never_completed")}
        assert got == view, (line["block"], line["check"])
        previous = before.get(line["check"])
        if (previous is not None and previous["status"] != view["status"]
                and roots[line["block"]] == roots[line["block"] - 1]):
            clock_only += 1
        before[line["check"]] = view
    assert clock_only > 0  # the audit crossed a status the clock alone changed
    changed = sum(1 for n in range(first + 1, last + 1) if roots[n] != roots[n - 1])
    assert 0 < changed < last - first  # writes, and quiet blocks between them
    # a quiet block costs its one account proof (its reads carried); a written one re-proves
    # (account, then the slots, then the rounds that depend on new values)
    assert proof_calls < (last - first + 1) + 4 * changed + 4


KEY = "0x" + "ab" * 32


class StaleAccounts:
    """The lying node: an account-only eth_getProof at block ``lie_at`` is answered with the
    proof of block ``truth_at`` (a real proof, of the storageRoot before the write)."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.lie_at: str | None = None
        self.truth_at: str | None = None
        self.lies = 0

    def __call__(self, method: str, params: list, reply: dict) -> dict:
        at = params[2] if method == "eth_getProof" else None
        if isinstance(at, dict) and params[1] == [] and at.get("blockHash") == self.lie_at:
            self.lies += 1
            old = rpc_call(self.upstream, "eth_getProof", [params[0], [], self.truth_at])
            return {**reply, "result": old}
        return reply


def test_a_stale_account_proof_for_a_written_block_is_unverifiable(anvil):
    w3 = connect(anvil.url)
    meter = deploy(w3, "HeadroomMeter")
    operator = w3.eth.accounts[3]
    tx = meter.functions.openEnvelope(bytes.fromhex(KEY[2:]), operator, 10_000,
                                      8000).transact({"from": w3.eth.accounts[1]})
    w3.eth.wait_for_transaction_receipt(tx)
    recipe = get_recipe("8312/cap-conservation")
    check = Check("meter", recipe, recipe.parse_params({"key": KEY, "shape": "headroom"}),
                  bytes.fromhex(meter.address[2:]), load_layout("meter-headroom"))
    before = w3.eth.block_number
    anvil.rpc("evm_mine")  # a quiet block: carried
    tx = meter.functions.recordTurnover(bytes.fromhex(KEY[2:]), 2500).transact(
        {"from": operator})
    w3.eth.wait_for_transaction_receipt(tx)
    written = w3.eth.block_number
    anvil.rpc("evm_mine")  # an honest block after the write
    lie = StaleAccounts(anvil.url)
    lie.truth_at = "0x" + bytes(w3.eth.get_block(written - 1)["hash"]).hex()
    lie.lie_at = "0x" + bytes(w3.eth.get_block(written)["hash"]).hex()
    with RpcProxy(anvil.url, lie) as proxy:
        lines, _ = _audit(LiveSource(proxy.url), [check], before, written + 1)
    assert lie.lies > 0
    by_block = {line["block"]: line for line in lines}
    assert set(by_block) == set(range(before, written + 2))
    for number in range(before, written):  # before the write: the envelope as opened
        assert by_block[number]["verdict"] == Verdict.GOOD.value
        assert by_block[number]["derived"]["aggregate"] == "0"
    stale = by_block[written]
    assert stale["verdict"] == Verdict.UNVERIFIABLE.value, stale
    assert stale["reason"] in ("invalid-proof", "rpc-inconsistent")
    after = by_block[written + 1]  # the honest block after it: the turnover just recorded
    assert after["verdict"] == Verdict.GOOD.value
    assert after["derived"]["aggregate"] == "2500"
