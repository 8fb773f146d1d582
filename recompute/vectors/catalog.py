"""The vectors shipped in ``vectors/``, and how each is (re)made.

``make vectors`` rebuilds every file from its source (the bundled geth fixtures, a fresh
devnet, the seeds' numbers) and rewrites ``vectors/suite.json``; a test rebuilds them and
compares bytes, so the committed vectors are exactly what capture gives today.

Expected outputs of the pure vectors are the seeds' own numbers, typed in here from the seed
text (AMM §Test Cases; ERC-8447 §16), never computed by the code under test.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recompute.data import FIXTURE_CHAIN, PACKS, VECTORS
from recompute.devnet.anvil import Anvil
from recompute.devnet.build import DEVNET_GENESIS_TIMESTAMP, build
from recompute.disk.whole_file import write_whole
from recompute.recipes.erc8447_interfaces import INTERFACES
from recompute.sources.fixture_node import FixtureNode
from recompute.vectors import SUITE_PROFILE, capture_proof, capture_step, dumps, sha256_file

Manifest = dict[str, Any]  # the devnet's manifest (recompute devnet up)
FromManifest = Callable[[Manifest], Any]  # a parameter read from it

GETH_HEAD = bytes.fromhex("d226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7")
GETH_CONTRACT = "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df"


def _pure(name: str, description: str, function: str, inputs: dict[str, Any],
          output: Any) -> dict[str, Any]:
    return {"format": "recompute-vector/1", "kind": "pure", "name": name,
            "description": description, "function": function, "inputs": inputs,
            "headers": {}, "proofs": [], "receipts": {},  # the same format, no chain
            "expected": {"verdict": "VERIFIED-GOOD", "reason": "ok", "output": output}}


AMM_ERC165_SIGNATURES = [  # AMM §Interface: the 23 functions of IAgentMeditation
    "enroll(bytes32[4],(bytes32,string,uint8,uint8,uint8,uint8,uint48,uint48,uint48[4]),address,"
    "uint8)",
    "setOperator(address,uint8)", "revokeOperator(address,address)",
    "setController(address,address,uint8)",
    "setPolicy(address,(bytes32,string,uint8,uint8,uint8,uint8,uint48,uint48,uint48[4]))",
    "setFloor(address,(uint8,uint48,uint48[4]))", "demand(address,uint8,uint48)",
    "withdrawDemand(address,uint8)",
    "report(address,(uint64,bytes32,bytes32[4],uint8,uint8,uint16,uint8,uint8,uint32,uint48,"
    "uint48,uint48,uint64,bytes32,string))",
    "pulse(address,uint48)", "headOf(address)", "checkpointOf(address,uint8)",
    "rootAt(address,uint64)", "policyOf(address,uint32)", "policyEffectiveFrom(address,uint32)",
    "floorOf(address)", "demandOf(address,uint8)", "operatorPermissions(address,address)",
    "requirementsOf(address)", "layerStatus(address,uint8)", "signalStatus(address)",
    "computeRoot(bytes32[4])", "computeLayerCommitment(uint8,bytes32,bytes32,bytes32)",
]


def pure_vectors() -> list[dict[str, Any]]:
    out = [
        _pure("amm-tag-layer-commitment", "AMM §Test Cases: TAG_LAYER_COMMITMENT",
              "keccak256-text", {"text": "AgentMeditationMechanism/LayerCommitment/v1"},
              "0xc76b0a7a69207b3cf002d75e6493bc9fe99e8d75b5096ead1276bc4339b69d85"),
        _pure("amm-tag-state-root", "AMM §Test Cases: TAG_STATE_ROOT", "keccak256-text",
              {"text": "AgentMeditationMechanism/StateRoot/v1"},
              "0xe2251470d039826c2565c6e003924bb890e07cd981b370528c245e47f1c3e7c6"),
        _pure("amm-jcs-row-1", "AMM §Test Cases, Canonicalization row 1", "amm.jcs",
              {"document": {"b": 1, "a": [True, None, "x"], "c": {"z": 1.5, "y": "é"}}},
              {"canonical": '{"a":[true,null,"x"],"b":1,"c":{"y":"é","z":1.5}}',
               "keccak256": "0xa5bf818c53f5a4b41e090fb63de6621bd9efe8da3a89e87bc41e7fcd004f9031"}),
        _pure("amm-jcs-row-2", "AMM §Test Cases, Canonicalization row 2", "amm.jcs",
              {"document": {"€": 1, "A": 2, "a": 3, "": 4}},
              {"canonical": '{"":4,"A":2,"a":3,"€":1}',
               "keccak256": "0x22816a6b64184a15ee2d60a54c0f519ec38dbf7310593294a545467c66c5ea77"}),
        _pure("amm-jcs-row-3", "AMM §Test Cases, Canonicalization row 3", "amm.jcs",
              {"document": {"n": 1e21, "m": 0.000001, "k": -0.0,
                            "s": 'line\nbreak\ttab"quote\\'}},
              {"canonical": '{"k":0,"m":0.000001,"n":1e+21,"s":"line\\nbreak\\ttab\\"quote\\\\"}',
               "keccak256": "0x8953829f4ccb00b31d6f6ea5b40793765a654514a2049b6e1fb99ab38be2f069"}),
    ]
    pre = [  # (layer, schemaHash, contentHash, salt, commitment): AMM §Test Cases, pre state
        (0, "0x6a00023d50bfe315bf6650953a4bb81910aef335c63ee465d2f52937b860790b",
         "0xa25eae406d69cd3802dbb588487f486e5b5e006b7ef521303ea24406979a4731", "0x" + "00" * 32,
         "0x053bdcecda479dd30b5bfd7a02661df67b79e978fea6888245df8aa167d6d282"),
        (1, "0x2862ecb7722af301f96bf7b7127d96568563c9c6cd281308f315e97b433d2055",
         "0xf3640f14c472bf43b5e89ea5a0a7d1e3681f47c81a7cf1a0d3f41cc685ed1701",
         "0x9b1e4c7a2d5f8b0c3e6a9d1f4b7e0a3c6f9b2e5d8a1c4f7b0e3a6d9c2f5b8e1a",
         "0x3a8a0162793df87f7094634e37d9e5d3d8470bd43cc7fee5669f609d922ee9c3"),
        (2, "0x739b5fc9aa474200ce364ed1db095acd99a4407eb27e258f294f3e65ffff40ad",
         "0x1cefdfbcd841dc162bea189aa25d1e3e2a031d5805901a407db4003706cafdd5", "0x" + "00" * 32,
         "0x3d3356ae1bc86136718f1ecd7f42d8a0570db2d21116c886cab291a789010585"),
        (3, "0x086a5b8a0101b4013c63de2d7392ddb4ae22c61e33afd0eaef58387952c1f468",
         "0xc6e5d3da30fc9d27be29773df620dbed9a359d6bba795d93bafcdb5963e9ede8",
         "0x4d7a0c3f6b9e2d5a8c1f4b7e0a3d6c9f2b5e8a1d4c7f0b3e6a9d2c5f8b1e4a7d",
         "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e"),
    ]
    for layer, schema, content, salt, commitment in pre:
        out.append(_pure(f"amm-worked-example-pre-layer-{layer}",
                         "AMM §Test Cases: layer commitment of the worked example's pre state",
                         "amm.layer-commitment", {"layer": layer, "schema_hash": schema,
                                                  "content_hash": content, "salt": salt},
                         commitment))
    post = ["0xb5a33b6d3732e664a08a19ed068432a6ab1085bf7013b3ffce1ff88ec7dd8519",
            "0xd24fedfca7a64b7596414751a6d4a1ed7a89bf906bce4b453453a7b086d26641",
            "0x8f03de4a144d8d453c84d2d4546fb0f01af23bd6f7ba31d18dac0c6dd1a942f0",
            "0xbe9a1abba6f84ec051c3eb91bb19e2d3504d773da883b94aece5ee9e37c79e8e"]
    out.append(_pure("amm-worked-example-pre-root", "AMM §Test Cases: pre root",
                     "amm.state-root", {"commitments": [row[4] for row in pre]},
                     "0x090e63d66e6cdb08331fece350bd0320551287d53d6644d5af158b04d94d149f"))
    out.append(_pure("amm-worked-example-post-root", "AMM §Test Cases: post root",
                     "amm.state-root", {"commitments": post},
                     "0x9918ebff7f3bc97ca08580033da3aa99b27871d8d57b2b8c9845221fa3dec3de"))
    out.append(_pure("amm-erc165-interface-id",
                     "AMM §Test Cases: 0x9c81b550 is the XOR of the 23 IAgentMeditation selectors",
                     "erc165.interface-id", {"signatures": AMM_ERC165_SIGNATURES}, "0x9c81b550"))
    out += _erc8447_interface_vectors()
    return out


def _erc8447_interface_vectors() -> list[dict[str, Any]]:
    """ERC-8447 §16 identifiers from the §12/§13 signatures (kept in vectors/erc8447-*.json
    inputs); the signature lists live in recompute.recipes.erc8447_interfaces."""
    return [_pure(f"erc8447-{name}-interface-id", f"ERC-8447 §16: {name} = {expected}",
                  "erc165.interface-id", {"signatures": signatures}, expected)
            for name, (signatures, expected) in INTERFACES.items()]


def geth_vectors() -> list[dict[str, Any]]:
    """The real go-ethereum proofs of the execution-apis fixtures, as `recompute proof`."""
    with FixtureNode(FIXTURE_CHAIN) as node:
        return [
            capture_proof(GETH_CONTRACT, [], node.url, GETH_HEAD, "geth-account-proof",
                          "go-ethereum eth_getProof/get-account-proof-*: the account at block "
                          "54 (execution-apis fixtures, CC0)"),
            capture_proof(GETH_CONTRACT, [0], node.url, GETH_HEAD, "geth-account-proof-with-"
                          "storage", "go-ethereum eth_getProof/get-account-proof-with-storage:"
                          " slot 0 = 0x38 at block 54 (execution-apis fixtures, CC0)"),
        ]


def write_all(devnet_vectors: list[dict[str, Any]] | None = None,
              directory: Path = VECTORS) -> list[Path]:
    """(Re)write every shipped vector and the suite; returns the files written."""
    groups = {"pure": pure_vectors(), "geth": geth_vectors(), "devnet": devnet_vectors or []}
    written = []
    for group, vectors in groups.items():
        for vector in vectors:
            path = directory / group / f"{vector['name']}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_whole(path, dumps(vector))
            written.append(path)
    write_suite(directory, written)
    return written


def write_suite(directory: Path, files: list[Path]) -> None:
    suite = {
        "profile": SUITE_PROFILE,
        "vectors": [{"path": str(p.relative_to(directory)), "sha256": sha256_file(p)}
                    for p in sorted(files)],
        "spec": {"path": "README.md", "sha256": sha256_file(directory / "README.md")},
    }
    write_whole(directory / "suite.json", json.dumps(suite, indent=1) + "\n")


def capture_devnet(node_url: str, manifest: dict[str, Any],
                   cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Capture step vectors from a devnet: each case names recipe, moment, contract, params."""
    out = []
    for case in cases:
        moment = manifest["moments"][case["moment"]]
        out.append(capture_step(
            case["recipe"], case.get("params", {}),
            manifest["contracts"][case["contract"]].lower(),
            case.get("layout"), node_url, bytes.fromhex(moment["hash"][2:]),
            case.get("expect", {}), case["name"], case.get("description", "")))
    return out


