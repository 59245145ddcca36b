"""Calibrated ranking: CrossEntropy, Combination, calibration=α of RankNet/LambdaRank,
the calibration metrics (log loss, ECE) and GBRanker.predict_proba.

References: scikit-learn's log_loss, a per-row loop for ECE, hand-worked targets, the
finite-difference check, and LightGBM's native ``cross_entropy`` objective.
"""

from __future__ import annotations

import numpy as np
import pytest

from gbrank import metrics
from gbrank.gradcheck import check
from gbrank.objectives import Combination, CrossEntropy, FocalLoss, LambdaRank, RankNet


def _ranking(n_queries=8, size=12, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n_queries * size).astype(float)
    s = rng.standard_normal(y.size) * 2
    return y, s, np.full(n_queries, size)


# --- CrossEntropy --------------------------------------------------------------------------


def test_targets_from_labels_hand_worked():
    y = np.array([0.0, 1.0, 2.0])
    s = np.zeros(3)
    for target, t in (("exponential", [0, 1 / 3, 1]), ("linear", [0, 0.5, 1]),
                      ("binary", [0, 1, 1]), ("auto", [0, 1 / 3, 1])):
        grad, _ = CrossEntropy(target=target).grad_hess(y, s)  # σ(0) − t
        np.testing.assert_allclose(grad, 0.5 - np.array(t), rtol=0, atol=1e-15)
    grad, _ = CrossEntropy(target="exponential", max_grade=3).grad_hess(y, s)
    np.testing.assert_allclose(grad, 0.5 - np.array([0, 1 / 7, 3 / 7]), atol=1e-15)
    rates = np.array([0.0, 0.25, 1.0])  # click-through rates are targets as they are
    np.testing.assert_allclose(CrossEntropy().grad_hess(rates, s)[0], 0.5 - rates)
    with pytest.raises(ValueError, match="labels must lie in \\[0, 1\\]"):
        CrossEntropy(target="identity").grad_hess(y, s)
    with pytest.raises(ValueError, match="max_grade=1.0 is below the largest label"):
        CrossEntropy(target="linear", max_grade=1).grad_hess(y, s)
    with pytest.raises(ValueError, match="target must be one of"):
        CrossEntropy(target="nope").grad_hess(y, s)


