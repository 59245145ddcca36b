"""gbrank.xgboost.metric reads what XGBoost hands it: raw margins of a custom objective,
probabilities of a native one (a DMatrix does not say which: inferred from the values,
the ambiguous case refused), and query structure or an explicit groupless=True."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score
from sklearn.metrics import log_loss as sk_log_loss

from gbrank import metrics
from gbrank.objectives import FocalLoss

xgb = pytest.importorskip("xgboost")
from gbrank.xgboost import metric, objective  # noqa: E402

PARAMS = {"nthread": 1, "disable_default_eval_metric": 1, "max_depth": 3, "eta": 0.3}


def _binary(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = (X[:, 0] - 0.5 * X[:, 1] + rng.standard_normal(n) > 0.3).astype(float)
    return X, y


def _train(params, dtrain, dvalid, custom_metric, obj=None, rounds=10):
    log: dict = {}
    booster = xgb.train(params, dtrain, rounds, evals=[(dvalid, "v")], obj=obj,
                        custom_metric=custom_metric, evals_result=log, verbose_eval=False)
    return booster, log["v"]


def test_custom_objective_hands_margins():
    X, y = _binary()
    Xv, yv = _binary(300, seed=1)
    obj = FocalLoss(gamma=0.0)
    init = obj.init_score(y)
    dtr = xgb.DMatrix(X, y, base_margin=np.full(y.size, init))
    dva = xgb.DMatrix(Xv, yv, base_margin=np.full(yv.size, init))
    booster, log = _train({**PARAMS, "base_score": 0.5}, dtr, dva,
                          metric("f1", "logloss", "ece"), objective(obj))
    z = booster.predict(dva, output_margin=True)
    assert log["gbrank_f1"][-1] == pytest.approx(metrics.f1(yv, z, margin=True), abs=1e-6)
    assert log["gbrank_logloss"][-1] == pytest.approx(metrics.log_loss(yv, z, margin=True),
                                                      abs=1e-6)
    p = 1.0 / (1.0 + np.exp(-z))
    assert log["gbrank_f1"][-1] == pytest.approx(f1_score(yv, p > 0.5), abs=1e-6)
    assert log["gbrank_logloss"][-1] == pytest.approx(sk_log_loss(yv, p), abs=1e-6)


def test_native_objective_hands_probabilities_which_need_margin_false():
    X, y = _binary()
    Xv, yv = _binary(300, seed=1)
    dtr, dva = xgb.DMatrix(X, y), xgb.DMatrix(Xv, yv)
    params = {**PARAMS, "objective": "binary:logistic"}
    with pytest.raises(ValueError, match=r"every prediction lies in \[0, 1\].*"
                                         r"metric\(\.\.\., margin=False\) for probabilities "
                                         r"or metric\(\.\.\., margin=True\)"):
        _train(params, dtr, dva, metric("f1"))
    booster, log = _train(params, dtr, dva, metric("f1", "logloss", margin=False))
    p = booster.predict(dva)
    assert log["gbrank_f1"][-1] == pytest.approx(metrics.f1(yv, p), abs=1e-6)
    assert log["gbrank_f1"][-1] == pytest.approx(f1_score(yv, p > 0.5), abs=1e-6)
    assert log["gbrank_logloss"][-1] == pytest.approx(sk_log_loss(yv, p), abs=1e-6)
    # binary:logitraw hands raw margins: some outside [0, 1], read as margins.
    params = {**PARAMS, "objective": "binary:logitraw"}
    booster, log = _train(params, dtr, dva, metric("f1"))
    z = booster.predict(dva, output_margin=True)
    assert log["gbrank_f1"][-1] == pytest.approx(metrics.f1(yv, z, margin=True), abs=1e-6)


def test_native_multiclass_probabilities():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((600, 4))
    y = np.argmax(X[:, :3] + rng.standard_normal((600, 3)), axis=1).astype(float)
    d = xgb.DMatrix(X, y)
    booster, log = _train({**PARAMS, "objective": "multi:softprob", "num_class": 3}, d, d,
                          metric("mlogloss", margin=False))
    P = booster.predict(d)
    assert log["gbrank_mlogloss"][-1] == pytest.approx(sk_log_loss(y, P), abs=1e-6)
    # The argmax metrics read either scale: nothing to declare.
    _, log = _train({**PARAMS, "objective": "multi:softprob", "num_class": 3}, d, d,
                    metric("macro_f1"))
    assert log["gbrank_macro_f1"][-1] == pytest.approx(metrics.fbeta_multiclass(y, P),
                                                       abs=1e-6)


def test_ranking_metrics_refuse_a_dmatrix_without_queries_unless_groupless():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 3))
    y = rng.integers(0, 3, 60).astype(float)
    s = rng.standard_normal(60)
    flat = xgb.DMatrix(X, y)
    with pytest.raises(ValueError, match=r"ndcg@10 judges rankings per query, and this "
                                         r"DMatrix has no query structure: .*qid=.*group=.*"
                                         r"metric\(\.\.\., groupless=True\)"):
        metric("ndcg@10")(s, flat)
    assert metric("ndcg@10", groupless=True)(s, flat) == ("gbrank_ndcg@10",
                                                          metrics.ndcg(y, s, None, 10))
    grouped = xgb.DMatrix(X, y, qid=np.repeat([0, 1], [20, 40]))
    assert metric("ndcg@10")(s, grouped)[1] == metrics.ndcg(y, s, [20, 40], 10)
    with pytest.raises(ValueError, match=r"groupless=True\) declares all rows one query, "
                                         r"but this DMatrix has 2 queries"):
        metric("ndcg@10", groupless=True)(s, grouped)
    with pytest.raises(ValueError, match="groupless must be True or False"):
        metric("ndcg@10", groupless="no")


def test_an_evaluation_dmatrix_without_the_start_of_another_is_refused():
    """XGBoost adds each DMatrix's own base_margin: a validation DMatrix without the
    start the training DMatrix carries was judged on other scores (focal logloss 0.294
    logged against the model's 0.122); both evaluated in one training, it is refused.
    A metric object reused by a later training without any start is not."""
    X, y = _binary()
    Xv, yv = _binary(300, seed=1)
    obj = FocalLoss(gamma=2.0)
    start = obj.init_score(y)
    dtr = xgb.DMatrix(X, y, base_margin=np.full(y.size, start))
    bare = xgb.DMatrix(Xv, yv)
    m = metric("logloss", margin=True)
    params = {"nthread": 1, "disable_default_eval_metric": 1}
    with pytest.raises(ValueError, match=(
            "an evaluation DMatrix of this training has no base_margin and another has one "
            "\\(constant\\): XGBoost adds each DMatrix's own start")):
        xgb.train(params, dtr, 3, obj=objective(obj), custom_metric=m,
                  evals=[(dtr, "train"), (bare, "valid")], verbose_eval=False)
    # With the start, the logged value is the model's.
    dva = xgb.DMatrix(Xv, yv, base_margin=np.full(yv.size, start))
    log: dict = {}
    booster = xgb.train(params, dtr, 3, obj=objective(obj), custom_metric=m,
                        evals=[(dtr, "train"), (dva, "valid")], evals_result=log,
                        verbose_eval=False)
    z = booster.predict(dva, output_margin=True)
    assert log["valid"]["gbrank_logloss"][-1] == pytest.approx(
        metrics.log_loss(yv, z, margin=True), rel=1e-6)
    # The same metric object in a new training without any start: no refusal.
    xgb.train(params, xgb.DMatrix(X, y), 2, obj=objective(FocalLoss(gamma=0.0)),
              custom_metric=m, evals=[(xgb.DMatrix(X, y), "t"), (bare, "v")],
              verbose_eval=False)