def _amm(name: str, recipe: str, moment: str, subject: str, description: str,
         registry: str = "AgentMeditationRegistry", **params: Any) -> dict[str, Any]:
    def resolve(manifest: Manifest) -> dict[str, str]:
        return {k: str(v(manifest)) if callable(v) else str(v) for k, v in {
            "subject": lambda m: m["amm"]["subjects"][subject]["address"].lower(),
            **params}.items()}
    return {"name": name, "recipe": recipe, "moment": moment, "contract": registry,
            "layout": "amm-registry-lying" if registry.startswith("Lying") else None,
            "params": resolve, "description": description}


DEVNET_CASES = [
    _amm("amm-layer-status-due", "amm/layer-status", "amm.due", "pulser",
         "a subject that only pulses is DUE one hour before its layer 0 deadline", layer=0),
    _amm("amm-layer-status-overdue", "amm/layer-status", "amm.overdue", "pulser",
         "the same subject is OVERDUE at its deadline: the predicate fails (BAD)", layer=0),
    _amm("amm-signal-status-silent", "amm/signal-status", "amm.silent-fresh", "example",
         "the worked example's subject is SILENT (and fresh): BAD"),
    _amm("amm-signal-status-present", "amm/signal-status", "amm.present-overdue", "pulser",
         "a pulsing subject is PRESENT (while overdue): GOOD"),
    _amm("amm-state-root-worked-example", "amm/state-root", "amm.after-cycle-1", "example",
         "after the seed's worked example: version 2, root 0x9918ebff…c3de, consistent"),
    _amm("amm-restore-claim-valid", "amm/restore-claim", "amm.rollback", "example",
         "a rollback to version 1: rootAt(1) is the post root (GOOD)",
         block=lambda m: m["moments"]["amm.rollback"]["number"]),
    _amm("amm-restore-claim-false", "amm/restore-claim", "amm.false-restore", "lying-example",
         "a false restore claim the lying registry accepted: rootAt(1) differs (BAD)",
         registry="LyingMeditationRegistry",
         block=lambda m: m["moments"]["amm.false-restore"]["number"]),
]