def test_cross_entropy_is_focal_gamma0_on_binary_labels_and_passes_gradcheck():
    rng = np.random.default_rng(1)
    y = (rng.random(200) < 0.3).astype(float)
    s = rng.standard_normal(200) * 5
    w = rng.random(200) + 0.5
    ce, focal = CrossEntropy(), FocalLoss(gamma=0.0, hess_floor=0.0, max_step=None)
    for a, b in zip(ce.grad_hess(y, s, weight=w), focal.grad_hess(y, s, weight=w),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert ce.loss(y, s, weight=w) == pytest.approx(focal.loss(y, s, weight=w), rel=1e-12)
    rates = rng.random(200)
    assert check(ce, rates, s).ok
    assert ce.init_score(rates) == pytest.approx(np.log(rates.mean() / (1 - rates.mean())))


@pytest.mark.floors
def test_cross_entropy_trains_as_lightgbm_cross_entropy():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(2)
    X = rng.standard_normal((600, 4))
    t = 1 / (1 + np.exp(-(X[:, 0] - 0.5 * X[:, 1])))  # targets in [0, 1]
    params = {"verbose": -1, "num_threads": 1, "num_leaves": 7, "learning_rate": 0.2,
              "deterministic": True}
    native = lgb.train({**params, "objective": "cross_entropy"}, lgb.Dataset(X, t), 20)
    obj = CrossEntropy()
    init = obj.init_score(t)
    ours = lgb.train({**params, "objective": obj},
                     lgb.Dataset(X, t, init_score=np.full(t.size, init)), 20)
    np.testing.assert_allclose(ours.predict(X, raw_score=True) + init,
                               native.predict(X, raw_score=True), rtol=0, atol=1e-6)


# --- Combination and calibration=α ----------------------------------------------------------


@pytest.mark.parametrize("obj", [
    LambdaRank(calibration=0.3), LambdaRank("err", calibration=0.2),
    LambdaRank(weighting="ndcg_loss2pp", calibration=0.5), RankNet(calibration=0.5),
    RankNet(ties="pull", calibration=0.1, calibration_target="linear"),
    Combination([("rank", RankNet()), ("cal", CrossEntropy(target="binary"))], [0.6, 0.4]),
], ids=repr)
def test_calibrated_objectives_pass_the_gradient_check(obj):
    y, s, g = _ranking()
    report = check(obj, y, s, group=g, weight=np.linspace(0.5, 2.0, g.size))
    assert report.ok, str(report)


@pytest.mark.floors
def test_calibration_is_the_documented_weighted_sum():
    y, s, g = _ranking(seed=3)
    alpha = 0.3
    for obj, rank in ((LambdaRank(calibration=alpha), LambdaRank()),
                      (RankNet(calibration=alpha), RankNet())):
        got = obj.grad_hess(y, s, g)
        r = rank.grad_hess(y, s, g)
        c = CrossEntropy().grad_hess(y, s)
        for a, ra, ca in zip(got, r, c, strict=True):
            np.testing.assert_allclose(a, (1 - alpha) * ra + alpha * ca, rtol=1e-13)
        assert obj.loss(y, s, g) == pytest.approx(
            (1 - alpha) * rank.loss(y, s, g) + alpha * CrossEntropy().loss(y, s), rel=1e-13)
    # calibration=0 is the objective itself, calibration=1 the pointwise loss alone.
    np.testing.assert_array_equal(LambdaRank(calibration=0.0).grad_hess(y, s, g)[0],
                                  LambdaRank().grad_hess(y, s, g)[0])
    np.testing.assert_allclose(RankNet(calibration=1.0).grad_hess(y, s, g)[0],
                               CrossEntropy().grad_hess(y, s)[0], rtol=1e-15)


def test_combination_weights_and_query_ids_in_any_order():
    y, s, g = _ranking(seed=4)
    qw = np.linspace(1.0, 3.0, g.size)
    obj = LambdaRank(calibration=0.4)
    per_query = obj.grad_hess(y, s, g, weight=qw)
    per_row = obj.grad_hess(y, s, g, weight=np.repeat(qw, g))
    for a, b in zip(per_query, per_row, strict=True):
        np.testing.assert_array_equal(a, b)
    # The pointwise term takes each query's weight on its rows.
    rank = LambdaRank().grad_hess(y, s, g, weight=qw)
    point = CrossEntropy().grad_hess(y, s, weight=np.repeat(qw, g))
    np.testing.assert_allclose(per_query[0], 0.6 * rank[0] + 0.4 * point[0], rtol=1e-13)
    qid = np.repeat(np.arange(g.size)[::-1], g)  # ids descending: queries reordered
    perm = np.random.default_rng(0).permutation(y.size)
    shuffled = obj.grad_hess(y[perm], s[perm], qid=qid[perm], weight=qw[::-1])
    np.testing.assert_allclose(shuffled[0], per_query[0][perm], rtol=1e-13)


def test_parameter_contract_and_grid_search():
    from sklearn.base import clone

    obj = LambdaRank(calibration=0.25, calibration_target="binary")
    c = clone(obj)
    assert c.get_params() == obj.get_params()
    combo = Combination([("rank", RankNet()), ("cal", CrossEntropy())], weights=[1.0, 0.5])
    combo.set_params(rank__sigma=2.0, cal__target="linear")
    twin = clone(combo)
    assert twin.get_params()["rank__sigma"] == 2.0
    assert twin.get_params()["cal__target"] == "linear"
    assert twin.objectives[0][1] is not combo.objectives[0][1]
    with pytest.raises(ValueError,
                       match=r"calibration must be a finite number in \[0, 1\], got 1.5"):
        LambdaRank(calibration=1.5).grad_hess(*_ranking()[:2])
    with pytest.raises(ValueError, match="invalid parameter 'nope__x' for Combination"):
        combo.set_params(nope__x=1)
    with pytest.raises(ValueError, match="weights has 1 entries for 2 objectives"):
        Combination([("a", RankNet()), ("b", CrossEntropy())], [1.0]).grad_hess(
            *_ranking()[:2])


def test_init_score_is_the_calibration_optimum():
    y, s, g = _ranking()
    t = (2.0 ** y - 1) / 3.0
    assert LambdaRank(calibration=0.2).init_score(y) == pytest.approx(
        np.log(t.mean() / (1 - t.mean())), abs=1e-12)
    assert LambdaRank().init_score(y) == 0.0
    # Two per-row parts: the root of the summed slope.
    combo = Combination([("a", CrossEntropy(target="binary")),
                         ("b", CrossEntropy(target="linear"))], [1.0, 3.0])
    c = combo.init_score(y)
    p = 1 / (1 + np.exp(-c))
    slope = np.sum(p - (y >= 1)) + 3 * np.sum(p - y / 2)
    assert abs(slope) < 1e-9


# --- metrics -----------------------------------------------------------------------------------


def _ece_reference(t, s, bins, w):
    p = 1 / (1 + np.exp(-s))
    order = np.argsort(p, kind="stable")
    total = 0.0
    for idx in np.array_split(order, bins):
        if idx.size:
            total += abs(np.sum(w[idx] * t[idx]) - np.sum(w[idx] * p[idx]))
    return total / np.sum(w)


@pytest.mark.floors
def test_log_loss_and_ece_against_references():
    from sklearn.metrics import log_loss

    rng = np.random.default_rng(5)
    y = (rng.random(1000) < 0.2).astype(float)
    s = rng.standard_normal(1000) * 3 - 1
    w = rng.random(1000) + 0.1
    p = 1 / (1 + np.exp(-s))
    assert metrics.log_loss(y, s, margin=True) == pytest.approx(log_loss(y, p), rel=1e-12)
    assert metrics.log_loss(y, s, weight=w, margin=True) == pytest.approx(
        log_loss(y, p, sample_weight=w), rel=1e-12)
    for bins in (1, 7, 10, 1000, 5000):
        assert metrics.expected_calibration_error(y, s, bins, weight=w,
                                                  margin=True) == pytest.approx(
            _ece_reference(y, s, min(bins, 1000), w), rel=1e-12, abs=1e-15)
    # Perfectly calibrated in each bin: 0; maximally wrong: 1.
    assert metrics.expected_calibration_error(np.array([0.0, 1.0]), np.array([-50, 50.0]),
                                              2, margin=True) < 1e-15
    assert metrics.expected_calibration_error(np.array([1.0, 0.0]), np.array([-50, 50.0]),
                                              2, margin=True) == pytest.approx(1.0)


def test_calibration_metric_names_are_lower_is_better():
    lgb = pytest.importorskip("lightgbm")
    from gbrank import get_metric
    from gbrank.lightgbm import feval

    m = get_metric("ece:20")
    assert (m.kind, m.higher_is_better, m.params) == ("pointwise", False, {"n_bins": 20})
    assert not get_metric("logloss").higher_is_better
    y, s, g = _ranking(n_queries=40, size=10, seed=6)
    X = np.random.default_rng(0).standard_normal((y.size, 3)) + y[:, None] * 0.3
    dtr = lgb.Dataset(X[:300], y[:300], group=g[:30])
    dva = lgb.Dataset(X[300:], y[300:], group=g[30:], reference=dtr)
    log: dict = {}
    obj = LambdaRank(calibration=0.5)
    init = obj.init_score(y[:300])
    dtr.set_init_score(np.full(300, init))
    dva.set_init_score(np.full(100, init))
    lgb.train({"objective": obj, "metric": "None", "verbose": -1, "num_threads": 1},
              dtr, 30, valid_sets=[dva], feval=feval("logloss", "ndcg@10"),
              callbacks=[lgb.record_evaluation(log),
                         lgb.early_stopping(5, first_metric_only=True, verbose=False)])
    curve = log["valid_0"]["gbrank_logloss"]
    best = int(np.argmin(curve))  # early stopping minimised it
    assert len(curve) in (best + 1 + 5, 30)


@pytest.mark.floors
def test_xgboost_early_stopping_minimises_calibration_metrics():
    xgb = pytest.importorskip("xgboost")
    from gbrank.xgboost import metric, objective

    y, s, g = _ranking(n_queries=60, size=10, seed=7)
    X = np.random.default_rng(1).standard_normal((y.size, 3)) + y[:, None] * 0.2
    obj = RankNet(calibration=0.5)
    dtr = xgb.DMatrix(X[:400], y[:400], group=g[:40],
                      base_margin=np.full(400, obj.init_score(y[:400])))
    dva = xgb.DMatrix(X[400:], y[400:], group=g[40:],
                      base_margin=np.full(200, obj.init_score(y[:400])))
    dva.set_weight(np.linspace(1, 2, 20))  # per query: the metric takes it per row
    res: dict = {}
    booster = xgb.train({"base_score": 0.0, "eta": 0.3, "nthread": 1,
                         "disable_default_eval_metric": 1}, dtr, 200,
                        obj=objective(obj), evals=[(dva, "v")], evals_result=res,
                        custom_metric=metric("logloss"), early_stopping_rounds=5,
                        verbose_eval=False)
    curve = res["v"]["gbrank_logloss"]
    assert booster.best_iteration == int(np.argmin(curve))
    pred = booster.predict(dva, output_margin=True)
    assert curve[-1] == pytest.approx(metrics.log_loss(
        y[400:], pred, weight=np.repeat(np.linspace(1, 2, 20), 10), margin=True), abs=5e-7)


# --- GBRanker ------------------------------------------------------------------------------


@pytest.mark.floors
def test_gbranker_predict_proba_calibrated_only():
    from gbrank.sklearn import GBRanker

    y, _, g = _ranking(n_queries=30, size=10, seed=8)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((y.size, 3)) + y[:, None] * 0.4
    qid = np.repeat(np.arange(g.size), g)
    est = GBRanker(objective=LambdaRank(calibration=0.2), n_estimators=10, n_jobs=1,
                   random_state=0).fit(X, y, qid=qid)
    t = (2.0 ** y - 1) / 3.0
    assert est.init_score_ == pytest.approx(np.log(t.mean() / (1 - t.mean())), abs=1e-12)
    p = est.predict_proba(X)
    assert p.shape == (y.size, 2) and est.classes_.tolist() == [0, 1]
    np.testing.assert_allclose(p[:, 1], 1 / (1 + np.exp(-est.predict(X))), rtol=1e-14)
    np.testing.assert_allclose(p[:, 0], 1 - p[:, 1], rtol=0, atol=0)
    plain = GBRanker(objective="lambdarank", n_estimators=3, n_jobs=1).fit(X, y, qid=qid)
    assert not hasattr(plain, "predict_proba")  # scikit-learn's tools see no probabilities
    # The error itself names the fix (it was only the __cause__ of "has no attribute").
    with pytest.raises(AttributeError, match="predict_proba needs a calibrated ranking "
                       r"objective.*LambdaRank\(calibration=0.1\)"):
        plain.predict_proba(X)
