"""Follow-mode liveness: a node serving hash-correct children
that never existed cannot make ``watch`` write a verdict about them; every line names its
anchor; with several endpoints each new head is confirmed by the quorum first; a stale or
sibling ``latest`` is not a reorg and not a busy loop; a node unreachable at start ends the
watch after a bounded time. The liars are real endpoints in front of a real anvil that forge
headers; the follower runs in-process."""

from __future__ import annotations

import io
import json
import threading

import pytest

from recompute.cli.flags import cli_detail, flag
from recompute.core.anchor import anchor_block, by_parent_link, confirm_by_quorum
from recompute.core.clock import SYSTEM, Clock
from recompute.core.errors import Unverifiable
from recompute.core.header import Header
from recompute.core.keccak import EMPTY_TRIE_ROOT
from recompute.devnet.contracts import connect, deploy
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource
from recompute.watch.config import Check
from recompute.watch.evaluate import BlockEvaluator
from recompute.watch.follower import Follower
from recompute.watch.metrics import Metrics
from recompute.watch.sink import Sink
from tests.rpcproxy import RpcProxy, unchanged

YEAR = 365 * 86400


@pytest.fixture(scope="module")
def chain(module_anvil):
    w3 = connect(module_anvil.url)
    meter = deploy(w3, "AggregateBudgetMeter")
    return module_anvil, meter.address


@pytest.fixture(scope="module")
def relay(chain):
    """The same node on another port: a second endpoint of a quorum (two names of one host
    would be refused)."""
    with RpcProxy(chain[0].url, unchanged) as proxy:
        yield proxy.url


def _checks(address: str) -> list[Check]:
    recipe = get_recipe("8312/cap-conservation")
    params = recipe.parse_params({"shape": "cap:1000", "key": "0x" + "11" * 32})
    return [Check("cap", recipe, params, bytes.fromhex(address[2:]), load_layout(recipe.layout))]


def _follow(source_first, address, *, seconds=1.5, confirm=None, max_blocks=None,
            start_timeout=60.0, during=None, clock=SYSTEM, spell=None):
    out, err = io.StringIO(), io.StringIO()
    metrics = Metrics()
    sink = Sink(metrics, out, err)
    if spell is not None:  # as `recompute watch` names the options: its flags
        sink.spell = spell
    stop = threading.Event()
    follower = Follower(BlockEvaluator(_checks(address)), sink, source_first, confirmations=0,
                        poll=0.05, max_backoff=0.1, max_blocks=max_blocks, stop=stop,
                        confirm=confirm, start_timeout=start_timeout, clock=clock)
    timer = threading.Timer(seconds, stop.set)
    timer.start()
    follower.error = None

    def run():
        try:
            follower.run()
        except Unverifiable as exc:  # what the command turns into exit 2
            follower.error = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    if during is not None:
        during()
    worker.join(seconds + 10)
    timer.cancel()
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    return lines, err.getvalue(), metrics, follower


def _forged_child(parent: dict, **changes) -> dict:
    header = Header.from_rpc(parent)
    child = header.replace(number=header.number + 1, parent_hash=header.hash, **changes)
    return child.to_rpc()


class ForgesHeads(LiveSource):
    """Serves, above the real head, a hash-correct child of it with ``changes`` (same
    stateRoot, so every proof still verifies against it)."""

    changes: dict = {}

    def block_by_number(self, number):
        real_head = super().block_by_number("latest")
        head_number = int(real_head["number"], 16)
        if number == "latest" or number == head_number + 1:
            return _forged_child(real_head, **self.changes)
        return super().block_by_number(number)


@pytest.mark.parametrize("changes", [{"timestamp_delta": -23 * 86400},
                                     {"timestamp_delta": -1}])