def _case(name: str, recipe: str, moment: str, contract: str, description: str,
          layout: str | None = None, expect: dict[str, str] | None = None,
          **params: Any) -> dict[str, Any]:
    def resolve(manifest: Manifest) -> dict[str, str]:
        return {k: str(v(manifest)) if callable(v) else str(v) for k, v in params.items()}
    return {"name": name, "recipe": recipe, "moment": moment, "contract": contract,
            "layout": layout, "params": resolve, "expect": expect or {},
            "description": description}


def _swarm(name: str) -> FromManifest:
    return lambda m: m["swarm"]["swarms"][name]["id"]


def _formed(name: str) -> FromManifest:
    return lambda m: m["swarm"]["swarms"][name]["formed_block"]


def _account(index: int) -> FromManifest:
    return lambda m: m["accounts"][index].lower()


def _before_draws(m: Manifest) -> int:
    return int(m["moments"]["meter.draw-refused"]["number"]) - 20


def _document(name: str, document: dict[str, Any]) -> Callable[[Manifest], Path]:
    """A disclosed document as a file parameter (the vector embeds its content)."""
    def write(_manifest: Manifest) -> Path:
        path = Path(tempfile.gettempdir()) / "recompute-vector-docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, json.dumps(document, sort_keys=True) + "\n")
        return path
    return write


