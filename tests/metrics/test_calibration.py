"""Calibration metrics on probabilities (the default) against scikit-learn's log_loss and
a slow ECE reference; on margins (``margin=True``) through the sigmoid."""

from __future__ import annotations

import numpy as np
import pytest
from reference.metrics import expected_calibration_error as ref_ece
from sklearn.metrics import log_loss as sk_log_loss

from gbrank import metrics


def _probabilities(n=1000, seed=5):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(float)
    p = np.clip(rng.beta(2, 4, n) + 0.4 * y, 0.0, 1.0)
    p[:5] = [0.0, 1.0, 0.0, 1.0, 0.5]  # clipped at eps: y = 1 at p = 0 costs -log(eps)
    y[:5] = [0.0, 1.0, 1.0, 0.0, 1.0]
    return y, p, rng.random(n) + 0.1


@pytest.mark.floors
@pytest.mark.parametrize("weighted", [False, True])
def test_log_loss_on_probabilities_equals_sklearn(weighted):
    y, p, w = _probabilities()
    w = w if weighted else None
    assert metrics.log_loss(y, p, weight=w) == pytest.approx(
        sk_log_loss(y, p, sample_weight=w), rel=1e-12, abs=1e-15)
    # float32 probabilities are clipped at float32's eps, as scikit-learn clips them.
    p32 = p.astype(np.float32)
    assert metrics.log_loss(y, p32, weight=w) == pytest.approx(
        sk_log_loss(y, p32, sample_weight=w), rel=1e-6)
    assert metrics.log_loss([1.0], np.float32([0.0])) == pytest.approx(
        -np.log(float(np.finfo(np.float32).eps)), rel=1e-12)
    assert metrics.log_loss([1.0], [0.0]) == pytest.approx(
        -np.log(float(np.finfo(np.float64).eps)), rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("bins", [1, 7, 10, 999, 5000])
def test_ece_on_probabilities_equals_the_reference(weighted, bins):
    y, p, w = _probabilities()
    w = w if weighted else None
    p[10:60] = 0.25  # ties: ordered by row
    assert metrics.expected_calibration_error(y, p, bins, weight=w) == pytest.approx(
        ref_ece(y, p, bins, w), rel=1e-12, abs=1e-15)


def test_margins_read_through_the_sigmoid():
    rng = np.random.default_rng(2)
    y = (rng.random(500) < 0.4).astype(float)
    z = rng.standard_normal(500) * 2
    p = 1.0 / (1.0 + np.exp(-z))
    assert metrics.log_loss(y, z, margin=True) == pytest.approx(metrics.log_loss(y, p),
                                                                rel=1e-12)
    assert metrics.expected_calibration_error(y, z, margin=True) == pytest.approx(
        metrics.expected_calibration_error(y, p), rel=1e-12, abs=1e-15)
    # Soft targets (clicks as rates) alike.
    t = rng.random(500)
    assert metrics.log_loss(t, z, margin=True) == pytest.approx(metrics.log_loss(t, p),
                                                                rel=1e-12)


def test_margins_are_refused_on_the_probability_default():
    y, z = [1.0, 0.0, 1.0], [2.0, -1.0, 0.5]
    for call in (metrics.log_loss, metrics.expected_calibration_error):
        with pytest.raises(ValueError, match=r"scores hold 2 value\(s\) outside \[0, 1\] "
                                             r"\(first at index 0: 2\.0\).*pass margin=True"):
            call(y, z)
        with pytest.raises(ValueError, match="margin must be True or False"):
            call(y, [0.5, 0.5, 0.5], margin=1)


@pytest.mark.floors
def test_predict_proba_of_a_classifier_reads_as_scikit_learn(lgbm_classifier, binary_data):
    # The calls: log loss and ECE of predict_proba output read it as margins.
    clf = lgbm_classifier
    X, y = binary_data["X_test"], binary_data["y_test"]
    p = clf.predict_proba(X)[:, 1]
    assert metrics.log_loss(y, p) == pytest.approx(sk_log_loss(y, p), rel=1e-12)
    assert metrics.expected_calibration_error(y, p) == pytest.approx(ref_ece(y, p, 10),
                                                                     rel=1e-12)
    # The old reading (σ applied to probabilities) was a plausible wrong number.
    assert metrics.log_loss(y, p, margin=True) > sk_log_loss(y, p) + 0.05
    margins = clf.predict(X, raw_score=True)
    assert metrics.log_loss(y, margins, margin=True) == pytest.approx(sk_log_loss(y, p),
                                                                      rel=1e-9)


@pytest.mark.parametrize("name", ["log_loss", "expected_calibration_error", "f1"])
def test_predict_proba_columns_are_refused_naming_the_column(name):
    """scikit-learn's predict_proba gives (n, 2); a binary metric takes column 1."""
    y, p, _ = _probabilities()
    two = np.column_stack([1.0 - p, p])
    with pytest.raises(ValueError,
                       match=r"predict_proba's two columns\? .*predict_proba\(X\)\[:, 1\]"):
        getattr(metrics, name)(y, two)


def test_a_max_grade_maps_labels_of_0_and_1_as_grades():
    """Grades 0 and 1 of a 0-4 scale are not clicks: with ``max_grade`` the default
    mapping is ERR's, t = (2^l - 1) / (2^4 - 1), so a part of the data whose grades
    happen to be 0 or 1 is judged as the whole is."""
    from gbrank.objectives import CrossEntropy

    y, p = np.array([0.0, 1.0, 1.0]), np.array([0.1, 0.2, 0.05])
    t = np.array([0.0, 1 / 15, 1 / 15])  # hand-worked targets
    expected = float(np.mean(-t * np.log(p) - (1 - t) * np.log(1 - p)))
    assert metrics.log_loss(y, p, max_grade=4) == pytest.approx(expected, rel=1e-12)
    assert metrics.log_loss(y, p, max_grade=4) == metrics.log_loss(
        y, p, target="exponential", max_grade=4)
    assert metrics.log_loss(y, p) != pytest.approx(expected)  # no max_grade: clicks as they are
    # The objective bound to all its data (grades up to 4) maps the part alike.
    bound = CrossEntropy().bind_data_defaults(np.array([0.0, 4.0, 1.0]))
    z = np.log(p / (1 - p))
    assert bound.loss(y, z) / y.size == pytest.approx(expected, rel=1e-12)


def test_labels_plus_minus_one_are_binary_and_two_grades_from_one_are_warned_about():
    """Labels ±1 are the binary metrics' other convention: read as 0/1. Two labels
    {1, 2} are read as grades (targets 1/3 and 1), which a classifier's two classes are
    not: warned, naming the fix (scikit-learn's log_loss of the same: 0.2124 against
    0.78 read as grades, fifth probe)."""
    from sklearn.metrics import log_loss as sk_log_loss

    from gbrank.metrics import expected_calibration_error, log_loss

    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.3).astype(float)
    p = np.clip(0.3 + 0.4 * (y - 0.3) + 0.1 * rng.standard_normal(300), 0.01, 0.99)
    assert log_loss(2 * y - 1, p) == pytest.approx(sk_log_loss(y, p), abs=1e-12)
    assert expected_calibration_error(2 * y - 1, p) == expected_calibration_error(y, p)
    # A batch of one class, -1 only, is the same convention (was refused as grades).
    neg = y == 0
    assert log_loss(-np.ones(int(neg.sum())), p[neg]) == pytest.approx(
        sk_log_loss(np.zeros(int(neg.sum())), p[neg], labels=[0, 1]), abs=1e-12)
    assert expected_calibration_error(-np.ones(int(neg.sum())), p[neg]) == \
        expected_calibration_error(np.zeros(int(neg.sum())), p[neg])
    with pytest.warns(UserWarning, match=r"only the values \[1.0, 2.0\]: read as grades "
                      r"\(targets \[0.333, 1.0\]\).*pass 0/1 labels"):
        log_loss(y + 1, p)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_loss(y + 1, p, max_grade=2)  # grades declared: no warning
