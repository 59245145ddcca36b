"""XGBoost adapter: gbrank metrics through xgb.train(custom_metric=...) and the sklearn API."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from gbrank import metrics
from gbrank.metrics._ranking import _ndcg_per_query
from gbrank.xgboost import metric

xgb = pytest.importorskip("xgboost")


def _dmatrices(d):
    dtr = xgb.DMatrix(d["X_train"], d["y_train"], group=d["g_train"])
    dte = xgb.DMatrix(d["X_test"], d["y_test"], group=d["g_test"])
    return dtr, dte


def test_metric_direct_call_on_dmatrix(rank_data):
    d = rank_data
    _, dte = _dmatrices(d)
    wq = np.arange(1, len(d["g_test"]) + 1) * 0.25  # float32-exact, as XGBoost stores them
    dte.set_weight(wq)  # ranking DMatrix: one weight per query
    pred = np.random.default_rng(0).normal(size=d["y_test"].size).astype(np.float32)
    y, g = d["y_test"], d["g_test"]
    assert metric("ndcg@10")(pred, dte) == ("gbrank_ndcg@10",
                                            metrics.ndcg(y, pred, g, 10, weight=wq))
    out = metric("err@5", "pair_accuracy", "map")(pred, dte)
    assert out == [("gbrank_err@5", metrics.err(y, pred, g, 5, weight=wq)),
                   ("gbrank_pair_accuracy", metrics.pair_accuracy(y, pred, g, weight=wq)),
                   ("gbrank_map", metrics.mean_ap(y, pred, g, None, weight=wq))]


def test_train_custom_metric_logged_and_early_stopping(rank_data):
    d = rank_data
    dtr, dte = _dmatrices(d)
    res: dict = {}
    params = {"objective": "rank:ndcg", "eta": 0.5, "max_depth": 6, "nthread": 1,
              "disable_default_eval_metric": 1}
    booster = xgb.train(params, dtr, 300, evals=[(dte, "test")], evals_result=res,
                        custom_metric=metric("ndcg@10", "pair_accuracy"),
                        early_stopping_rounds=5, maximize=True, verbose_eval=False)
    hist = res["test"]["gbrank_pair_accuracy"]  # early stopping watches the last metric
    assert set(res["test"]) == {"gbrank_ndcg@10", "gbrank_pair_accuracy"}
    assert len(hist) < 300
    assert booster.best_iteration == int(np.argmax(hist))
    assert len(hist) == booster.best_iteration + 1 + 5
    pred = booster.predict(dte, iteration_range=(0, booster.best_iteration + 1))
    # XGBoost logs "%f" strings: six decimals.
    assert hist[booster.best_iteration] == pytest.approx(
        metrics.pair_accuracy(d["y_test"], pred, d["g_test"]), abs=5e-7)
    ndcg_hist = res["test"]["gbrank_ndcg@10"]
    assert ndcg_hist[booster.best_iteration] == pytest.approx(
        metrics.ndcg(d["y_test"], pred, d["g_test"], 10), abs=5e-7)


def test_xgbranker_per_query_protocol(rank_data):
    d = rank_data
    qid_tr = np.repeat(np.arange(len(d["g_train"])), d["g_train"])
    qid_te = np.repeat(np.arange(len(d["g_test"])), d["g_test"])
    model = xgb.XGBRanker(n_estimators=200, learning_rate=0.5, n_jobs=1,
                          eval_metric=metric("ndcg@10"), disable_default_eval_metric=1,
                          callbacks=[xgb.callback.EarlyStopping(rounds=5, maximize=True)])
    model.fit(d["X_train"], d["y_train"], qid=qid_tr,
              eval_set=[(d["X_test"], d["y_test"])], eval_qid=[qid_te], verbose=False)
    hist = model.evals_result()["validation_0"]["gbrank_ndcg@10"]
    assert len(hist) < 200
    best = model.best_iteration
    assert best == int(np.argmax(hist))
    pred = model.predict(d["X_test"], iteration_range=(0, best + 1))
    # XGBoost averages the per-query values itself, weighting queries by size.
    per_q, _ = _ndcg_per_query(d["y_test"], pred, d["g_test"], 10)
    assert hist[best] == pytest.approx(np.average(per_q, weights=d["g_test"]), abs=5e-7)
    # Picklable with its metric.
    assert pickle.loads(pickle.dumps(model)).eval_metric.__name__ == "gbrank_ndcg@10"


def test_xgbclassifier_binary_metric(binary_data):
    d = binary_data
    model = xgb.XGBClassifier(n_estimators=5, n_jobs=1,
                              eval_metric=metric("f1", margin=False))
    w = np.where(d["y_test"] > 0, 2.0, 1.0)
    model.fit(d["X_train"], d["y_train"], eval_set=[(d["X_test"], d["y_test"])],
              sample_weight_eval_set=[w], verbose=False)
    logged = model.evals_result()["validation_0"]["gbrank_f1"][-1]
    p = model.predict_proba(d["X_test"])[:, 1]  # binary:logistic: probabilities, at 0.5
    assert logged == pytest.approx(metrics.f1(d["y_test"], p, weight=w), abs=5e-7)


def test_several_names_refused_per_query():
    with pytest.raises(ValueError, match="one metric per callable"):
        metric("ndcg@10", "mrr")(np.array([1.0, 0.0]), np.array([0.2, 0.1]))
    with pytest.raises(ValueError, match="valid forms"):
        metric("ndcg@ten")


@pytest.mark.parametrize("make", ["ranknet", "lambdarank"])
def test_objective_reuses_output_arrays_and_trains_the_same_model(rank_data, make):
    # XGBoost copies the gradients it receives, so the wrapped objective rewrites the
    # previous round's arrays; the model must equal one trained on fresh arrays.
    from gbrank.objectives import LambdaRank, RankNet
    from gbrank.xgboost import objective

    d = rank_data
    dtr, dte = _dmatrices(d)
    wrapped = objective(RankNet() if make == "ranknet" else LambdaRank())
    rng = np.random.default_rng(0)
    p1, p2 = rng.standard_normal((2, d["y_train"].size)).astype(np.float32)
    g1, h1 = wrapped(p1, dtr)
    g1_values = g1.copy()
    g2, h2 = wrapped(p2, dtr)
    assert g2 is g1 and h2 is h1  # the same arrays, rewritten
    inner = wrapped.gbrank_objective
    eg, eh = inner.grad_hess(d["y_train"], p2, d["g_train"])
    assert eg is not g2  # the public call still returns new arrays
    np.testing.assert_array_equal(g2, eg)
    np.testing.assert_array_equal(h2, eh)
    assert not np.array_equal(g1_values, g2)

    def fresh(preds, dtrain):  # the same objective, new arrays every round
        g, h = inner.grad_hess(dtrain.get_label(), preds, d["g_train"])
        return g.copy(), h.copy()

    params = {"eta": 0.3, "max_depth": 4, "nthread": 1, "disable_default_eval_metric": 1}
    preds = [xgb.train(params, dtr, 6, obj=o).predict(dte) for o in (wrapped, fresh)]
    np.testing.assert_array_equal(preds[0], preds[1])


def test_names_never_collide_with_xgboost_metrics(rank_data):
    d = rank_data
    dtr, dte = _dmatrices(d)
    res: dict = {}
    params = {"objective": "rank:ndcg", "eval_metric": "ndcg@10", "nthread": 1}
    booster = xgb.train(params, dtr, 4, evals=[(dte, "test")], evals_result=res,
                        custom_metric=metric("ndcg@10"), verbose_eval=False)
    assert set(res["test"]) == {"ndcg@10", "gbrank_ndcg@10"}
    assert len(res["test"]["ndcg@10"]) == len(res["test"]["gbrank_ndcg@10"]) == 4
    pred = booster.predict(dte)
    assert res["test"]["gbrank_ndcg@10"][-1] == pytest.approx(
        metrics.ndcg(d["y_test"], pred, d["g_test"], 10), abs=5e-7)


@pytest.mark.parametrize("name", ["err@10", "pair_accuracy"])
def test_early_stopping_maximises_gbrank_metrics_without_being_told(rank_data, name):
    # XGBoost guesses the direction from the name and would minimise these.
    d = rank_data
    dtr, dte = _dmatrices(d)
    res: dict = {}
    params = {"objective": "rank:ndcg", "eta": 0.5, "max_depth": 6, "nthread": 1,
              "disable_default_eval_metric": 1}
    booster = xgb.train(params, dtr, 300, evals=[(dte, "test")], evals_result=res,
                        custom_metric=metric(name), early_stopping_rounds=5,
                        verbose_eval=False)
    hist = res["test"]["gbrank_" + name]
    assert booster.best_iteration == int(np.argmax(hist))
    assert len(hist) == booster.best_iteration + 1 + 5
    with pytest.raises(ValueError, match="minimise gbrank_.*maximize=True"):
        xgb.train(params, dtr, 20, evals=[(dte, "test")], custom_metric=metric(name),
                  early_stopping_rounds=5, maximize=False, verbose_eval=False)


def test_the_xgb_train_wrapper_in_a_scikit_learn_estimator_names_the_fix():
    """XGBoost's scikit-learn API calls objective(y_true, y_pred): the xgb.train wrapper
    there failed with "'numpy.ndarray' object has no attribute 'get_label'"."""
    from gbrank.objectives import FocalLoss
    from gbrank.xgboost import objective

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((200, 3)), (rng.random(200) < 0.3).astype(float)
    with pytest.raises(TypeError, match=(
            "gbrank.xgboost.objective\\(...\\) is xgb.train's form \\(preds, dtrain\\); "
            "XGBoost's scikit-learn estimators call objective\\(y_true, y_pred\\): pass the "
            "gbrank objective itself there, e.g. XGBClassifier\\(objective=FocalLoss")):
        xgb.XGBClassifier(objective=objective(FocalLoss()), n_estimators=2,
                          n_jobs=1).fit(X, y)


def test_gbrank_xgbranker_takes_the_qid_column_of_a_dataframe():
    """XGBoost's convention: a DataFrame column "qid" holds the query ids and predict
    drops it. With a gbrank objective the column was a feature (0.77 of the gain, sixth
    probe) and the fitted model could not predict; now it trains the model qid= trains."""
    pd = pytest.importorskip("pandas")
    from gbrank.datasets import make_ranking
    from gbrank.objectives import LambdaRank
    from gbrank.xgboost import XGBRanker

    X, y, group = make_ranking(n_queries=20, rows_per_query=8, n_features=4, seed=0)
    qid = np.repeat(np.arange(20), group)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(4)])
    kw = dict(objective=LambdaRank(), n_estimators=5, n_jobs=1)
    plain = XGBRanker(**kw).fit(df, y, qid=qid)
    column = XGBRanker(**kw).fit(df.assign(qid=qid), y)
    assert column.get_booster().feature_names == [f"f{i}" for i in range(4)]
    np.testing.assert_array_equal(column.predict(df.assign(qid=qid)), plain.predict(df))
    with pytest.raises(ValueError, match=r"has a column 'qid' and its queries are passed "
                       r"too \(qid=\)"):
        XGBRanker(**kw).fit(df.assign(qid=qid), y, qid=qid)
    with pytest.raises(ValueError, match=r"its queries are passed too \(group=\)"):
        XGBRanker(**kw).fit(df.assign(qid=qid), y, group=group)
    shuffled = np.r_[qid[8:], qid[:8]]  # contiguous, not ascending
    with pytest.raises(ValueError, match="qid is not sorted: XGBoost reads a query"):
        XGBRanker(**kw).fit(df, y, qid=shuffled)
    with pytest.raises(ValueError, match="needs the rows' queries: qid="):
        XGBRanker(**kw).fit(df, y)


def test_a_ranking_metric_handed_every_row_by_xgboosts_sklearn_api_is_refused(rank_data):
    """XGBRegressor(eval_metric=metric("ndcg@10")) hands the metric every evaluation row
    without queries: it logged the NDCG of one list of them (0.929 against 0.981 per
    query, sixth probe). Refused unless declared group-less; XGBRanker still calls it
    once per query."""
    d = rank_data
    kw = dict(n_estimators=3, n_jobs=1, max_depth=2)
    with pytest.raises(ValueError, match="ndcg@10 judges rankings per query, and the rows "
                       "XGBoost's scikit-learn model hands it"):
        xgb.XGBRegressor(eval_metric=metric("ndcg@10"), **kw).fit(
            d["X_train"], d["y_train"], eval_set=[(d["X_test"], d["y_test"])], verbose=False)
    model = xgb.XGBRegressor(eval_metric=metric("ndcg@10", groupless=True), **kw).fit(
        d["X_train"], d["y_train"], eval_set=[(d["X_test"], d["y_test"])], verbose=False)
    logged = model.evals_result()["validation_0"]["gbrank_ndcg@10"][-1]
    assert logged == pytest.approx(
        metrics.ndcg(d["y_test"], model.predict(d["X_test"]), None, 10), abs=5e-7)


def test_a_metric_called_directly_beside_a_dmatrix_is_not_taken_for_xgboosts_wrapper():
    """Only XGBoost's own scikit-learn wrapper hands every row: a plain call from code
    that merely holds a DMatrix judges its one list, as every plain metric call does."""
    y = np.array([2.0, 0.0, 1.0, 0.0])
    s = np.array([0.1, 0.4, 0.3, 0.2])
    held = xgb.DMatrix(np.zeros((4, 1)), y)  # in this frame's locals
    assert held.num_row() == 4
    assert metric("ndcg@10")(y, s) == pytest.approx(metrics.ndcg(y, s, None, 10), abs=1e-12)


def test_xgboosts_own_ranking_parameters_beside_a_gbrank_objective_are_warned_about():
    """lambdarank_pair_method="mean" (or ndcg_exp_gain, lambdarank_unbiased, ...) beside
    LambdaRank() changes nothing — the model's trees equal those trained without it —
    and was silent; warned, naming the objective's counterparts. XGBoost's own
    rank:ndcg, which reads them, is not warned about."""
    import warnings

    from gbrank.datasets import make_ranking
    from gbrank.objectives import LambdaRank
    from gbrank.sklearn import GBRanker
    from gbrank.xgboost import XGBRanker

    X, y, g = make_ranking(n_queries=20, rows_per_query=10, n_features=4, seed=0)
    qid = np.repeat(np.arange(g.size), g)
    base = {"n_estimators": 3, "n_jobs": 1, "tree_method": "hist"}
    plain = XGBRanker(objective=LambdaRank(), **base).fit(X, y, qid=qid)
    with pytest.warns(UserWarning, match=r"lambdarank_pair_method='mean', ndcg_exp_gain=False "
                      r"configure its own rank:\* objectives.*LambdaRank\(truncation=\.\.\., "
                      r"label_gain=\.\.\.\)") as seen:
        given = XGBRanker(objective=LambdaRank(), lambdarank_pair_method="mean",
                          ndcg_exp_gain=False, **base).fit(X, y, qid=qid)
    assert seen[0].filename == __file__
    dump = given.get_booster().get_dump()
    assert dump == plain.get_booster().get_dump()
    with pytest.warns(UserWarning, match=r"lambdarank_unbiased=True configure.*"
                      r"LambdaRank\(position_bias=\.\.\.\)"):
        GBRanker(LambdaRank(), booster="xgboost", n_estimators=2, n_jobs=1,
                 booster_params={"lambdarank_unbiased": True}).fit(X, y, qid=qid)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        XGBRanker(objective="rank:ndcg", lambdarank_pair_method="mean", **base).fit(X, y,
                                                                                  qid=qid)
