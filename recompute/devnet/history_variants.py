"""The devnet's lying variants: moments for rules no honest contract can break.

Each contract here (``contracts/src/variants/``) inherits an honest reference contract and skips
one check or one write, so that a rule of ``vectors/rules.json`` decides a vector. The script
runs at the very end of the devnet (``extend``, after every other history's extension), so
every earlier moment keeps its block:

- ``LyingRootMeditationRegistry`` (``amm.restore.root-at-new-version``): the worked example's
  subject enrols, registers the worked example's post state (version 2) and rolls back to
  version 1 (version 3); the registry keeps neither new root (rootAt(2) and rootAt(3) are
  zero), so the rollback's restore claim holds both checks of AMM §Cycle records but the
  version it left does not hold its post root (``variant.amm-root-not-kept``, BAD).
- ``LyingReservedConfirmedMeter``, ``LyingHeadroomMeter``, ``LyingMandateMeter``
  (``8312.cap.one-above-named-shapes``): each cursor filled to its cap on the honest path,
  then one more unit through the write path without the cap check: reserved 1001 of 1000,
  turnover 8001 of 8000, used 1001 of 1000 (``variant.*-one-above``, BAD).
- ``LyingLeafEpochMeter`` (``8312.aggregate-budget.root-period-key``, the thread's
  epoch-unaligned counterexample): a root (cap 100, periods of 86400 s anchored at ``A``), one
  leaf with allocation 100 whose local windows are 43200 s anchored at ``A + 21600``: they do
  not tile the root period. The leaf draws 100 at ``A + 30000`` (local window 0) and 100 at
  ``A + 70000`` (local window 1): both in root period 0, 200 > 100. The meter keyed each to
  its local window and admitted both; the honest meter would refuse the second
  (``variant.epoch-unaligned``, BAD).
- An honest ``SwarmRegistry`` swarm (``sai.charter.member-hashes``; the registry never reads
  a pack, so no registry can check this): formed with the charterHash and commitmentHash of
  ``recompute/data/fixtures/pack-objective-differs.json`` (SHA-256 of JCS, ERC-8447 §4.1) and
  with the pack's specHash and version, but with an objectiveHash that is a label, not
  SHA-256(JCS(pack.objective)) (``variant.charter-objective-differs``, BAD).
- ``LyingRevisionSwarmRegistry`` (``sai.revision.one-per-change``): a swarm formed, two workers
  seated (each admission one revision and one Changed), then one worker leaves: the registry
  increments the revision without emitting Changed, so the revision ran one past the Changed
  events (``variant.revision-unannounced``, BAD).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from eth_hash.auto import keccak
from web3.logs import DISCARD

from recompute.core.jsontext import jcs
from recompute.data import PACKS
from recompute.devnet.driver import Driver, HistoryError
from recompute.devnet.history_amm import (
    COMPLETED,
    EVENT,
    EXAMPLE_OPS_MASK,
    EXAMPLE_POLICY,
    EXAMPLE_POST_COMMITMENTS,
    EXAMPLE_POST_ROOT,
    EXAMPLE_PRE_COMMITMENTS,
    EXAMPLE_PRE_ROOT,
    REPORT_GAS,
    SELF,
    ZERO_ADDRESS,
    cycle,
    hx,
)
from recompute.devnet.history_meters import DRAW_GAS, ROOT_NODE, root_id
from recompute.devnet.history_swarm import GATED, OBJECTIVE, RECRUIT, ROLE_IDS, _phase, _role

ROOT_REGISTRY = "LyingRootMeditationRegistry"
LYING_RC, LYING_HEADROOM, LYING_MANDATE = ("LyingReservedConfirmedMeter", "LyingHeadroomMeter",
                                           "LyingMandateMeter")
LEAF_METER = "LyingLeafEpochMeter"

VARIANT_KEY = keccak(b"devnet/variant/key-1")
VARIANT_ENVELOPE = keccak(b"devnet/variant/envelope-1")
KEY_CAP, TURNOVER_CAP, MANDATE_CAP = 1000, 8000, 1000
LEAF_SALT = keccak(b"devnet/variant/tree-epochs")
LEAF = keccak(b"devnet/variant/leaf")
LEAF_CAP = 100  # the root cap, and the leaf's allocation (its node cap)
ROOT_PERIOD = 86400
LEAF_EPOCH = 43200
LEAF_OFFSET = 21600  # the leaf's windows start half a window into the root period
DRAW_TIMES = (30000, 70000)  # seconds after the anchor: local windows 0 and 1, root period 0


def run(driver: Driver) -> None:
    """Nothing before the extensions: every variant's block comes after every other moment."""
    driver.section("variants")


