"""gbrank.sklearn: GBRanker, GBClassifier and make_scorer as scikit-learn citizens.

Expected values are computed independently of the code under test: gbrank's metric
functions on the fold predictions, LightGBM/XGBoost trained directly, brute-force
threshold search with scikit-learn's f1_score, base rates.
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys

import joblib
import numpy as np
import pytest
import sklearn
from sklearn.exceptions import NotFittedError
from sklearn.metrics import f1_score
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    KFold,
    StratifiedKFold,
    TunedThresholdClassifierCV,
    cross_val_score,
    cross_validate,
    learning_curve,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from gbrank import metrics
from gbrank import predict_proba as sigmoid
from gbrank.objectives import FBetaSurrogate, FocalLoss, LambdaRank, RankNet
from gbrank.sklearn import GBClassifier, GBRanker, make_scorer

BOOSTERS = ["lightgbm", "xgboost"]
FAST = {"n_estimators": 15, "n_jobs": 1, "random_state": 0}
# Group-less ranking (the seed's demand-level task): declared, never inferred.
GL = {**FAST, "groupless": True}


# --- data -------------------------------------------------------------------------------


def _demand(n=300, seed=0):
    """Group-less graded data: 5 grades from a noisy linear signal (the article's task)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    signal = X @ np.array([1.0, -0.7, 0.5, 0.0, 0.3, 0.0]) + 0.5 * rng.normal(size=n)
    y = np.searchsorted(np.quantile(signal, [0.2, 0.4, 0.6, 0.8]), signal).astype(float)
    return X, y


def _grouped(n_queries=30, seed=1):
    """Grouped data with per-row query ids in shuffled order and 2..20 rows per query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 21, size=n_queries)
    qid = np.repeat(np.arange(100, 100 + n_queries), sizes)
    X = rng.normal(size=(qid.size, 5))
    signal = X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=qid.size)
    y = np.clip(np.round(signal + 1.5), 0, 4)
    perm = rng.permutation(qid.size)
    return X[perm], y[perm], qid[perm]


def _binary(n=400, seed=2, rate=0.15):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    z = 2.0 * X[:, 0] - X[:, 1] + rng.normal(size=n)
    y = (z > np.quantile(z, 1 - rate)).astype(int)
    return X, y


# --- scikit-learn's estimator checks ------------------------------------------------------

_RANKER_WEIGHTS = ("sample weights of a ranker are query weights: gbrank's ranking "
                   "objectives refuse per-row weights that vary within a query, and "
                   "group-less data is one query")
_HIST_WEIGHTS = ("histogram boosters: weight k is not k copies (LightGBM's min_data_in_leaf "
                 "and XGBoost's min_child_weight see rows, the validation split draws rows); "
                 "LightGBM's and XGBoost's own estimators fail this check too")


def _expected_failures(estimator):
    if isinstance(estimator, GBRanker):
        return {"check_sample_weights_not_overwritten": _RANKER_WEIGHTS,
                "check_sample_weight_equivalence_on_dense_data": _RANKER_WEIGHTS,
                "check_sample_weight_equivalence_on_sparse_data": _RANKER_WEIGHTS}
    return {"check_sample_weight_equivalence_on_dense_data": _HIST_WEIGHTS,
            "check_sample_weight_equivalence_on_sparse_data": _HIST_WEIGHTS}


@parametrize_with_checks([GBRanker(n_estimators=10, n_jobs=1, groupless=True),
                          GBClassifier(n_estimators=10, n_jobs=1)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks_lightgbm(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks([GBRanker(booster="xgboost", n_estimators=10, n_jobs=1, groupless=True),
                          GBClassifier(booster="xgboost", n_estimators=10, n_jobs=1)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks_xgboost(estimator, check):
    check(estimator)


# --- group-less ranking --------------------------------------------------------------------


@pytest.mark.parametrize("booster", BOOSTERS)
def test_groupless_cross_val_score_is_pair_accuracy_of_each_fold(booster):
    X, y = _demand()
    est = GBRanker(booster=booster, **GL)
    cv = KFold(5, shuffle=True, random_state=0)
    scores = cross_val_score(est, X, y, cv=cv)
    res = cross_validate(est, X, y, cv=cv, return_estimator=True, return_indices=True)
    expected = [metrics.pair_accuracy(y[te], fitted.predict(X[te]))
                for fitted, te in zip(res["estimator"], res["indices"]["test"], strict=True)]
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-15)
    assert np.mean(scores) > 0.7  # far above the 0.5 of a random order


def test_learning_curve_points_equal_refits_on_the_training_prefix():
    X, y = _demand()
    est = GBRanker(**GL)
    cv = KFold(3)
    sizes, train_scores, test_scores = learning_curve(est, X, y, cv=cv,
                                                      train_sizes=[0.4, 1.0])
    assert sizes.tolist() == [80, 200]
    for j, (tr, te) in enumerate(cv.split(X)):
        for i, m in enumerate(sizes):
            fitted = GBRanker(**GL).fit(X[tr[:m]], y[tr[:m]])
            assert test_scores[i, j] == metrics.pair_accuracy(y[te], fitted.predict(X[te]))
            assert train_scores[i, j] == metrics.pair_accuracy(
                y[tr[:m]], fitted.predict(X[tr[:m]]))


def test_grid_search_over_estimator_and_objective_parameters():
    X, y = _demand()
    grid = {"learning_rate": [0.05, 0.3], "objective__sigma": [0.5, 2.0]}
    gs = GridSearchCV(GBRanker(objective=RankNet(), **GL), grid, cv=3).fit(X, y)
    assert len(gs.cv_results_["params"]) == 4
    for params, score in zip(gs.cv_results_["params"], gs.cv_results_["mean_test_score"],
                             strict=True):
        direct = GBRanker(objective=RankNet(sigma=params["objective__sigma"]),
                          learning_rate=params["learning_rate"], **GL)
        assert score == pytest.approx(np.mean(cross_val_score(direct, X, y, cv=3)), abs=1e-15)
    assert gs.best_estimator_.objective_.sigma == gs.best_params_["objective__sigma"]
    # The objective really changed: the two sigmas give different models.
    a = GBRanker(objective=RankNet(sigma=0.5), **GL).fit(X, y).predict(X)
    b = GBRanker(objective=RankNet(sigma=2.0), **GL).fit(X, y).predict(X)
    assert not np.allclose(a, b)


def test_objective_name_instance_and_native():
    X, y = _demand()
    by_name = GBRanker(objective="lambdarank:err", **GL).fit(X, y)
    assert isinstance(by_name.objective_, LambdaRank) and by_name.objective_.metric == "err"
    inst = GBRanker(objective=LambdaRank(metric="err"), **GL).fit(X, y)
    np.testing.assert_array_equal(inst.predict(X), by_name.predict(X))
    native = GBRanker(objective="native:lambdarank", **GL).fit(X, y.astype(int))
    assert native.booster_.params["objective"] == "lambdarank"
    assert not np.allclose(native.predict(X), inst.predict(X))


# --- grouped ranking with metadata routing -------------------------------------------------


@pytest.mark.parametrize("booster", BOOSTERS)
def test_grouped_cross_validation_routes_qid(booster):
    X, y, qid = _grouped()
    with sklearn.config_context(enable_metadata_routing=True):
        est = GBRanker(booster=booster, **FAST).set_fit_request(qid=True)
        scorer = make_scorer("ndcg@10")
        kw = dict(cv=GroupKFold(5), params={"qid": qid, "groups": qid}, scoring=scorer)
        scores = cross_val_score(est, X, y, **kw)
        res = cross_validate(est, X, y, return_estimator=True, return_indices=True, **kw)
    np.testing.assert_array_equal(scores, res["test_score"])
    for i, (fitted, tr, te) in enumerate(zip(res["estimator"], res["indices"]["train"],
                                             res["indices"]["test"], strict=True)):
        assert not set(qid[tr]) & set(qid[te])  # no query split across folds
        pred = fitted.predict(X[te])
        assert scores[i] == metrics.ndcg(y[te], pred, qid=qid[te], k=10)
        # Per query, not the fold as one query (which gives another value).
        assert scores[i] != metrics.ndcg(y[te], pred, k=10)
        assert fitted.score(X[te], y[te], qid=qid[te]) == metrics.pair_accuracy(
            y[te], pred, qid=qid[te])


def test_default_score_receives_qid_when_requested():
    X, y, qid = _grouped()
    with sklearn.config_context(enable_metadata_routing=True):
        est = GBRanker(**FAST).set_fit_request(qid=True).set_score_request(qid=True)
        res = cross_validate(est, X, y, cv=GroupKFold(3), params={"qid": qid, "groups": qid},
                             return_estimator=True, return_indices=True)
    for fitted, te, score in zip(res["estimator"], res["indices"]["test"], res["test_score"],
                                 strict=True):
        assert score == metrics.pair_accuracy(y[te], fitted.predict(X[te]), qid=qid[te])
        # Pooled over queries, not over the whole fold as one query.
        assert score != metrics.pair_accuracy(y[te], fitted.predict(X[te]))


# --- query ids as a column of X (no metadata routing) ---------------------------------


def _frame_with_qid(X, qid):
    import pandas as pd

    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["qid"] = qid
    return df


def _hand_cv(make, X, y, qid, folds):
    """GroupKFold by hand: fit on whole training queries with qid, NDCG@10 per query."""
    out = []
    for tr, te in folds:
        fitted = make().fit(X[tr], y[tr], qid=qid[tr])
        out.append(metrics.ndcg(y[te], fitted.predict(X[te]), qid=qid[te], k=10))
    return np.asarray(out)


@pytest.mark.parametrize("booster", BOOSTERS)
def test_qid_column_in_cross_val_score_without_routing(booster):
    X, y, qid = _grouped()
    folds = list(GroupKFold(5).split(X, groups=qid))
    expected = _hand_cv(lambda: GBRanker(booster=booster, **FAST), X, y, qid, folds)
    scorer = make_scorer("ndcg@10")
    frame = cross_val_score(GBRanker(booster=booster, **FAST), _frame_with_qid(X, qid), y,
                            groups=qid, cv=GroupKFold(5), scoring=scorer)
    array = cross_val_score(GBRanker(booster=booster, qid_col=2, **FAST),
                            np.insert(X, 2, qid, axis=1), y, groups=qid, cv=GroupKFold(5),
                            scoring=scorer)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = cross_val_score(GBRanker(booster=booster, **FAST).set_fit_request(qid=True),
                                 X, y, cv=GroupKFold(5), scoring=make_scorer("ndcg@10"),
                                 params={"qid": qid, "groups": qid})
    np.testing.assert_allclose(frame, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(frame, array)
    np.testing.assert_array_equal(frame, routed)
    # Without ids anywhere each fold would be one query (a plausible wrong number, the
    # issue's call): refused, naming both fixes.
    with pytest.raises(ValueError, match="groups=ids\\) the ids only make the folds.*"
                                         "GBRanker\\(groupless=True\\)"):
        cross_val_score(GBRanker(booster=booster, **FAST), X, y, groups=qid,
                        cv=GroupKFold(5), scoring=scorer, error_score="raise")


def test_qid_column_in_grid_search_and_pipeline():
    from sklearn.compose import ColumnTransformer

    X, y, qid = _grouped()
    df = _frame_with_qid(X, qid)
    grid = {"n_estimators": [5, 15]}
    gs = GridSearchCV(GBRanker(n_jobs=1, random_state=0), grid, cv=GroupKFold(3),
                      scoring=make_scorer("ndcg@10")).fit(df, y, groups=qid)
    folds = list(GroupKFold(3).split(X, groups=qid))
    for n, mean in zip((5, 15), gs.cv_results_["mean_test_score"], strict=True):
        hand = _hand_cv(lambda n=n: GBRanker(n_estimators=n, n_jobs=1, random_state=0),
                        X, y, qid, folds)
        assert mean == pytest.approx(hand.mean(), abs=1e-12)
    assert gs.best_estimator_.score(df, y) == metrics.pair_accuracy(
        y, gs.best_estimator_.predict(df), qid=qid)
    # A Pipeline whose transformer renames the column: the ranker names it as it sees it.
    scale = ColumnTransformer([("num", StandardScaler(), [f"f{i}" for i in range(5)])],
                              remainder="passthrough").set_output(transform="pandas")
    pipe = make_pipeline(scale, GBRanker(qid_col="remainder__qid", **FAST))
    piped = cross_val_score(pipe, df, y, groups=qid, cv=GroupKFold(5),
                            scoring=make_scorer("ndcg@10"))
    res = cross_validate(pipe, df, y, groups=qid, cv=GroupKFold(5), return_estimator=True,
                         return_indices=True)
    for score, fitted, te in zip(piped, res["estimator"], res["indices"]["test"],
                                 strict=True):
        assert score == metrics.ndcg(y[te], fitted.predict(df.iloc[te]), qid=qid[te], k=10)
        assert fitted[-1].feature_importances_.size == 6  # five features and the ids
        assert fitted[-1].feature_importances_[-1] == 0.0


def test_qid_column_errors_and_agreement():
    X, y, qid = _grouped()
    df = _frame_with_qid(X, qid)
    a = GBRanker(**FAST).fit(df, y)
    b = GBRanker(**FAST).fit(df, y, qid=qid)  # the same ids twice: fine
    np.testing.assert_array_equal(a.predict(df), b.predict(df))
    np.testing.assert_array_equal(a.predict(df), GBRanker(**FAST).fit(X, y, qid=qid).predict(X))
    with pytest.raises(ValueError, match="query ids given twice"):
        GBRanker(**FAST).fit(df, y, qid=qid[::-1])
    with pytest.raises(ValueError, match=r"qid_col='query' is not a column of X \(columns:"):
        GBRanker(qid_col="query", **FAST).fit(df, y)
    with pytest.raises(ValueError, match="name the column by its index"):
        GBRanker(qid_col="query", **FAST).fit(X, y)
    with pytest.raises(ValueError, match="qid_col=9 is not a column index of X"):
        GBRanker(qid_col=9, **FAST).fit(X, y)
    # qid_col=None: a column named qid is an ordinary feature (of group-less data here).
    c = GBRanker(qid_col=None, **GL).fit(df, y)
    assert c.booster_.num_feature() == 6


@pytest.mark.parametrize("booster", BOOSTERS)
def test_qid_in_any_order_is_grouped_internally(booster):
    X, y, qid = _grouped()
    order = np.argsort(qid, kind="stable")
    shuffled = GBRanker(booster=booster, **FAST).fit(X, y, qid=qid)
    tidy = GBRanker(booster=booster, **FAST).fit(X[order], y[order], qid=qid[order])
    # Same internal data: the same model; predictions come back in the caller's order.
    np.testing.assert_array_equal(shuffled.predict(X), tidy.predict(X))
    # And the grouping matters: group-less training gives another model.
    groupless = GBRanker(booster=booster, **GL).fit(X, y)
    assert not np.allclose(groupless.predict(X), shuffled.predict(X))


@pytest.mark.parametrize("booster", BOOSTERS)
def test_early_stopping_holds_out_queries_reproducibly(booster):
    X, y, qid = _grouped(n_queries=60)
    kw = dict(booster=booster, n_estimators=200, learning_rate=0.3, early_stopping_rounds=5,
              validation_fraction=0.25, scoring="ndcg@5", random_state=3, n_jobs=1)
    a = GBRanker(**kw).fit(X, y, qid=qid)
    curve = np.asarray(a.evals_result_["valid"]["ndcg@5"])
    assert a.best_iteration_ == int(np.argmax(curve)) + 1
    assert curve.size == min(200, a.best_iteration_ + 5)
    b = GBRanker(**kw).fit(X, y, qid=qid)
    np.testing.assert_array_equal(curve, b.evals_result_["valid"]["ndcg@5"])
    # The validation metric is ndcg@5 over whole held-out queries: it equals the metric
    # of the final model's predictions on some set of whole queries, checked on the
    # model's own prediction at the best round.
    assert 0 < a.best_iteration_ < 200


def test_learning_rate_decay_matches_lightgbm_schedule():
    import lightgbm as lgb

    X, y = _demand()
    est = GBRanker(n_estimators=3, learning_rate=0.2, learning_rate_decay=0.5, n_jobs=1,
                   random_state=0, groupless=True).fit(X, y)
    seed = est.booster_.params["seed"]
    params = {"objective": RankNet(groupless=True), "verbosity": -1, "seed": seed,
              "metric": "None",
              "feature_pre_filter": False, "num_threads": 1, "learning_rate": 0.2}
    direct = lgb.train(params, lgb.Dataset(X, y, group=[y.size]), 3,
                       callbacks=[lgb.reset_parameter(learning_rate=[0.2, 0.1, 0.05])])
    np.testing.assert_allclose(est.predict(X), direct.predict(X, raw_score=True), rtol=1e-12)
    constant = GBRanker(n_estimators=3, learning_rate=0.2, n_jobs=1, random_state=0,
                        groupless=True).fit(X, y)
    assert not np.allclose(constant.predict(X), est.predict(X))


# --- persistence, parallelism, pipelines, pandas ------------------------------------------


@pytest.mark.parametrize("booster", BOOSTERS)
@pytest.mark.parametrize("cls", [GBRanker, GBClassifier])
def test_pickle_and_joblib_round_trip(tmp_path, booster, cls):
    X, y = _demand() if cls is GBRanker else _binary()
    est = cls(booster=booster, **(GL if cls is GBRanker else FAST)).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    path = tmp_path / "model.joblib"
    joblib.dump(est, path)
    loaded = joblib.load(path)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    if cls is GBClassifier:
        np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


@pytest.mark.slow
def test_cross_val_score_with_two_jobs_equals_one_job():
    X, y = _demand()
    one = cross_val_score(GBRanker(**GL), X, y, cv=4)
    two = cross_val_score(GBRanker(**GL), X, y, cv=4, n_jobs=2)
    np.testing.assert_array_equal(one, two)


def test_pipeline_with_standard_scaler():
    X, y = _demand()
    X = X * np.array([1.0, 100.0, 0.01, 5.0, 1.0, 1e3])
    pipe = make_pipeline(StandardScaler(), GBRanker(**GL))
    scores = cross_val_score(pipe, X, y, cv=3)
    # Each fold by hand: scaler fitted on the training part, pair accuracy of the held-out.
    expect = []
    for tr, te in KFold(3).split(X):
        scaler = StandardScaler().fit(X[tr])
        model = GBRanker(**GL).fit(scaler.transform(X[tr]), y[tr])
        expect.append(metrics.pair_accuracy(y[te], model.predict(scaler.transform(X[te]))))
    np.testing.assert_array_equal(scores, expect)
    pipe.fit(X, y)
    Xs = StandardScaler().fit_transform(X)
    direct = GBRanker(**GL).fit(Xs, y)
    np.testing.assert_array_equal(pipe.predict(X), direct.predict(Xs))
    assert pipe.score(X, y) == metrics.pair_accuracy(y, direct.predict(Xs))


@pytest.mark.parametrize("booster", BOOSTERS)
def test_pandas_feature_names_and_categorical_columns(booster):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    n = 400
    colour = rng.choice(["red", "green", "blue", "black"], size=n)
    effect = {"red": 3.0, "green": 0.0, "blue": 1.5, "black": -1.0}
    x1 = rng.normal(size=n)
    y = np.clip(np.round(np.vectorize(effect.get)(colour) + 0.5 * x1 + 1.0), 0, 4)
    df = pd.DataFrame({"colour": pd.Categorical(colour), "x1": x1,
                       "x2": rng.normal(size=n)})
    est = GBRanker(booster=booster, **GL).fit(df, y)
    assert est.feature_names_in_.tolist() == ["colour", "x1", "x2"]
    assert est.n_features_in_ == 3
    if booster == "lightgbm":
        assert est.booster_.feature_name() == ["colour", "x1", "x2"]
        assert est.booster_.pandas_categorical == [sorted(effect)]
    else:
        assert est.booster_.feature_names == ["colour", "x1", "x2"]
        assert est.booster_.feature_types == ["c", "float", "float"]
    # The categorical column carries most of the signal, and is used.
    assert np.argmax(est.feature_importances_) == 0
    assert est.feature_importances_.sum() == pytest.approx(1.0)
    shuffled = df.sample(frac=1.0, random_state=0)
    np.testing.assert_allclose(est.predict(shuffled), est.predict(df)[shuffled.index],
                               rtol=0, atol=0)
    assert est.score(df, y) == metrics.pair_accuracy(y, est.predict(df))
    numeric = GBRanker(booster=booster, **GL).fit(df[["x1", "x2"]], y)
    with pytest.warns(UserWarning, match="fitted with feature names"):
        numeric.predict(df[["x1", "x2"]].to_numpy())
    with pytest.raises(ValueError, match=r"another order.*Reorder them: X\[\[.x1., .x2.\]\]"):
        numeric.predict(df[["x2", "x1"]])  # columns in another order


# --- the classifier ----------------------------------------------------------------------


@pytest.mark.parametrize("booster", BOOSTERS)
def test_classifier_probabilities_start_from_the_objective_init_score(booster):
    # Focal loss with gamma=0 is the logistic loss: with (almost) no boosting the
    # probabilities must be the base rate, not LightGBM's raw-score fallback of 0.5.
    X, y = _binary(rate=0.1)
    est = GBClassifier(objective=FocalLoss(gamma=0.0), booster=booster, n_estimators=1,
                       learning_rate=1e-9, threshold=0.5, validation_fraction=None,
                       n_jobs=1).fit(X, y)
    assert est.init_score_ == pytest.approx(np.log(0.1 / 0.9), abs=1e-12)
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], 0.1, atol=1e-8)
    np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0, atol=1e-15)
    # Trained: probabilities are sigma(raw + init), the booster's raw margin plus the start.
    full = GBClassifier(objective="focal", booster=booster, threshold=0.5,
                        validation_fraction=None, **FAST).fit(X, y)
    assert full.init_score_ == FocalLoss().init_score(y.astype(float))
    if booster == "lightgbm":
        raw = full.booster_.predict(X, raw_score=True)
    else:
        import xgboost as xgb

        raw = full.booster_.predict(xgb.DMatrix(X), output_margin=True)
    # (XGBoost's predictions are float32 whichever way they are asked for.)
    np.testing.assert_allclose(full.predict_proba(X)[:, 1], sigmoid(raw + full.init_score_),
                               rtol=1e-12 if booster == "lightgbm" else 1e-6)
    np.testing.assert_array_equal(full.predict(X), (full.predict_proba(X)[:, 1] > 0.5))


def test_classifier_auto_threshold_is_the_f1_best_cut():
    X, y = _binary()
    est = GBClassifier(validation_fraction=None, **FAST).fit(X, y)
    pred = est.predict(X)
    margins = est.decision_function(X)
    # Brute force over every cut between distinct margins (scikit-learn's F1).
    cuts = np.unique(margins)
    best = max(f1_score(y, margins >= c) for c in cuts)
    assert f1_score(y, pred) == pytest.approx(best, abs=1e-12)
    np.testing.assert_array_equal(pred == 1, margins > 0)
    # threshold_ is the same cut on the probability scale.
    proba = est.predict_proba(X)[:, 1]
    assert proba[pred == 1].min() >= est.threshold_ >= proba[pred == 0].max()


def test_classifier_string_labels_and_fbeta_surrogate():
    X, y = _binary()
    labels = np.where(y == 1, "fraud", "ok")
    est = GBClassifier(objective=FBetaSurrogate(beta=1.0), **FAST).fit(X, labels)
    assert est.classes_.tolist() == ["fraud", "ok"]  # sorted
    assert est.pos_label_ == "fraud"  # the rarer class (15%), not the alphabetical last
    positive = est.predict_proba(X)[:, 0] > est.threshold_  # column of classes_[0]
    np.testing.assert_array_equal(est.predict(X) == "fraud", positive)
    # scikit-learn's sign convention: decision_function > 0 exactly where classes_[1].
    np.testing.assert_array_equal(est.decision_function(X) > 0, est.predict(X) == "ok")


@pytest.mark.parametrize("booster", BOOSTERS)
def test_classifier_pos_label(booster):
    X, y = _binary()
    labels = np.where(y == 1, "fraud", "ok")
    kw = dict(booster=booster, threshold=0.5, validation_fraction=None, **FAST)
    # The same model as on 0/1 labels with fraud = 1, whichever way the strings sort.
    ref = GBClassifier(**kw).fit(X, y)
    for pos, other in (("fraud", "ok"), ("a_fraud", "z_ok"), ("z_fraud", "a_ok")):
        names = np.where(y == 1, pos, other)
        for est in (GBClassifier(**kw).fit(X, names),
                    GBClassifier(pos_label=pos, **kw).fit(X, names)):
            assert est.pos_label_ == pos
            col = est.classes_.tolist().index(pos)
            np.testing.assert_array_equal(est.predict_proba(X)[:, col],
                                          ref.predict_proba(X)[:, 1])
            np.testing.assert_array_equal(est.predict(X) == pos, ref.predict(X) == 1)
    # Numeric labels keep scikit-learn's convention (the larger one), even in the majority.
    flipped = GBClassifier(**kw).fit(X, 1 - y)
    assert flipped.pos_label_ == 1
    assert GBClassifier(pos_label=0, **kw).fit(X, 1 - y).pos_label_ == 0
    # So do numbers written as text (a CSV read as strings): "1" even in the majority,
    # the same model as on the numbers.
    for text in ((1 - y).astype(int).astype(str), np.where(y == 1, "-1", "+1")):
        est = GBClassifier(**kw).fit(X, text)
        assert est.pos_label_ == ("1" if "0" in text else "+1")
        col = est.classes_.tolist().index(est.pos_label_)
        np.testing.assert_array_equal(est.predict_proba(X)[:, col],
                                      flipped.predict_proba(X)[:, 1])
    with pytest.raises(ValueError, match=r"pos_label='spam' is not one of the classes"):
        GBClassifier(pos_label="spam", **kw).fit(X, labels)


@pytest.mark.parametrize("booster", BOOSTERS)
def test_auto_threshold_final_model_learns_from_every_row(booster):
    X, y = _binary()
    auto = GBClassifier(booster=booster, **FAST).fit(X, y)
    # The same training on all rows, without any split (fixed threshold).
    full = GBClassifier(booster=booster, threshold=0.5, **FAST).fit(X, y)
    np.testing.assert_array_equal(auto.predict_proba(X), full.predict_proba(X))
    assert auto.init_score_ == full.init_score_ == FocalLoss().init_score(y.astype(float))
    # The threshold was chosen on held-out rows of a model trained without them.
    assert auto.threshold_ != 0.5
    assert "valid" in auto.evals_result_


def test_classifier_in_tuned_threshold_cv():
    X, y = _binary()
    tuned = TunedThresholdClassifierCV(GBClassifier(threshold=0.5, **FAST), scoring="f1",
                                       cv=3, random_state=0).fit(X, y)
    assert 0.0 < tuned.best_threshold_ < 1.0
    proba = tuned.estimator_.predict_proba(X)[:, 1]
    np.testing.assert_array_equal(tuned.predict(X), (proba >= tuned.best_threshold_))


def test_grid_search_objective_parameter_inside_gbclassifier():
    X, y = _binary()
    gs = GridSearchCV(GBClassifier(objective=FocalLoss(), threshold=0.5, **FAST),
                      {"objective__gamma": [0.0, 2.0]}, cv=3, scoring=make_scorer("f1"))
    gs.fit(X, y)
    for params, score in zip(gs.cv_results_["params"], gs.cv_results_["mean_test_score"],
                             strict=True):
        direct = GBClassifier(objective=FocalLoss(gamma=params["objective__gamma"]),
                              threshold=0.5, **FAST)
        expected = np.mean(cross_val_score(direct, X, y, cv=3, scoring="f1"))
        assert score == pytest.approx(expected, abs=1e-12)
    # No flattened objective__* key reaches the booster.
    assert not [k for k in gs.best_estimator_.booster_.params if k.startswith("objective__")]
    with pytest.raises(ValueError, match="objective__gamma sets a parameter of an objective "
                                         "instance, but objective is 'focal'"):
        GBClassifier().set_params(objective__gamma=1.0)


# --- the classifier with K classes -------------------------------------------------------


def _multi(n=450, seed=3):
    """Three classes, 70/20/10, from a noisy linear signal."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    z = X[:, 0] - 0.6 * X[:, 1] + 0.7 * rng.normal(size=n)
    y = np.digitize(z, np.quantile(z, [0.7, 0.9]))
    return X, y


def _softmax_of_booster(est, X):
    """predict_proba recomputed from the booster's own raw margins and init_score_."""
    if est.booster == "lightgbm":
        raw = est.booster_.predict(X, raw_score=True)
    else:
        import xgboost as xgb

        start = np.zeros((len(X), est.classes_.size))
        raw = est.booster_.predict(xgb.DMatrix(X, base_margin=start), output_margin=True)
    return sigmoid(raw + est.init_score_)  # gbrank.predict_proba: softmax for (n, K)


@pytest.mark.parametrize("booster", BOOSTERS)
def test_multiclass_classifier_probabilities_rule_and_labels(booster):
    X, y = _multi()
    names = np.array(["high", "low", "mid"])[y]  # sorted: classes_ = high, low, mid
    est = GBClassifier(booster=booster, **FAST).fit(X, names)
    assert est.classes_.tolist() == ["high", "low", "mid"]
    assert isinstance(est.objective_, FocalLoss) and est.objective_.num_class == 3
    assert est.objective == "focal"  # the parameter is stored as given
    codes = np.searchsorted(est.classes_, names)
    np.testing.assert_allclose(est.init_score_, FocalLoss(num_class=3).init_score(codes),
                               rtol=0, atol=1e-9)  # final model: every row
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(proba, _softmax_of_booster(est, X),
                               rtol=1e-12 if booster == "lightgbm" else 1e-5)
    d = est.decision_function(X)
    np.testing.assert_allclose(d, np.log(proba) + est.class_offsets_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(d, axis=1)])
    assert np.any(est.class_offsets_ != 0)  # the rule moved some decisions
    assert not hasattr(est, "threshold_") and not hasattr(est, "pos_label_")


