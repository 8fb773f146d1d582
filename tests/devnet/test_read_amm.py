"""Proven reads of the AMM registries at every named ``amm.*`` moment.

At each moment's block (anchored by its hash) recompute proves, for every subject of the
devnet's AMM history, the head, the four checkpoints, the root of every state version
(``rootAt``), the governing policy, the floor and the demands, decoded through the bundled
``amm-registry`` / ``amm-registry-lying`` layouts, and compares them with the registry's own
views at that block. From the proven values the test re-derives ``layerStatus`` and
``signalStatus`` as AMM §Status derivation words them: the honest registry agrees everywhere,
the lying registry's storage reads the same way while its status views contradict the
derivation.
"""

from __future__ import annotations

import pytest
from web3 import Web3

from recompute.core.anchor import anchor_block
from recompute.core.prover import prove_account
from recompute.devnet.contracts import load_artifact
from recompute.layout import load_layout, read_all
from recompute.sources.live import LiveSource

LAYOUTS = {"AgentMeditationRegistry": "amm-registry",
           "LyingMeditationRegistry": "amm-registry-lying"}
# AMM §Interface enums
NOT_ENROLLED, UNSUPPORTED, UNSCHEDULED, FRESH, DUE, OVERDUE = range(6)
S_NOT_ENROLLED, NOT_TRACKED, PRESENT, SILENT = range(4)


def _min_nonzero(a: int, b: int) -> int:
    return b if a == 0 else a if b == 0 else min(a, b)


def derive_layer(head, checkpoint, policy, floor, demand, layer: int, now: int):
    """AMM §Status derivation (layer status), with AMM §Policy and floor (effective
    requirements) and AMM §Demand (an outstanding demand lowers the deadline)."""
    if not head["enrolled"]:
        return [NOT_ENROLLED, 0, False]
    never = checkpoint["lastCompletedAt"] == 0
    required = policy["requiredLayers"] | floor["requiredLayers"]
    if not required >> layer & 1:
        supported = policy["supportedLayers"] >> layer & 1
        return [UNSCHEDULED if supported else UNSUPPORTED, 0, never]
    interval = _min_nonzero(
        policy["maxInterval"][layer] if policy["requiredLayers"] >> layer & 1 else 0,
        floor["maxInterval"][layer] if floor["requiredLayers"] >> layer & 1 else 0)
    anchor = head["enrolledAt"] if never else checkpoint["lastCompletedAt"]
    deadline = anchor + interval
    if demand["demandedAt"] != 0 and demand["dueBy"] < deadline:
        deadline = demand["dueBy"]
    if now >= deadline:
        return [OVERDUE, deadline, never]
    if now + policy["dueWindow"] >= deadline:
        return [DUE, deadline, never]
    return [FRESH, deadline, never]


def derive_signal(head, policy, floor, now: int):
    """AMM §Status derivation (signal status): SILENT when clock() exceeds lastSignalAt +
    pulseInterval, with the timepoint it became silent."""
    if not head["enrolled"]:
        return [S_NOT_ENROLLED, 0, 0]
    interval = _min_nonzero(policy["pulseInterval"], floor["pulseInterval"])
    last = head["lastSignalAt"]
    if interval == 0:
        return [NOT_TRACKED, last, 0]
    if now > last + interval:
        return [SILENT, last, last + interval]
    return [PRESENT, last, 0]


def normalise(value, abi_output: dict):
    """A view's decoded value in the reader's representation: structs as dicts keyed by
    member name, arrays as lists, addresses lowercase."""
    kind = abi_output["type"]
    if kind.startswith("tuple"):
        if kind.endswith("]"):
            inner = {**abi_output, "type": kind[: kind.rindex("[")]}
            return [normalise(v, inner) for v in value]
        return {c["name"]: normalise(v, c)
                for c, v in zip(abi_output["components"], value, strict=True)}
    if kind.endswith("]"):
        return [normalise(v, {"type": kind[: kind.rindex("[")]}) for v in value]
    if kind == "address":
        return value.lower()
    return value


