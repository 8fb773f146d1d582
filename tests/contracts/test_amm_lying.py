"""LyingMeditationRegistry against the honest AgentMeditationRegistry: identical transactions,
identical storage, different answers where the honest registry says OVERDUE / SILENT, and a false
restore claim that only the liar registers."""

from __future__ import annotations

from amm_helpers import (
    ENROLLED_AT,
    FRESH,
    GENESIS,
    INTERVALS,
    OVERDUE,
    POST_COMMITMENTS,
    POST_ROOT,
    PRE_ROOT,
    PRESENT,
    SILENT,
    commitment,
    cycle,
    deployment_fixtures,
    enroll,
    error_data,
    events,
    plain,
    state_root,
)
from eth_abi import encode
from eth_hash.auto import keccak

T = ENROLLED_AT
NAMES = ("AgentMeditationRegistry", "LyingMeditationRegistry")

deployed, chain = deployment_fixtures(*NAMES, genesis=GENESIS)


def both(chain):
    return chain.contracts[NAMES[0]], chain.contracts[NAMES[1]]


def head_slot(subject: str, member_slot: int) -> int:
    """Slot of `heads[subject]` member word ``member_slot`` (heads is state variable 0)."""
    base = keccak(encode(["address", "uint256"], [subject, 0]))
    return int.from_bytes(base, "big") + member_slot


def test_liar_reports_fresh_and_present_where_honest_says_overdue_and_silent(chain):
    honest, liar = both(chain)
    subject = chain.accounts[1]
    for reg in (honest, liar):
        enroll(chain, reg, subject, T)
    # no cycle, no pulse: at T + 86400 layer 0 is overdue (enrolment anchor) and the signal
    # (window 21600 after the enrolment signal) is silent
    at = T + INTERVALS[0]
    chain.mine(at)
    assert honest.functions.layerStatus(subject, 0).call() == [OVERDUE, at, True]
    assert liar.functions.layerStatus(subject, 0).call() == [FRESH, at, True]
    assert honest.functions.signalStatus(subject).call() == [SILENT, T, T + 21600]
    assert liar.functions.signalStatus(subject).call() == [PRESENT, T, 0]
    # storage is identical: same head through the view and in the raw slots
    assert plain(honest.functions.headOf(subject).call()) == plain(
        liar.functions.headOf(subject).call())
    for member in range(4):
        slot = head_slot(subject, member)
        assert chain.w3.eth.get_storage_at(honest.address, slot) == \
            chain.w3.eth.get_storage_at(liar.address, slot)
    # the slot holding enrolledAt / lastSignalAt says what the honest status is derived from
    word = int.from_bytes(chain.w3.eth.get_storage_at(liar.address, head_slot(subject, 3)), "big")
    assert (word & (2**48 - 1), (word >> 48) & (2**48 - 1)) == (T, T)


def test_liar_lies_even_for_unenrolled_subject(chain):
    honest, liar = both(chain)
    nobody = chain.accounts[7]
    assert honest.functions.layerStatus(nobody, 2).call()[0] == 0  # NOT_ENROLLED
    assert liar.functions.layerStatus(nobody, 2).call()[0] == FRESH


def test_false_restore_claim_accepted_by_liar_only(chain):
    honest, liar = both(chain)
    subject = chain.accounts[1]
    for reg in (honest, liar):
        enroll(chain, reg, subject, T)
    forward = cycle(1, PRE_ROOT, POST_COMMITMENTS, started=T + 100, ended=T + 200)
    for reg in (honest, liar):
        chain.transact(reg.functions.report(subject, forward), subject, T + 300)
    # a brand-new state that restores nothing, claimed to restore version 1
    novel = [commitment("never registered"), *POST_COMMITMENTS[1:]]
    claim = cycle(2, POST_ROOT, novel, layer_mask=0x01, completed=0x01, started=T + 400,
                  ended=T + 500, restores=1)
    assert chain.revert_data(honest.functions.report(subject, claim), subject, T + 600) == \
        error_data("RestoreClaimInvalid()")
    receipt = chain.transact(liar.functions.report(subject, claim), subject, T + 700)
    (ev,) = events(liar, "CycleRecorded", receipt)
    assert (ev["report"]["restoresVersion"], ev["newVersion"]) == (1, 3)
    # the liar's own honest storage refutes the claim: rootAt(1) is not the new root
    assert liar.functions.rootAt(subject, 1).call() == PRE_ROOT
    assert liar.functions.rootAt(subject, 3).call() == state_root(novel) != PRE_ROOT
    assert plain(honest.functions.headOf(subject).call())[5] == 2