def test_multiclass_offsets_maximise_macro_f1_of_the_choosing_predictions():
    # decision_cv=None, validation_fraction=None: chosen on the training predictions.
    X, y = _multi()
    est = GBClassifier(validation_fraction=None, decision_cv=None, **FAST).fit(X, y)
    log_p = np.log(est.predict_proba(X))
    offsets, best = metrics.best_class_offsets(y, log_p, margin=True)
    np.testing.assert_allclose(est.class_offsets_, offsets, rtol=0, atol=1e-9)
    assert f1_score(y, est.predict(X), average="macro") == pytest.approx(best, abs=1e-12)
    assert best > f1_score(y, np.argmax(log_p, axis=1), average="macro")
    # beta: the macro-F_beta offsets.
    est2 = GBClassifier(validation_fraction=None, decision_cv=None, beta=2.0,
                        **FAST).fit(X, y)
    np.testing.assert_allclose(est2.class_offsets_,
                               metrics.best_class_offsets(y, log_p, 2.0, margin=True)[0],
                               atol=1e-9)


@pytest.mark.parametrize("booster", BOOSTERS)
def test_multiclass_auto_offsets_final_model_learns_from_every_row(booster):
    X, y = _multi()
    auto = GBClassifier(booster=booster, **FAST).fit(X, y)
    split = GBClassifier(booster=booster, decision_cv=None, **FAST).fit(X, y)
    plain = GBClassifier(booster=booster, decision="argmax", **FAST).fit(X, y)
    # The same final model (every row, same seed); argmax has no offsets and no split.
    np.testing.assert_array_equal(auto.predict_proba(X), plain.predict_proba(X))
    np.testing.assert_array_equal(split.predict_proba(X), plain.predict_proba(X))
    np.testing.assert_array_equal(plain.class_offsets_, np.zeros(3))
    np.testing.assert_array_equal(plain.predict(X), np.argmax(plain.predict_proba(X), axis=1))
    # Out-of-fold offsets need no validation split; decision_cv=None records its curve.
    assert auto.evals_result_ == {} and plain.evals_result_ == {}
    assert "valid" in split.evals_result_