def test_a_child_earlier_than_its_parent_gets_no_verdict(chain, changes):
    node, address = chain
    head = node.rpc("eth_getBlockByNumber", "latest", False)

    class Liar(ForgesHeads):
        pass

    Liar.changes = {"timestamp": int(head["timestamp"], 16) + changes["timestamp_delta"],
                    "receipts_root": EMPTY_TRIE_ROOT}
    liar = Liar(node.url)
    lines, err, _, _ = _follow(lambda: anchor_block([liar], block=int(head["number"], 16)),
                               address)
    forged = int(head["number"], 16) + 1
    assert lines and all(line["block"] != forged or line["verdict"] == "UNVERIFIABLE"
                         for line in lines)
    assert any(line["block"] == forged and line["hash"] is None for line in lines)
    assert "earlier than its parent" in err


def _child_at(node, delta: int) -> tuple[dict, int]:
    """Deploy a meter on a fresh anvil (its own clock: the system's), then mine the head's
    child dated ``delta`` seconds after the head. Returns (head, meter address)."""
    meter = deploy(connect(node.url), "AggregateBudgetMeter")
    head = node.rpc("eth_getBlockByNumber", "latest", False)
    node.rpc("evm_setNextBlockTimestamp", int(head["timestamp"], 16) + delta)
    node.rpc("evm_mine")
    return head, meter.address


def test_a_child_from_the_future_gets_no_line(anvil):
    """The attack: the node's next block (hash-correct, a real child with real proofs) is
    dated a year ahead of the clock. Before the clock was read, it got a final verdict line
    (and --on-bad); now every line about it is UNVERIFIABLE (future-head), hash null."""
    head, address = _child_at(anvil, YEAR)
    number = int(head["number"], 16)
    lines, err, _, _ = _follow(lambda: anchor_block([LiveSource(anvil.url)], block=number),
                               address, spell=flag)
    assert lines and lines[0]["block"] == number and lines[0]["hash"] == head["hash"]
    ahead = [line for line in lines if line["block"] == number + 1]
    assert ahead and all(line["verdict"] == "UNVERIFIABLE" and line["hash"] is None
                         and line["reason"] == "future-head" and not line["final"]
                         for line in ahead)
    assert "ahead of the system clock" in err
    # the line and the note name the bound as the command's flag, not the library's field
    assert all("--max-clock-drift 15 s" in line["detail"] for line in ahead)
    assert "--max-clock-drift" in err and "Clock.max_clock_drift" not in err


def test_a_child_a_little_ahead_waits_without_a_line(anvil):
    """Ahead of the clock by more than --max-clock-drift (15 s) but less than that plus the
    patience (60 s): no line at all, not even UNVERIFIABLE; written once the clock is near."""
    head, address = _child_at(anvil, 30)
    number, stamp = int(head["number"], 16), int(head["timestamp"], 16)

    def first():
        return anchor_block([LiveSource(anvil.url)], block=number)

    lines, _, _, _ = _follow(first, address, clock=Clock(at=stamp))
    assert [line["block"] for line in lines] == [number]
    lines, _, _, _ = _follow(first, address, clock=Clock(at=stamp + 20), max_blocks=2)
    assert [line["block"] for line in lines] == [number, number + 1]


def test_strict_timestamps_refuse_a_child_as_old_as_its_parent(chain):
    """--strict-timestamps (a real chain: one block a slot): a child with its parent's
    timestamp is header-mismatch, never evaluated; without it (anvil) it is followed."""
    node, _ = chain
    head = node.rpc("eth_getBlockByNumber", "latest", False)
    parent = anchor_block([LiveSource(node.url)], block=int(head["number"], 16))
    same = _forged_child(head, timestamp=int(head["timestamp"], 16))
    with pytest.raises(Unverifiable) as refused:
        by_parent_link(parent, same, Clock(strict_timestamps=True))
    assert refused.value.reason == "header-mismatch"
    # the core names the option as data; the command line words it as its flag
    assert "strict_timestamps" in refused.value.options
    assert "--strict-timestamps" in cli_detail(refused.value)
    assert by_parent_link(parent, same, Clock()).number == parent.number + 1


