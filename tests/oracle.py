"""The honest reference contracts as an oracle (docs/design.md §Verdicts follow the normative
text): random operations go to an honest contract on a fresh anvil of our own; after each one
it accepts, every recipe owning a rule of that registry runs on proven state and must agree
with the contract (derived values equal to its own views, GOOD where the rule is concerned);
each one it rejects for a rule a lying variant skips is forced into that variant, where the
owning recipe must say VERIFIED-BAD and the rule's mistaken method must miss the violation.

Used by tests/recipes/test_oracle_differential.py (a few tens of examples) and
benchmarks/bench_oracle.py (thousands of operations). Each registry is a class with ``start``
(a fresh subject, root or key for one example), ``apply(op)`` and the checks; operations are
plain tuples drawn by hypothesis (``*_OPS`` strategies).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from eth_hash.auto import keccak
from hypothesis import strategies as st
from web3.exceptions import ContractCustomError, ContractLogicError
from web3.logs import DISCARD

from recompute.core.anchor import anchor_block
from recompute.devnet.contracts import connect, load_artifact
from recompute.evaluator.job import Job, step_many
from recompute.layout import load_layout
from recompute.recipes.registry import get_recipe
from recompute.sources.live import LiveSource
from recompute.vectors.mistakes import mistakes_of

GAS = 3_000_000
ZERO = "0x" + "00" * 20


class Rejected(Exception):
    def __init__(self, error: str):
        super().__init__(error)
        self.error = error


@dataclass
class Stats:
    ops: int = 0
    accepted: int = 0
    rejected: int = 0
    forced: int = 0
    checks: int = 0
    by_error: dict[str, int] = field(default_factory=dict)  # the honest contract's refusals
    by_rule: dict[str, int] = field(default_factory=dict)  # forced: the rule that decided


class Chain:
    """A fresh anvil: deploys, impersonated senders, a clock we set for every block."""

    def __init__(self, node):
        self.node = node
        self.w3 = connect(node.url)
        self.source = LiveSource(node.url)
        self.now = self.w3.eth.get_block("latest")["timestamp"]
        self.accounts = self.w3.eth.accounts
        self._fresh = itertools.count(1)

    def deploy(self, name: str):
        artifact = load_artifact(name)
        factory = self.w3.eth.contract(abi=artifact["abi"], bytecode=artifact["bytecode"])
        self.now += 1
        self.node.rpc("evm_setNextBlockTimestamp", self.now)
        tx = factory.constructor().transact({"from": self.accounts[0]})
        receipt = self._receipt(tx, f"deploy {name}")
        return self.w3.eth.contract(address=receipt["contractAddress"], abi=artifact["abi"])

    def fresh_account(self) -> str:
        address = self.w3.to_checksum_address(f"0x{0xA11CE000 + next(self._fresh):040x}")
        self.node.rpc("anvil_impersonateAccount", address)
        self.node.rpc("anvil_setBalance", address, hex(10**20))
        return address

    def call_error(self, contract, fn, sender: str) -> str | None:
        """The custom error ``fn`` reverts with on the latest state, or None if it would pass."""
        try:
            fn.call({"from": sender, "gas": GAS})
        except ContractCustomError as err:
            data = err.data if isinstance(err.data, str) else err.args[0]
            return _error_name(contract, bytes.fromhex(data.removeprefix("0x"))[:4])
        except ContractLogicError as err:  # a revert without a custom error
            return f"revert: {err}"
        return None

    def send(self, fn, sender: str, wait: int = 0) -> dict:
        """Mine ``fn`` in its own block ``wait + 1`` seconds on; it must succeed."""
        self.now += wait + 1
        self.node.rpc("evm_setNextBlockTimestamp", self.now)
        tx = fn.transact({"from": sender, "gas": GAS})
        return self._receipt(tx, fn.fn_name)

    def _receipt(self, tx, what: str) -> dict:
        """anvil mines on send: the receipt is there at once (no 0.1 s polling)."""
        receipt = self.w3.eth.wait_for_transaction_receipt(tx, poll_latency=0.005)
        assert receipt["status"] == 1, what
        return receipt

    def mine(self, wait: int) -> int:
        self.now += wait
        self.node.rpc("evm_setNextBlockTimestamp", self.now)
        self.node.rpc("evm_mine")
        return self.w3.eth.block_number

    def try_send(self, contract, fn, sender: str, wait: int = 0) -> dict:
        """``fn`` mined if the contract accepts it, else Rejected(its error) and no block. An
        empty block ``wait`` seconds on first, so the call is judged at (about) the time the
        transaction would be mined."""
        if wait:
            self.mine(wait)
        error = self.call_error(contract, fn, sender)
        if error is not None:
            raise Rejected(error)
        return self.send(fn, sender)

    def anchored(self, number: int | None = None):
        block = self.w3.eth.get_block("latest" if number is None else number)
        return anchor_block([self.source], block_hash=bytes(block["hash"])), block["number"]

    def run(self, block, jobs: list[tuple[str, dict, str, str | None]]):
        """Run recipes (name, params, contract address, layout) at one anchored block."""
        prepared = []
        for name, params, address, layout in jobs:
            recipe = get_recipe(name) if isinstance(name, str) else name
            prepared.append(Job(recipe, recipe.parse_params(params),
                                bytes.fromhex(address[2:]), load_layout(layout or recipe.layout)))
        outcomes = step_many(block, prepared)
        for outcome in outcomes:
            assert not isinstance(outcome, Exception), outcome
        return outcomes


def _error_name(contract, selector: bytes) -> str:
    for item in contract.abi:
        if item["type"] == "error":
            signature = f"{item['name']}({','.join(i['type'] for i in item['inputs'])})"
            if keccak(signature.encode())[:4] == selector:
                return item["name"]
    return "0x" + selector.hex()


def _derived(outcome) -> dict:
    return outcome.evidence["derived"]


def _mistake(recipe: str, rule: str):
    return mistakes_of(get_recipe(recipe))[rule]  # the recipe's own and the registered ones


# ---- ERC-8312 aggregate budget: AggregateBudgetMeter / LyingAggregateBudgetMeter -------------

BUDGET_CAP, NODE_CAP, PERIOD = 100, 50, 3600
NODES = ("A", "B", "C")
BUDGET_OPS = st.one_of(
    st.tuples(st.just("draw"), st.sampled_from(NODES), st.integers(1, 45)),
    st.tuples(st.just("wait"), st.integers(0, 4000)),
)


class BudgetOracle:
    def __init__(self, chain: Chain):
        self.c = chain
        self.honest = chain.deploy("AggregateBudgetMeter")
        self.liar = chain.deploy("LyingAggregateBudgetMeter")  # owner: accounts[0]
        self.stats = Stats()
        self._salts = itertools.count(1)

    def start(self) -> None:
        c = self.c
        self.issuer, self.top = c.fresh_account(), c.fresh_account()
        self.agents = {n: c.fresh_account() for n in NODES}
        salt = keccak(f"oracle/{next(self._salts)}".encode())
        self.anchor = c.now + 1
        for meter in (self.honest, self.liar):
            c.send(meter.functions.createRoot(salt, self.top, BUDGET_CAP, PERIOD, self.anchor),
                   self.issuer)
        self.root = keccak(bytes(12) + bytes.fromhex(self.issuer[2:]) + salt)
        self.first_block = c.w3.eth.block_number
        for meter in (self.honest, self.liar):
            for n in NODES:
                c.send(meter.functions.delegate(self.root, bytes(32), _node(n), self.agents[n],
                                                NODE_CAP), self.top)
        self.diverged = False

    def apply(self, op) -> None:
        if self.diverged:
            return
        self.stats.ops += 1
        if op[0] == "wait":
            self.c.mine(op[1] + 1)
            return
        _, node, amount = op
        fn = self.honest.functions.draw(self.root, _node(node), amount)
        # judged and mined in one period: never at the second before a period boundary
        wait = 1
        while len({(self.c.now + wait + k - self.anchor) // PERIOD for k in (0, 1, 2)}) > 1:
            wait += 1
        try:
            receipt = self.c.try_send(self.honest, fn, self.agents[node], wait=wait)
        except Rejected as rejected:
            self._rejected(rejected.error, node, amount)
            return
        self.stats.accepted += 1
        self.c.send(self.liar.functions.draw(self.root, _node(node), amount), self.agents[node])
        self._check_honest(receipt["blockNumber"])

    def _period(self, number: int) -> int:
        timestamp = self.c.w3.eth.get_block(number)["timestamp"]
        return (timestamp - self.anchor) // PERIOD

    def _check_honest(self, number: int) -> None:
        block, _ = self.c.anchored(number)
        p = self._period(number)
        root = "0x" + self.root.hex()
        address = self.honest.address
        budget, cap = self.c.run(block, [
            ("8312/aggregate-budget", {"root": root, "period": str(p),
                                       "from_block": str(self.first_block)}, address, None),
            ("8312/cap-conservation", {"key": root, "shape": "aggregate-budget",
                                       "period": str(p)}, address, "meter-aggregate-budget")])
        self.stats.checks += 2
        spent = self.honest.functions.spentRoot(self.root, p).call(block_identifier=number)
        assert budget.verdict.value == cap.verdict.value == "VERIFIED-GOOD", _derived(budget)
        assert _derived(budget)["aggregate"] == _derived(budget)["spent_root"] == str(spent)
        assert _derived(cap)["aggregate"] == str(spent)
        for n in NODES:  # attribution: each node's own draws, as the meter's nodeSpent says
            own = self.honest.functions.nodeSpent(self.root, _node(n), p).call(
                block_identifier=number)
            assert int(_derived(budget)["per_node"].get("0x" + _node(n).hex(), "0")) == own

    def _rejected(self, error: str, node: str, amount: int) -> None:
        self.stats.rejected += 1
        self.stats.by_error[error] = self.stats.by_error.get(error, 0) + 1
        assert error in ("RootCapExceeded", "NodeCapExceeded"), error
        if error != "RootCapExceeded":
            return  # a node's own attenuation: no rule of the inventory owns it
        # forced into the variant that skips the root-cap check (the node cap passed)
        receipt = self.c.send(self.liar.functions.overdraw(self.root, _node(node), amount),
                              self.c.accounts[0])
        self.stats.forced += 1
        self.diverged = True
        number = receipt["blockNumber"]
        block, _ = self.c.anchored(number)
        params = {"root": "0x" + self.root.hex(), "period": str(self._period(number)),
                  "from_block": str(self.first_block)}
        right, wrong = self.c.run(block, [
            ("8312/aggregate-budget", params, self.liar.address, "meter-aggregate-budget-lying"),
            (_mistake("8312/aggregate-budget", "8312.aggregate-budget.root-sum"), params,
             self.liar.address, "meter-aggregate-budget-lying")])
        self.stats.checks += 2
        assert right.verdict.value == "VERIFIED-BAD" and _derived(right)["within_cap"] is False
        assert _derived(wrong)["within_cap"] is True  # the per-edge method misses it
        rule = "8312.aggregate-budget.root-sum"
        self.stats.by_rule[rule] = self.stats.by_rule.get(rule, 0) + 1


def _node(name: str) -> bytes:
    return keccak(f"oracle/node-{name}".encode())


# ---- ERC-8312 cap conservation: ReservedConfirmedMeter / LyingReservedConfirmedMeter -------

KEY_CAP = 1000
RC_OPS = st.one_of(
    st.tuples(st.just("reserve"), st.integers(1, 600)),
    st.tuples(st.just("confirm"), st.integers(0, 7)),
    st.tuples(st.just("cancel"), st.integers(0, 7)),
)


class ReservedConfirmedOracle:
    def __init__(self, chain: Chain):
        self.c = chain
        self.honest = chain.deploy("ReservedConfirmedMeter")
        self.liar = chain.deploy("LyingReservedConfirmedMeter")
        self.stats = Stats()
        self._keys = itertools.count(1)

    def start(self) -> None:
        self.principal = self.c.fresh_account()
        self.key = keccak(f"oracle/key-{next(self._keys)}".encode())
        for meter in (self.honest, self.liar):
            self.c.send(meter.functions.openKey(self.key, KEY_CAP), self.principal)
        self.open: list[tuple[bytes, bytes]] = []  # (honest id, the lying meter's id)
        self.diverged = False

    def apply(self, op) -> None:
        if self.diverged:
            return
        self.stats.ops += 1
        kind = op[0]
        if kind == "reserve":
            fn = self.honest.functions.reserve(self.key, op[1])
        elif not self.open:
            return
        else:
            rid, liar_rid = self.open[op[1] % len(self.open)]
            fn = getattr(self.honest.functions, kind)(rid)
        try:
            receipt = self.c.try_send(self.honest, fn, self.principal)
        except Rejected as rejected:
            self._rejected(rejected.error, op)
            return
        self.stats.accepted += 1
        liar_fn = (self.liar.functions.reserve(self.key, op[1]) if kind == "reserve"
                   else getattr(self.liar.functions, kind)(liar_rid))
        liar_receipt = self.c.send(liar_fn, self.principal)
        if kind == "reserve":
            (event,) = self.honest.events.Reserved().process_receipt(receipt, errors=DISCARD)
            (liar_event,) = self.liar.events.Reserved().process_receipt(liar_receipt,
                                                                          errors=DISCARD)
            self.open.append((event["args"]["reservationId"],
                              liar_event["args"]["reservationId"]))
        else:
            self.open.remove((rid, liar_rid))
        self._check_honest(receipt["blockNumber"])

    def _check_honest(self, number: int) -> None:
        block, _ = self.c.anchored(number)
        key = "0x" + self.key.hex()
        (out,) = self.c.run(block, [("8312/cap-conservation",
                                     {"key": key, "shape": "reserved-confirmed"},
                                     self.honest.address, None)])
        self.stats.checks += 1
        f = self.honest.functions
        reserved = f.reserved(self.key).call(block_identifier=number)
        confirmed = f.confirmed(self.key).call(block_identifier=number)
        remaining = f.remaining(self.key).call(block_identifier=number)
        assert out.verdict.value == "VERIFIED-GOOD"
        assert _derived(out)["aggregate"] == str(reserved + confirmed)
        assert _derived(out)["headroom"] == str(remaining)

    def _rejected(self, error: str, op) -> None:
        self.stats.rejected += 1
        self.stats.by_error[error] = self.stats.by_error.get(error, 0) + 1
        assert error == "CapExceeded" and op[0] == "reserve", error
        receipt = self.c.send(self.liar.functions.reserveUnchecked(self.key, op[1]),
                              self.principal)
        self.stats.forced += 1
        self.diverged = True
        block, _ = self.c.anchored(receipt["blockNumber"])
        params = {"key": "0x" + self.key.hex(), "shape": "reserved-confirmed"}
        right, wrong = self.c.run(block, [
            ("8312/cap-conservation", params, self.liar.address, None),
            (_mistake("8312/cap-conservation", "8312.cap.one-above-named-shapes"), params,
             self.liar.address, None)])
        self.stats.checks += 2
        assert right.verdict.value == "VERIFIED-BAD" and _derived(right)["within_cap"] is False
        assert _derived(wrong)["within_cap"] is True  # the clamped headroom misses it
        rule = "8312.cap.one-above-named-shapes"
        self.stats.by_rule[rule] = self.stats.by_rule.get(rule, 0) + 1


# ---- AMM: AgentMeditationRegistry / LyingMeditationRegistry ---------------------------------

TAG_STATE_ROOT = keccak(b"AgentMeditationMechanism/StateRoot/v1")
MAINTENANCE = ("NOT_ENROLLED", "UNSUPPORTED", "UNSCHEDULED", "FRESH", "DUE", "OVERDUE")
SIGNAL = ("NOT_ENROLLED", "NOT_TRACKED", "PRESENT", "SILENT")
RIGHT_DEMAND = 2

_policies = st.builds(
    lambda supported, required, intervals, pulse, due: (supported, supported & required,
                                                         intervals, pulse, due),
    st.integers(1, 15), st.integers(0, 15),
    st.lists(st.sampled_from([600, 3600, 86400, 604800]), min_size=4, max_size=4),
    st.sampled_from([0, 1800, 86400]), st.sampled_from([0, 300, 3600]))

AMM_OPS = st.one_of(
    st.tuples(st.just("report"), st.integers(1, 15), st.integers(0, 15), st.integers(0, 15),
              st.sampled_from(["none", "none", "valid", "future", "current", "wrong-root"]),
              st.sampled_from(["ok", "ok", "ok", "stale", "early"]), st.integers(0, 3),
              st.booleans()),
    st.tuples(st.just("pulse")),
    st.tuples(st.just("wait"), st.sampled_from([60, 3000, 40000, 90000, 700000])),
    st.tuples(st.just("demand"), st.integers(1, 15), st.integers(100, 200000)),
    st.tuples(st.just("withdraw"), st.integers(1, 15)),
    st.tuples(st.just("policy"), _policies),
)


def _policy_tuple(p) -> tuple:
    supported, required, intervals, pulse, due = p
    return (bytes(32), "", supported, required, 0x0F, 0, due, pulse, list(intervals))


def _root(commitments) -> bytes:
    return keccak(TAG_STATE_ROOT + b"".join(commitments))


class AmmOracle:
    def __init__(self, chain: Chain):
        self.c = chain
        self.honest = chain.deploy("AgentMeditationRegistry")
        self.liar = chain.deploy("LyingMeditationRegistry")
        self.controller = chain.accounts[2]
        self.stats = Stats()
        self._docs = itertools.count(1)

    def _commitment(self) -> bytes:
        return keccak(f"oracle/layer-doc-{next(self._docs)}".encode())

    def start(self, policy=(15, 15, [86400, 604800, 86400, 604800], 86400, 3600)) -> None:
        self.subject = self.c.fresh_account()
        baseline = [self._commitment() for _ in range(4)]
        for reg in (self.honest, self.liar):
            self.c.send(reg.functions.enroll(baseline, _policy_tuple(policy), self.controller,
                                             RIGHT_DEMAND), self.subject)
        self.versions = {1: baseline}
        self.version = 1
        self.policies = {1: (policy, self.c.now)}  # version -> (policy, effective from)
        self.diverged = False
        self._check_honest(self.c.w3.eth.block_number)

    def apply(self, op) -> None:
        if self.diverged:
            return
        self.stats.ops += 1
        kind, f = op[0], self.honest.functions
        sender, report = self.subject, None
        if kind == "wait":
            self._check_honest(self.c.mine(op[1]))
            return
        if kind == "pulse":
            fn = f.pulse(self.subject, self.c.now + 1000)
        elif kind == "demand":
            # dueBy after both registries' blocks (the honest one 101 s on, the lying one 102)
            fn, sender = f.demand(self.subject, op[1], self.c.now + 103 + op[2]), self.controller
        elif kind == "withdraw":
            fn, sender = f.withdrawDemand(self.subject, op[1]), self.controller
        elif kind == "policy":
            fn = f.setPolicy(self.subject, _policy_tuple(op[1]))
        else:
            report = self._report(op)
            fn = f.report(self.subject, report)
        try:
            receipt = self.c.try_send(self.honest, fn, sender, wait=100)
        except Rejected as rejected:
            self._rejected(rejected.error, report)
            return
        self.stats.accepted += 1
        liar_fn = getattr(self.liar.functions, fn.fn_name)(*fn.args)
        self.c.send(liar_fn, sender)
        if kind == "policy":
            self.policies[len(self.policies) + 1] = (op[1], self.c.now)
        if report is not None:
            self._accepted_report(report, receipt)
        self._check_honest(receipt["blockNumber"])

    def _report(self, op) -> tuple:
        _, mask, completed_bits, change_bits, restore, timing, trigger, outcome_random = op
        now = self.c.now + 100  # the report's block (try_send waits 100 s)
        started, ended = now - 50, now - 10
        if timing == "stale":
            started, ended = now - 250, now - 200  # at or before the previous completions
        elif timing == "early":
            ended = started - 1  # reportedEndedAt before reportedStartedAt
        # the policy version in effect at reportedStartedAt (AMM §Cycle records)
        version = max((v for v, (_, since) in self.policies.items() if since <= started),
                      default=1)  # none yet: version 1, which the registry then refuses
        supported = self.policies[version][0][0]
        mask = (mask & supported) or supported
        completed = completed_bits & mask
        current = self.versions[self.version]
        post = [self._commitment() if (mask & change_bits) >> i & 1 else current[i]
                for i in range(4)]
        restores = 0
        if restore == "valid" and self.version > 1:
            restores = 1 + (change_bits % (self.version - 1))
            post, mask = list(self.versions[restores]), 0x0F
            completed = completed_bits & mask
        elif restore == "future":
            restores = self.version + 1 + trigger
        elif restore == "current":
            restores = self.version
        elif restore == "wrong-root" and self.version > 1:
            restores = 1 + (change_bits % (self.version - 1))
            post[0] = self._commitment()
            mask |= 1
        if outcome_random:
            outcome = trigger
        else:
            outcome = 0 if completed == mask else 3 if completed == 0 else 1
        return (self.version, _root(current), post, mask, completed, 0, outcome, trigger,
                version, started, ended, 0, restores, bytes(32), "")

    def _accepted_report(self, report: tuple, receipt: dict) -> None:
        (event,) = self.honest.events.CycleRecorded().process_receipt(receipt, errors=DISCARD)
        new = event["args"]["newVersion"]
        if new != self.version:
            self.version = new
            self.versions[new] = list(report[2])
        if report[12] == 0:
            return
        block, number = self.c.anchored(receipt["blockNumber"])
        (out,) = self.c.run(block, [("amm/restore-claim", {
            "subject": self.subject.lower(), "block": str(number)}, self.honest.address, None)])
        self.stats.checks += 1
        assert out.verdict.value == "VERIFIED-GOOD", _derived(out)  # accepted: the claim holds
        assert _derived(out)["version_advanced"] is (new == report[0] + 1)

    def _check_honest(self, number: int) -> None:
        block, _ = self.c.anchored(number)
        s, address = self.subject.lower(), self.honest.address
        jobs = [("amm/layer-status", {"subject": s, "layer": str(i)}, address, None)
                for i in range(4)]
        jobs += [("amm/signal-status", {"subject": s}, address, None),
                 ("amm/state-root", {"subject": s}, address, None)]
        *layers, signal, root = self.c.run(block, jobs)
        self.stats.checks += len(jobs)
        f = self.honest.functions
        for i, out in enumerate(layers):
            status, deadline, never = f.layerStatus(self.subject, i).call(block_identifier=number)
            d = _derived(out)
            assert (d["status"], d["deadline"], d["never_completed"]) == (
                MAINTENANCE[status], str(deadline), never), (i, d)
            assert (out.verdict.value == "VERIFIED-GOOD") == (
                MAINTENANCE[status] in ("FRESH", "DUE", "UNSCHEDULED"))
        status, last, silent = f.signalStatus(self.subject).call(block_identifier=number)
        d = _derived(signal)
        assert (d["status"], d["last_signal_at"], d["silent_since"]) == (
            SIGNAL[status], str(last), str(silent)), d
        assert root.verdict.value == "VERIFIED-GOOD"

    def _rejected(self, error: str, report: tuple | None) -> None:
        self.stats.rejected += 1
        self.stats.by_error[error] = self.stats.by_error.get(error, 0) + 1
        if error != "RestoreClaimInvalid":
            return  # a rule no recipe re-derives (the registry's own acceptance checks)
        assert report is not None
        # forced into the variant that skips exactly the restore-claim check
        receipt = self.c.send(self.liar.functions.report(self.subject, report), self.subject)
        self.stats.forced += 1
        self.diverged = True
        block, number = self.c.anchored(receipt["blockNumber"])
        params = {"subject": self.subject.lower(), "block": str(number)}
        rv, base = report[12], report[0]
        if rv >= base:
            rule = ("amm.restore.equal-base-version" if rv == base
                    else "amm.restore.below-current-version")
        else:
            rule = "amm.restore.root-matches"
        right, wrong = self.c.run(block, [
            ("amm/restore-claim", params, self.liar.address, "amm-registry-lying"),
            (_mistake("amm/restore-claim", rule), params, self.liar.address,
             "amm-registry-lying")])
        self.stats.checks += 2
        d = _derived(right)
        assert right.verdict.value == "VERIFIED-BAD" and d["restore_claim_valid"] is False, d
        roots_hold = d["root_at_restored"] == d["post_root"] == d["root_at_new"]
        if rule == "amm.restore.root-matches" or roots_hold:
            # the rule's own check is the only one that fails: its mistaken method misses it
            assert _derived(wrong)["restore_claim_valid"] is True, (rule, _derived(wrong))
        self.stats.by_rule[rule] = self.stats.by_rule.get(rule, 0) + 1


# ---- ERC-8447: SwarmRegistry -----------------------------------------------------------------

SWARM_SEATS = (3, 4, 5, 6, 7)  # anvil accounts that apply, join and leave
SWARM_OPS = st.one_of(
    st.tuples(st.just("apply"), st.sampled_from(SWARM_SEATS), st.sampled_from(["worker",
                                                                               "coordinator"])),
    st.tuples(st.just("admit"), st.sampled_from(SWARM_SEATS), st.sampled_from(["worker",
                                                                               "coordinator"])),
    st.tuples(st.just("accept"), st.sampled_from(SWARM_SEATS)),
    st.tuples(st.just("leave"), st.sampled_from(SWARM_SEATS)),
    st.tuples(st.just("activate")),
    st.tuples(st.just("amend"), st.booleans()),
)


class SwarmOracle:
    """create / join (both sides) / leave / revise (amend) on the honest SwarmRegistry: after
    each accepted call, sai/revision is consistent (GOOD), sai/roster's roster_met is the
    registry's rosterMet, sai/member's status and exit reason are its memberStatus. Refusals
    are counted: no rule of the inventory owns them, so none is forced."""

    def __init__(self, chain: Chain):
        from recompute.devnet.driver import Driver
        from recompute.devnet.history_swarm import SwarmHistory

        self.c = chain
        self.driver = Driver(chain.w3, start_timestamp=chain.now)
        self.h = SwarmHistory(self.driver)
        self.h.deploy()
        chain.now = self.driver.now
        self.stats = Stats()
        self._names = itertools.count(1)

    def start(self) -> None:
        from recompute.devnet.history_swarm import CHARTER, GATED, RECRUIT, _phase, _role

        self.driver.now = self.c.now
        self.name = f"oracle-{next(self._names)}"
        self.swarm = self.h.form(
            self.name, self.h.honest, [_role("worker", 1, 3), _role("coordinator", 1, 1)],
            [_phase("work", "shared", "partitioned", "leader", GATED, RECRUIT)],
            min_members=2, max_members=4, amend_by_initiator=True)
        self.c.now = self.driver.now
        self.formed = self.c.w3.eth.block_number
        self.charter, self.amendments = CHARTER[1], 0
        self._check(self.formed)

    def apply(self, op) -> None:
        from recompute.devnet.history_swarm import ROLE_IDS, kid

        self.stats.ops += 1
        reg, a = self.h.honest, self.c.accounts
        f, kind = reg.functions, op[0]
        if kind == "apply":
            fn, sender = f.applyToJoin(self.swarm, ROLE_IDS[op[2]], self.charter), a[op[1]]
        elif kind == "admit":
            fn, sender = f.admit(self.swarm, a[op[1]], ROLE_IDS[op[2]]), self.h.steward
        elif kind == "accept":
            fn, sender = f.acceptCharter(self.swarm, self.charter), a[op[1]]
        elif kind == "leave":
            fn, sender = f.leave(self.swarm), a[op[1]]
        elif kind == "activate":
            fn, sender = f.activate(self.swarm), a[9]
        else:
            self.amendments += 1
            charter = kid(f"{self.name} charter v{self.amendments + 1}")
            fn = f.amend(self.swarm, charter, "", kid(f"{self.name} objective"), bytes(32),
                         op[1])
            sender = self.h.initiator
        try:
            receipt = self.c.try_send(reg, fn, sender, wait=30)
        except Rejected as rejected:
            self.stats.rejected += 1
            self.stats.by_error[rejected.error] = self.stats.by_error.get(rejected.error, 0) + 1
            return
        self.stats.accepted += 1
        if kind == "amend":
            self.charter = fn.args[1]
        self._check(receipt["blockNumber"])

    def _check(self, number: int) -> None:
        block, _ = self.c.anchored(number)
        reg, a = self.h.honest, self.c.accounts
        swarm = "0x" + self.swarm.hex()
        jobs = [("sai/revision", {"swarm": swarm, "from_block": str(self.formed)},
                 reg.address, None),
                ("sai/roster", {"swarm": swarm, "from_block": str(self.formed)}, reg.address,
                 None)]
        jobs += [("sai/member", {"swarm": swarm, "account": a[i].lower()}, reg.address, None)
                 for i in SWARM_SEATS]
        revision, roster, *members = self.c.run(block, jobs)
        self.stats.checks += len(jobs)
        assert revision.verdict.value == "VERIFIED-GOOD", _derived(revision)
        met = reg.functions.rosterMet(self.swarm).call(block_identifier=number)
        assert _derived(roster)["roster_met"] is met, _derived(roster)
        assert (roster.verdict.value == "VERIFIED-GOOD") is met
        for i, out in zip(SWARM_SEATS, members, strict=True):
            status, reason = reg.functions.memberStatus(self.swarm, a[i]).call(
                block_identifier=number)
            d = _derived(out)
            assert (d["status"], d["exit_reason"]) == (_SEAT[status], _EXIT[reason]), (i, d)


def _enum(name: str) -> tuple[str, ...]:
    from recompute.recipes import sai

    return getattr(sai, name)


_SEAT, _EXIT = _enum("MEMBER_STATUS"), _enum("EXIT_REASON")


# name -> (oracle class, operation strategy): what the test and the benchmark drive
REGISTRIES = {"budget": (BudgetOracle, BUDGET_OPS), "rc": (ReservedConfirmedOracle, RC_OPS),
              "amm": (AmmOracle, AMM_OPS), "swarm": (SwarmOracle, SWARM_OPS)}