def _fold_rng(random_state):
    """The generator GBClassifier draws its folds from: random_state after the booster's
    seed is drawn."""
    rng = np.random.RandomState(random_state)
    rng.randint(np.iinfo(np.int32).max)
    return rng


def _oof_log_proba(X, y, w, cv, booster, random_state, **kw):
    """Out-of-fold log-probabilities by a hand loop over StratifiedKFold: plain argmax
    classifiers (no offsets, no split) trained on the other folds."""
    folds = StratifiedKFold(cv, shuffle=True, random_state=_fold_rng(random_state))
    out = np.full((len(y), 3), np.nan)
    for tr, va in folds.split(X, y):
        model = GBClassifier(booster=booster, decision="argmax", random_state=random_state,
                             n_jobs=1, **kw).fit(X[tr], y[tr], sample_weight=w[tr])
        assert model.classes_.tolist() == [0, 1, 2]
        out[va] = np.log(model.predict_proba(X[va]))
    return out


@pytest.mark.parametrize("booster", BOOSTERS)
def test_multiclass_auto_offsets_are_chosen_on_out_of_fold_predictions(booster):
    X, y = _multi()
    w = np.where(y == 2, 2.0, 1.0)
    est = GBClassifier(booster=booster, decision_cv=3, **FAST).fit(X, y, sample_weight=w)
    oof = _oof_log_proba(X, y, w, 3, booster, 0, n_estimators=15)
    offsets, best = metrics.best_class_offsets(y, oof, weight=w, margin=True)
    np.testing.assert_allclose(est.class_offsets_, offsets, rtol=0, atol=1e-12)
    rule = np.argmax(oof + est.class_offsets_, axis=1)
    assert f1_score(y, rule, average="macro", sample_weight=w) == pytest.approx(best, abs=1e-12)
    # The final model learns from every row.
    plain = GBClassifier(booster=booster, decision="argmax", **FAST).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(est.predict_proba(X), plain.predict_proba(X))
    # Other folds, other offsets: the folds are drawn from random_state.
    other = GBClassifier(booster=booster, decision_cv=4, **FAST).fit(X, y, sample_weight=w)
    assert not np.allclose(other.class_offsets_, est.class_offsets_)


