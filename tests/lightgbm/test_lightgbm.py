"""LightGBM adapter: gbrank metrics through lgb.train(feval=...) and the sklearn API."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from gbrank import metrics
from gbrank.lightgbm import feval, metric_key

lgb = pytest.importorskip("lightgbm")

PARAMS = {"objective": "lambdarank", "metric": "None", "verbose": -1, "num_threads": 1,
          "min_data_in_leaf": 50, "learning_rate": 0.1}


def test_feval_declares_four_parameters_for_the_sklearn_api():
    assert list(inspect.signature(feval("ndcg@10")).parameters) == ["a", "b", "weight", "group"]
    with pytest.raises(ValueError, match="valid forms"):
        feval("ndcg@10", "nope")
    with pytest.raises(ValueError, match="at least one metric"):
        feval()


def test_train_feval_values_equal_metrics(rank_data):
    d = rank_data
    dtr = lgb.Dataset(d["X_train"], d["y_train"], group=d["g_train"])
    dte = lgb.Dataset(d["X_test"], d["y_test"], group=d["g_test"], reference=dtr)
    names = ("ndcg@10", "err@10", "map@5", "mrr", "pair_accuracy")
    res: dict = {}
    booster = lgb.train(PARAMS, dtr, 8, valid_sets=[dte], valid_names=["test"],
                        feval=feval(*names), callbacks=[lgb.record_evaluation(res)])
    pred = booster.predict(d["X_test"])
    g, y = d["g_test"], d["y_test"]
    expected = {"ndcg@10": metrics.ndcg(y, pred, g, 10), "err@10": metrics.err(y, pred, g, 10),
                "map@5": metrics.mean_ap(y, pred, g, 5), "mrr": metrics.mrr(y, pred, g),
                "pair_accuracy": metrics.pair_accuracy(y, pred, g)}
    assert set(res["test"]) == {metric_key(n) for n in names}
    for name in names:
        assert len(res["test"][metric_key(name)]) == 8
        assert res["test"][metric_key(name)][-1] == expected[name]


def test_early_stopping_on_feval(rank_data):
    d = rank_data
    dtr = lgb.Dataset(d["X_train"], d["y_train"], group=d["g_train"])
    dte = lgb.Dataset(d["X_test"], d["y_test"], group=d["g_test"], reference=dtr)
    res: dict = {}
    params = {**PARAMS, "learning_rate": 0.3, "num_leaves": 63, "min_data_in_leaf": 5}
    booster = lgb.train(params, dtr, 300, valid_sets=[dte], valid_names=["test"],
                        feval=feval("pair_accuracy"),
                        callbacks=[lgb.early_stopping(5, verbose=False),
                                   lgb.record_evaluation(res)])
    hist = res["test"]["gbrank_pair_accuracy"]
    assert len(hist) < 300  # it stopped
    best = int(np.argmax(hist))  # first maximum: strict improvement
    assert booster.best_iteration == best + 1
    assert len(hist) == best + 1 + 5
    assert booster.best_score["test"]["gbrank_pair_accuracy"] == max(hist)
    pred = booster.predict(d["X_test"], num_iteration=booster.best_iteration)
    assert metrics.pair_accuracy(d["y_test"], pred, d["g_test"]) == max(hist)


def test_sklearn_ranker_eval_metric_and_early_stopping(rank_data):
    d = rank_data
    model = lgb.LGBMRanker(n_estimators=200, learning_rate=0.3, min_child_samples=5,
                           verbose=-1, n_jobs=1, metric="None")
    # Recent LightGBM releases take eval_X/eval_y and deprecate eval_set; 4.0 (the
    # declared floor) has only eval_set.
    if "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters:
        evals = {"eval_X": (d["X_test"],), "eval_y": (d["y_test"],)}
    else:
        evals = {"eval_set": [(d["X_test"], d["y_test"])]}
    model.fit(d["X_train"], d["y_train"], group=d["g_train"], **evals,
              eval_group=[d["g_test"]], eval_metric=feval("ndcg@10", "err@5"),
              callbacks=[lgb.early_stopping(5, first_metric_only=True, verbose=False)])
    hist = model.evals_result_["valid_0"]
    assert set(hist) == {"gbrank_ndcg@10", "gbrank_err@5"}
    assert len(hist["gbrank_ndcg@10"]) < 200
    best = model.best_iteration_
    assert best == int(np.argmax(hist["gbrank_ndcg@10"])) + 1
    # The fitted booster keeps the trees up to the best iteration.
    pred = model.predict(d["X_test"])
    assert hist["gbrank_ndcg@10"][best - 1] == metrics.ndcg(d["y_test"], pred, d["g_test"], 10)
    assert hist["gbrank_err@5"][best - 1] == metrics.err(d["y_test"], pred, d["g_test"], 5)


def test_binary_metrics_on_probabilities(binary_data):
    d = binary_data
    dtr = lgb.Dataset(d["X_train"], d["y_train"])
    dte = lgb.Dataset(d["X_test"], d["y_test"], reference=dtr)
    res: dict = {}
    booster = lgb.train({"objective": "binary", "metric": "None", "verbose": -1,
                         "num_threads": 1}, dtr, 5, valid_sets=[dte], valid_names=["test"],
                        feval=feval("f1", "fbeta:2", "balanced", "pair_accuracy",
                                    groupless=True),
                        callbacks=[lgb.record_evaluation(res)])
    p = booster.predict(d["X_test"])  # built-in objective: feval sees probabilities
    y = d["y_test"]
    assert res["test"]["gbrank_f1"][-1] == metrics.f1(y, p)  # read at 0.5
    assert res["test"]["gbrank_fbeta_2"][-1] == metrics.fbeta(y, p, 2.0)
    assert res["test"]["gbrank_balanced"][-1] == metrics.balanced_measure(y, p)
    # group-less ranking metric, declared: all 500 rows are one query
    assert res["test"]["gbrank_pair_accuracy"][-1] == metrics.pair_accuracy(y, p)


def test_weights_reach_the_metric(rank_data):
    d = rank_data
    wq = np.arange(1, len(d["g_test"]) + 1) * 0.25  # float32-exact, as LightGBM stores them
    dte = lgb.Dataset(d["X_test"], d["y_test"], group=d["g_test"],
                      weight=np.repeat(wq, d["g_test"])).construct()
    pred = np.random.default_rng(0).normal(size=d["y_test"].size)
    (name, value, higher), = feval("ndcg@5")(pred, dte)
    assert (name, higher) == ("gbrank_ndcg@5", True)
    assert value == metrics.ndcg(d["y_test"], pred, d["g_test"], 5, weight=wq)
    assert value != metrics.ndcg(d["y_test"], pred, d["g_test"], 5)


# --- gbrank objectives inside LightGBM's own scikit-learn estimators ---------------------


def _imbalanced(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    z = 2 * X[:, 0] - X[:, 1] + rng.normal(size=n)
    return X, (z > np.quantile(z, 0.85)).astype(int)


def test_objective_reads_a_dataset_by_duck_typing():
    from gbrank.objectives import LambdaRank

    class FakeDataset:  # anything with LightGBM's three getters
        def get_label(self):
            return np.array([2.0, 0.0, 1.0, 1.0, 0.0])

        def get_weight(self):
            return None

        def get_group(self):
            return np.array([3, 2])

    s = np.array([0.1, 0.3, -0.2, 0.0, 0.5])
    obj = LambdaRank()
    for got, want in zip(obj(s, FakeDataset()),
                         obj.grad_hess(FakeDataset().get_label(), s, [3, 2]), strict=True):
        np.testing.assert_array_equal(got, want)


def test_lgbmclassifier_with_focal_loss_in_cross_val_score_and_grid_search():
    from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate

    from gbrank.objectives import FocalLoss
    from gbrank.sklearn import make_scorer

    X, y = _imbalanced()
    est = lgb.LGBMClassifier(objective=FocalLoss(), n_estimators=20, verbose=-1, n_jobs=1)
    scorer = make_scorer("f1")
    scores = cross_val_score(est, X, y, cv=3, scoring=scorer)
    res = cross_validate(est, X, y, cv=3, scoring=scorer, return_estimator=True,
                         return_indices=True)
    np.testing.assert_array_equal(res["test_score"], scores)  # deterministic refits
    for score, fitted, te in zip(scores, res["estimator"], res["indices"]["test"],
                                 strict=True):
        margins = fitted.predict(X[te], raw_score=True)
        assert score == metrics.f1(y[te], margins, margin=True)  # F1 of raw margin > 0
    # Grid over objective instances: each candidate is a clone of the listed objective.
    grid = {"objective": [FocalLoss(gamma=0.5), FocalLoss(gamma=2.0)]}
    gs = GridSearchCV(est, grid, cv=3, scoring=scorer).fit(X, y)
    for params, mean in zip(gs.cv_results_["params"], gs.cv_results_["mean_test_score"],
                            strict=True):
        direct = lgb.LGBMClassifier(objective=params["objective"], n_estimators=20,
                                    verbose=-1, n_jobs=1)
        assert mean == pytest.approx(np.mean(cross_val_score(direct, X, y, cv=3,
                                                             scoring=scorer)), abs=1e-12)


@pytest.mark.xfail(strict=True, reason=(
    "LightGBM's LGBMModel.set_params stores 'objective__gamma' as a booster parameter "
    "instead of routing it to the objective, and _process_params passes the deep "
    "get_params() keys to the booster ('Unknown parameter: objective__gamma'); use "
    "gbrank.sklearn.GBClassifier or grid over objective instances"))
def test_lightgbm_routes_nested_objective_parameters():
    from sklearn.base import clone

    from gbrank.objectives import FocalLoss

    est = clone(lgb.LGBMClassifier(objective=FocalLoss())).set_params(objective__gamma=0.5)
    assert est.objective.gamma == 0.5


@pytest.mark.parametrize("make", ["ranknet", "lambdarank"])
def test_lightgbm_calls_reuse_output_arrays_and_train_the_same_model(rank_data, make):
    # LightGBM casts gradients to new float32 arrays, so the objective rewrites its
    # previous call's arrays; the model must equal one trained on fresh arrays.
    import pickle

    from gbrank.objectives import LambdaRank, RankNet

    d = rank_data
    obj = RankNet() if make == "ranknet" else LambdaRank()
    ds = lgb.Dataset(d["X_train"], d["y_train"], group=d["g_train"]).construct()
    rng = np.random.default_rng(0)
    p1, p2 = rng.standard_normal((2, d["y_train"].size))
    g1, h1 = obj(p1, ds)
    g1_values = g1.copy()
    g2, h2 = obj(p2, ds)
    assert g2 is g1 and h2 is h1  # the same arrays, rewritten
    eg, eh = obj.grad_hess(d["y_train"], p2, d["g_train"])
    assert eg is not g2  # the public call still returns new arrays
    np.testing.assert_array_equal(g2, eg)
    np.testing.assert_array_equal(h2, eh)
    assert not np.array_equal(g1_values, g2)
    assert "_outputs" not in pickle.loads(pickle.dumps(obj)).__dict__

    def fresh(preds, train_set):  # the same objective, new arrays every round
        g, h = obj.grad_hess(train_set.get_label(), preds, train_set.get_group())
        return g.copy(), h.copy()

    params = {"metric": "None", "verbose": -1, "num_threads": 1, "min_data_in_leaf": 50,
              "learning_rate": 0.1, "deterministic": True}
    preds = [lgb.train(dict(params, objective=o), lgb.Dataset(
        d["X_train"], d["y_train"], group=d["g_train"]), 6).predict(d["X_test"])
        for o in (obj, fresh)]
    np.testing.assert_array_equal(preds[0], preds[1])


# --- cross-validation folds and metric names ----------------------------------------------


def _rank_small(rank_data, n_queries=60):
    """The first queries of rank.train as a dense array (fast folds)."""
    d = rank_data
    g = d["g_train"][:n_queries]
    n = int(g.sum())
    return d["X_train"][:n].toarray(), d["y_train"][:n], g


def test_lgb_cv_with_a_gbrank_objective_refuses_row_folds(rank_data):
    from gbrank.objectives import LambdaRank

    X, y, g = _rank_small(rank_data)
    params = {"objective": LambdaRank(), "metric": "None", "verbose": -1, "num_threads": 1}
    # LightGBM splits rows for a callable objective: every fold cuts queries.
    with pytest.raises(ValueError, match=r"cuts \d+ of its parent's 60 queries.*"
                                         r"gbrank\.lightgbm\.cv"):
        lgb.cv(params, lgb.Dataset(X, y, group=g), num_boost_round=3, nfold=5)
    # A built-in objective that does not group folds, judged by a gbrank ranking metric.
    with pytest.raises(ValueError, match="GroupKFold"):
        lgb.cv({**params, "objective": "regression"}, lgb.Dataset(X, y, group=g),
               num_boost_round=3, nfold=5, stratified=False, feval=feval("ndcg@10"))


@pytest.mark.skipif(
    tuple(int(x) for x in __import__("sklearn").__version__.split(".")[:2]) < (1, 9),
    reason="measured equal on scikit-learn 1.9 / NumPy 2; on the declared floors "
           "(scikit-learn 1.6 and 1.7 with NumPy 1.24) lgb.cv's subsets and the hand "
           "loop's Datasets train apart from round 4 (up to 3.2e-3 NDCG@10), cause not "
           "isolated")
def test_cv_equals_a_hand_loop_over_group_kfold(rank_data):
    from sklearn.model_selection import GroupKFold

    from gbrank.lightgbm import cv
    from gbrank.objectives import LambdaRank

    X, y, g = _rank_small(rank_data)
    params = {"objective": LambdaRank(), "metric": "None", "verbose": -1, "num_threads": 1,
              "min_data_in_leaf": 5, "deterministic": True}
    rounds = 6
    res = cv(params, lgb.Dataset(X, y, group=g), num_boost_round=rounds, nfold=4,
             feval=feval("ndcg@10"))
    # The hand loop: whole queries per fold, each part binned like the full data.
    qid = np.repeat(np.arange(g.size), g)
    full = lgb.Dataset(X, y, group=g).construct()
    per_fold = []
    for tr, te in GroupKFold(n_splits=4).split(X, groups=qid):
        dtr = lgb.Dataset(X[tr], y[tr], group=np.bincount(qid[tr])[np.unique(qid[tr])],
                          reference=full)
        booster = lgb.train(dict(params, objective=LambdaRank()), dtr, rounds)
        sizes_te = np.bincount(qid[te])[np.unique(qid[te])]
        per_fold.append([metrics.ndcg(y[te], booster.predict(X[te], num_iteration=i), sizes_te,
                                      10) for i in range(1, rounds + 1)])
    np.testing.assert_allclose(res["valid gbrank_ndcg@10-mean"], np.mean(per_fold, axis=0),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(res["valid gbrank_ndcg@10-stdv"], np.std(per_fold, axis=0),
                               rtol=0, atol=1e-12)


def test_cv_without_queries_makes_lgb_cv_folds(binary_data):
    from gbrank.lightgbm import cv
    from gbrank.objectives import FocalLoss

    d = binary_data
    params = {"objective": FocalLoss(), "metric": "None", "verbose": -1, "num_threads": 1}
    for kwargs in ({}, {"stratified": False}, {"stratified": False, "shuffle": False}):
        ours = cv(params, lgb.Dataset(d["X_train"], d["y_train"]), num_boost_round=4,
                  feval=feval("f1"), seed=3, **kwargs)
        theirs = lgb.cv(params, lgb.Dataset(d["X_train"], d["y_train"]), num_boost_round=4,
                        feval=feval("f1"), seed=3, **kwargs)
        assert ours == theirs


def test_feval_names_never_collide_with_lightgbm_metrics(rank_data):
    from gbrank.objectives import LambdaRank

    X, y, g = _rank_small(rank_data)
    n_te = int(g[-10:].sum())
    dtr = lgb.Dataset(X[:-n_te], y[:-n_te], group=g[:-10])
    dte = lgb.Dataset(X[-n_te:], y[-n_te:], group=g[-10:], reference=dtr)
    res: dict = {}
    params = {"objective": LambdaRank(), "metric": "ndcg", "eval_at": [10], "verbose": -1,
              "num_threads": 1}
    with pytest.warns(UserWarning, match="built-in metric.*first_metric_only"):
        booster = lgb.train(params, dtr, 3, valid_sets=[dte], feval=feval("ndcg@10"),
                            callbacks=[lgb.early_stopping(20, verbose=False),
                                       lgb.record_evaluation(res)])
    log = res["valid_0"]
    assert set(log) == {"ndcg@10", "gbrank_ndcg@10"}
    assert len(log["ndcg@10"]) == len(log["gbrank_ndcg@10"]) == 3
    pred = booster.predict(X[-n_te:], num_iteration=3)
    assert log["gbrank_ndcg@10"][-1] == metrics.ndcg(y[-n_te:], pred, g[-10:], 10)


def _our_warnings(record):
    return [str(w.message) for w in record if "gbrank" in str(w.message)
            or "LightGBM" in str(w.message)]


def test_lightgbm_estimators_warn_when_a_builtin_metric_leads(rank_data):
    """lgb.train copies the booster's parameters into its Datasets, where feval and the
    objective read them: a built-in metric listed before gbrank's is warned about. (The
    scikit-learn API hands gbrank no Dataset, so nothing is read there.)"""
    import warnings

    from gbrank.objectives import FocalLoss, LambdaRank

    X, y, g = _rank_small(rank_data)
    n_te = int(g[-10:].sum())
    train = lgb.Dataset(X[:-n_te], y[:-n_te], group=g[:-10])
    valid = lgb.Dataset(X[-n_te:], y[-n_te:], group=g[-10:], reference=train)
    es = [lgb.early_stopping(5, first_metric_only=True, verbose=False)]
    with pytest.warns(UserWarning, match="first_metric_only=True stops on ndcg"):
        lgb.train({"objective": LambdaRank(), "metric": "ndcg", "verbose": -1,
                   "num_threads": 1}, train, 5, valid_sets=[valid],
                  feval=feval("ndcg@10"), callbacks=es)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res: dict = {}
        lgb.train({"objective": LambdaRank(), "metric": "None", "verbose": -1,
                   "num_threads": 1}, lgb.Dataset(X[:-n_te], y[:-n_te], group=g[:-10]), 5,
                  valid_sets=[lgb.Dataset(X[-n_te:], y[-n_te:], group=g[-10:])],
                  feval=feval("ndcg@10"), callbacks=[*es, lgb.record_evaluation(res)])
    assert not _our_warnings(record)
    assert list(res["valid_0"]) == ["gbrank_ndcg@10"]
    # binary_logloss on raw margins, beside a custom objective
    Xb, yb = _imbalanced()
    obj = FocalLoss()
    with pytest.warns(UserWarning, match="binary_logloss on raw margins"):
        lgb.train({"objective": obj, "metric": "binary_logloss", "verbose": -1,
                   "num_threads": 1},
                  lgb.Dataset(Xb, yb, init_score=np.full(yb.size, obj.init_score(yb))), 3)


def test_feval_refuses_to_read_a_regression_objectives_values_as_margins():
    """LightGBM's regression objective hands feval estimates of the label: read as
    log-odds margins and cut at 0 they logged F1 0.27 where the 0.5 cut gives 0.81 (sixth
    probe). Refused, naming margin=True with threshold=0.5, which then logs scikit-learn's
    F1 at 0.5; a link neither logistic nor a value (cross_entropy_lambda) as before."""
    from sklearn.metrics import f1_score

    from gbrank.datasets import make_imbalanced
    from gbrank.lightgbm import feval

    X, y = make_imbalanced(n_rows=1500, positive_rate=0.1, seed=0)
    dtr = lgb.Dataset(X[:1000], y[:1000])
    dv = lgb.Dataset(X[1000:], y[1000:], reference=dtr)
    params = {"objective": "regression", "verbose": -1, "num_threads": 1, "metric": "None"}
    with pytest.raises(ValueError, match="'regression' hands feval estimates of the label.*"
                       r"margin=True, threshold=0.5"):
        lgb.train(params, dtr, 5, valid_sets=[dv], feval=feval("f1"))
    log: dict = {}
    b = lgb.train(params, dtr, 20, valid_sets=[dv], callbacks=[lgb.record_evaluation(log)],
                  feval=feval("f1", margin=True, threshold=0.5))
    assert log["valid_0"]["gbrank_f1"][-1] == pytest.approx(
        f1_score(y[1000:], b.predict(X[1000:]) > 0.5), abs=1e-12)
    dtr = lgb.Dataset(X[:1000], y[:1000])
    dv = lgb.Dataset(X[1000:], y[1000:], reference=dtr)
    with pytest.raises(ValueError, match=r"margin=False\) to read values in \[0, 1\] as "
                       "probabilities"):  # a calibration metric: no cut to advise
        lgb.train(params, dtr, 2, valid_sets=[dv], feval=feval("logloss"))
    dtr = lgb.Dataset(X[:1000], y[:1000])
    dv = lgb.Dataset(X[1000:], y[1000:], reference=dtr)
    with pytest.raises(ValueError, match="through a 'softplus' link"):
        lgb.train({**params, "objective": "cross_entropy_lambda"}, dtr, 2, valid_sets=[dv],
                  feval=feval("f1"))


def test_lightgbms_own_ranking_parameters_beside_a_gbrank_objective_are_warned_about():
    """lambdarank_truncation_level=3 in lgb.train's parameters (or GBRanker's
    booster_params) beside LambdaRank() changed nothing, silently (the model of
    truncation 30; eighth probe). Warned, naming the objective's own parameter."""
    from gbrank.datasets import make_ranking
    from gbrank.objectives import LambdaRank
    from gbrank.sklearn import GBRanker

    X, y, g = make_ranking(n_queries=20, rows_per_query=10, n_features=4, seed=0)
    params = {"objective": LambdaRank(), "verbose": -1, "num_threads": 1,
              "lambdarank_truncation_level": 3}
    with pytest.warns(UserWarning, match=r"parameter\(s\) lambdarank_truncation_level=3 "
                      r"configure its own lambdarank.*LambdaRank\(truncation=\.\.\.\)"):
        lgb.train(params, lgb.Dataset(X, y, group=g), 2)
    with pytest.warns(UserWarning, match=r"sigmoid=2.0 configure its own lambdarank"):
        GBRanker(LambdaRank(), n_estimators=2, n_jobs=1,
                 booster_params={"sigmoid": 2.0}).fit(X, y, group=g)


