"""gbrank.tuning._cut: binary threshold metrics judged at a cut chosen on rows they are
not scored on; the cut the recommended code decides at."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank.tuning._cut import (
    _halves,
    as_probability,
    best_cut,
    cross_fitted,
    decision_metric,
    margin_of,
    reads_cut,
)


def _brute(name, y, s):
    """Every cut (below each distinct score and above the top one) tried: the best
    value, from scikit-learn's metrics."""
    from sklearn.metrics import balanced_accuracy_score, fbeta_score

    best = -1.0
    for t in np.r_[np.unique(s) - 1e-9, s.max() + 1.0]:
        pred = (s > t).astype(int)
        if name == "balanced":
            v = balanced_accuracy_score(y, pred) if 0 < y.sum() < y.size else np.nan
        else:
            beta = 2.0 if name == "fbeta:2" else 1.0
            v = fbeta_score(y, pred, beta=beta, zero_division=1.0)
        best = max(best, v)
    return best


def test_threshold_metrics_are_the_binary_ones_that_read_a_cut():
    assert reads_cut("f1") and reads_cut("fbeta:2") and reads_cut("balanced")
    assert not reads_cut("ap") and not reads_cut("logloss") and not reads_cut("ndcg@10")


@pytest.mark.parametrize("name", ["f1", "fbeta:2", "balanced"])
def test_best_cut_reaches_the_best_value_of_any_cut(name):
    from gbrank.metrics import get_metric

    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(4, 40))
        y = (rng.random(n) < rng.uniform(0.1, 0.6)).astype(float)
        y[:2] = (0.0, 1.0)  # both classes (scikit-learn's balanced accuracy needs them)
        s = np.round(rng.standard_normal(n), 1)  # ties
        cut = best_cut(name, y, s)
        got = get_metric(name).with_margin(True).with_threshold(cut)(y, s)
        assert got == pytest.approx(_brute(name, y, s), abs=1e-12), (y, s, cut)


def test_the_halves_are_stratified_and_read_only_the_labels():
    y = np.r_[np.ones(7), np.zeros(30)]
    first = _halves(y)
    assert abs(2 * first[y == 1].sum() - 7) == 1 and 2 * first[y == 0].sum() == 30
    np.testing.assert_array_equal(_halves(y.copy()), first)


def test_cross_fitted_judges_each_half_at_the_other_halfs_best_cut():
    """The value defined by hand: cut chosen on one half (by brute force), decisions on
    the other, counts pooled, F1 by scikit-learn."""
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(3)
    y = (rng.random(200) < 0.1).astype(float)
    s = rng.standard_normal(200) + 2.0 * y - 3.5  # margins: few pass 0
    first = _halves(y)
    pred = np.zeros(200, dtype=int)
    for here, other in ((first, ~first), (~first, first)):
        ts = np.r_[np.unique(s[other]) - 1e-9, s[other].max() + 1.0]
        vals = [f1_score(y[other], s[other] > t, zero_division=1.0) for t in ts]
        t = ts[len(vals) - 1 - int(np.argmax(vals[::-1]))]  # ties: the highest cut
        pred[here] = s[here] > t
    assert cross_fitted("f1", y, s) == pytest.approx(f1_score(y, pred), abs=1e-12)
    # The fixed cut (margin > 0) the tuner used to judge at finds almost nothing here.
    assert f1_score(y, s > 0) < 0.2 < cross_fitted("f1", y, s)


def test_the_printed_threshold_is_the_cut_the_estimator_decides_at():
    from gbrank.datasets import make_imbalanced
    from gbrank.sklearn import GBClassifier

    for cut in (-7.3, -0.41, 0.0, 2.2):
        p = as_probability(cut)
        assert 0.0 < p < 1.0 and p == float(f"{p:.6g}")
        assert margin_of(p) == pytest.approx(cut, abs=1e-5)
    X, y = make_imbalanced(n_rows=300, n_features=8, positive_rate=0.2, seed=0)
    p = as_probability(-1.234567)
    clf = GBClassifier("native:binary", threshold=p, n_estimators=5).fit(X, y)
    prob = clf.predict_proba(X)[:, 1]
    # decision_function is the margin less the estimator's margin cut: that cut is ours.
    np.testing.assert_allclose(clf.decision_function(X) + margin_of(p),
                               np.log(prob) - np.log1p(-prob), rtol=0, atol=1e-9)
    assert clf.threshold_ == pytest.approx(p, rel=1e-15)


def test_the_code_decides_at_the_target_or_the_first_threshold_metric():
    assert decision_metric(("f1", "fbeta:2"), "fbeta:2") == "fbeta:2"
    assert decision_metric(("ap", "f1"), "ap") == "f1"
    assert decision_metric(("ap", "logloss"), "ap") is None