def test_multiclass_out_of_fold_offsets_with_early_stopping():
    X, y = _multi()
    va = np.arange(0, len(y), 4)

    class FixedSplit(GBClassifier):  # a split that draws nothing from random_state
        def _split(self, codes, k, frac, rng):
            return np.setdiff1d(np.arange(codes.size), va), va

    kw = {"learning_rate": 0.3, "n_estimators": 100, "n_jobs": 1, "random_state": 0}
    est = FixedSplit(early_stopping_rounds=3, decision_cv=3, **kw).fit(X, y)
    rounds = est.best_iteration_
    assert rounds < 100  # it stopped
    # The final model is the one trained without the split, for the rounds it chose.
    tr = np.setdiff1d(np.arange(len(y)), va)
    first = GBClassifier(decision="argmax", **{**kw, "n_estimators": rounds}).fit(X[tr], y[tr])
    np.testing.assert_array_equal(est.predict_proba(X), first.predict_proba(X))
    assert len(est.evals_result_["valid"]["loss"]) > rounds
    # The fold models: all rows, that many rounds, no early stopping.
    oof = _oof_log_proba(X, y, np.ones(len(y)), 3, "lightgbm", 0, n_estimators=rounds,
                         learning_rate=0.3)
    np.testing.assert_allclose(est.class_offsets_,
                               metrics.best_class_offsets(y, oof, margin=True)[0],
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("booster", BOOSTERS)
def test_multiclass_decision_cv_none_chooses_offsets_on_the_validation_split(booster):
    X, y = _multi()
    va = np.arange(1, len(y), 5)

    class FixedSplit(GBClassifier):
        def _split(self, codes, k, frac, rng):
            return np.setdiff1d(np.arange(codes.size), va), va

    est = FixedSplit(booster=booster, decision_cv=None, **FAST).fit(X, y)
    tr = np.setdiff1d(np.arange(len(y)), va)
    part = GBClassifier(booster=booster, decision="argmax", **FAST).fit(X[tr], y[tr])
    offsets = metrics.best_class_offsets(y[va], np.log(part.predict_proba(X[va])),
                                         margin=True)[0]
    np.testing.assert_allclose(est.class_offsets_, offsets, rtol=0, atol=1e-12)
    full = GBClassifier(booster=booster, decision="argmax", **FAST).fit(X, y)
    np.testing.assert_array_equal(est.predict_proba(X), full.predict_proba(X))


@pytest.mark.parametrize(("booster", "native"), [("lightgbm", "multiclass"),
                                                 ("xgboost", "multi:softprob")])
def test_multiclass_classifier_with_the_boosters_own_softmax(booster, native):
    X, y = _multi()
    w = np.where(y == 2, 3.0, 1.0)
    est = GBClassifier(f"native:{native}", booster=booster, **FAST).fit(X, y, sample_weight=w)
    assert est.objective_ == native
    np.testing.assert_array_equal(est.init_score_, np.zeros(3))
    if booster == "lightgbm":
        own = est.booster_.predict(X)
    else:
        import xgboost as xgb

        own = est.booster_.predict(xgb.DMatrix(X))
    np.testing.assert_allclose(est.predict_proba(X), own,
                               rtol=1e-12 if booster == "lightgbm" else 1e-5)
    # Early stopping watches the log loss of the margins behind the booster's probabilities.
    stop = GBClassifier(f"native:{native}", booster=booster, early_stopping_rounds=3,
                        validation_fraction=0.3, **FAST).fit(X, y)
    curve = stop.evals_result_["valid"]["loss"]
    # Summed over the validation rows (about 30 %), as gbrank objectives' losses are.
    assert 0.0 < min(curve) < np.log(3) * 0.35 * len(y) and stop.best_iteration_ <= len(curve)
    assert curve[0] > 10 * np.log(3)  # a sum over 135 rows, not their mean (below log 3)


def test_multiclass_early_stopping_loss_is_the_objective_loss_on_the_split():
    X, y = _multi()
    va = np.arange(0, len(y), 4)

    class FixedSplit(GBClassifier):
        def _split(self, codes, k, frac, rng):
            return np.setdiff1d(np.arange(codes.size), va), va

    obj = FocalLoss(gamma=1.0, alpha="balanced")
    est = FixedSplit(obj, early_stopping_rounds=50, **FAST).fit(X, y)
    # The final model is the one trained without the split; its loss there is recorded.
    margins = _softmax_of_booster(est, X[va])  # probabilities
    expected = est.objective_.loss(y[va], np.log(margins))  # balanced on the split labels
    assert est.evals_result_["valid"]["loss"][est.best_iteration_ - 1] == pytest.approx(
        expected, rel=1e-9)


def test_multiclass_classifier_in_cross_validation_grid_search_and_pipeline():
    X, y = _multi(300)
    kw = {"n_estimators": 8, "n_jobs": 1, "random_state": 0}
    scores = cross_val_score(GBClassifier(**kw), X, y, cv=3, scoring="f1_macro")
    assert scores.shape == (3,) and np.all(scores > 0.3)
    gs = GridSearchCV(GBClassifier(objective=FocalLoss(), **kw),
                      {"objective__gamma": [0.0, 2.0], "decision": ["auto", "argmax"]},
                      cv=3, scoring="f1_macro").fit(X, y)
    assert gs.best_estimator_.objective_.num_class == 3
    pipe = make_pipeline(StandardScaler(), GBClassifier(**kw)).fit(X, y)
    assert set(pipe.predict(X)) <= {0, 1, 2}


def test_multiclass_and_decision_parameter_errors():
    X, y = _multi(120)
    with pytest.raises(ValueError, match="pos_label=1 names the positive class of two"):
        GBClassifier(pos_label=1, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="threshold=0.3 is a probability cut for two classes"):
        GBClassifier(threshold=0.3, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="decision must be one of"):
        GBClassifier(decision="macro", **FAST).fit(X, y)
    for bad in (1, 0, -3, 2.5, "4", True):
        with pytest.raises(ValueError, match=r"decision_cv must be an integer in \[2, inf\] "
                                             r"or None, got "):
            GBClassifier(decision_cv=bad, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="decision_cv=5 folds need at least 5 rows of some "
                                         "class, but the largest class has 4"):
        GBClassifier(decision_cv=5, **FAST).fit(X[:12], np.arange(12) % 3)
    # Fewer rows than folds matter only where folds are made.
    GBClassifier(decision_cv=5, decision="argmax", **FAST).fit(X[:12], np.arange(12) % 3)
    rare = np.where(np.arange(40) < 2, 2, np.arange(40) % 2)  # class 2: two rows
    with pytest.warns(UserWarning, match="decision_cv=3: the rarest class has 2 rows, fewer "
                                         "than the folds") as caught:
        est = GBClassifier(decision_cv=3, **FAST).fit(X[:40], rare)
    assert len(caught) == 1 and est.class_offsets_.shape == (3,)
    with pytest.raises(ValueError, match="has num_class=4, but y has 3 classes"):
        GBClassifier(FocalLoss(num_class=4), **FAST).fit(X, y)
    with pytest.raises(ValueError, match="'native:binary' is not lightgbm's softmax objective"):
        GBClassifier("native:binary", **FAST).fit(X, y)
    with pytest.raises(ValueError, match="alpha must be None, 'balanced' or 3"):
        GBClassifier(FocalLoss(alpha=0.25), **FAST).fit(X, y)
    # Two classes: decision="argmax" is threshold 0.5, and not beside another threshold.
    Xb, yb = _binary()
    est = GBClassifier(decision="argmax", **FAST).fit(Xb, yb)
    assert est.threshold_ == 0.5
    np.testing.assert_array_equal(est.predict(Xb), np.argmax(est.predict_proba(Xb), axis=1))
    with pytest.raises(ValueError, match="pass threshold=0.3 or decision='argmax', not both"):
        GBClassifier(decision="argmax", threshold=0.3, **FAST).fit(Xb, yb)
    with pytest.raises(ValueError, match="decision_cv must be an integer"):  # checked
        GBClassifier(decision_cv=1, **FAST).fit(Xb, yb)
    # K classes decided at given offsets (the tuner's printed decision=[...]).
    b = [0.0, 0.8, -0.3]
    given = GBClassifier(decision=b, **FAST).fit(X, y)
    np.testing.assert_array_equal(given.class_offsets_, b)
    plain = GBClassifier(decision="argmax", **FAST).fit(X, y)
    np.testing.assert_allclose(given.predict_proba(X), plain.predict_proba(X), atol=0)
    np.testing.assert_array_equal(
        given.predict(X), given.classes_[np.argmax(np.log(plain.predict_proba(X)) + b, 1)])
    with pytest.raises(ValueError, match="decision holds 2 class offsets; y has 3 classes"):
        GBClassifier(decision=[0.0, 1.0], **FAST).fit(X, y)
    with pytest.raises(ValueError, match="one finite offset per class"):
        GBClassifier(decision=[0.0, np.inf, 1.0], **FAST).fit(X, y)
    with pytest.raises(ValueError, match="two classes are decided by threshold="):
        GBClassifier(decision=[0.0, 1.0], **FAST).fit(Xb, yb)
    # A booster objective whose raw score is no log-odds gives no probability (σ of a
    # regression output: mean 0.52 on an 8.5 % base rate, sixth probe): refused.
    for name in ("regression", "poisson", "xentlambda"):
        with pytest.raises(ValueError, match=f"'native:{name}' is not a logistic objective "
                           "of lightgbm.*use 'native:binary' or 'native:cross_entropy'"):
            GBClassifier(f"native:{name}", **FAST).fit(Xb, yb)
    # A multiclass objective on two classes: the softmax model, K = 2.
    two = GBClassifier(FocalLoss(num_class=2), **FAST).fit(Xb, yb)
    assert two.class_offsets_.shape == (2,) and two.init_score_.shape == (2,)


# --- bad input -------------------------------------------------------------------------------


def test_bad_input_is_a_clear_error_at_fit():
    X, y = _demand(60)
    with pytest.raises(ValueError, match="qid has 59 entries but there are 60 rows"):
        GBRanker(**FAST).fit(X, y, qid=np.zeros(59))
    y_nan = y.copy()
    y_nan[7] = np.nan
    with pytest.raises(ValueError, match=r"y contain 1 NaN/inf value\(s\) \(first at index 7"):
        GBRanker(**GL).fit(X, y_nan)
    with pytest.raises(ValueError, match=r"unknown objective 'rank_net'; valid: ranknet, "
                                         r"lambdarank, focal, fbeta_surrogate"):
        GBRanker(objective="rank_net", **GL).fit(X, y)
    with pytest.raises(ValueError, match="'ranknet' is a ranking objective; GBClassifier "
                                         "takes binary objectives"):
        GBClassifier(objective="ranknet", **FAST).fit(X, (y > 2).astype(int))
    with pytest.raises(ValueError, match="'focal' is a binary objective; GBRanker takes "
                                         "ranking objectives"):
        GBRanker(objective="focal", **GL).fit(X, y)
    with pytest.raises(ValueError, match=r"needs at least two classes in y; got 1 class: \[1\]"):
        GBClassifier(**FAST).fit(X, np.ones(60, dtype=int))
    with pytest.raises(ValueError, match="'fbeta_surrogate' is a binary objective; for 3 "
                                         "classes GBClassifier takes 'focal' or a FocalLoss"):
        GBClassifier(objective="fbeta_surrogate", **FAST).fit(X, np.arange(60) % 3)
    with pytest.raises(ValueError, match=r"learning_rate must be a finite number in \(0, inf\)"):
        GBRanker(learning_rate=0).fit(X, y)
    with pytest.raises(ValueError, match="booster must be one of"):
        GBRanker(booster="catboost").fit(X, y)
    with pytest.raises(ValueError, match="early_stopping_rounds needs a validation split"):
        GBRanker(early_stopping_rounds=5, validation_fraction=None).fit(X, y)
    with pytest.raises(ValueError, match="min_child_samples has no XGBoost counterpart"):
        GBRanker(booster="xgboost", min_child_samples=5, groupless=True).fit(X, y)
    with pytest.raises(ValueError, match="threshold must be 'auto' or a probability"):
        GBClassifier(threshold=1.5).fit(X, (y > 2).astype(int))
    with pytest.raises(ValueError, match=r"sigma must be a finite number in \(0, 1e\+06\]"):
        GBRanker(objective=RankNet(sigma=-1.0)).fit(X, y)
    with pytest.raises(ValueError, match="unknown metric 'ndcg@0'|bad cut-off"):
        GBRanker(scoring="ndcg@0").fit(X, y)


@pytest.mark.parametrize("cls", [GBRanker, GBClassifier])
def test_predict_before_fit_is_not_fitted_error(cls):
    X, _ = _demand(20)
    methods = ["predict"] + (["predict_proba", "decision_function"] if cls is GBClassifier
                             else [])
    for name in methods:
        with pytest.raises(NotFittedError):
            getattr(cls(), name)(X)
    with pytest.raises(NotFittedError):
        cls().feature_importances_  # noqa: B018


# --- the module stays light; the old XGBRanker name still works ---------------------------


def test_importing_adapters_and_estimators_imports_no_booster():
    code = ("import sys, gbrank.sklearn, gbrank.lightgbm, gbrank.xgboost; "
            "print(sorted(m for m in ('lightgbm', 'xgboost') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_xgbranker_old_name_resolves_to_the_moved_class():
    import gbrank.sklearn
    import gbrank.xgboost

    assert gbrank.xgboost.XGBRanker is gbrank.sklearn.XGBRanker
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        gbrank.xgboost.nope  # noqa: B018


def test_booster_parameters_reach_the_booster():
    import os

    X, y = _demand(100)
    est = GBRanker(n_estimators=2, num_leaves=7, max_depth=3, min_child_samples=5,
                   subsample=0.8, colsample_bytree=0.5, reg_lambda=2.0,
                   booster_params={"max_bin": 63}, groupless=True).fit(X, y)
    p = est.booster_.params
    assert (p["num_leaves"], p["max_depth"], p["min_data_in_leaf"], p["bagging_fraction"],
            p["bagging_freq"], p["feature_fraction"], p["lambda_l2"], p["max_bin"]) == \
        (7, 3, 5, 0.8, 1, 0.5, 2.0, 63)
    assert p["num_threads"] == 1  # n_jobs=None is one thread (scikit-learn's convention)
    assert not [k for k in p if k.startswith("objective__")]
    all_cores = GBRanker(n_estimators=2, n_jobs=-1, groupless=True).fit(X, y)
    assert all_cores.booster_.params["num_threads"] == (os.cpu_count() or 1)
    with pytest.raises(ValueError, match="booster_params must not set 'objective'"):
        GBRanker(booster_params={"objective": "lambdarank"}).fit(X, y)


@pytest.mark.parametrize("booster, native", [("lightgbm", "binary"),
                                             ("xgboost", "binary:logistic")])
def test_classifier_with_the_boosters_own_binary_objective(booster, native):
    X, y = _binary()
    est = GBClassifier(objective=f"native:{native}", booster=booster, threshold=0.5,
                       **FAST).fit(X, y)
    assert est.objective_ == native and est.init_score_ == 0.0
    if booster == "lightgbm":
        own = est.booster_.predict(X)  # LightGBM's own probabilities
    else:
        import xgboost as xgb

        own = est.booster_.predict(xgb.DMatrix(X))
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], own,
                               rtol=1e-12 if booster == "lightgbm" else 1e-6)