def test_a_lagging_nodes_latest_past_the_bound_is_stale(chain, relay, run_cli):
    """A node that stopped an hour ago (the clock an hour past its head): its `latest` is
    stale-anchor, by one node or a quorum; the same block pinned by number is judged as asked,
    its age recorded."""
    node, address = chain
    head = node.rpc("eth_getBlockByNumber", "latest", False)
    stamp, number = int(head["timestamp"], 16), int(head["number"], 16)
    hour_later = Clock(at=stamp + 3600)
    other = LiveSource(relay)  # another endpoint (a relay on its own port) of the same node
    for sources, quorum in (([LiveSource(node.url)], None), ([LiveSource(node.url), other], 2)):
        with pytest.raises(Unverifiable) as refused:
            anchor_block(sources, block="latest", quorum=quorum, clock=hour_later)
        assert refused.value.reason == "stale-anchor"
        detail = cli_detail(refused.value)  # as the command line says it
        assert "1 h 0 min old" in detail and "--max-anchor-age" in detail
    pinned = anchor_block([LiveSource(node.url)], block=number, clock=hour_later)
    assert pinned.anchor.to_json()["age_s"] == 3600
    assert pinned.anchor.to_json()["clock"] == "at"
    wide = anchor_block([LiveSource(node.url)], block="latest",
                        clock=Clock(at=stamp + 3600, max_anchor_age=7200))
    assert wide.hash == bytes.fromhex(head["hash"][2:])
    result = run_cli("proof", "--rpc", node.url, "-b", "latest", "--address", address,
                     "--slot", "0", "--at", str(stamp + 3600), "--json")
    assert result.returncode == 2 and json.loads(result.stdout)["reason"] == "stale-anchor"
    now = run_cli("proof", "--rpc", node.url, "-b", "latest", "--address", address,
                  "--slot", "0", "--json")  # the test anvil runs on the system clock
    assert now.returncode == 0, now.stdout + now.stderr
    anchor = json.loads(now.stdout)["evidence"]["anchor"]
    assert anchor["clock"] == "system" and 0 <= anchor["age_s"] < 2400


def test_with_a_quorum_a_forged_head_gets_no_line(chain, relay):
    node, address = chain
    head = node.rpc("eth_getBlockByNumber", "latest", False)

    class Liar(ForgesHeads):
        changes = {"timestamp": int(head["timestamp"], 16) + 12,
                   "receipts_root": EMPTY_TRIE_ROOT}

    liar, honest = Liar(node.url), LiveSource(relay)
    number = int(head["number"], 16)

    def confirm(block):
        return confirm_by_quorum(block, [s for s in (liar, honest) if s is not block.source], 2)

    lines, _, _, _ = _follow(lambda: anchor_block([liar, honest], block=number, quorum=2),
                             address, confirm=confirm)
    assert [line["block"] for line in lines] == [number]  # the pinned block only
    assert lines[0]["anchor"]["method"] == "quorum"
    # the chain moves on: the real next block is confirmed by both, the liar's forgery above
    # it by nobody else, so it never gets a line
    node.rpc("evm_mine")
    real = node.rpc("eth_getBlockByNumber", hex(number + 1), False)["hash"]
    lines, _, _, _ = _follow(lambda: anchor_block([liar, honest], block=number, quorum=2),
                             address, confirm=confirm)
    assert [(line["block"], line["hash"]) for line in lines][1:] == [(number + 1, real)]


def test_a_head_two_endpoints_disagree_on_is_unverifiable(chain, relay):
    node, address = chain
    node.rpc("evm_mine")
    head = node.rpc("eth_getBlockByNumber", "latest", False)
    number = int(head["number"], 16)
    parent = node.rpc("eth_getBlockByNumber", hex(number - 1), False)

    class Sibling(LiveSource):  # serves its own hash-correct version of the head
        def block_by_number(self, ref):
            if ref in ("latest", number):
                return _forged_child(parent, timestamp=int(head["timestamp"], 16) + 1)
            return super().block_by_number(ref)

    liar, honest = Sibling(node.url), LiveSource(relay)

    def confirm(block):
        return confirm_by_quorum(block, [s for s in (liar, honest) if s is not block.source], 2)

    lines, _, _, _ = _follow(lambda: anchor_block([liar], block=number - 1), address,
                             confirm=confirm)
    assert [line["block"] for line in lines if line["hash"]] == [number - 1]
    awaited = [line for line in lines if line["block"] == number]
    assert awaited and all(line["verdict"] == "UNVERIFIABLE" and line["hash"] is None
                           and line["reason"] == "anchor-disagreement" for line in awaited)