def extend(driver: Driver) -> None:
    section = driver.section("variants")
    section["amm"] = _root_not_kept(driver)
    section["meters"] = _one_above(driver)
    section["leaf_epochs"] = _epoch_unaligned(driver)
    section["charter"] = _objective_differs(driver)
    section["revision"] = _revision_unannounced(driver)


def _root_not_kept(driver: Driver) -> dict[str, Any]:
    acc = driver.accounts
    example = acc[1]
    reg = driver.deploy(ROOT_REGISTRY, sender=acc[0])
    f = reg.functions
    driver.tx(f.enroll(list(EXAMPLE_PRE_COMMITMENTS), EXAMPLE_POLICY, ZERO_ADDRESS, 0),
              sender=example)
    t = driver.now
    driver.tx(f.report(example, cycle(
        1, EXAMPLE_PRE_ROOT, EXAMPLE_POST_COMMITMENTS, layer_mask=0x0F, completed=0x0F,
        ops=EXAMPLE_OPS_MASK, outcome=COMPLETED, trigger=EVENT, started=t + 1, ended=t + 5)),
        sender=example, gas=REPORT_GAS)
    t = driver.now
    receipt = driver.tx(f.report(example, cycle(
        2, EXAMPLE_POST_ROOT, EXAMPLE_PRE_COMMITMENTS, layer_mask=0x07, completed=0x07,
        ops=0x0222, outcome=COMPLETED, trigger=SELF, started=t + 1, ended=t + 5, restores=1)),
        sender=example, gas=REPORT_GAS)
    driver.moment("variant.amm-root-not-kept")
    return {"contract": ROOT_REGISTRY, "subject": example,
            "rollback": {"block": receipt["blockNumber"], "base_version": 2, "new_version": 3,
                         "restores": 1, "root_at_new": hx(bytes(32))}}


def _one_above(driver: Driver) -> dict[str, Any]:
    acc = driver.accounts
    principal, operator, agent = acc[1], acc[2], acc[4]
    rc = driver.deploy(LYING_RC, sender=acc[0])
    driver.tx(rc.functions.openKey(VARIANT_KEY, KEY_CAP), sender=principal)
    driver.tx(rc.functions.reserve(VARIANT_KEY, KEY_CAP), sender=principal)
    driver.tx(rc.functions.reserveUnchecked(VARIANT_KEY, 1), sender=principal)
    driver.moment("variant.rc-one-above")  # reserved 1001 + confirmed 0 > cap 1000
    hr = driver.deploy(LYING_HEADROOM, sender=acc[0])
    driver.tx(hr.functions.openEnvelope(VARIANT_ENVELOPE, operator, 100_000, TURNOVER_CAP),
              sender=principal)
    driver.tx(hr.functions.recordTurnover(VARIANT_ENVELOPE, TURNOVER_CAP), sender=operator)
    driver.tx(hr.functions.recordTurnoverUnchecked(VARIANT_ENVELOPE, 1), sender=operator)
    driver.moment("variant.headroom-one-above")  # cumulativeTurnover 8001 > 8000
    md = driver.deploy(LYING_MANDATE, sender=acc[0])
    driver.tx(md.functions.grant(agent, MANDATE_CAP), sender=operator)
    driver.tx(md.functions.recordExecution(operator, MANDATE_CAP), sender=agent)
    driver.tx(md.functions.recordExecutionUnchecked(operator, 1), sender=agent)
    driver.moment("variant.mandate-one-above")  # cumulativeUsed 1001 > 1000
    return {"reserved_confirmed": {"contract": LYING_RC, "key": hx(VARIANT_KEY),
                                   "cap": KEY_CAP, "aggregate": KEY_CAP + 1},
            "headroom": {"contract": LYING_HEADROOM, "envelope": hx(VARIANT_ENVELOPE),
                         "cap": TURNOVER_CAP, "aggregate": TURNOVER_CAP + 1},
            "mandate": {"contract": LYING_MANDATE, "agent": agent, "principal": operator,
                        "cap": MANDATE_CAP, "aggregate": MANDATE_CAP + 1}}