def test_class_balancing_sample_weight_is_warned_about_for_the_decision_rule():
    # One weight per class re-weights the F_β the threshold / offsets maximise; the
    # warning names the objective's class weights as the way to re-weight training only.
    from sklearn.utils.class_weight import compute_sample_weight

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y3 = np.digitize(X[:, 0] + 0.3 * rng.normal(size=300), [0.8, 1.6])
    balanced = compute_sample_weight("balanced", y3)
    est = GBClassifier(n_estimators=5, decision_cv=None, random_state=0)
    with pytest.warns(UserWarning, match=r"one value per class.*alpha=\"balanced\""):
        est.fit(X, y3, sample_weight=balanced)
    y2 = (y3 > 0).astype(int)
    with pytest.warns(UserWarning, match=r"one value per class.*threshold='auto'"):
        GBClassifier(n_estimators=5, random_state=0).fit(
            X, y2, sample_weight=compute_sample_weight("balanced", y2))
    import warnings as w

    with w.catch_warnings():
        w.simplefilter("error", UserWarning)
        # weights that vary within a class, equal weights, or a rule that does not use
        # the weights: no warning
        est.fit(X, y3, sample_weight=rng.random(300) + 0.5)
        est.fit(X, y3, sample_weight=np.full(300, 2.0))
        GBClassifier(n_estimators=5, decision="argmax").fit(X, y3, sample_weight=balanced)
        GBClassifier(n_estimators=5, threshold=0.3).fit(
            X, y2, sample_weight=compute_sample_weight("balanced", y2))
        # a class dropped by weight 0, the others weighted alike (probe 61: warned, and
        # its fix, leaving sample_weight out, would have trained on the dropped class)
        est.fit(X, y3, sample_weight=np.where(y3 == 2, 0.0, 1.0))