PULSER_RUNTIME = {"schema": "amm.layer.runtime/1", "layer": 0, "subject": "pulser",
                  "revision": 0}

DEVNET_CASES += [
    _case("amm-commitment-disclosed-document", "amm/commitment", "amm.due",
          "AgentMeditationRegistry",
          "the pulser's disclosed layer 0 document and zero salt recompute to its commitment "
          "(GOOD)", subject=lambda m: m["amm"]["subjects"]["pulser"]["address"].lower(),
          layer=0, document=_document("pulser-layer-0.json", PULSER_RUNTIME)),
    _case("amm-commitment-altered-document", "amm/commitment", "amm.due",
          "AgentMeditationRegistry",
          "the same document with one field changed does not (BAD)",
          subject=lambda m: m["amm"]["subjects"]["pulser"]["address"].lower(), layer=0,
          document=_document("pulser-layer-0-altered.json", {**PULSER_RUNTIME, "revision": 1})),
    _case("8312-cap-conservation-headroom-at-cap", "8312/cap-conservation",
          "meter.headroom-at-cap", "HeadroomMeter",
          "the thread's struct:2:2:1 shape: turnover 8000 of 8000 (GOOD)",
          key=lambda m: m["meters"]["headroom"]["envelopes"]["envelope-1"]["id"],
          shape="struct:2:2:1"),
    _case("8312-cap-conservation-literal-cap-exceeded", "8312/cap-conservation",
          "meter.confirmed-at-cap", "ReservedConfirmedMeter",
          "reserved + confirmed = 1000 against a literal cap:999 (BAD)",
          key=lambda m: m["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"],
          shape="cap:999"),
    _case("8312-aggregate-budget-at-cap", "8312/aggregate-budget", "meter.period-1",
          "AggregateBudgetMeter",
          "period 0: draws 40 + 40 + 20 over three edges, the refused draw absent: 100 <= 100 "
          "and equal to spentRoot (GOOD)", layout="meter-aggregate-budget",
          root=lambda m: m["meters"]["aggregate"]["trees"]["tree-1"]["root_id"], period=0,
          from_block=_before_draws),
    _case("8312-aggregate-budget-over-cap", "8312/aggregate-budget", "meter.over-cap",
          "LyingAggregateBudgetMeter",
          "the lying meter's overdraw: 120 > 100 although each edge stayed under its cap (BAD)",
          layout="meter-aggregate-budget-lying",
          root=lambda m: m["meters"]["aggregate_lying"]["trees"]["tree-1"]["root_id"],
          period=0, from_block=_before_draws),
    _case("sai-roster-met-activated", "sai/roster", "swarm.activated", "SwarmRegistry",
          "a minimal gated swarm activated on ROSTER_MET (GOOD)", layout="swarm-registry",
          swarm=_swarm("minimal"), from_block=_formed("minimal")),
    _case("sai-roster-lost-suspended", "sai/roster", "swarm.suspended", "SwarmRegistry",
          "a worker challenged false and suspended: the roster is lost (BAD)",
          layout="swarm-registry", swarm=_swarm("challenged"),
          from_block=_formed("challenged")),
    _case("sai-member-not-carried", "sai/member", "swarm.select-advanced", "SwarmRegistry",
          "a suspended bidder lazily NOT_CARRIED by a SELECT advance", layout="swarm-registry",
          expect={"status": "EXITED", "exit_reason": "NOT_CARRIED"},
          swarm=_swarm("tender"), account=_account(6)),
    _case("sai-member-expelled-expected-active", "sai/member", "swarm.expelled",
          "SwarmRegistry", "--expect status=ACTIVE for an expelled member (BAD)",
          layout="swarm-registry", expect={"status": "ACTIVE"},
          swarm=_swarm("challenged"), account=_account(6)),
    _case("sai-charter-label-commitment", "sai/charter", "swarm.activated", "SwarmRegistry",
          "a disclosed pack that does not hash to the devnet swarm's charterHash (the devnet "
          "commits to labels, not packs): BAD", layout="swarm-registry",
          swarm=_swarm("minimal"), pack=PACKS / "pack-v1.json"),
    _case("sai-revision-consistent", "sai/revision", "swarm.dissolved", "SwarmRegistry",
          "the minimal swarm's revision equals the receipt-proven Changed events (GOOD)",
          layout="swarm-registry", swarm=_swarm("minimal"), from_block=_formed("minimal")),
]