class Moment:
    """One registry's proven storage and views for the devnet's subjects at one moment."""

    def __init__(self, w3: Web3, url: str, moment: dict, registry: str, address: str,
                 subjects: dict):
        self.block = anchor_block([LiveSource(url)], block_hash=bytes.fromhex(moment["hash"][2:]))
        assert self.block.number == moment["number"]
        self.number = moment["number"]
        self.now = self.block.timestamp
        self.contract = w3.eth.contract(address=address,
                                        abi=load_artifact(registry)["abi"])
        layout = load_layout(LAYOUTS[registry])
        account = bytes.fromhex(address[2:])

        def prove(slots):
            return dict(prove_account(self.block, account, sorted(slots)).storage)

        self.subjects = {name: s["address"] for name, s in subjects.items()}
        keys = {name: a.lower() for name, a in self.subjects.items()}
        heads = read_all(layout, [f"heads[{k}]" for k in keys.values()], prove)
        self.heads = {name: r.value for name, r in zip(keys, heads, strict=True)}
        paths, where = [], []
        for name, k in keys.items():
            head = self.heads[name]
            wanted = {"checkpoints": f"checkpoints[{k}]", "floor": f"floors[{k}]",
                      "demands": f"demands[{k}]",
                      "policy": f"policies[{k}][{head['policyVersion']}]"}
            for v in range(1, head["stateVersion"] + 2):  # every version, and one past it
                wanted[("root", v)] = f"stateRoots[{k}][{v}]"
            for what, path in wanted.items():
                where.append((name, what))
                paths.append(path)
        self.proven = {name: {} for name in keys}
        for (name, what), result in zip(where, read_all(layout, paths, prove), strict=True):
            self.proven[name][what] = result.value

    def view(self, fn_name: str, *args):
        fn = getattr(self.contract.functions, fn_name)(*args)
        value = fn.call(block_identifier=self.number)
        outputs = fn.abi["outputs"]
        if len(outputs) == 1:
            return normalise(value, outputs[0])
        return [normalise(v, o) for v, o in zip(value, outputs, strict=True)]

    def derived(self, name: str):
        """[layerStatus for layers 0..3, signalStatus] re-derived from proven storage."""
        head, p = self.heads[name], self.proven[name]
        layers = [derive_layer(head, p["checkpoints"][i], p["policy"], p["floor"],
                               p["demands"][i], i, self.now) for i in range(4)]
        return layers, derive_signal(head, p["policy"], p["floor"], self.now)

    def claimed(self, name: str):
        """The registry's own [layerStatus 0..3, signalStatus] at this block."""
        subject = self.subjects[name]
        return ([self.view("layerStatus", subject, i) for i in range(4)],
                self.view("signalStatus", subject))


def _amm_moments(manifest) -> list[str]:
    return [k for k in manifest["moments"] if k.startswith("amm.")]


@pytest.fixture(scope="module")
def proven(devnet):
    """{(label, registry): Moment} for every amm.* moment and both registries."""
    node, manifest = devnet
    w3 = Web3(Web3.HTTPProvider(node.url))
    out = {}
    for registry in LAYOUTS:
        subjects = {n: s for n, s in manifest["amm"]["subjects"].items()
                    if s["registry"] == registry}
        for label in _amm_moments(manifest):
            out[(label, registry)] = Moment(w3, node.url, manifest["moments"][label], registry,
                                            manifest["contracts"][registry], subjects)
    return out


@pytest.fixture(scope="module")
def labels(devnet):
    return _amm_moments(devnet[1])


def test_every_amm_moment_is_read(labels):
    assert len(labels) == 22 + 9  # the history, then extend()'s rule-inventory moments
    assert {"amm.enrolled", "amm.after-cycle-1", "amm.overdue", "amm.rollback"} <= set(labels)