def test_classifier_auto_threshold_is_chosen_on_a_split_holding_positives(monkeypatch):
    """4 positives of 40 rows: 10 % of each class would hold out none (round(0.4)), and
    a threshold 'chosen' there is blind. Each class of two or more rows gives the split
    one; a class that cannot is refused, naming the fixes."""
    import gbrank.metrics as gm

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.zeros(40)
    y[[3, 11, 25, 31]] = 1
    seen = []
    real = gm.best_threshold

    def spy(y_, s, *args, **kwargs):
        seen.append(np.asarray(y_).copy())
        return real(y_, s, *args, **kwargs)

    monkeypatch.setattr(gm, "best_threshold", spy)
    GBClassifier(**FAST).fit(X, y)
    assert len(seen) == 1 and seen[0].size == 5 and seen[0].sum() == 1  # 1 of 4, 4 of 36
    y1 = np.zeros(40)
    y1[7] = 1
    with pytest.raises(ValueError, match=(
            "threshold='auto' chooses the F_beta-best threshold on the validation split, "
            "which holds 0 of 4 rows of the positive class 1.0: no threshold can be chosen "
            "there. Give more rows of each class")):
        GBClassifier(**FAST).fit(X, y1)
    assert GBClassifier(threshold=0.5, **FAST).fit(X, y1).threshold_ == 0.5