# ---- the rule inventory's vectors (vectors/rules.json): each decides at least one rule ----------


def _subject(name: str) -> FromManifest:
    return lambda m: m["amm"]["subjects"][name]["address"].lower()


def _at(moment: str) -> FromManifest:
    return lambda m: m["moments"][moment]["number"]


def _lying_tree(m: Manifest) -> dict[str, Any]:
    tree: dict[str, Any] = m["meters"]["aggregate_lying"]["trees"]["tree-1"]
    return tree


def _c_draw_block(m: Manifest) -> int:
    draws = m["meters"]["aggregate"]["trees"]["tree-1"]["draws"]
    return int(next(d["block"] for d in draws if d["node"] == "C" and d["admitted"]))


_HONEST, _LYING = "AgentMeditationRegistry", "LyingMeditationRegistry"
_LAYER, _SIGNAL, _RESTORE = "amm/layer-status", "amm/signal-status", "amm/restore-claim"
_LYING_AB, _LYING_AB_LAYOUT = "LyingAggregateBudgetMeter", "meter-aggregate-budget-lying"
_SR = "swarm-registry"

RULE_CASES = [
    _case("amm-layer-status-not-enrolled", _LAYER, "amm.due", _HONEST,
          "the deployer never enrolled: NOT_ENROLLED (BAD)", subject=_account(0), layer=0),
    _case("amm-layer-status-unscheduled", _LAYER, "amm.demand-outstanding", _HONEST,
          "layer 2 is supported, not required: UNSCHEDULED (GOOD)", subject=_subject("demanded"),
          layer=2),
    _case("amm-layer-status-unsupported", _LAYER, "amm.demand-outstanding", _HONEST,
          "layer 3 is not in supportedLayers: UNSUPPORTED (BAD)", subject=_subject("demanded"),
          layer=3),
    _case("amm-layer-status-demand-lowers", _LAYER, "amm.demand-outstanding", _HONEST,
          "an outstanding demand lowers layer 0's deadline from enrolment + 86400 to its dueBy "
          "(FRESH, GOOD)", subject=_subject("demanded"), layer=0),
    _case("amm-layer-status-demand-overdue", _LAYER, "amm.demand-overdue", _HONEST,
          "OVERDUE exactly at the demand's dueBy (clock() >= deadline), BAD",
          subject=_subject("demanded"), layer=0),
    _case("amm-layer-status-demand-not-raised", _LAYER, "amm.demand-not-raised", _HONEST,
          "a demand due after the deadline does not raise it: OVERDUE at enrolment + 86400 (BAD)",
          subject=_subject("demanded"), layer=1),
    _case("amm-layer-status-demand-not-met", _LAYER, "amm.demand-not-met", _HONEST,
          "a completion that ended before demandedAt leaves the demand outstanding: deadline "
          "dueBy (FRESH, GOOD)", subject=_subject("controlled"), layer=1),
    _case("amm-layer-status-demand-cleared", _LAYER, "amm.demand-cleared", _HONEST,
          "a completion at or after demandedAt cleared the demand: deadline from the completion "
          "(FRESH, GOOD)", subject=_subject("controlled"), layer=1),
    _case("amm-layer-status-completion-anchor", _LAYER, "amm.present-overdue", _HONEST,
          "layer 0 judged from its last completion, not from enrolment (FRESH, GOOD)",
          subject=_subject("controlled"), layer=0),
    _case("amm-layer-status-interval-elapsed", _LAYER, "amm.interval-elapsed", _HONEST,
          "a never-completed layer 3 is OVERDUE at enrolment + its interval (BAD)",
          subject=_subject("controlled"), layer=3),
    _case("amm-layer-status-policy-lengthened", _LAYER, "amm.policy-lengthened", _HONEST,
          "policy version 2 lengthens layer 3's interval from its effective time: FRESH again "
          "from the same anchor (GOOD)", subject=_subject("controlled"), layer=3),
    _case("amm-layer-status-floor-interval", _LAYER, "amm.floor-set", _HONEST,
          "the floor's shorter interval governs from the floor's effective time (FRESH, GOOD)",
          subject=_subject("controlled"), layer=3),
    _case("amm-layer-status-floor-requires", _LAYER, "amm.demand-outstanding", _HONEST,
          "the relaxed policy drops layer 3, the floor still requires it: OVERDUE (BAD)",
          subject=_subject("controlled"), layer=3),
    _case("amm-signal-status-not-tracked", _SIGNAL, "amm.demand-outstanding", _HONEST,
          "no pulse interval in policy nor floor: NOT_TRACKED (GOOD)",
          subject=_subject("demanded")),
    _case("amm-signal-status-window-ends", _SIGNAL, "amm.signal-window-ends", _HONEST,
          "exactly lastSignalAt + pulseInterval: still PRESENT (GOOD)", subject=_subject("window")),
    _case("amm-signal-status-silent-by-one", _SIGNAL, "amm.signal-silent-by-one", _HONEST,
          "one second later: SILENT since the window's end (BAD)", subject=_subject("window")),
    _case("amm-signal-status-floor-pulse", _SIGNAL, "amm.floor-holds", _HONEST,
          "the policy tracks no pulse, the floor's 36000 does: SILENT (BAD)",
          subject=_subject("controlled")),
    _case("amm-restore-claim-no-claim", _RESTORE, "amm.after-cycle-1", _HONEST,
          "the worked example's record has restoresVersion 0: no claim (BAD)",
          subject=_subject("example"), block=_at("amm.after-cycle-1"), seq=1),
    _case("amm-restore-claim-lying-rollback", _RESTORE, "amm.lying-rollback", _LYING,
          "a rollback from version 3 to version 1's root: a valid claim (GOOD)",
          layout="amm-registry-lying", subject=_subject("lying-example"),
          block=_at("amm.lying-rollback")),
    _case("amm-restore-claim-no-advance", _RESTORE, "amm.restore-no-advance", _LYING,
          "restoresVersion 1 with no change: below the base version and rootAt(1) is the post "
          "root, as the honest registry checks; the version does not advance (GOOD, "
          "version_advanced false)", layout="amm-registry-lying", subject=_subject("lying-example"),
          block=_at("amm.restore-no-advance")),
    _case("amm-restore-claim-equal-base", _RESTORE, "amm.restore-equal-base", _LYING,
          "restoresVersion equal to the base version (BAD)", layout="amm-registry-lying",
          subject=_subject("lying-example"), block=_at("amm.restore-equal-base")),
    _case("amm-restore-claim-above-base", _RESTORE, "amm.restore-above-base", _LYING,
          "restoresVersion 5 above the base version 4: the version the record itself creates "
          "(BAD)", layout="amm-registry-lying", subject=_subject("lying-example"),
          block=_at("amm.restore-above-base")),
    _case("sai-member-tender-dissolved-not-carried", "sai/member", "swarm.tender-dissolved",
          "SwarmRegistry", "a bidder not carried by SELECT stays NOT_CARRIED after dissolution",
          layout=_SR, swarm=_swarm("tender"), account=_account(6)),
    _case("sai-member-tender-dissolved-carried", "sai/member", "swarm.tender-dissolved",
          "SwarmRegistry", "a carried worker exits SWARM_DISSOLVED", layout=_SR,
          swarm=_swarm("tender"), account=_account(4)),
    _case("sai-member-recruit-dissolved", "sai/member", "swarm.recruit-dissolved",
          "SwarmRegistry", "after a RECRUIT advance and dissolution a first-phase worker is "
          "NOT_CARRIED", layout=_SR, swarm=_swarm("recruit"), account=_account(3)),
    _case("sai-member-aborted", "sai/member", "swarm.aborted", "SwarmRegistry",
          "aborted before activation: the coordinator exits SWARM_DISSOLVED", layout=_SR,
          swarm=_swarm("quorum"), account=_account(6)),
    _case("sai-roster-roles-short", "sai/roster", "swarm.roles-short", "SwarmRegistry",
          "three ACTIVE workers meet minMembers 3, the coordinator role (min 1) is short (BAD)",
          layout=_SR, swarm=_swarm("quorum"), from_block=_formed("quorum")),
    _case("sai-roster-quorum-met", "sai/roster", "swarm.quorum-met", "SwarmRegistry",
          "four ACTIVE, every role at its min (GOOD)", layout=_SR, swarm=_swarm("quorum"),
          from_block=_formed("quorum")),
    _case("sai-roster-total-short", "sai/roster", "swarm.total-short", "SwarmRegistry",
          "every role at its min, two ACTIVE below minMembers 3 (BAD)", layout=_SR,
          swarm=_swarm("quorum"), from_block=_formed("quorum")),
    _case("sai-roster-recruit-advanced", "sai/roster", "swarm.recruit-advanced",
          "SwarmRegistry", "a RECRUIT advance leaves nobody carried: 0 ACTIVE (BAD)",
          layout=_SR, swarm=_swarm("recruit"), from_block=_formed("recruit")),
    _case("sai-roster-aborted", "sai/roster", "swarm.aborted", "SwarmRegistry",
          "aborted: every seat SWARM_DISSOLVED, 0 ACTIVE (BAD)", layout=_SR,
          swarm=_swarm("quorum"), from_block=_formed("quorum")),
    _case("8312-cap-conservation-literal-at-cap", "8312/cap-conservation", "meter.at-cap",
          "ReservedConfirmedMeter", "reserved 600 + confirmed 400 against cap:1000 (GOOD)",
          key=lambda m: m["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"],
          shape="cap:1000"),
    _case("8312-cap-conservation-literal-one-above", "8312/cap-conservation", "meter.at-cap",
          "ReservedConfirmedMeter", "reserved 600 + confirmed 400 against cap:999 (BAD)",
          key=lambda m: m["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"],
          shape="cap:999"),
    _case("8312-cap-conservation-reserved-confirmed-at-cap", "8312/cap-conservation",
          "meter.at-cap", "ReservedConfirmedMeter",
          "reserved 600 + confirmed 400 against the stored cap 1000 (GOOD)",
          key=lambda m: m["meters"]["reserved_confirmed"]["keys"]["key-1"]["key"],
          shape="reserved-confirmed"),
    _case("8312-cap-conservation-headroom-used", "8312/cap-conservation", "meter.headroom-used",
          "HeadroomMeter", "struct:2:2:1: turnover 5500 of 8000 (GOOD)",
          key=lambda m: m["meters"]["headroom"]["envelopes"]["envelope-1"]["id"],
          shape="struct:2:2:1"),
    _case("8312-cap-conservation-headroom-named-at-cap", "8312/cap-conservation",
          "meter.headroom-at-cap", "HeadroomMeter", "shape headroom: 8000 of 8000 (GOOD)",
          layout="meter-headroom",
          key=lambda m: m["meters"]["headroom"]["envelopes"]["envelope-1"]["id"],
          shape="headroom"),
    _case("8312-cap-conservation-mandate-at-cap", "8312/cap-conservation",
          "meter.mandate-at-cap", "MandateMeter", "shape mandate: 1000 of 1000 (GOOD)",
          layout="meter-mandate", shape="mandate", agent=_account(4), principal=_account(2)),
    _case("8312-cap-conservation-aggregate-budget-at-cap", "8312/cap-conservation",
          "meter.lying-at-cap", _LYING_AB, "shape aggregate-budget: spentRoot 100 of 100 (GOOD)",
          layout=_LYING_AB_LAYOUT, key=lambda m: _lying_tree(m)["root_id"],
          shape="aggregate-budget", period=lambda m: _lying_tree(m)["rule_period"]["period"]),
    _case("8312-cap-conservation-aggregate-budget-one-above", "8312/cap-conservation",
          "meter.one-above", _LYING_AB, "shape aggregate-budget: spentRoot 101 of 100 (BAD)",
          layout=_LYING_AB_LAYOUT, key=lambda m: _lying_tree(m)["root_id"],
          shape="aggregate-budget", period=lambda m: _lying_tree(m)["rule_period"]["period"]),
    _case("8312-aggregate-budget-lying-at-cap", "8312/aggregate-budget", "meter.lying-at-cap",
          _LYING_AB, "draws 50 + 50 in one period: 100 <= 100 and equal to spentRoot (GOOD)",
          layout=_LYING_AB_LAYOUT, root=lambda m: _lying_tree(m)["root_id"],
          period=lambda m: _lying_tree(m)["rule_period"]["period"], from_block=_before_draws),
    _case("8312-aggregate-budget-one-above", "8312/aggregate-budget", "meter.one-above",
          _LYING_AB, "an overdraw of 1 past the cap: 101 > 100 (BAD)", layout=_LYING_AB_LAYOUT,
          root=lambda m: _lying_tree(m)["root_id"],
          period=lambda m: _lying_tree(m)["rule_period"]["period"], from_block=_before_draws),
    _case("8312-aggregate-budget-missing-draws", "8312/aggregate-budget", "meter.period-0",
          "AggregateBudgetMeter", "collected from C's draw on: the log says 20, spentRoot 100 "
          "(BAD)", layout="meter-aggregate-budget",
          root=lambda m: m["meters"]["aggregate"]["trees"]["tree-1"]["root_id"], period=0,
          from_block=_c_draw_block),
]



