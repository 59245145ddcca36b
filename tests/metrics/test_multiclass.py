"""Multiclass metrics against scikit-learn (to 1e-12) and by name through the registry."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

from gbrank import get_metric
from gbrank.metrics import (
    balanced_accuracy,
    best_class_offsets,
    fbeta_multiclass,
    multiclass_log_loss,
)


def _data(n=500, k=5, seed=0, absent=None):
    rng = np.random.default_rng(seed)
    y = rng.choice(k, size=n, p=[0.6, 0.2, 0.1, 0.07, 0.03][:k] / np.sum(
        [0.6, 0.2, 0.1, 0.07, 0.03][:k]))
    s = rng.standard_normal((n, k)) + 1.5 * np.eye(k)[y]
    s[::7] = np.round(s[::7])  # ties: argmax takes the lowest class
    if absent is not None:
        y[y == absent] = 0
        s[:, absent] = -10.0
    return y.astype(float), s, rng.random(n) + 0.2


@pytest.mark.floors
@pytest.mark.parametrize("absent", [None, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_against_scikit_learn(absent, weighted):
    y, s, w = _data(absent=absent)
    w = w if weighted else None
    pred = np.argmax(s, axis=1)
    for average in ("macro", "weighted", "micro"):
        for beta in (1.0, 2.0, 0.5):
            expected = skm.fbeta_score(y, pred, beta=beta, average=average, sample_weight=w,
                                       zero_division=0)
            assert fbeta_multiclass(y, s, beta, average, weight=w) == pytest.approx(
                expected, abs=1e-12)
    assert balanced_accuracy(y, s, weight=w) == pytest.approx(
        skm.balanced_accuracy_score(y, pred, sample_weight=w), abs=1e-12)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    assert multiclass_log_loss(y, s, weight=w, margin=True) == pytest.approx(
        skm.log_loss(y, p, sample_weight=w, labels=np.arange(s.shape[1])), abs=1e-12)


def test_flat_scores_are_refused_and_names():
    """A flat n·K vector is class-major (LightGBM 3) or row-major (NumPy's ravel): the
    two readings differ (the probe's macro_f1 0.167 against 0.095), so neither is
    guessed."""
    y, s, _ = _data(k=3)
    assert fbeta_multiclass(y, s.reshape(-1).reshape(3, -1).T) != fbeta_multiclass(y, s)
    for flat in (s.T.ravel(), s.ravel()):
        with pytest.raises(ValueError, match=(
                "shape \\(n, K\\) = \\(500, K\\), K ≥ 2; got a flat vector of 1500. A "
                "flat n·K vector has two layouts .* pass the \\(n, K\\) array")):
            fbeta_multiclass(y, flat)
    m = get_metric("macro_fbeta:2")
    assert (m.kind, m.params) == ("multiclass", {"beta": 2.0, "average": "macro"})
    assert m(y, s) == fbeta_multiclass(y, s, 2.0)
    assert get_metric("weighted_f1")(y, s) == fbeta_multiclass(y, s, 1.0, "weighted")
    assert get_metric("micro_f1")(y, s) == pytest.approx(np.mean(np.argmax(s, 1) == y))
    assert get_metric("balanced_accuracy").higher_is_better
    assert not get_metric("mlogloss").higher_is_better


def test_bad_multiclass_input():
    y, s, _ = _data(k=3)
    with pytest.raises(ValueError, match=r"integers in \[0, 3\).*first at index 0: 3.0"):
        fbeta_multiclass(np.r_[3.0, y[1:]], s)
    with pytest.raises(ValueError, match="shape \\(500, K\\) with K ≥ 2"):
        fbeta_multiclass(y, s[:10])
    with pytest.raises(ValueError, match="average must be one of"):
        fbeta_multiclass(y, s, average="samples")
    with pytest.raises(ValueError, match="bad beta in metric"):
        get_metric("macro_fbeta:-1")


# --- best_class_offsets: the K-class decision rule ----------------------------------------


def _switch_points(s, b, c):
    """Every value of b_c at which some row's argmax(s + b) changes, with b_c's
    neighbours: candidates between and beyond them (brute force)."""
    t = s + b
    others = np.delete(t, c, axis=1).max(axis=1) - s[:, c]
    v = np.unique(others)
    return np.concatenate(([v[0] - 1.0], (v[1:] + v[:-1]) / 2, [v[-1] + 1.0]))


@pytest.mark.parametrize("beta", [1.0, 2.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_best_class_offsets_is_a_coordinatewise_optimum_never_below_argmax(beta, weighted):
    y, s, w = _data(300, seed=3)
    w = w if weighted else None
    b, value = best_class_offsets(y, s, beta, weight=w, margin=True)
    pred = np.argmax(s + b, axis=1)
    assert value == fbeta_multiclass(y, s + b, beta, weight=w)
    assert value == pytest.approx(skm.fbeta_score(y, pred, beta=beta, average="macro",
                                                  sample_weight=w), abs=1e-12)
    assert value > fbeta_multiclass(y, s, beta, weight=w)  # argmax: b = 0
    for c in range(s.shape[1]):  # no single offset does better (brute force)
        for v in _switch_points(s, b, c):
            trial = b.copy()
            trial[c] = v
            assert fbeta_multiclass(y, s + trial, beta, weight=w) <= value + 1e-12


def test_best_class_offsets_two_classes_is_the_global_optimum():
    y, s, _ = _data(200, k=2, seed=4)
    b, value = best_class_offsets(y, s, margin=True)
    d = s[:, 1] - s[:, 0]  # only b_1 - b_0 matters: predict 1 iff d + b_1 - b_0 > 0
    cuts = np.unique(d)
    brute = max(skm.f1_score(y, (d - c >= 0).astype(int), average="macro") for c in cuts)
    brute = max(brute, skm.f1_score(y, np.zeros_like(y), average="macro"))
    assert value == pytest.approx(brute, abs=1e-12)


def test_best_class_offsets_read_raw_scores_and_log_probabilities_alike():
    y, s, _ = _data(300, seed=5)
    log_p = s - np.logaddexp.reduce(s, axis=1, keepdims=True)
    b1, v1 = best_class_offsets(y, s, margin=True)
    b2, v2 = best_class_offsets(y, log_p, margin=True)
    assert v1 == v2
    np.testing.assert_array_equal(np.argmax(s + b1, axis=1), np.argmax(log_p + b2, axis=1))
    b3, v3 = best_class_offsets(y, s, margin=True)  # deterministic
    np.testing.assert_array_equal(b1, b3)


def test_best_class_offsets_leave_a_class_without_rows_at_zero():
    y, s, _ = _data(300, seed=6, absent=3)
    b, value = best_class_offsets(y, s, margin=True)
    assert b[3] == 0.0 and value == fbeta_multiclass(y, s + b)
    with pytest.raises(ValueError, match="max_sweeps"):
        best_class_offsets(y, s, max_sweeps=0, margin=True)


# --- probabilities (the default) and margins ----------------------------------------------


def _softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.floors
@pytest.mark.parametrize("weighted", [False, True])
def test_multiclass_log_loss_on_probabilities_equals_sklearn(weighted):
    y, s, w = _data()
    w = w if weighted else None
    P = _softmax(s)
    P[0] = [1.0, 0.0, 0.0, 0.0, 0.0]  # clipped at eps, as scikit-learn clips
    y[0] = 1.0
    labels = np.arange(P.shape[1])
    assert multiclass_log_loss(y, P, weight=w) == pytest.approx(
        skm.log_loss(y, P, sample_weight=w, labels=labels), rel=1e-12)
    with pytest.raises(ValueError, match="got a flat vector"):
        multiclass_log_loss(y, P.T.ravel(), weight=w)
    assert get_metric("mlogloss")(y, P, weight=w) == multiclass_log_loss(y, P, weight=w)
    assert get_metric("mlogloss").with_margin(True)(y, s) == multiclass_log_loss(
        y, s, margin=True)


def test_multiclass_log_loss_refuses_what_is_not_probabilities():
    y, s, _ = _data(k=3)
    with pytest.raises(ValueError, match=r"scores hold \d+ value\(s\) outside \[0, 1\].*"
                                         r"pass margin=True"):
        multiclass_log_loss(y, s)
    margins_inside = np.abs(s) / (np.abs(s).max() + 1.0)  # in [0, 1], rows not adding to 1
    with pytest.raises(ValueError, match=r"rows of scores do not add up to 1 \(first: row 0"
                                         r".*margin=True"):
        multiclass_log_loss(y, margins_inside)


def test_argmax_metrics_read_any_scale_and_offsets_read_probabilities():
    y, s, _ = _data(300, seed=8)
    P = _softmax(s)
    assert fbeta_multiclass(y, P) == fbeta_multiclass(y, s)
    assert balanced_accuracy(y, P) == balanced_accuracy(y, s)
    b, value = best_class_offsets(y, P)
    b_log, value_log = best_class_offsets(y, np.log(P), margin=True)
    assert value == value_log == fbeta_multiclass(y, np.log(P) + b)
    np.testing.assert_array_equal(b, b_log)
    with pytest.raises(ValueError, match="best_class_offsets reads probabilities.*margin=True"):
        best_class_offsets(y, s)


def test_one_value_per_row_is_predicted_classes_not_scores():
    """XGBoost's multi:softmax hands a metric n predicted classes; the message said to
    reshape a flat n·K vector, which n labels are not (sixth probe)."""
    from gbrank.metrics import fbeta_multiclass

    with pytest.raises(ValueError, match="one value per row: predicted classes, not scores"
                       ".*multi:softprob"):
        fbeta_multiclass([0, 1, 2, 1], [0.0, 1.0, 2.0, 1.0])


@pytest.mark.parametrize("seed", range(6))
def test_macro_f1_counts_a_class_seen_only_on_rows_of_weight_zero(seed):
    """scikit-learn takes the classes present from every row (unique_labels), whatever
    its weight; gbrank took them from the weighted counts and dropped a class predicted
    only on rows of weight 0 (1.0 against 0.5; ninth probe). The offsets' sweep counts
    them the same way: its value is the metric's at the offsets it returns."""
    y, s, w = _data(300, seed=seed)
    w = w.copy()
    pred = np.argmax(s, axis=1)
    rare = np.flatnonzero(pred == np.bincount(pred, minlength=5).argmin())
    w[rare] = 0.0  # the least predicted class: predicted only on rows of weight 0
    w[np.flatnonzero(y == y[rare[0]]) if rare.size else []] = 0.0
    for beta in (1.0, 2.0):
        assert fbeta_multiclass(y, s, beta, weight=w) == pytest.approx(
            skm.fbeta_score(y, pred, beta=beta, average="macro", sample_weight=w,
                            zero_division=0.0), abs=1e-12)
        b, value = best_class_offsets(y, s, beta, weight=w, margin=True)
        assert value == pytest.approx(fbeta_multiclass(y, s + b, beta, weight=w), abs=1e-12)
    y2, s2 = np.array([0, 1, 0]), np.eye(2)[[0, 1, 0]]
    w2 = np.array([1.0, 0.0, 1.0])
    assert fbeta_multiclass(y2, s2, weight=w2) == pytest.approx(
        skm.f1_score(y2, [0, 1, 0], average="macro", sample_weight=w2, zero_division=0.0))