def test_missing_labels_among_text_labels_are_refused_by_name():
    """None among string labels reached np.unique's TypeError (sixth probe)."""
    X, _ = _binary()
    y = np.where(np.arange(len(X)) % 3 == 0, "a", "b").astype(object)
    y[4] = None
    with pytest.raises(ValueError, match=r"y has 1 missing labels \(None/NaN; first at row "
                       r"4\): leave those rows out"):
        GBClassifier(**FAST).fit(X, y)


def test_xgboost_refuses_a_sparse_matrix_it_would_read_otherwise_than_fit_did():
    """XGBoost reads a sparse matrix's unstored entries as missing: a model fitted on
    a dense X and given the CSR copy flipped a third of its decisions (tenth probe:
    probabilities up to 0.55 apart). Refused both ways with the fix; LightGBM (zeros
    both ways) and a sparse X with every entry stored are unchanged."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 6))
    X[rng.random(X.shape) < 0.6] = 0.0
    y = (X[:, 0] + X[:, 1] + rng.standard_normal(400) > 0).astype(int)
    dense = GBClassifier("focal", booster="xgboost", n_estimators=5, n_jobs=1).fit(X, y)
    with pytest.raises(ValueError, match=r"fit's X is dense.*unstored entries.*missing"
                       r".*X\.toarray\(\)"):
        dense.predict_proba(sp.csr_matrix(X))
    with pytest.raises(ValueError, match=r"this X \(eval_set's or predict's\) is a sparse"):
        GBClassifier("focal", booster="xgboost", n_estimators=5, n_jobs=1,
                     threshold=0.5).fit(X[:300], y[:300],
                                        eval_set=[(sp.csr_matrix(X[300:]), y[300:])])
    full = sp.csr_matrix(np.where(X == 0.0, 1e-3, X))  # every entry stored
    assert full.nnz == X.size
    np.testing.assert_array_equal(dense.predict_proba(full),
                                  dense.predict_proba(full.toarray()))
    sparse = GBClassifier("focal", booster="xgboost", n_estimators=5,
                          n_jobs=1).fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match=r"fit's X is a sparse matrix.*zeros.*csr_matrix"):
        sparse.predict(X)
    sparse.predict(sp.csc_matrix(X))
    lgbm = GBClassifier("focal", n_estimators=5, n_jobs=1).fit(X, y)
    np.testing.assert_array_equal(lgbm.predict_proba(sp.csr_matrix(X)),
                                  lgbm.predict_proba(X))


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_infinity_in_a_dataframe_is_refused_as_in_an_array(booster):
    """An array with inf is refused by scikit-learn's check; a DataFrame skipped it
    (LightGBM trained on it, XGBoost failed with a C++ location; tenth probe)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.standard_normal(100), "b": rng.standard_normal(100)})
    frame.loc[3, "b"] = np.inf
    y = (rng.random(100) < 0.5).astype(int)
    est = GBClassifier("focal", booster=booster, n_estimators=2, n_jobs=1)
    with pytest.raises(ValueError, match=r"X contains infinity \(1 values; first in "
                       r"column 'b'\)"):
        est.fit(frame, y)
    fitted = est.fit(frame.replace(np.inf, np.nan), y)
    with pytest.raises(ValueError, match="infinity"):
        fitted.predict(frame)


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_booster_params_that_would_be_ignored_or_override_are_said(booster):
    """scale_pos_weight / is_unbalance beside a gbrank objective change nothing (the
    probabilities equal an unweighted model's; tenth probe): warned, naming
    sample_weight; with the booster's own objective they are used, silently. A round
    count in booster_params overrode n_estimators: refused. LightGBM's random forest
    takes no start score: refused before LightGBM's C++ check."""
    import warnings

    from gbrank.datasets import make_imbalanced

    X, y = make_imbalanced(n_rows=600, positive_rate=0.1, seed=0)
    plain = GBClassifier("focal", booster=booster, n_estimators=5, n_jobs=1).fit(X, y)
    with pytest.warns(UserWarning, match=r"scale_pos_weight=9 weight the classes inside "
                      r"its own binary objective only.*sample_weight="):
        weighted = GBClassifier("focal", booster=booster, n_estimators=5, n_jobs=1,
                                booster_params={"scale_pos_weight": 9}).fit(X, y)
    np.testing.assert_allclose(weighted.predict_proba(X), plain.predict_proba(X),
                               rtol=0, atol=1e-12)
    native = "native:binary" if booster == "lightgbm" else "native:binary:logistic"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GBClassifier(native, booster=booster, n_estimators=2, n_jobs=1,
                     booster_params={"scale_pos_weight": 9}).fit(X, y)
    with pytest.raises(ValueError, match=r"must not set 'num_iterations'.*n_estimators"):
        GBClassifier("focal", booster=booster, n_estimators=5,
                     booster_params={"num_iterations": 2}).fit(X, y)
    if booster == "lightgbm":
        with pytest.raises(ValueError, match=r"boosting='rf'.*takes no start score"):
            GBClassifier("focal", n_estimators=2, n_jobs=1,
                         booster_params={"boosting": "rf", "bagging_fraction": 0.5,
                                         "bagging_freq": 1}).fit(X, y)


