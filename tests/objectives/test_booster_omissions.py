"""What a booster call leaves out (issue 32): query structure for a ranking objective,
and the constant start of a custom objective. The right model, or an error / warning
that names the fix; expected models come from the same training with the omission
supplied by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gbrank.xgboost
from gbrank.datasets import make_imbalanced, make_ranking
from gbrank.objectives import FocalLoss, LambdaRank, RankNet

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

LGB = {"verbose": -1, "num_threads": 1, "deterministic": True, "force_row_wise": True,
       "metric": "None"}


@pytest.fixture(scope="module")
def ranking():
    X, y, g = make_ranking(n_queries=40, rows_per_query=15, n_features=4, seed=2)
    return X, y, g


# -- query ids left out ------------------------------------------------------------------


@pytest.mark.parametrize("make", [RankNet, LambdaRank])
def test_lightgbm_without_group_refuses_unless_declared(ranking, make):
    X, y, g = ranking
    with pytest.raises(ValueError, match=r"no query structure.*group=sizes.*"
                                         rf"{make.__name__}\(groupless=True\)"):
        lgb.train({**LGB, "objective": make()}, lgb.Dataset(X, y), 2)
    declared = lgb.train({**LGB, "objective": make(groupless=True)}, lgb.Dataset(X, y), 3)
    given = lgb.train({**LGB, "objective": make()}, lgb.Dataset(X, y, group=[y.size]), 3)
    np.testing.assert_array_equal(declared.predict(X), given.predict(X))
    with pytest.raises(ValueError, match="declares all rows one query, but the training "
                                         "data has 40 queries"):
        lgb.train({**LGB, "objective": make(groupless=True)}, lgb.Dataset(X, y, group=g), 1)
    # LightGBM's scikit-learn API without group: the same refusal
    with pytest.raises(ValueError, match="no query structure"):
        lgb.LGBMRegressor(objective=make(), n_estimators=1, verbose=-1).fit(X, y)


def test_xgboost_without_group_or_qid_refuses_unless_declared(ranking):
    X, y, _ = ranking
    base = {"base_score": 0.0, "nthread": 1}
    with pytest.raises(ValueError, match=r"RankNet\(groupless=True\)"):
        xgb.train(base, xgb.DMatrix(X, y), 2, obj=gbrank.xgboost.objective(RankNet()))
    declared = xgb.train(base, xgb.DMatrix(X, y), 3,
                         obj=gbrank.xgboost.objective(RankNet(groupless=True)))
    given = xgb.train(base, xgb.DMatrix(X, y, group=[y.size]), 3,
                      obj=gbrank.xgboost.objective(RankNet()))
    d = xgb.DMatrix(X)
    np.testing.assert_array_equal(declared.predict(d), given.predict(d))


def test_plain_calls_keep_their_one_list_meaning(ranking):
    X, y, _ = ranking
    g0, h0 = RankNet().grad_hess(y, X[:, 0])
    g1, h1 = RankNet().grad_hess(y, X[:, 0], [y.size])
    np.testing.assert_array_equal(g0, g1)
    np.testing.assert_array_equal(h0, h1)


def test_group_holding_per_row_ids_names_qid(ranking):
    X, y, g = ranking
    qid = np.repeat(np.arange(g.size), g)
    with pytest.raises(ValueError, match="look like per-row query ids .* qid= instead"):
        RankNet().grad_hess(y, X[:, 0], qid)
    np.testing.assert_array_equal(RankNet().grad_hess(y, X[:, 0], qid=qid)[0],
                                  RankNet().grad_hess(y, X[:, 0], g)[0])


def test_group_of_ones_is_refused_naming_qid_and_one_query():
    """The ids of one query (all ones) passed as group= read as n one-row queries:
    zero gradients, a constant model, NDCG 1 (the newcomer's NDCG 1.0). The message
    claimed every ranking metric 1, which MRR, ERR and P@k are not (ninth probe); as
    per-row ids, one-row queries are judged by each metric's rule."""
    from gbrank import metrics

    y, s = np.array([3.0, 0, 1, 2, 0]), np.array([0.1, 0.9, 0.5, 0.2, 0.3])
    fix = ("group is 5 ones: as query sizes .* every row is a query of its own, with "
           "no pair to rank .* pass them as qid=; if all rows are one query, pass "
           r"group=\[n_rows\].*its own query, there is nothing to rank")
    with pytest.raises(ValueError, match=fix):
        metrics.ndcg(y, s, np.ones(5, int))
    with pytest.raises(ValueError, match=fix):
        RankNet().grad_hess(y, s, np.ones(5, int))
    lgb = pytest.importorskip("lightgbm")
    with pytest.raises(ValueError, match=fix.replace("5", "40")):
        rng = np.random.default_rng(0)
        lgb.train({"objective": RankNet(), "verbose": -1, "num_threads": 1,
                   "min_data_in_leaf": 2, "min_data_in_bin": 1},
                  lgb.Dataset(rng.random((40, 2)), rng.integers(0, 3, 40),
                              group=np.ones(40, int)), 1)
    assert metrics.mrr(y, s, qid=np.arange(5)) == pytest.approx(
        np.mean([1.0, 0.0, 1.0, 1.0, 0.0]))  # a relevant row first in its own query
    # The same ids as qid=: one query, ranked.
    assert metrics.ndcg(y, s, qid=np.ones(5, int)) == metrics.ndcg(y, s, [5]) < 1.0


# -- the constant start left out ---------------------------------------------------------


@pytest.fixture(scope="module")
def rare():
    X, y = make_imbalanced(n_rows=4000, positive_rate=0.03, seed=5)
    return X, y


def _log_loss(y, z):
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


def test_lightgbm_focal_without_a_start_warns_and_names_init_score(rare):
    """The issue's call: FocalLoss on 3 % positives without init_score. The warning names
    the fix; the fix gives the better model (log loss measured here, by hand)."""
    X, y = rare
    obj = FocalLoss()
    with pytest.warns(UserWarning, match=r"FocalLoss starts from raw score 0, and its "
                                         r"loss-optimal constant start is -.*init_score="):
        bare = lgb.train({**LGB, "objective": obj}, lgb.Dataset(X, y), 20)
    start = obj.init_score(y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed = lgb.train({**LGB, "objective": obj},
                          lgb.Dataset(X, y, init_score=np.full(y.size, start)), 20)
        # the scikit-learn path (no Dataset) warns from the predictions alone
        with pytest.warns(UserWarning, match="starts from raw score 0"):
            lgb.LGBMClassifier(objective=FocalLoss(), n_estimators=2, verbose=-1).fit(X, y)
    worse = _log_loss(y, bare.predict(X, raw_score=True))
    better = _log_loss(y, fixed.predict(X, raw_score=True) + start)
    assert better < worse - 0.01


def test_xgboost_focal_without_a_base_margin_warns(rare):
    X, y = rare
    with pytest.warns(UserWarning, match="starts from raw score 0.5.*base_margin"):
        xgb.train({"nthread": 1, "base_score": 0.5}, xgb.DMatrix(X, y), 2,
                  obj=gbrank.xgboost.objective(FocalLoss()))
    start = FocalLoss().init_score(y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xgb.train({"nthread": 1}, xgb.DMatrix(X, y, base_margin=np.full(y.size, start)), 2,
                  obj=gbrank.xgboost.objective(FocalLoss()))


def test_no_warning_where_the_start_does_not_matter(ranking):
    X, y, g = ranking
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # a ranking loss ignores a constant shift
        lgb.train({**LGB, "objective": LambdaRank()}, lgb.Dataset(X, y, group=g), 2)
        # balanced classes: the optimal start is (near) 0
        Xb, yb = make_imbalanced(n_rows=2000, positive_rate=0.5, seed=1)
        lgb.train({**LGB, "objective": FocalLoss()}, lgb.Dataset(Xb, yb), 2)
    # a calibrated ranking loss does depend on the start
    with pytest.warns(UserWarning, match="LambdaRank starts from raw score 0"):
        lgb.train({**LGB, "objective": LambdaRank(calibration=0.5)},
                  lgb.Dataset(X, (y > 2).astype(float), group=g), 2)


def test_multiclass_focal_without_a_start_warns():
    from sklearn.datasets import make_classification

    X, y = make_classification(3000, 8, n_informative=5, n_classes=3,
                               weights=[0.9, 0.07, 0.03], random_state=0)
    obj = FocalLoss(num_class=3)
    with pytest.warns(UserWarning, match=r"one per class.*\[.*\]"):
        lgb.train({**LGB, "objective": obj, "num_class": 3}, lgb.Dataset(X, y), 2)


def test_multiclass_start_laid_out_row_major_is_refused():
    """init_score=np.tile(c, n) (row-major) is read class by class by LightGBM: each row
    started from another permutation of c (test mlogloss 0.1787 against 0.1685)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(600, 8, n_informative=5, n_classes=3,
                               weights=[0.8, 0.15, 0.05], random_state=0)
    obj = FocalLoss(num_class=3)
    c, n = obj.init_score(y), y.size
    with pytest.raises(ValueError, match=(
            "constant start of 3 classes laid out row-major \\(init_score=np.tile\\(c, n\\)\\)"
            ".* init_score=np.tile\\(obj.init_score\\(y\\), \\(n, 1\\)\\)")):
        lgb.train({**LGB, "objective": obj, "num_class": 3},
                  lgb.Dataset(X, y, init_score=np.tile(c, n)), 2)
    for good in (np.tile(c, (n, 1)), np.repeat(c, n)):  # (n, K), and class-major flat
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lgb.train({**LGB, "objective": obj, "num_class": 3},
                      lgb.Dataset(X, y, init_score=good), 3)


def test_multiclass_start_laid_out_class_major_for_xgboost_is_refused():
    """The mirror for XGBoost, which reads a flat base_margin row by row: LightGBM's
    class-major np.repeat(c, n) gave each row one class's value in every class, which
    the softmax cancels (the start silently lost, sixth probe)."""
    from sklearn.datasets import make_classification

    from gbrank.xgboost import objective

    X, y = make_classification(601, 8, n_informative=5, n_classes=3,
                               weights=[0.8, 0.15, 0.05], random_state=0)
    obj = FocalLoss(num_class=3)
    params = {"num_class": 3, "nthread": 1, "disable_default_eval_metric": 1}
    for n in (600, 601):  # rows a multiple of the classes or not
        c = obj.init_score(y[:n])
        with pytest.raises(ValueError, match=r"laid out class by class \(LightGBM's flat "
                           r"form, np.repeat\(c, n\)\), which XGBoost reads row by row"):
            xgb.train(params, xgb.DMatrix(X[:n], y[:n], base_margin=np.repeat(c, n)), 2,
                      obj=objective(obj))
    c, n = obj.init_score(y), y.size
    for good in (np.tile(c, (n, 1)), np.tile(c, n)):  # (n, K), and row-major flat
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            xgb.train(params, xgb.DMatrix(X, y, base_margin=good), 3, obj=objective(obj))
