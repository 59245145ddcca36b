"""gbrank.tuning._cut: binary threshold metrics judged at a cut chosen on rows they are
not scored on; the cut the recommended code decides at; K classes at class offsets
chosen likewise."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank.tuning._cut import (
    _halves,
    as_offsets,
    as_probability,
    best_cut,
    cross_fitted,
    cross_fitted_decisions,
    decides_by_offsets,
    decision_metric,
    margin_of,
    reads_cut,
    reads_decision,
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


def _multiclass(n=400, seed=5):
    rng = np.random.default_rng(seed)
    y = rng.choice(4, n, p=[0.8, 0.12, 0.06, 0.02]).astype(float)
    s = rng.standard_normal((n, 4))
    s[np.arange(n), y.astype(int)] += 1.2  # informative, but the argmax favours class 0
    s[:, 0] += 1.0
    return y, s


def test_multiclass_studies_on_a_macro_f_beta_decide_at_offsets():
    assert decides_by_offsets("macro_f1") and decides_by_offsets("macro_fbeta:2")
    for name in ("weighted_f1", "micro_f1", "balanced_accuracy", "mlogloss", "f1", "ap"):
        assert not decides_by_offsets(name)
    assert reads_decision("weighted_f1") and reads_decision("balanced_accuracy")
    assert not reads_decision("mlogloss") and not reads_decision("f1")


def test_cross_fitted_decisions_judge_each_half_at_the_other_halfs_offsets():
    """Defined by hand: the halves stratified over the K classes; offsets from
    best_class_offsets on one half (macro-F1), decisions on the other."""
    from gbrank.metrics import best_class_offsets

    y, s = _multiclass()
    first = _halves(y)
    for c in range(4):  # stratified by class
        assert abs(2 * first[y == c].sum() - (y == c).sum()) <= 1
    pred = np.empty(y.size, dtype=int)
    for here, other in ((first, ~first), (~first, first)):
        b = best_class_offsets(y[other], s[other], 1.0, margin=True)[0]
        pred[here] = np.argmax(s[here] + b, axis=1)
    d = cross_fitted_decisions("macro_f1", y, s)
    np.testing.assert_array_equal(np.argmax(d, axis=1), pred)


def test_folds_are_decided_at_the_offsets_best_on_the_other_folds():
    """Fold k of a macro-F1 study: offsets from best_class_offsets on the other folds'
    rows pooled; every decision metric by scikit-learn from those decisions."""
    from sklearn.metrics import balanced_accuracy_score, f1_score

    from gbrank.metrics import best_class_offsets
    from gbrank.tuning._cv import score_folds

    parts = [_multiclass(n=300, seed=k) for k in range(3)]
    got = score_folds(("macro_f1", "balanced_accuracy"), "macro_f1",
                      [(y, s, None, None) for y, s in parts])
    for k, (y, s) in enumerate(parts):
        ys = np.concatenate([p[0] for j, p in enumerate(parts) if j != k])
        ss = np.concatenate([p[1] for j, p in enumerate(parts) if j != k])
        pred = np.argmax(s + best_class_offsets(ys, ss, 1.0, margin=True)[0], axis=1)
        assert got["macro_f1"][k] == pytest.approx(f1_score(y, pred, average="macro"),
                                                   abs=1e-12)
        assert got["balanced_accuracy"][k] == pytest.approx(
            balanced_accuracy_score(y, pred), abs=1e-12)


def test_score_all_reads_the_decisions_at_given_offsets():
    from sklearn.metrics import balanced_accuracy_score, f1_score

    from gbrank.metrics import get_metric
    from gbrank.tuning._cv import score_all

    y, s = _multiclass()
    b = [0.0, 0.9, 1.4, 2.0]
    got = score_all(("macro_f1", "weighted_f1", "balanced_accuracy", "mlogloss"),
                    "macro_f1", y, s, None, cuts={"macro_f1": b})
    pred = np.argmax(s + np.array(b), axis=1)
    assert got["macro_f1"] == pytest.approx(f1_score(y, pred, average="macro"), abs=1e-12)
    assert got["weighted_f1"] == pytest.approx(f1_score(y, pred, average="weighted"),
                                               abs=1e-12)
    assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, pred),
                                                     abs=1e-12)
    # probabilities, not decisions
    assert got["mlogloss"] == get_metric("mlogloss").with_margin(True)(y, s)
    # a study on another metric decides at the argmax, as the metric does
    plain = score_all(("macro_f1",), "weighted_f1", y, s, None, cuts={"macro_f1": b})
    assert plain["macro_f1"] == pytest.approx(f1_score(y, s.argmax(axis=1), average="macro"),
                                              abs=1e-12)
    assert as_offsets([1.0, 1.123456789, -1.0]) == [0.0, 0.123457, -2.0]