def test_booster_params_num_class_and_xgboost_dart_early_stopping_are_refused():
    """num_class in booster_params crashed in the booster for two classes and was
    overridden silently for K; XGBoost's dart and gblinear have no model of their first
    best_iteration_ rounds, which early stopping kept (dart: a slice never evaluated;
    gblinear: predictions of every round, save_model failing in C++; fourteenth
    probe)."""
    from gbrank.datasets import make_imbalanced

    X, y = make_imbalanced(n_rows=400, positive_rate=0.2, seed=0)
    for booster in ("lightgbm", "xgboost"):
        with pytest.raises(ValueError, match=r"must not set 'num_class'.*from the labels"):
            GBClassifier("focal", booster=booster, n_estimators=2,
                         booster_params={"num_class": 2}).fit(X, y)
    for kind in ("dart", "gblinear"):
        with pytest.raises(ValueError, match=rf"booster='{kind}' has no such model.*"
                           r"early_stopping_rounds=None"):
            GBClassifier("focal", booster="xgboost", n_estimators=5, n_jobs=1,
                         early_stopping_rounds=2, validation_fraction=0.3,
                         booster_params={"booster": kind}).fit(X, y)
        GBClassifier("focal", booster="xgboost", n_estimators=3, n_jobs=1,
                     booster_params={"booster": kind}).fit(X, y)


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_booster_params_that_the_booster_would_ignore_or_judge_by_are_refused(booster):
    """Other names of settings the estimators pass under the main name (eta,
    random_state, n_jobs, subsample_freq) were dropped by the booster, silently: the
    model equals the one without them (fifteenth probe: eta=0.5 gave the lr=0.1 model);
    a booster metric took over early stopping (best_iteration_ 42 -> 20). Refused,
    naming the estimator's parameter; the main names still override."""
    from gbrank.datasets import make_ranking

    X, y, g = make_ranking(n_queries=20, rows_per_query=10, n_features=4, seed=0)
    qid = np.repeat(np.arange(g.size), g)
    names = {"lightgbm": [("eta", "learning_rate="), ("random_state", '"seed"'),
                          ("n_jobs", "n_jobs="), ("subsample_freq", "bagging_freq")],
             "xgboost": [("random_state", '"seed"'), ("n_jobs", "n_jobs=")]}[booster]
    for key, fix in names:
        with pytest.raises(ValueError, match=rf"booster_params '{key}' names a setting "
                           rf"GBRanker already passes.*ignored, silently.*{re.escape(fix)}"):
            GBRanker(booster=booster, n_estimators=2,
                     booster_params={key: 3}).fit(X, y, qid=qid)
    metric = "metric" if booster == "lightgbm" else "eval_metric"
    with pytest.raises(ValueError, match=rf"'{metric}' adds the booster's own metric.*"
                       r"GBRanker judges with scoring="):
        GBRanker(booster=booster, n_estimators=2,
                 booster_params={metric: "ndcg"}).fit(X, y, qid=qid)
    seeded = GBRanker(booster=booster, n_estimators=5, n_jobs=1, random_state=0,
                      booster_params={"seed": 3, "colsample_bytree": 0.5}).fit(X, y, qid=qid)
    other = GBRanker(booster=booster, n_estimators=5, n_jobs=1, random_state=0,
                     booster_params={"seed": 4, "colsample_bytree": 0.5}).fit(X, y, qid=qid)
    assert np.abs(seeded.predict(X) - other.predict(X)).max() > 0  # the seed is read


def test_class_offsets_on_an_eval_set_without_a_class_are_refused():
    """decision_cv=None chooses the K-class offsets on eval_set; one without a class's
    rows pushed that class below the others, silently (probe 61: class 2 predicted 0
    times of 56, macro-F1 0.895 → 0.271). Refused, naming the class, as two classes
    are; an eval_set holding every class still chooses them."""
    from sklearn.datasets import make_classification

    X, y = make_classification(600, 6, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               weights=[0.6, 0.25, 0.15], random_state=1)
    y = np.array(["a", "b", "c"])[y]
    Xt, yt, Xv, yv = X[:400], y[:400], X[400:], y[400:]
    kw = dict(n_estimators=5, random_state=0, n_jobs=1, decision_cv=None)
    keep = yv != "c"
    with pytest.raises(ValueError, match=r"eval_set, which holds no rows of class\(es\) "
                                         r"\['c'\]"):
        GBClassifier(**kw).fit(Xt, yt, eval_set=[(Xv[keep], yv[keep])])
    clf = GBClassifier(**kw).fit(Xt, yt, eval_set=[(Xv, yv)])
    assert clf.class_offsets_.shape == (3,)
    assert GBClassifier(**{**kw, "decision": "argmax"}).fit(
        Xt, yt, eval_set=[(Xv[keep], yv[keep])]).class_offsets_.tolist() == [0, 0, 0]