def test_every_line_carries_its_anchor_and_confirmed_heads_say_by_whom(chain, relay):
    node, address = chain
    first = int(node.rpc("eth_blockNumber"), 16)
    one, two = LiveSource(node.url), LiveSource(relay)

    def confirm(block):
        return confirm_by_quorum(block, [s for s in (one, two) if s is not block.source], 2)

    lines, _, _, _ = _follow(lambda: anchor_block([one, two], block=first, quorum=2), address,
                             confirm=confirm, max_blocks=3,
                             during=lambda: [node.rpc("evm_mine") for _ in range(2)])
    blocks = {line["block"]: line for line in lines if line["hash"]}
    assert set(blocks) == {first, first + 1, first + 2}, lines
    assert blocks[first]["anchor"]["method"] == "quorum"
    for number in (first + 1, first + 2):
        anchor = blocks[number]["anchor"]
        assert anchor["method"] == "parent-link" and anchor["root_anchor"] == "quorum"
        assert len(anchor["confirmed_by"]) == 2


class StaleLatest(LiveSource):
    """Every other `latest` is three blocks old (a load-balanced, lagging backend)."""

    calls_latest = 0

    def block_by_number(self, number):
        if number == "latest":
            self.calls_latest += 1
            head = int(super().block_by_number("latest")["number"], 16)
            if self.calls_latest % 2 == 0:
                return super().block_by_number(max(head - 3, 0))
        return super().block_by_number(number)


def test_a_stale_latest_is_not_a_reorg(chain):
    node, address = chain
    for _ in range(4):
        node.rpc("evm_mine")
    source = StaleLatest(node.url)
    start = int(node.rpc("eth_blockNumber"), 16)
    lines, err, metrics, _ = _follow(lambda: anchor_block([source], block=start), address,
                                     during=lambda: [node.rpc("evm_mine") for _ in range(3)])
    assert not [line for line in lines if line.get("event") == "reorg"], err
    assert metrics.get("reorgs_total") == 0
    numbers = [line["block"] for line in lines]
    assert numbers == sorted(set(numbers))  # each block once, in order


class SiblingLatest(LiveSource):
    """`latest` is a hash-correct sibling of the real head (same parent, a later timestamp);
    by number the node serves the real head."""

    requests = 0

    def block_by_number(self, number):
        self.requests += 1
        if number == "latest":
            head = Header.from_rpc(super().block_by_number("latest"))
            parent = super().block_by_number(head.number - 1)
            return _forged_child(parent, timestamp=head.timestamp + 7,
                                 receipts_root=EMPTY_TRIE_ROOT)
        return super().block_by_number(number)


def test_a_sibling_latest_does_not_busy_loop(chain):
    node, address = chain
    source = SiblingLatest(node.url)
    start = int(node.rpc("eth_blockNumber"), 16)
    _, _, _, follower = _follow(lambda: anchor_block([source], block=start), address,
                                seconds=1.0)
    # one poll every 0.05 s asks a couple of headers: far from the thousands of a busy loop
    assert source.requests < 120
    assert follower.tip.number == start


def test_a_node_unreachable_at_start_ends_after_the_start_timeout(chain):
    _, address = chain
    dead = LiveSource("http://127.0.0.1:9")
    lines, err, metrics, follower = _follow(lambda: anchor_block([dead], block="latest"),
                                            address, seconds=8.0, start_timeout=0.5)
    assert follower.tip is None and metrics.get("up") == 0
    assert follower.error is not None and follower.error.reason == "rpc-unreachable"
    assert lines and all(line["verdict"] == "UNVERIFIABLE" for line in lines)


