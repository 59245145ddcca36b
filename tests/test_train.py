"""The one training loop (gbrank/_train.py): early stopping judges raw margins."""

from __future__ import annotations

import numpy as np
import pytest

from gbrank import metrics
from gbrank._train import Validation, train


def _data(k: int):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 5))
    z = X[:, 0] + 0.5 * rng.normal(size=1200)
    y = (z > 1).astype(float) if k == 2 else np.digitize(z, [0.0, 1.0]).astype(float)
    return X[:900], y[:900], X[900:], y[900:]


def _fit(booster: str, objective: str, k: int, metric):
    X, y, Xv, yv = _data(k)
    seen: list[np.ndarray] = []

    def value(preds, data):
        seen.append(np.array(preds))
        return metric(yv, preds)

    v = Validation("m", value, higher_is_better=False)
    extra = {"num_class": k} if k > 2 else {}
    if booster == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        dt = lgb.Dataset(X, y)
        dv = lgb.Dataset(Xv, yv, reference=dt)
        params = {"verbose": -1, "learning_rate": 0.2, "num_threads": 1, **extra}
    else:
        xgb = pytest.importorskip("xgboost")
        dt, dv = xgb.DMatrix(X, y), xgb.DMatrix(Xv, yv)
        params = {"eta": 0.2, "nthread": 1, "base_score": 0.5, **extra}
    t = train(booster, params, objective, dt, dv, rounds=15, validation=v)
    return t, seen[-1], Xv, yv


@pytest.mark.parametrize(("booster", "objective", "k"), [
    ("lightgbm", "binary", 2), ("xgboost", "binary:logistic", 2),
    ("lightgbm", "cross_entropy_lambda", 2),  # hands log(1 + e^s)
    ("lightgbm", "multiclass", 3), ("xgboost", "multi:softprob", 3)])
def test_native_objectives_are_validated_on_raw_margins(booster, objective, k):
    # LightGBM and XGBoost hand a custom metric their objective's probabilities; the
    # metric must see the margins predict(raw) gives, or early stopping follows a
    # wrong curve (LightGBM binary: log loss 0.68 logged where the model's was 0.24).
    loss = metrics.log_loss if k == 2 else metrics.multiclass_log_loss

    def metric(y, s):  # a Validation judges raw margins
        return loss(y, s, margin=True)

    t, last, Xv, yv = _fit(booster, objective, k, metric)
    if booster == "lightgbm":
        raw = t.model.predict(Xv, raw_score=True)
    else:
        import xgboost as xgb

        raw = t.model.predict(xgb.DMatrix(Xv), output_margin=True)
    raw = np.asarray(raw, dtype=np.float64)
    if k > 2:  # margins up to a constant per row: compare softmax probabilities
        from gbrank import predict_proba

        np.testing.assert_allclose(predict_proba(last.reshape(raw.shape)),
                                   predict_proba(raw), atol=1e-6)
    else:
        np.testing.assert_allclose(last, raw, atol=1e-5)
    logged = t.evals_result["valid"]["m"][-1]
    assert logged == pytest.approx(metric(yv, raw), abs=1e-5)


def test_multi_softmax_cannot_be_validated_on_a_metric():
    xgb = pytest.importorskip("xgboost")
    X, y, Xv, yv = _data(3)
    v = Validation("m", lambda p, d: 0.0)
    with pytest.raises(ValueError, match="multi:softprob"):
        train("xgboost", {"num_class": 3}, "multi:softmax", xgb.DMatrix(X, y),
              xgb.DMatrix(Xv, yv), rounds=2, validation=v)


@pytest.mark.parametrize("booster", ["lightgbm", "xgboost"])
def test_a_metric_named_with_a_colon_is_logged_and_stopped_on(booster):
    """XGBoost splits its evaluation log at ":": fbeta:2 failed every round there."""
    X, y, Xv, yv = _data(2)

    def value(preds, data):
        return metrics.fbeta(yv, preds, beta=2.0, margin=True)

    v = Validation("fbeta:2", value)
    if booster == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        dt = lgb.Dataset(X, y)
        dv = lgb.Dataset(Xv, yv, reference=dt)
        params = {"verbose": -1, "num_threads": 1, "metric": "None"}
    else:
        xgb = pytest.importorskip("xgboost")
        dt, dv, params = xgb.DMatrix(X, y), xgb.DMatrix(Xv, yv), {"nthread": 1}
    seen = []
    t = train(booster, {**params, "eta" if booster == "xgboost" else "learning_rate": 0.2},
              "binary" if booster == "lightgbm" else "binary:logistic", dt, dv, rounds=12,
              validation=v, early_stopping=3, on_iteration=lambda i, x: seen.append(x))
    curve = t.evals_result["valid"]["fbeta:2"]
    # (XGBoost's early stopping ends the run before the last round is reported)
    assert len(curve) >= 5 and np.allclose(curve[:len(seen)], seen, atol=1e-6)
    assert t.best_iteration == 1 + int(np.argmax(curve))


def test_xgboosts_metric_logs_a_name_with_a_colon():
    xgb = pytest.importorskip("xgboost")
    from gbrank.xgboost import metric

    X, y, _, _ = _data(2)
    d, log = xgb.DMatrix(X, y), {}
    bst = xgb.train({"objective": "binary:logistic", "nthread": 1,
                     "disable_default_eval_metric": 1}, d, 3,
                    custom_metric=metric("fbeta:2", margin=False), evals=[(d, "train")],
                    evals_result=log, verbose_eval=False)
    assert log["train"]["gbrank_fbeta_2"][-1] == pytest.approx(  # logged to 6 digits
        metrics.fbeta(y, bst.predict(d), beta=2.0), abs=1e-6)


def test_a_probability_that_underflowed_is_a_finite_margin():
    """A confident softmax model hands probabilities of exactly 0; their log was -inf,
    which the multiclass metrics refuse, and a tuner trial failed on its early stopping
    (seen on a 5-class synthetic set). The margin is now the log of the smallest
    positive double; the argmax and every other value are unchanged."""
    from gbrank._train import _to_margins

    p = np.array([[1.0, 0.0, 0.0], [0.2, 0.5, 0.3]])
    s = _to_margins("lightgbm", "multiclass")(p)
    assert np.all(np.isfinite(s)) and s[0, 1] == np.log(np.finfo(np.float64).tiny)
    np.testing.assert_array_equal(s[1], np.log(p[1]))
    assert metrics.get_metric("macro_f1")(np.array([0, 1]), s) == 1.0


def test_a_saturated_binary_probability_is_a_finite_margin():
    """LightGBM's binary on 1:1000 data reaches raw scores near -1,000, so the
    probabilities it hands a metric are exactly 0 or 1; their logit was ±inf, which the
    metrics refuse, and the tuner lost those native trials (probe 65, F7). The margins
    are finite, in the probabilities' order, and exact where the logit is finite."""
    from scipy.special import logit

    from gbrank._train import _to_margins

    p = np.array([0.0, 1e-300, 0.25, 0.5, 1.0 - 2**-52, 1.0])
    s = _to_margins("lightgbm", "binary")(p)
    assert np.all(np.isfinite(s)) and np.all(np.diff(s) > 0)
    np.testing.assert_allclose(s[1:5], logit(p[1:5]), rtol=1e-15)
    assert metrics.get_metric("ap")(np.array([0, 0, 0, 1, 1, 1]), s) == 1.0
