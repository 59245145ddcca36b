"""Binary metrics against scikit-learn and a brute-force threshold search."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.metrics import balanced as ref_balanced
from reference.metrics import brute_best_fbeta
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
    ours = metrics.fbeta(y, s, beta, threshold, weight=w)
    assert ours == pytest.approx(ref_fbeta(y, s, beta, threshold, w), rel=1e-12)
    tp = np.sum((y == 1) & (pred == 1) * (1 if w is None else w > 0))
    if tp > 0:  # sklearn's zero-division conventions differ from F = 1 / F = 0 otherwise
        assert ours == pytest.approx(fbeta_score(y, pred, beta=beta, sample_weight=w),
                                     rel=1e-12)
        if beta == 1.0:
            assert metrics.f1(y, s, threshold, weight=w) == pytest.approx(
                f1_score(y, pred, sample_weight=w), rel=1e-12)
    assert metrics.balanced_measure(y, s, threshold, weight=w) == pytest.approx(
        ref_balanced(y, s, threshold, w), rel=1e-12)
    has_both = _both_classes(y) if w is None else (
        np.sum(w[y == 1]) > 0 and np.sum(w[y == 0]) > 0)
    if has_both:
        assert metrics.balanced_measure(y, s, threshold, weight=w) == pytest.approx(
            balanced_accuracy_score(y, pred, sample_weight=w), rel=1e-12)


@pytest.mark.floors
@settings(max_examples=100, deadline=None)
@given(case=binary_cases(), beta=st.sampled_from([0.5, 1.0, 2.0]))
def test_best_threshold_against_brute_force(case, beta):
    y, s, w = case
    t, value = metrics.best_threshold(y, s, beta, weight=w)
    assert value == pytest.approx(brute_best_fbeta(y, s, beta, w), rel=1e-12, abs=1e-15)
    # The threshold reproduces the value exactly.
    assert metrics.fbeta(y, s, beta, threshold=t, weight=w) == value
    # It lies between distinct scores (or at the ends), never on a score that is
    # predicted positive.
    assert not np.any(s == t) or not np.any(s[s == t] > t)


@settings(max_examples=100, deadline=None)
@given(case=binary_cases(), threshold=st.sampled_from([-1.0, 0.0, 0.5]))
def test_confusion_counts_build_f1_fbeta_and_balanced(case, threshold):
    from gbrank.metrics._binary import _counts

    y, s, w = case
    counts = metrics.confusion_counts(y, s, threshold, weight=w)
    assert tuple(counts) == tuple(_counts(y, s, threshold, w))
    tp, fp, fn, tn = counts
    assert (counts.tp, counts.fp, counts.fn, counts.tn) == (tp, fp, fn, tn)
    assert tp + fp + fn + tn == pytest.approx(y.size if w is None else float(np.sum(w)),
                                              rel=1e-12)
    f1 = 1.0 if tp + fp + fn == 0.0 else 2 * tp / (2 * tp + fp + fn)
    assert f1 == metrics.f1(y, s, threshold, weight=w)
    for beta in (0.5, 2.0):
        num = (1.0 + beta * beta) * tp
        den = num + fp + beta * beta * fn
        assert (1.0 if den == 0.0 else num / den) == metrics.fbeta(y, s, beta, threshold,
                                                                   weight=w)
    recall = 1.0 if tp + fn == 0.0 else tp / (tp + fn)
    specificity = 1.0 if tn + fp == 0.0 else tn / (tn + fp)
    assert 0.5 * (recall + specificity) == metrics.balanced_measure(y, s, threshold,
                                                                    weight=w)


def test_confusion_counts_validate_like_f1():
    assert metrics.confusion_counts([1, -1, -1, 1], [0.3, -0.2, 0.1, -1.0]) == (1.0, 1.0,
                                                                              1.0, 1.0)
    with pytest.raises(ValueError, match="binary labels must be"):
        metrics.confusion_counts([0, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"threshold must be a finite number"):
        metrics.confusion_counts([0, 1], [0.1, 0.2], threshold=float("nan"))


def test_best_threshold_midpoints_and_ends():
    y = np.array([1, 1, 0, 0])
    t, v = metrics.best_threshold(y, np.array([4.0, 3.0, 2.0, 1.0]))
    assert (t, v) == (2.5, 1.0)
    # All positive best: threshold below the minimum.
    t, v = metrics.best_threshold([1, 1], [3.0, 1.0])
    assert v == 1.0 and t < 1.0
    # No positives: predicting nothing gives F = 1 at t = max(s).
    t, v = metrics.best_threshold([0, 0], [3.0, 1.0])
    assert (t, v) == (3.0, 1.0)
    # Adjacent floats: the midpoint would round onto the upper one.
    hi = 1.0
    lo = np.nextafter(hi, 0.0)
    t, v = metrics.best_threshold([1, 0], [hi, lo])
    assert v == 1.0 and lo <= t < hi
    # Huge scores: no overflow in the midpoint.
    t, v = metrics.best_threshold([1, 0], [1e308, -1e308])
    assert v == 1.0 and np.isfinite(t)


def test_best_threshold_large_matches_sorted_sweep():
    rng = np.random.default_rng(0)
    n = 20_000
    y = (rng.random(n) < 0.05).astype(float)
    s = np.round(rng.normal(size=n) + 2 * y, 1)
    t, v = metrics.best_threshold(y, s, beta=2.0)
    cands = np.unique(s)
    best = max(fbeta_score(y, s > c, beta=2.0) for c in cands)
    assert v == pytest.approx(best, rel=1e-12)
    assert fbeta_score(y, s > t, beta=2.0) == pytest.approx(v, rel=1e-12)


def test_conventions_and_label_forms():
    # a + b + c = 0: nothing to find, nothing wrongly found.
    assert metrics.f1([0, 0], [-1.0, -2.0]) == 1.0
    assert metrics.f1([1, 0], [-1.0, -2.0]) == 0.0
    # {-1, +1} labels equal {0, 1}.
    s = [0.3, -0.2, 0.1, -1.0]
    assert metrics.f1([1, -1, -1, 1], s) == metrics.f1([1, 0, 0, 1], s) == 0.5
    # One class absent: its term counts 1.
    assert metrics.balanced_measure([1, 1], [1.0, -1.0]) == 0.75
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
    t, v = metrics.best_threshold(y, s)
    assert metrics.f1(y, s, threshold=t) == v
    assert v == pytest.approx(f1_score(y, s > t), rel=1e-12)
    assert metrics.balanced_measure(y, s) == pytest.approx(
        balanced_accuracy_score(y, s > 0), rel=1e-12)
