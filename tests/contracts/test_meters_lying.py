"""LyingAggregateBudgetMeter against the honest AggregateBudgetMeter: the same fan-out where each
node is under its cap but the root sum exceeds it. The honest meter reverts the last draw; the
liar's owner-only overdraw lets it through (spentRoot and Drawn stay honest), and its view still
says "within cap"."""

from __future__ import annotations

from amm_helpers import (
    ANCHOR,
    CAP,
    EXCEEDED,
    SETUP_AT,
    A,
    B,
    C,
    build_tree,
    deployment_fixtures,
    drawn_sums,
    error_data,
    spent_slot,
)

NAMES = ("AggregateBudgetMeter", "LyingAggregateBudgetMeter")


def trees(chain) -> None:
    """Module state: the shared delegation tree in both meters; its rootId as chain.root_id."""
    roots = {build_tree(chain, chain.contracts[n], SETUP_AT + 1000 * i)
             for i, n in enumerate(NAMES)}
    (chain.root_id,) = roots  # same issuer and salt: the same rootId in both meters


deployed, chain = deployment_fixtures(*NAMES, setup=trees)


def test_overdraw_passes_the_liar_and_its_view_hides_it(chain):
    honest, liar = (chain.contracts[n] for n in NAMES)
    root_id = chain.root_id
    a, b, c, owner = chain.accounts[3], chain.accounts[4], chain.accounts[5], chain.accounts[0]
    for meter, ts in ((honest, ANCHOR + 100), (liar, ANCHOR + 200)):
        chain.transact(meter.functions.draw(root_id, A, 40), a, ts)
        chain.transact(meter.functions.draw(root_id, B, 40), b, ts + 10)
    for meter in (honest, liar):  # the ordinary draw path is honest in both
        assert chain.revert_data(meter.functions.draw(root_id, C, 40), c) == \
            error_data(EXCEEDED, root_id, 0, CAP, 120)
    receipt = chain.transact(liar.functions.overdraw(root_id, C, 40), owner)
    (ev,) = liar.events.Drawn().process_receipt(receipt)
    assert (ev["args"]["nodeId"], ev["args"]["periodIndex"], ev["args"]["amount"]) == (C, 0, 40)
    # storage and logs are honest: 120 > cap 100
    assert spent_slot(chain, liar, root_id, 0) == 120
    assert drawn_sums(chain, liar, root_id) == {0: 120}
    assert spent_slot(chain, honest, root_id, 0) == 80
    # ... the views lie
    assert liar.functions.withinCap(root_id, 0).call() is True
    assert liar.functions.remainingRoot(root_id).call() == 20
    assert honest.functions.withinCap(root_id, 0).call() is True  # honest: 80 <= 100
    assert honest.functions.remainingRoot(root_id).call() == 20


def test_only_owner_overdraws(chain):
    liar = chain.contracts[NAMES[1]]
    stranger = chain.accounts[4]
    assert chain.revert_data(liar.functions.overdraw(chain.root_id, B, 1), stranger,
                             ANCHOR + 100) == error_data("NotOwner(address)", stranger)