def _variant_cases() -> list[dict[str, Any]]:
    """The lying variants' moments (recompute/devnet/history_variants.py), each captured as
    its moment says (recipe, contract, layout, parameters), plus the struct:2:2:1 shape at the
    headroom one above its cap."""
    from recompute.devnet.moments import VARIANTS

    cases = [{"name": about["vector"], "recipe": about["recipe"], "moment": label,
              "contract": about["contract"], "layout": about["layout"],
              "params": about["params"], "expect": {},
              "description": about["text"] + " (BAD)"} for label, about in VARIANTS.items()
             if about["vector"]]
    cases.append(_case(
        "sai-charter-objective-differs", "sai/charter", "variant.charter-objective-differs",
        "SwarmRegistry", "a pack whose charter, commitment, specHash and version match the "
        "swarm's; its objective does not hash to the swarm's objectiveHash (BAD)",
        layout="swarm-registry", swarm=lambda m: m["variants"]["charter"]["swarm"],
        pack=PACKS / "pack-objective-differs.json"))
    cases.append(_case(
        "8312-cap-conservation-headroom-one-above", "8312/cap-conservation",
        "variant.headroom-one-above", "LyingHeadroomMeter",
        "the thread's struct:2:2:1 shape: turnover 8001 of 8000 (BAD)",
        key=lambda m: m["variants"]["meters"]["headroom"]["envelope"], shape="struct:2:2:1"))
    return cases


