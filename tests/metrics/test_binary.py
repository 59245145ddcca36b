"""Binary metrics against scikit-learn and a brute-force threshold search."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.metrics import balanced as ref_balanced
from reference.metrics import brute_best_fbeta, confusion
from reference.metrics import fbeta as ref_fbeta
from sklearn.metrics import balanced_accuracy_score, f1_score, fbeta_score

from gbrank import metrics


@st.composite
def binary_cases(draw, max_n=40):
    n = draw(st.integers(1, max_n))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    score = st.one_of(st.integers(-2, 2).map(float),
                      st.floats(-5, 5, allow_nan=False, allow_infinity=False))
    s = np.array(draw(st.lists(score, min_size=n, max_size=n)))
    w = None
    if draw(st.booleans()):
        w = np.array(draw(st.lists(st.floats(0.0, 3.0), min_size=n, max_size=n)))
        if not np.any(w > 0):  # all-zero weights are refused (gbrank's weight rule)
            w[draw(st.integers(0, n - 1))] = draw(st.floats(0.1, 3.0))
    return y, s, w


def _both_classes(y):
    return 0 < y.sum() < y.size


@pytest.mark.floors
@settings(max_examples=100, deadline=None)
@given(case=binary_cases(), beta=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
       threshold=st.sampled_from([-1.0, 0.0, 0.5]))
def test_fbeta_and_balanced_equal_sklearn(case, beta, threshold):
    y, s, w = case
    pred = (s > threshold).astype(int)
    ours = metrics.fbeta(y, s, beta, threshold, weight=w, margin=True)
    assert ours == pytest.approx(ref_fbeta(y, s, beta, threshold, w), rel=1e-12)
    tp = np.sum((y == 1) & (pred == 1) * (1 if w is None else w > 0))
    if tp > 0:  # sklearn's zero-division conventions differ from F = 1 / F = 0 otherwise
        assert ours == pytest.approx(fbeta_score(y, pred, beta=beta, sample_weight=w),
                                     rel=1e-12)
        if beta == 1.0:
            assert metrics.f1(y, s, threshold, weight=w, margin=True) == pytest.approx(
                f1_score(y, pred, sample_weight=w), rel=1e-12)
    assert metrics.balanced_measure(y, s, threshold, weight=w, margin=True) == pytest.approx(
        ref_balanced(y, s, threshold, w), rel=1e-12)
    has_both = _both_classes(y) if w is None else (
        np.sum(w[y == 1]) > 0 and np.sum(w[y == 0]) > 0)
    if has_both:
        assert metrics.balanced_measure(y, s, threshold, weight=w, margin=True) == pytest.approx(
            balanced_accuracy_score(y, pred, sample_weight=w), rel=1e-12)


@pytest.mark.floors
@settings(max_examples=100, deadline=None)
@given(case=binary_cases(), beta=st.sampled_from([0.5, 1.0, 2.0]))
def test_best_threshold_against_brute_force(case, beta):
    y, s, w = case
    t, value = metrics.best_threshold(y, s, beta, weight=w, margin=True)
    assert value == pytest.approx(brute_best_fbeta(y, s, beta, w), rel=1e-12, abs=1e-15)
    # The threshold reproduces the value exactly.
    assert metrics.fbeta(y, s, beta, threshold=t, weight=w, margin=True) == value
    # It lies between distinct scores (or at the ends), never on a score that is
    # predicted positive.
    assert not np.any(s == t) or not np.any(s[s == t] > t)


@settings(max_examples=100, deadline=None)
@given(case=binary_cases(), threshold=st.sampled_from([-1.0, 0.0, 0.5]))
def test_confusion_counts_build_f1_fbeta_and_balanced(case, threshold):
    from gbrank.metrics._binary import _counts

    y, s, w = case
    counts = metrics.confusion_counts(y, s, threshold, weight=w, margin=True)
    assert tuple(counts) == tuple(_counts(y, s, threshold, w, True))
    tp, fp, fn, tn = counts
    assert (counts.tp, counts.fp, counts.fn, counts.tn) == (tp, fp, fn, tn)
    assert tp + fp + fn + tn == pytest.approx(y.size if w is None else float(np.sum(w)),
                                              rel=1e-12)
    f1 = 1.0 if tp + fp + fn == 0.0 else 2 * tp / (2 * tp + fp + fn)
    assert f1 == metrics.f1(y, s, threshold, weight=w, margin=True)
    for beta in (0.5, 2.0):
        num = (1.0 + beta * beta) * tp
        den = num + fp + beta * beta * fn
        assert (1.0 if den == 0.0 else num / den) == metrics.fbeta(y, s, beta, threshold,
                                                                   weight=w, margin=True)
    recall = 1.0 if tp + fn == 0.0 else tp / (tp + fn)
    specificity = 1.0 if tn + fp == 0.0 else tn / (tn + fp)
    assert 0.5 * (recall + specificity) == metrics.balanced_measure(y, s, threshold,
                                                                    weight=w, margin=True)


def test_confusion_counts_validate_like_f1():
    assert metrics.confusion_counts([1, -1, -1, 1], [0.3, -0.2, 0.1, -1.0],
                                    margin=True) == (1.0, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="binary labels must be"):
        metrics.confusion_counts([0, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"threshold must be a finite number"):
        metrics.confusion_counts([0, 1], [0.1, 0.2], threshold=float("nan"))


def test_best_threshold_midpoints_and_ends():
    y = np.array([1, 1, 0, 0])
    t, v = metrics.best_threshold(y, np.array([4.0, 3.0, 2.0, 1.0]), margin=True)
    assert (t, v) == (2.5, 1.0)
    # All positive best: threshold below the minimum.
    t, v = metrics.best_threshold([1, 1], [3.0, 1.0], margin=True)
    assert v == 1.0 and t < 1.0
    # No positives: predicting nothing gives F = 1 at t = max(s).
    t, v = metrics.best_threshold([0, 0], [3.0, 1.0], margin=True)
    assert (t, v) == (3.0, 1.0)
    # Adjacent floats: the midpoint would round onto the upper one.
    hi = 1.0
    lo = np.nextafter(hi, 0.0)
    t, v = metrics.best_threshold([1, 0], [hi, lo], margin=True)
    assert v == 1.0 and lo <= t < hi
    # Huge scores: no overflow in the midpoint.
    t, v = metrics.best_threshold([1, 0], [1e308, -1e308], margin=True)
    assert v == 1.0 and np.isfinite(t)


def test_best_threshold_large_matches_sorted_sweep():
    rng = np.random.default_rng(0)
    n = 20_000
    y = (rng.random(n) < 0.05).astype(float)
    s = np.round(rng.normal(size=n) + 2 * y, 1)
    t, v = metrics.best_threshold(y, s, beta=2.0, margin=True)
    cands = np.unique(s)
    best = max(fbeta_score(y, s > c, beta=2.0) for c in cands)
    assert v == pytest.approx(best, rel=1e-12)
    assert fbeta_score(y, s > t, beta=2.0) == pytest.approx(v, rel=1e-12)


def test_conventions_and_label_forms():
    # a + b + c = 0: nothing to find, nothing wrongly found.
    assert metrics.f1([0, 0], [-1.0, -2.0], margin=True) == 1.0
    assert metrics.f1([1, 0], [-1.0, -2.0], margin=True) == 0.0
    # {-1, +1} labels equal {0, 1}.
    s = [0.3, -0.2, 0.1, -1.0]
    assert metrics.f1([1, -1, -1, 1], s, margin=True) == metrics.f1([1, 0, 0, 1], s,
                                                                    margin=True) == 0.5
    # One class absent: its term counts 1.
    assert metrics.balanced_measure([1, 1], [1.0, -1.0], margin=True) == 0.75
    assert metrics.fbeta([1, 0, 1], [0.9, 0.8, 0.1], beta=2.0, threshold=0.5) == pytest.approx(
        5 * 1 / (5 * 1 + 1 + 4 * 1))


def test_binary_bad_input():
    with pytest.raises(ValueError, match="binary labels must be"):
        metrics.f1([0, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"beta must be a finite number in \(0, inf\), got 0"):
        metrics.fbeta([0, 1], [0.1, 0.2], beta=0)
    with pytest.raises(ValueError, match=r"threshold must be a finite number in \(-inf, inf\), "
                                         r"got nan"):
        metrics.f1([0, 1], [0.1, 0.2], threshold=float("nan"))
    with pytest.raises(ValueError, match=r"scores contain 1 NaN/inf value\(s\) \(first at index 1"):
        metrics.best_threshold([0, 1], [0.1, np.inf])
    with pytest.raises(ValueError, match="labels have 2 rows but scores have 3"):
        metrics.balanced_measure([0, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="weight has 1 entries but there are 2 rows"):
        metrics.f1([0, 1], [0.1, 0.2], weight=[1.0])


def test_million_rows():
    rng = np.random.default_rng(1)
    y = (rng.random(1_000_000) < 0.01).astype(float)
    s = rng.normal(size=y.size) + 3 * y
    t, v = metrics.best_threshold(y, s, margin=True)
    assert metrics.f1(y, s, threshold=t, margin=True) == v
    assert v == pytest.approx(f1_score(y, s > t), rel=1e-12)
    assert metrics.balanced_measure(y, s, margin=True) == pytest.approx(
        balanced_accuracy_score(y, s > 0), rel=1e-12)


# ---------------------------------------------------------------- the scale of the scores


@st.composite
def probability_cases(draw, max_n=40):
    y, _, w = draw(binary_cases(max_n))
    p = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), st.floats(0.0, 1.0))
    return y, np.array(draw(st.lists(p, min_size=y.size, max_size=y.size))), w


@pytest.mark.floors
@settings(max_examples=100, deadline=None)
@given(case=probability_cases(), beta=st.sampled_from([0.5, 1.0, 2.0]),
       threshold=st.sampled_from([None, 0.3, 0.5]))
def test_probabilities_by_default_equal_sklearn(case, beta, threshold):
    y, p, w = case
    pred = (p > (0.5 if threshold is None else threshold)).astype(int)
    ours = metrics.fbeta(y, p, beta, threshold, weight=w)
    assert ours == pytest.approx(ref_fbeta(y, p, beta, 0.5 if threshold is None else threshold,
                                           w), rel=1e-12)
    if np.sum((y == 1) & (pred == 1) * (1 if w is None else w > 0)) > 0:
        assert ours == pytest.approx(fbeta_score(y, pred, beta=beta, sample_weight=w),
                                     rel=1e-12)
        assert metrics.f1(y, p, threshold, weight=w) == pytest.approx(
            f1_score(y, pred, sample_weight=w), rel=1e-12)
    assert tuple(metrics.confusion_counts(y, p, threshold, weight=w)) == pytest.approx(
        confusion(y, p, 0.5 if threshold is None else threshold, w), rel=1e-12)
    t, best = metrics.best_threshold(y, p, beta, weight=w)
    assert metrics.fbeta(y, p, beta, t, weight=w) == best
    assert best == pytest.approx(brute_best_fbeta(y, p, beta, w), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("neg", [0, -1])
def test_predicted_labels_read_as_labels(neg):
    # scikit-learn's f1_score(y, y_pred): predictions {0, 1} or {-1, +1} are labels.
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200)
    pred = np.where(rng.random(200) < 0.7, y, 1 - y)
    labels = np.where(pred == 1, 1, neg)
    assert metrics.f1(y, labels) == pytest.approx(f1_score(y, pred), rel=1e-12)
    assert metrics.fbeta(y, labels, 2.0) == pytest.approx(fbeta_score(y, pred, beta=2.0),
                                                          rel=1e-12)
    assert metrics.balanced_measure(y, labels) == pytest.approx(
        balanced_accuracy_score(y, pred), rel=1e-12)
    assert metrics.f1(y, np.full(200, neg)) == 0.0  # nothing predicted positive


def test_margins_are_refused_on_the_probability_default():
    y, margins = [1, 0, 1, 1, 0], [0.8, 0.3, -0.2, 1.5, -1.0]
    calls = [metrics.f1, metrics.balanced_measure, metrics.best_threshold,
             metrics.confusion_counts, lambda y, s: metrics.fbeta(y, s, 2.0),
             lambda y, s: metrics.f1(y, s, threshold=0.0)]
    for call in calls:
        with pytest.raises(ValueError, match=r"scores hold 3 value\(s\) outside \[0, 1\] "
                                             r"\(first at index 2: -0\.2\), so they are not "
                                             r"probabilities; .*pass margin=True"):
            call(y, margins)
    # Not labels either: {-1, 0, 1} mixes the two label forms.
    with pytest.raises(ValueError, match="margin=True"):
        metrics.f1(y, [1, 0, -1, 1, 0])
    with pytest.raises(ValueError, match="margin must be True or False"):
        metrics.f1(y, [1, 0, 1, 1, 0], margin="yes")


def test_threshold_default_follows_the_scale():
    y = [1, 0, 1, 0]
    p = np.array([0.9, 0.6, 0.45, 0.1])
    z = np.log(p / (1 - p))
    # 0.5 on probabilities and 0 on margins are the same cut.
    assert metrics.f1(y, p) == metrics.f1(y, z, margin=True) == metrics.f1(
        y, p, threshold=0.5) == 0.5  # a = 1, b = 1, c = 1
    # A number is on the scale of s.
    assert metrics.f1(y, p, threshold=0.4) == 0.8
    assert metrics.f1(y, z, threshold=np.log(0.4 / 0.6), margin=True) == 0.8
    t, best = metrics.best_threshold(y, p)
    assert (round(t, 12), best) == (0.275, 0.8)  # between 0.1 and 0.45


@pytest.mark.floors
def test_predict_proba_of_a_classifier_reads_as_scikit_learn(lgbm_classifier, binary_data):
    # The call: F1 of predict_proba output counted every row positive (s > 0).
    clf = lgbm_classifier
    X, y = binary_data["X_test"], binary_data["y_test"]
    p = clf.predict_proba(X)[:, 1]
    assert metrics.f1(y, p) == pytest.approx(f1_score(y, p > 0.5), rel=1e-12)
    assert metrics.f1(y, p) != pytest.approx(f1_score(y, p > 0.0))  # the old reading
    assert metrics.f1(y, clf.predict(X)) == pytest.approx(f1_score(y, clf.predict(X)),
                                                          rel=1e-12)
    margins = clf.predict(X, raw_score=True)
    assert metrics.f1(y, margins, margin=True) == pytest.approx(f1_score(y, margins > 0),
                                                                rel=1e-12)
    with pytest.raises(ValueError, match="margin=True"):
        metrics.f1(y, margins)


def test_average_precision_is_scikit_learns_on_any_scale():
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(3)
    y = (rng.random(400) < 0.1).astype(float)
    s = np.round(rng.standard_normal(400), 1)  # ties between rows
    w = rng.random(400)
    expected = average_precision_score(y, s, sample_weight=w)
    assert metrics.average_precision(y, s, weight=w) == expected
    # Only the order counts: a sigmoid of the margins, and labels in {-1, +1}.
    p = 1.0 / (1.0 + np.exp(-s))
    assert metrics.average_precision(2 * y - 1, p, weight=w) == pytest.approx(expected)
    with pytest.raises(ValueError):
        metrics.average_precision(y, s[:-1])


def test_ap_is_a_registry_name_of_the_order():
    m = metrics.get_metric("AP")
    assert (m.name, m.kind, m.higher_is_better, m.reads_scale) == ("ap", "binary", True,
                                                                    False)
    # No cut and no scale to bind: the same metric comes back.
    assert m.with_threshold(0.3) is m and m.with_margin(True) is m
    y, s = np.array([1.0, 0.0, 1.0, 0.0]), np.array([0.9, 0.8, 0.7, 0.1])
    assert m(y, s) == metrics.average_precision(y, s)
