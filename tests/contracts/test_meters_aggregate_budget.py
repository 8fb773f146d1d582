"""ERC-8312 §5.1 aggregate-budget profile (AggregateBudgetMeter): one conserved root meter
spentRoot[rootId][periodIndex] <= cap across a delegation tree, check-then-increment at every
node, capped nodes cannot delegate, revocation never refunds, and Σ Drawn per (root, period)
equals spentRoot (the thread's aggregate-budget vector, recomputed here from the logs)."""

from __future__ import annotations

from amm_helpers import (
    ANCHOR,
    CAP,
    EXCEEDED,
    PERIOD,
    SALT,
    A,
    B,
    C,
    D,
    E,
    build_tree,
    contract_fixture,
    deployment_fixtures,
    drawn_sums,
    error_data,
    spent_slot,
)


def tree(chain) -> None:
    """Module state: the shared delegation tree (``build_tree``); its rootId as chain.root_id."""
    chain.root_id = build_tree(chain, chain.contracts["AggregateBudgetMeter"])


deployed, chain = deployment_fixtures("AggregateBudgetMeter", setup=tree)
meter = contract_fixture("AggregateBudgetMeter")


def test_root_is_created_write_once(chain, meter):
    root_id = chain.root_id
    assert (meter.functions.cap(root_id).call(), meter.functions.periodLength(root_id).call(),
            meter.functions.periodAnchor(root_id).call()) == (CAP, PERIOD, ANCHOR)
    assert chain.revert_data(meter.functions.createRoot(SALT, chain.accounts[2], 10**6, 1, 0),
                             chain.accounts[1]) == error_data("RootExists(bytes32)", root_id)
    writers = {f["name"] for f in meter.abi if f["type"] == "function"
               and f["stateMutability"] not in ("view", "pure")}
    assert writers == {"createRoot", "delegate", "revoke", "draw"}  # no setter, no admin


def test_fanout_under_node_caps_cannot_exceed_root_cap(chain, meter):
    root_id = chain.root_id
    a, b, c = chain.accounts[3], chain.accounts[4], chain.accounts[5]
    chain.transact(meter.functions.draw(root_id, A, 40), a, ANCHOR + 100)
    chain.transact(meter.functions.draw(root_id, B, 40), b, ANCHOR + 200)
    # C is under its own cap (40 <= 50) but the root sum would be 120 > 100
    assert chain.revert_data(meter.functions.draw(root_id, C, 40), c, ANCHOR + 300) == \
        error_data(EXCEEDED, root_id, 0, CAP, 120)
    chain.transact(meter.functions.draw(root_id, C, 20), c, ANCHOR + 400)
    assert spent_slot(chain, meter, root_id, 0) == 100
    assert meter.functions.spentRoot(root_id, 0).call() == 100
    assert drawn_sums(chain, meter, root_id) == {0: 100}
    assert meter.functions.withinCap(root_id, 0).call() is True
    assert meter.functions.remainingRoot(root_id).call() == 0
    # attribution only: the per-node figures are not the conserved quantity
    assert [meter.functions.nodeSpent(root_id, n, 0).call() for n in (A, B, C)] == [40, 40, 20]


def test_node_cap_attenuates_own_draws(chain, meter):
    root_id, a = chain.root_id, chain.accounts[3]
    chain.transact(meter.functions.draw(root_id, A, 50), a, ANCHOR + 100)
    assert chain.revert_data(meter.functions.draw(root_id, A, 1), a) == \
        error_data("NodeCapExceeded(bytes32,bytes32,uint256,uint256)", root_id, A, 50, 51)


def test_capped_node_cannot_delegate(chain, meter):
    root_id, a = chain.root_id, chain.accounts[3]
    assert chain.revert_data(meter.functions.delegate(root_id, A, E, chain.accounts[7], 0), a) \
        == error_data("CappedNodeCannotDelegate(bytes32,bytes32)", root_id, A)


def test_deep_node_draws_on_the_same_root_meter(chain, meter):
    root_id, d, e = chain.root_id, chain.accounts[6], chain.accounts[7]
    chain.transact(meter.functions.delegate(root_id, D, E, e, 0), d, ANCHOR + 50)
    chain.transact(meter.functions.draw(root_id, E, 70), e, ANCHOR + 100)
    chain.transact(meter.functions.draw(root_id, D, 30), d, ANCHOR + 200)
    assert chain.revert_data(meter.functions.draw(root_id, A, 1), chain.accounts[3]) == \
        error_data(EXCEEDED, root_id, 0, CAP, 101)
    assert spent_slot(chain, meter, root_id, 0) == 100


def test_draws_in_two_periods(chain, meter):
    root_id, a, b = chain.root_id, chain.accounts[3], chain.accounts[4]
    chain.transact(meter.functions.draw(root_id, A, 50), a, ANCHOR + 100)
    chain.transact(meter.functions.draw(root_id, B, 30), b, ANCHOR + PERIOD - 1)  # still period 0
    # period 1 starts at ANCHOR + 86400 with a fresh slot; period 0 stays as it closed
    chain.transact(meter.functions.draw(root_id, A, 45), a, ANCHOR + PERIOD)
    chain.transact(meter.functions.draw(root_id, B, 50), b, ANCHOR + PERIOD + 10)
    d = chain.accounts[6]  # uncapped, so only the root cap can refuse it
    assert chain.revert_data(meter.functions.draw(root_id, D, 6), d) == \
        error_data(EXCEEDED, root_id, 1, CAP, 101)
    assert (spent_slot(chain, meter, root_id, 0), spent_slot(chain, meter, root_id, 1)) == (80, 95)
    assert drawn_sums(chain, meter, root_id) == {0: 80, 1: 95}
    assert meter.functions.currentPeriod(root_id).call() == 1
    assert meter.functions.remainingInPeriod(root_id, 0).call() == 20
    assert meter.functions.remainingRoot(root_id).call() == 5


def test_revocation_never_refunds(chain, meter):
    root_id, issuer, b = chain.root_id, chain.accounts[1], chain.accounts[4]
    chain.transact(meter.functions.draw(root_id, B, 40), b, ANCHOR + 100)
    chain.transact(meter.functions.revoke(root_id, B), issuer)
    assert spent_slot(chain, meter, root_id, 0) == 40
    assert chain.revert_data(meter.functions.draw(root_id, B, 1), b) == \
        error_data("PathRevoked(bytes32,bytes32)", root_id, B)
    # revoking D cuts its whole subtree
    d, e = chain.accounts[6], chain.accounts[7]
    chain.transact(meter.functions.delegate(root_id, D, E, e, 0), d)
    chain.transact(meter.functions.revoke(root_id, D), chain.accounts[2])
    assert meter.functions.isPathActive(root_id, E).call() is False
    assert chain.revert_data(meter.functions.draw(root_id, E, 1), e) == \
        error_data("PathRevoked(bytes32,bytes32)", root_id, E)


def test_draw_rules(chain, meter):
    root_id, a = chain.root_id, chain.accounts[3]
    assert chain.revert_data(meter.functions.draw(root_id, A, 1), a, ANCHOR - 10) == \
        error_data("PeriodNotStarted(bytes32)", root_id)
    assert chain.revert_data(meter.functions.draw(root_id, B, 1), a, ANCHOR + 1) == \
        error_data("NotNodeAgent(address)", a)
    assert chain.revert_data(meter.functions.draw(root_id, A, 0), a) == error_data("ZeroAmount()")