DEVNET_CASES += RULE_CASES + _variant_cases()


def resolve_cases(manifest: dict[str, Any], cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for case in cases:
        params = case["params"](manifest) if callable(case["params"]) else case["params"]
        out.append({**case, "params": params})
    return out


def unverifiable_variant(vector: dict[str, Any], name: str, description: str) -> dict[str, Any]:
    """A vector whose first storage proof does not root: a flipped byte in its first node."""
    variant: dict[str, Any] = json.loads(json.dumps(vector))
    variant["name"], variant["description"] = name, description
    for proof in variant["proofs"]:
        for entry in proof["answer"].get("storageProof", []):
            if entry.get("proof"):
                node = entry["proof"][0]
                entry["proof"][0] = node[:-1] + ("1" if node[-1] != "1" else "2")
                variant["expected"] = {"verdict": "UNVERIFIABLE", "reason": "invalid-proof"}
                return variant
    raise ValueError(f"{vector['name']} has no storage proof to break")


def devnet_vectors(node_url: str, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    vectors = capture_devnet(node_url, manifest, resolve_cases(manifest, DEVNET_CASES))
    vectors.append(unverifiable_variant(
        vectors[0], "amm-layer-status-proof-does-not-root",
        "the DUE vector with one byte of a storage-proof node changed: UNVERIFIABLE "
        "(invalid-proof), never a verdict"))
    return vectors


def main() -> None:  # `make vectors`

    with Anvil(timestamp=DEVNET_GENESIS_TIMESTAMP) as node:
        manifest = build(node)
        written = write_all(devnet_vectors(node.url, manifest))
    print(f"wrote {len(written)} vectors and vectors/suite.json")


if __name__ == "__main__":
    main()