def _epoch_unaligned(driver: Driver) -> dict[str, Any]:
    acc = driver.accounts
    issuer, top, leaf_agent = acc[1], acc[2], acc[5]
    meter = driver.deploy(LEAF_METER, sender=acc[0])
    f = meter.functions
    anchor = driver.now + 1000
    rid = root_id(issuer, LEAF_SALT)
    driver.tx(f.createRoot(LEAF_SALT, top, LEAF_CAP, ROOT_PERIOD, anchor), sender=issuer)
    driver.tx(f.delegate(rid, ROOT_NODE, LEAF, leaf_agent, LEAF_CAP), sender=top)
    driver.tx(f.setLeafEpoch(rid, LEAF, LEAF_EPOCH, anchor + LEAF_OFFSET), sender=issuer)
    draws = []
    for window, offset in enumerate(DRAW_TIMES):
        receipt = driver.tx(f.leafDraw(rid, LEAF, LEAF_CAP), sender=leaf_agent,
                            at=anchor + offset, gas=DRAW_GAS)
        draws.append({"block": receipt["blockNumber"], "local_window": window,
                      "root_period": 0, "amount": LEAF_CAP})
    driver.moment("variant.epoch-unaligned")  # Σ root period 0 = 200 > cap 100
    return {"contract": LEAF_METER, "root_id": hx(rid), "cap": LEAF_CAP,
            "period_length": ROOT_PERIOD, "period_anchor": anchor, "leaf": hx(LEAF),
            "leaf_epoch": {"length": LEAF_EPOCH, "anchor": anchor + LEAF_OFFSET},
            "draws": draws}


CHARTER_PACK = PACKS / "pack-objective-differs.json"


def _sha256_jcs(value: Any) -> bytes:  # a JSON document (a charter pack's)
    """ERC-8447 §4.1: SHA-256 of the RFC 8785 canonical form."""
    return hashlib.sha256(jcs(value)).digest()


def _objective_differs(driver: Driver) -> dict[str, Any]:
    h = driver.state["swarm"]  # the swarm history's registries and accounts
    roles = [_role("worker", 1, 2)]
    phases = [_phase("work", "shared", "partitioned", "leader", GATED, RECRUIT)]
    _, spec_hash = h.spec("charter", roles, phases, min_members=1, max_members=2)
    pack = json.loads(CHARTER_PACK.read_text())
    if pack["specHash"] != "0x" + spec_hash.hex() or pack["version"] != 1:
        raise HistoryError(f"{CHARTER_PACK.name} names specHash {pack['specHash']}, the swarm's "
                           f"spec hashes to 0x{spec_hash.hex()}")
    hashes = (_sha256_jcs(pack), _sha256_jcs(pack["commitment"]), OBJECTIVE[1])
    swarm_id = h.form("charter", h.honest, roles, phases, min_members=1, max_members=2,
                      hashes=hashes)
    driver.moment("variant.charter-objective-differs")
    return {"contract": "SwarmRegistry", "swarm": "0x" + swarm_id.hex(),
            "spec_hash": "0x" + spec_hash.hex(), "charter_hash": "0x" + hashes[0].hex(),
            "commitment_hash": "0x" + hashes[1].hex(), "objective_hash": "0x" + hashes[2].hex(),
            "pack": CHARTER_PACK.name}


REVISION_REGISTRY = "LyingRevisionSwarmRegistry"


def _revision_unannounced(driver: Driver) -> dict[str, Any]:
    h = driver.state["swarm"]
    acc = driver.accounts
    libraries = {"SpecLib": "SpecLib", "MembershipLib": "MembershipLib"}
    reg = driver.deploy(REVISION_REGISTRY, sender=acc[0], libraries=libraries)
    swarm_id = h.form("revision", reg, [_role("worker", 1, 3)],
                      [_phase("work", "shared", "partitioned", "leader", GATED, RECRUIT)],
                      min_members=1, max_members=3)
    formed = driver.w3.eth.block_number
    for account in (acc[3], acc[4]):
        h.seat("revision", reg, swarm_id, account, "worker")
    receipt = driver.tx(reg.functions.leave(swarm_id), sender=acc[4])
    h.expect(receipt, reg, "MemberExited", account=acc[4])
    if reg.events.Changed().process_receipt(receipt, errors=DISCARD):  # others: not warned of
        raise HistoryError("the lying registry emitted Changed for leave")
    driver.moment("variant.revision-unannounced")
    return {"contract": REVISION_REGISTRY, "swarm": "0x" + swarm_id.hex(),
            "formed_block": formed, "role": "0x" + ROLE_IDS["worker"].hex()}