@pytest.mark.parametrize("registry", list(LAYOUTS))
def test_proven_reads_equal_the_registry_views(proven, labels, registry):
    for label in labels:
        m = proven[(label, registry)]
        for name, subject in m.subjects.items():
            p = m.proven[name]
            where = f"{label} {name}"
            assert m.heads[name] == m.view("headOf", subject), where
            assert p["checkpoints"] == [m.view("checkpointOf", subject, i) for i in range(4)], \
                where
            versions = [v for (kind, v) in (k for k in p if isinstance(k, tuple))
                        if kind == "root"]
            assert versions == list(range(1, m.heads[name]["stateVersion"] + 2)), where
            for v in versions:
                assert p[("root", v)] == m.view("rootAt", subject, v), (where, v)
            assert p[("root", versions[-1])] == b"\x00" * 32  # no version past the head
            assert p["policy"] == m.view("policyOf", subject, m.heads[name]["policyVersion"]), \
                where
            assert p["floor"] == m.view("floorOf", subject), where
            assert p["demands"] == [m.view("demandOf", subject, i) for i in range(4)], where


def test_worked_example_roots_are_proven(proven):
    """AMM §Test Cases: rootAt(1) is the pre root, rootAt(2) the post root."""
    m = proven[("amm.after-cycle-1", "AgentMeditationRegistry")]
    pre = bytes.fromhex("090e63d66e6cdb08331fece350bd0320551287d53d6644d5af158b04d94d149f")
    post = bytes.fromhex("9918ebff7f3bc97ca08580033da3aa99b27871d8d57b2b8c9845221fa3dec3de")
    p = m.proven["example"]
    assert (p[("root", 1)], p[("root", 2)], m.heads["example"]["root"]) == (pre, post, post)
    assert [c["lastCompletedAt"] for c in p["checkpoints"]] == [1762654500] * 4
    assert [c["lastChangedVersion"] for c in p["checkpoints"]] == [2, 2, 2, 1]


def test_honest_status_views_equal_the_derivation(proven, labels):
    statuses = set()
    for label in labels:
        m = proven[(label, "AgentMeditationRegistry")]
        for name in m.subjects:
            layers, signal = m.derived(name)
            assert (layers, signal) == m.claimed(name), f"{label} {name}"
            statuses.update(s for s, _, _ in layers)
            statuses.add(("signal", signal[0]))
    # the history exercises every status the derivation can give an enrolled subject
    assert statuses >= {UNSCHEDULED, FRESH, DUE, OVERDUE, ("signal", PRESENT),
                        ("signal", SILENT)}


def test_lying_status_views_contradict_the_derivation(proven, labels):
    lies = set()
    for label in labels:
        m = proven[(label, "LyingMeditationRegistry")]
        layers, signal = m.derived("lying-example")
        claimed_layers, claimed_signal = m.claimed("lying-example")
        for i in range(4):
            # deadline and neverCompleted are honest; only the status may lie
            assert claimed_layers[i][1:] == layers[i][1:], (label, i)
            assert claimed_layers[i][0] == FRESH
            if layers[i][0] != FRESH:
                lies.add((label, f"layer{i}", layers[i][0]))
        assert claimed_signal[:2] == [PRESENT, signal[1]]
        if signal[0] != PRESENT:
            lies.add((label, "signal", signal[0]))
    assert ("amm.overdue", "signal", SILENT) in lies
    assert ("amm.interval-elapsed", "layer0", OVERDUE) in lies
    # before the example's signal window closes, the liar's answers happen to be true
    assert not any(label in ("amm.enrolled", "amm.after-cycle-1") for label, _, _ in lies)


def test_false_restore_is_visible_in_proven_storage(proven):
    """The liar registered state version 3 claiming to restore version 1; proven rootAt
    shows the claim false (AMM §Cycle records, rule "Restore claim")."""
    m = proven[("amm.false-restore", "LyingMeditationRegistry")]
    p = m.proven["lying-example"]
    assert m.heads["lying-example"]["stateVersion"] == 3
    assert p[("root", 3)] != p[("root", 1)]
    h = proven[("amm.rollback", "AgentMeditationRegistry")].proven["example"]
    assert h[("root", 3)] == h[("root", 1)]  # the honest rollback really restores version 1