def test_the_cli_exits_2_when_the_node_never_answers(run_cli, tmp_path, chain):
    _, address = chain
    config = tmp_path / "checks.toml"
    config.write_text(f'[[check]]\nname = "cap"\nrecipe = "8312/cap-conservation"\n'
                      f'address = "{address}"\n'
                      f'params = {{ shape = "cap:1000", key = "0x{"11" * 32}" }}\n')
    done = run_cli("watch", "--rpc", "http://127.0.0.1:9", "--config", str(config),
                   "--poll", "0.1", "--max-backoff", "0.2", "--start-timeout", "1", timeout=60)
    assert done.returncode == 2, done.stderr
    assert "rpc-unreachable" in done.stderr


# ---- range audits: one malformed answer does not abort the audit -------------------------


def test_a_malformed_answer_for_one_block_does_not_abort_a_range_audit(chain):
    from recompute.sources.cache import SharedSource
    from recompute.watch.auditor import Auditor

    node, address = chain
    for _ in range(5):
        node.rpc("evm_mine")
    top = int(node.rpc("eth_blockNumber"), 16)
    first, bad = top - 4, top - 2
    bad_hash = bytes.fromhex(node.rpc("eth_getBlockByNumber", hex(bad), False)["hash"][2:])

    class Garbles(LiveSource):
        def get_proof(self, address, slots, block_hash):
            if block_hash == bad_hash:
                raise Unverifiable("rpc-malformed", f"{self.label} eth_getProof: not JSON")
            return super().get_proof(address, slots, block_hash)

    source = SharedSource(Garbles(node.url))
    out, err = io.StringIO(), io.StringIO()
    auditor = Auditor(BlockEvaluator(_checks(address)), Sink(Metrics(), out, err), workers=1,
                      confirmations=0)
    summary = auditor.run(anchor_block([source], block=top), first, top)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [line["block"] for line in lines] == list(range(first, top + 1))
    verdicts = {line["block"]: (line["verdict"], line["reason"]) for line in lines}
    assert verdicts[bad] == ("UNVERIFIABLE", "rpc-malformed")
    assert all(v == ("VERIFIED-GOOD", "ok") for n, v in verdicts.items() if n != bad)
    assert summary.exit_code() == 2 and summary.blocks == top - first + 1


@pytest.mark.anvil
def test_a_resumed_anvil_continues_from_its_last_block_time(tmp_path):
    """`recompute devnet down` then `up` (recompute/devnet/lifecycle.py): anvil comes back on
    its state dump with the genesis --timestamp; continue_clock keeps time moving forward."""
    from recompute.devnet.anvil import Anvil
    from recompute.devnet.lifecycle import continue_clock

    genesis, later = 1767225600, 1767225600 + 100_000
    node = Anvil(timestamp=genesis, state_path=tmp_path / "state.json").start()
    try:
        node.rpc("evm_setNextBlockTimestamp", later)
        node.rpc("evm_mine")
    finally:
        node.stop()
    node = Anvil(timestamp=genesis, state_path=tmp_path / "state.json").start()
    try:
        continue_clock(node)
        node.rpc("evm_mine")
        node.rpc("evm_mine")
        stamps = [int(node.rpc("eth_getBlockByNumber", hex(n), False)["timestamp"], 16)
                  for n in (1, 2, 3)]
    finally:
        node.stop()
    assert stamps[0] == later and stamps[1] > later and stamps[2] >= stamps[1]


def test_a_range_audit_of_an_address_without_code_says_no_contract(chain):
    from recompute.watch.auditor import Auditor

    node, _ = chain
    for _ in range(3):
        node.rpc("evm_mine")
    top = int(node.rpc("eth_blockNumber"), 16)
    out, err = io.StringIO(), io.StringIO()
    auditor = Auditor(BlockEvaluator(_checks("0x" + "12" * 20)), Sink(Metrics(), out, err),
                      workers=1, confirmations=0)
    summary = auditor.run(anchor_block([LiveSource(node.url)], block=top), top - 2, top)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert len(lines) == 3 and {(x["verdict"], x["reason"]) for x in lines} == {
        ("UNVERIFIABLE", "no-contract")}
    assert summary.exit_code() == 2
    assert "cap: UNVERIFIABLE because no-contract ×3" in summary.table()