def test_cv_of_one_list_with_real_valued_labels_names_stratified_false():
    """Group-less folds are stratified by label by default, which scikit-learn refuses
    for rates ("Got 'continuous'") without naming the fix (eighth probe)."""
    from gbrank.lightgbm import cv
    from gbrank.objectives import RankNet

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3))
    y = np.exp(X[:, 0])  # demand rates
    params = {"objective": RankNet(groupless=True), "metric": "None", "verbose": -1,
              "num_threads": 1}
    with pytest.raises(ValueError, match=r"labels are continuous.*pass stratified=False"):
        cv(params, lgb.Dataset(X, y), 2, nfold=3)
    out = cv(params, lgb.Dataset(X, y), 2, nfold=3, stratified=False,
             feval=feval("pair_accuracy", groupless=True))
    assert len(out["valid gbrank_pair_accuracy-mean"]) == 2


def test_bagging_by_query_beside_a_custom_objective_is_refused_where_lightgbm_breaks_it():
    """LightGBM 4.6-4.7's bagging_by_query beside a custom objective never updates the
    out-of-bag rows' scores: a useless model, silently (fourteenth probe: validation
    NDCG@10 0.314 against 0.742). The claim checked with a plain function objective
    (LightGBM's own path, no gbrank check); gbrank's objectives refuse it there."""
    from gbrank import metrics
    from gbrank.datasets import make_ranking
    from gbrank.objectives import LambdaRank

    version = tuple(int(p) for p in lgb.__version__.split(".")[:2])
    if version < (4, 6) or version > (4, 7):
        pytest.skip(f"bagging_by_query is not known to be broken in LightGBM {version}")
    X, y, g = make_ranking(n_queries=200, rows_per_query=20, n_features=10, seed=0)
    Xt, yt, gt, Xv, yv, gv = X[:3000], y[:3000], g[:150], X[3000:], y[3000:], g[150:]
    params = {"verbose": -1, "num_threads": 1, "deterministic": True, "seed": 0,
              "metric": "None", "bagging_fraction": 0.5, "bagging_freq": 1,
              "bagging_by_query": True}
    obj = LambdaRank()

    def plain(preds, data):
        return obj.grad_hess(data.get_label(), preds, data.get_group())

    broken = lgb.train({**params, "objective": plain}, lgb.Dataset(Xt, yt, group=gt), 30)
    native = lgb.train({**params, "objective": "lambdarank"}, lgb.Dataset(Xt, yt, group=gt),
                       30)
    assert metrics.ndcg(yv, broken.predict(Xv), gv, k=10) < \
        metrics.ndcg(yv, native.predict(Xv), gv, k=10) - 0.2
    with pytest.raises(ValueError, match=r"bagging_by_query=True beside a custom objective "
                       r"\(LambdaRank\) trains a useless model.*Bag rows instead"):
        lgb.train({**params, "objective": LambdaRank()}, lgb.Dataset(Xt, yt, group=gt), 2)


