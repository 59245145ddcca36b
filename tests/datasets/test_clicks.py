"""Click logs: gbrank.datasets.simulate_clicks and gbrank.metrics.ips_dcg.

References: hand-worked displays, the click model's own probabilities (large samples
against their expectation) and the exact expectation of IPS-DCG."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank.datasets import simulate_clicks
from gbrank.metrics import ips_dcg


def _data(n_queries=400, size=15, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, n_queries * size).astype(float)
    weak = y + 3.0 * rng.standard_normal(y.size)
    return y, np.full(n_queries, size), weak


def test_display_is_the_logging_rankers_top_n():
    y = np.array([0.0, 2.0, 1.0, 0.0, 1.0, 2.0])
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.3, 0.2])
    log = simulate_clicks(y, [4, 2], scores, top_n=3, seed=1)
    # Query 0: 0.9, then the tie 0.5/0.5 in row order, then 0.1 is cut; query 1: 0.3, 0.2.
    assert log.rows.tolist() == [1, 0, 2, 4, 5]
    assert log.position.tolist() == [1, 2, 3, 1, 2]
    assert log.group.tolist() == [3, 2] and log.qid.tolist() == [0, 0, 0, 1, 1]
    # Query ids in any order give the same display.
    perm = np.array([4, 0, 5, 2, 1, 3])
    qid = np.array([0, 0, 0, 0, 1, 1])[perm]
    again = simulate_clicks(y[perm], None, scores[perm], qid=qid, top_n=3, seed=1)
    assert perm[again.rows].tolist() == log.rows.tolist()


def test_position_based_click_rates_follow_the_model():
    y, g, weak = _data()
    n = 400
    log = simulate_clicks(y, g, weak, top_n=10, eta=1.0, epsilon_minus=0.1,
                          epsilon_plus=1.0, n_sessions=n, seed=3)
    attractive = 0.1 + 0.9 * (2.0 ** y[log.rows] - 1) / 15.0
    for p in (1, 2, 5, 10):
        at = log.position == p
        expected = np.mean(attractive[at]) / p
        rate = log.clicks[at].mean() / n
        assert rate == pytest.approx(expected, rel=0.03), p
    np.testing.assert_allclose(log.examination, 1.0 / np.arange(1, 11))
    # The same seed, the same log; sessions kept add up to the summed counts.
    kept = simulate_clicks(y, g, weak, top_n=10, n_sessions=7, sessions="keep", seed=4)
    summed = simulate_clicks(y, g, weak, top_n=10, n_sessions=7, seed=4)
    assert kept.group.size == 7 * g.size and set(kept.clicks) <= {0.0, 1.0}
    per_row = np.zeros(y.size)
    np.add.at(per_row, kept.rows, kept.clicks)
    np.testing.assert_array_equal(per_row[summed.rows], summed.clicks)


def test_cascade_user_stops_after_a_click():
    y, g, weak = _data(n_queries=300)
    kept = simulate_clicks(y, g, weak, user="cascade", n_sessions=5, sessions="keep", seed=5)
    offsets = np.concatenate(([0], np.cumsum(kept.group)))
    per_session = np.add.reduceat(kept.clicks, offsets[:-1])
    assert per_session.max() == 1.0 and per_session.mean() > 0.3
    # Without stopping every row is read: the click rate no longer falls with position.
    free = simulate_clicks(y, g, weak, user="cascade", stop_after_click=0.0, n_sessions=200,
                           seed=6)
    attractive = 0.1 + 0.9 * (2.0 ** y[free.rows] - 1) / 15.0
    assert free.clicks.sum() / 200 == pytest.approx(attractive.sum(), rel=0.02)


def test_ips_dcg_hand_worked_and_unbiased():
    # Two queries; ranks by the model, clicks at logged positions with propensities.
    clicks = np.array([1.0, 0.0, 1.0, 0.0, 2.0])
    s = np.array([0.2, 0.9, 0.5, 0.3, 0.1])
    position = np.array([3, 1, 2, 1, 2])
    rho = np.array([1.0, 0.5, 0.25])
    # Query 0 ranks rows 1, 2, 0: clicks at ranks 2 (pos 2) and 3 (pos 3).
    q0 = 1 / 0.5 / np.log2(3) + 1 / 0.25 / np.log2(4)
    q1 = 2 / 0.5 / np.log2(3)  # rows 3, 4: the 2 clicks at rank 2, logged at position 2
    assert ips_dcg(clicks, s, position, rho, [3, 2], k=10) == pytest.approx((q0 + q1) / 2)
    assert ips_dcg(clicks, s, position, rho, [3, 2], k=2) == pytest.approx(
        (1 / 0.5 / np.log2(3) + q1) / 2)
    # Expectation under the position-based model: DCG with gains = attractiveness.
    y, g, weak = _data(n_queries=200, size=12, seed=7)
    n = 3000
    log = simulate_clicks(y, g, weak, top_n=8, eta=1.0, n_sessions=n, seed=8)
    model = y[log.rows] + np.random.default_rng(9).standard_normal(log.rows.size)
    estimate = ips_dcg(log.clicks / n, model, log.position, log.examination, log.group, k=5)
    attractive = 0.1 + 0.9 * (2.0 ** y[log.rows] - 1) / 15.0
    exact = ips_dcg(attractive, model, log.position, np.ones(8), log.group, k=5)
    assert estimate == pytest.approx(exact, rel=0.02)


def test_bad_click_input_is_named():
    y, g, weak = _data(n_queries=5)
    with pytest.raises(ValueError, match="needs logging_scores"):
        simulate_clicks(y, g)
    with pytest.raises(ValueError, match="epsilon_plus must be"):
        simulate_clicks(y, g, weak, epsilon_minus=0.5, epsilon_plus=0.2)
    with pytest.raises(ValueError, match="user must be one of"):
        simulate_clicks(y, g, weak, user="dbn")
    c, s = np.array([1.0, 0.0]), np.array([0.1, 0.2])
    with pytest.raises(ValueError, match="position has 3 entries but there are 2 rows"):
        ips_dcg(c, s, [1, 2, 3], [1.0, 0.5])
    with pytest.raises(ValueError, match="integer positions ≥ 1.*first at index 1: 0.0"):
        ips_dcg(c, s, [1, 0], [1.0, 0.5])
    with pytest.raises(ValueError, match="position 3 occurs"):
        ips_dcg(c, s, [1, 3], [1.0, 0.5])
    with pytest.raises(ValueError, match="position 2 has 0.0"):
        ips_dcg(c, s, [1, 2], [1.0, 0.0])


# -- randomised sessions and what a log can identify ---------------------------------------


def test_randomized_sessions_show_the_same_rows_elsewhere():
    from gbrank.datasets import position_identifiability

    y, g, weak = _data(n_queries=60, size=12, seed=3)
    kw = dict(top_n=8, n_sessions=30, sessions="keep", seed=4)
    plain = simulate_clicks(y, g, weak, **kw)
    same = simulate_clicks(y, g, weak, randomized=0.0, **kw)
    np.testing.assert_array_equal(plain.rows, same.rows)
    np.testing.assert_array_equal(plain.clicks, same.clicks)
    mixed = simulate_clicks(y, g, weak, randomized=0.4, **kw)
    np.testing.assert_array_equal(mixed.position, plain.position)
    starts = np.r_[0, np.cumsum(plain.group)]
    moved = []
    for lo, hi in zip(starts[:-1], starts[1:], strict=True):
        # every session shows the logger's top rows, in its order or shuffled
        assert sorted(mixed.rows[lo:hi]) == sorted(plain.rows[lo:hi])
        moved.append(not np.array_equal(mixed.rows[lo:hi], plain.rows[lo:hi]))
        if not moved[-1]:  # a session shown as logged clicks as it did
            np.testing.assert_array_equal(mixed.clicks[lo:hi], plain.clicks[lo:hi])
    # 1800 sessions, each reshuffled with probability 0.4 (a shuffle of 8 rows leaves them
    # in place with probability 1/8!): within 4 standard deviations of 0.4
    assert abs(np.mean(moved) - 0.4) < 4 * np.sqrt(0.4 * 0.6 / len(moved))
    assert position_identifiability(plain.position, plain.qid, plain.rows).n_identifying == 0
    assert position_identifiability(mixed.position, mixed.qid, mixed.rows).share > 0.9
    with pytest.raises(ValueError, match="use sessions='keep'"):
        simulate_clicks(y, g, weak, randomized=0.5)


def test_position_identifiability_counts_pairs_and_swaps_by_hand():
    from gbrank.datasets import position_identifiability

    # query 1: document 7 at positions 1 and 2, document 8 at 2 and 1, document 9 always
    # at 3; query 2: document 7 (another pair: another query) at position 1 only
    pos = [1, 2, 3, 2, 1, 3, 1]
    qid = [1, 1, 1, 1, 1, 1, 2]
    item = [7, 8, 9, 7, 8, 9, 7]
    ident = position_identifiability(pos, qid, item)
    assert (ident.n_pairs, ident.n_identifying) == (4, 2)
    assert ident.share == 0.5
    assert ident.positions.tolist() == [1, 2, 3]
    np.testing.assert_array_equal(ident.swaps, [[3, 2, 0], [2, 2, 0], [0, 0, 1]])
    assert "50.0% of its 4 query–document pairs (2)" in str(ident)
    # documents as feature rows: the same counts
    X = np.array([[0.1, 1.0], [0.2, 1.0], [0.3, 1.0]])[[0, 1, 2, 0, 1, 2, 0]]
    X[6, 1] = 2.0  # query 2's features differ
    by_rows = position_identifiability(pos, X=X)
    assert (by_rows.n_pairs, by_rows.n_identifying) == (4, 2)
    with pytest.raises(ValueError, match="item= .* or X="):
        position_identifiability(pos)
    with pytest.raises(ValueError, match="qid has 2 entries"):
        position_identifiability(pos, [1, 2], item)


def test_position_identifiability_reads_rows_with_missing_values_as_one_document():
    """Feature rows compared as documents: a row with a missing value (NaN) is the
    same document as its copy, and -0.0 the same as 0.0 (np.unique along rows would
    call them distinct, and a log with missing features would look unidentifiable)."""
    from gbrank.datasets import position_identifiability

    X = np.array([[1.0, np.nan], [2.0, 0.0], [1.0, np.nan], [2.0, -0.0], [3.0, np.nan]])
    ident = position_identifiability([1, 2, 2, 1, 3], X=X)
    assert (ident.n_pairs, ident.n_identifying) == (3, 2)


def test_estimate_propensity_reads_documents_as_position_identifiability_does():
    """Rows holding a missing value were a new document each for estimate_propensity
    (np.unique on floats) and one document for position_identifiability: a feature
    missing everywhere gave "100 % identifiable" and then a refusal, NaN on some rows
    moved the estimate (0.526 to 0.558 at position 2), a text column was refused
    (eleventh probe). Both read documents alike: the estimate from X equals item='s."""
    pd = pytest.importorskip("pandas")
    from gbrank.datasets import (
        estimate_propensity,
        make_ranking,
        position_identifiability,
        simulate_clicks,
    )

    X, y, group = make_ranking(n_queries=200, rows_per_query=15, n_features=5, seed=0)
    weak = X[:, 0] + np.random.default_rng(0).normal(size=y.size)
    log = simulate_clicks(y, group, weak, top_n=10, n_sessions=50, sessions="keep",
                          randomized=0.3, seed=1)
    by_item = estimate_propensity(log.clicks, log.position, item=log.rows)
    rows = X[log.rows].copy()
    rows[:, 4] = np.nan
    some = X[log.rows].copy()
    some[log.rows % 3 == 0, 2] = np.nan
    frame = pd.DataFrame(X[log.rows], columns=list("abcde")).assign(device="mobile")
    for documents in (rows, some, frame):
        np.testing.assert_allclose(
            estimate_propensity(log.clicks, log.position, X=documents), by_item,
            rtol=0, atol=1e-12)
        assert position_identifiability(log.position, X=documents).share == \
            position_identifiability(log.position, item=log.rows).share