def test_a_one_score_objective_handed_several_scores_per_row_names_num_class():
    """num_class=2 beside binary FocalLoss reached the metric's hint about
    predict_proba's two columns (fourteenth probe); the objective names num_class."""
    from gbrank.datasets import make_imbalanced
    from gbrank.objectives import FocalLoss

    X, y = make_imbalanced(n_rows=400, positive_rate=0.2, seed=0)
    with pytest.raises(ValueError, match=r"FocalLoss takes one score per row, and the "
                       r"booster hands it 2 per row: the training's parameters set "
                       r"num_class=2.*FocalLoss\(num_class=K\)"):
        lgb.train({"objective": FocalLoss(), "num_class": 2, "verbose": -1,
                   "num_threads": 1}, lgb.Dataset(X, y), 2)


def test_once_per_dataset_warnings_point_at_the_users_line():
    """The warnings lgb.train raises through a gbrank objective (positions it ignores,
    LightGBM's own ranking parameters, built-in metrics beside gbrank's, probability
    metrics on margins) are attributed to the caller's line, not to LightGBM's."""
    import warnings

    import gbrank.lightgbm
    from gbrank.datasets import make_imbalanced, make_ranking
    from gbrank.objectives import FocalLoss, LambdaRank

    X, y, g = make_ranking(n_queries=20, rows_per_query=10, n_features=5, seed=0)
    pos = np.concatenate([np.arange(1, k + 1) for k in g])
    Xb, yb = make_imbalanced(n_rows=300, n_features=8, positive_rate=0.2, seed=0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ds = lgb.Dataset(X, y, group=g, position=pos)
        line = inspect.currentframe().f_lineno + 1
        lgb.train({"objective": LambdaRank(), "verbose": -1, "metric": "ndcg",
                   "lambdarank_truncation_level": 5}, ds, 2, valid_sets=[ds],
                  feval=gbrank.lightgbm.feval("ndcg@5"))
        dsb = lgb.Dataset(Xb, yb)
        line_b = inspect.currentframe().f_lineno + 1
        lgb.train({"objective": FocalLoss(), "verbose": -1, "metric": "binary_logloss"},
                  dsb, 2, valid_sets=[dsb])
    said = {m: (x.filename, x.lineno) for x in w for m in (
        "display positions", "configure its own lambdarank", "lists them before",
        "on raw margins") if m in str(x.message)}
    assert said == {"display positions": (__file__, line),
                    "configure its own lambdarank": (__file__, line),
                    "lists them before": (__file__, line),
                    "on raw margins": (__file__, line_b)}
