"""Binary objectives trained through LightGBM and XGBoost: parity of FocalLoss(γ=0) with
the native logistic objectives, the sklearn and multiclass calling conventions, and the
F_β surrogate with and without query structure."""

from __future__ import annotations

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

from sklearn.datasets import make_classification  # noqa: E402
from sklearn.metrics import f1_score, roc_auc_score  # noqa: E402
from sklearn.utils.class_weight import compute_sample_weight  # noqa: E402

from gbrank import predict_proba  # noqa: E402
from gbrank.objectives import FBetaSurrogate, FocalLoss  # noqa: E402
from gbrank.xgboost import objective as xgb_objective  # noqa: E402

LGB = {"learning_rate": 0.1, "num_leaves": 31, "verbose": -1, "deterministic": True,
       "force_row_wise": True, "num_threads": 2, "seed": 0}
XGB = {"eta": 0.1, "max_depth": 4, "tree_method": "hist", "nthread": 2, "seed": 0}


def _imbalanced(n=3000, rate=0.05, seed=0, n_classes=2):
    weights = None if n_classes > 2 else [1 - rate, rate]
    return make_classification(n_samples=n, n_features=12, n_informative=6,
                               n_classes=n_classes, weights=weights, random_state=seed)


@pytest.mark.parametrize("weighted", [False, True])
def test_focal_gamma0_reproduces_lightgbm_binary(binary_data, weighted):
    X, y, Xt = binary_data["X_train"], binary_data["y_train"], binary_data["X_test"]
    w = np.random.default_rng(0).random(y.size) + 0.5 if weighted else None
    native = lgb.train({**LGB, "objective": "binary"}, lgb.Dataset(X, y, weight=w), 50)
    obj = FocalLoss(gamma=0.0, alpha=None, max_step=None)  # native's step is unbounded
    init = obj.init_score(y, w)  # = LightGBM's boost_from_average start
    ds = lgb.Dataset(X, y, weight=w, init_score=np.full(y.size, init))
    custom = lgb.train({**LGB, "objective": obj}, ds, 50)
    for data in (X, Xt):
        a = native.predict(data, raw_score=True)
        b = custom.predict(data, raw_score=True) + init
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-6)


def test_focal_gamma0_matches_xgboost_binary_logistic():
    X, y = _imbalanced(2000)
    obj = FocalLoss(gamma=0.0, max_step=None)  # native's step is unbounded
    init = obj.init_score(y)
    rate = y.mean()
    native = xgb.train({**XGB, "objective": "binary:logistic", "base_score": rate},
                       xgb.DMatrix(X, y), 30)
    dm = xgb.DMatrix(X, y, base_margin=np.full(y.size, init))
    custom = xgb.train({**XGB, "disable_default_eval_metric": 1}, dm, 30,
                       obj=xgb_objective(obj))
    a = native.predict(xgb.DMatrix(X), output_margin=True)
    b = custom.predict(xgb.DMatrix(X, base_margin=np.full(y.size, init)), output_margin=True)
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-4)  # float32 margins


@pytest.mark.slow
def test_sklearn_interface_equals_lgb_train():
    X, y = _imbalanced()
    obj = FocalLoss(gamma=2.0, alpha=0.25)
    init = np.full(y.size, obj.init_score(y))
    booster = lgb.train({**LGB, "objective": obj}, lgb.Dataset(X, y, init_score=init), 40)
    clf = lgb.LGBMClassifier(objective=obj, n_estimators=40, **LGB)
    clf.fit(X, y, init_score=init)
    raw = clf.predict(X, raw_score=True)
    np.testing.assert_allclose(raw, booster.predict(X, raw_score=True), rtol=0, atol=1e-12)
    p = predict_proba(raw + init)
    assert roc_auc_score(y, p) > 0.9
    assert obj.loss(y, raw + init) < obj.loss(y, init)


def test_focal_xgboost_with_weights_trains():
    X, y = _imbalanced(seed=1)
    w = np.where(y == 1, 3.0, 1.0)
    obj = FocalLoss(gamma=2.0)
    init = obj.init_score(y, w)
    dm = xgb.DMatrix(X, y, weight=w, base_margin=np.full(y.size, init))
    b = xgb.train({**XGB, "disable_default_eval_metric": 1}, dm, 40, obj=xgb_objective(obj))
    m = b.predict(dm, output_margin=True)
    assert obj.loss(y, m, weight=w) < 0.5 * obj.loss(y, np.full(y.size, init), weight=w)


def _softmax_logloss(preds, data):
    """Independent NumPy multiclass objective with the same diagonal Hessian p(1 − p)."""
    y = (data.get_label() if hasattr(data, "get_label") else data).astype(int)
    p = np.exp(preds - preds.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    g = p.copy()
    g[np.arange(y.size), y] -= 1.0
    return g, p * (1.0 - p)


@pytest.mark.slow
def test_multiclass_focal_gamma0_equals_numpy_softmax_lightgbm():
    X, y = _imbalanced(n=1500, n_classes=3)
    obj = FocalLoss(gamma=0.0, num_class=3, max_step=None)  # as the reference: unbounded
    init = np.tile(obj.init_score(y), (y.size, 1))
    params = {**LGB, "num_class": 3}
    ours = lgb.train({**params, "objective": obj}, lgb.Dataset(X, y, init_score=init), 30)
    ref = lgb.train({**params, "objective": _softmax_logloss},
                    lgb.Dataset(X, y, init_score=init), 30)
    a, b = ours.predict(X, raw_score=True), ref.predict(X, raw_score=True)
    assert a.shape == (y.size, 3)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    gamma2 = FocalLoss(gamma=2.0, num_class=3)
    m = lgb.train({**params, "objective": gamma2}, lgb.Dataset(X, y, init_score=init), 30)
    assert gamma2.loss(y, m.predict(X, raw_score=True) + init) < gamma2.loss(y, init)


def test_multiclass_focal_xgboost():
    X, y = _imbalanced(n=1500, n_classes=3, seed=2)
    obj = FocalLoss(gamma=0.0, num_class=3, max_step=None)  # as the reference: unbounded
    init = np.tile(obj.init_score(y), (y.size, 1))
    params = {**XGB, "num_class": 3, "disable_default_eval_metric": 1}
    dm = xgb.DMatrix(X, y, base_margin=init)

    def ref(preds, dtrain):
        return _softmax_logloss(preds, dtrain)

    a = xgb.train(params, dm, 20, obj=xgb_objective(obj)).predict(dm, output_margin=True)
    b = xgb.train(params, dm, 20, obj=ref).predict(dm, output_margin=True)
    assert a.shape == (y.size, 3)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


@pytest.mark.slow
def test_fbeta_surrogate_groupless_lightgbm_and_xgboost():
    X, y = _imbalanced(n=4000, rate=0.03, seed=3)
    obj = FBetaSurrogate(beta=1.0, hess=1.0, batch_size=None)  # the contract's surrogate
    init = obj.init_score(y)
    ds = lgb.Dataset(X, y, init_score=np.full(y.size, init))
    m = lgb.train({**LGB, "objective": obj, "learning_rate": 0.05}, ds, 60)
    start = np.full(y.size, init)
    f1_start = f1_score(y, start > 0)
    dm = xgb.DMatrix(X, y, base_margin=start)
    b = xgb.train({**XGB, "disable_default_eval_metric": 1, "eta": 0.05}, dm, 60,
                  obj=xgb_objective(obj))
    for s in (m.predict(X, raw_score=True) + init, b.predict(dm, output_margin=True)):
        # The surrogate bounds 1 - F1 at threshold 0 from above (docs/contract.md), training lowers
        # it at least by half from the start, and the F1 it bounds rises accordingly.
        loss = obj.loss(y, s)
        f1 = f1_score(y, s > 0)
        assert 1.0 - f1 <= loss + 1e-12
        assert loss < 0.5 * obj.loss(y, start)
        assert f1 > f1_start + 0.3


def test_fbeta_surrogate_uses_lightgbm_groups():
    X, y = _imbalanced(n=2000, rate=0.1, seed=4)
    group = np.full(20, 100)
    obj = FBetaSurrogate(beta=1.0, measure="balanced")
    seen = {}

    def spy(preds, data):
        seen["group"] = data.get_group()
        return obj(preds, data)

    # every query of 100 rows needs both classes for the balanced measure
    order = np.argsort(np.arange(y.size) % 20, kind="stable")
    X, y = X[order], y[order]
    ds = lgb.Dataset(X, y, group=group)
    m = lgb.train({**LGB, "objective": spy}, ds, 30)
    np.testing.assert_array_equal(seen["group"], group)
    s = m.predict(X, raw_score=True)
    assert obj.loss(y, s, group) < obj.loss(y, np.zeros(y.size), group)


# --- alpha="balanced": scikit-learn's balanced weights, as sample weights --------------------


def _skewed_4class(n=2000, seed=0):
    X, y = make_classification(n, 10, n_informative=6, n_classes=4, n_clusters_per_class=1,
                               weights=[0.7, 0.2, 0.07, 0.03], random_state=seed)
    return X, y.astype(np.float64), compute_sample_weight("balanced", y)


def _weighted_softmax(w):
    """Independent NumPy softmax cross-entropy with per-row weights ``w`` (float64)."""
    def fobj(preds, data):
        y = data.get_label().astype(int)
        z = np.asarray(preds, dtype=np.float64)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        g = p.copy()
        g[np.arange(y.size), y] -= 1.0
        return w[:, None] * g, w[:, None] * p * (1.0 - p)
    return fobj


# One thread each: the machine's two cores are shared (OpenMP's spinning threads make a
# two-thread training many times slower there).
_LGB1 = {**LGB, "num_threads": 1, "num_leaves": 15}
_XGB1 = {**XGB, "nthread": 1}

# The weighted softmax exactly: no Hessian floor, no step bound (the defaults change the
# Hessian of rows with p_k(1 - p_k) < 1e-6 or a true-class probability below 1/16).
_EXACT_BALANCED = {"gamma": 0.0, "alpha": "balanced", "hess_floor": 0.0, "max_step": None}


def test_balanced_focal_gamma0_trains_as_weighted_numpy_softmax():
    X, y, w = _skewed_4class()
    obj = FocalLoss(num_class=4, **_EXACT_BALANCED)
    start = obj.init_score(y)
    np.testing.assert_allclose(start, 0.0, atol=1e-15)  # balanced: every class weighs n/K
    init = np.tile(start, (y.size, 1))
    params = {**_LGB1, "num_class": 4}
    ours = lgb.train({**params, "objective": obj}, lgb.Dataset(X, y, init_score=init), 100)
    ref = lgb.train({**params, "objective": _weighted_softmax(w)},
                    lgb.Dataset(X, y, init_score=init), 100)
    np.testing.assert_allclose(ours.predict(X, raw_score=True), ref.predict(X, raw_score=True),
                               rtol=0, atol=1e-6)
    xparams = {**_XGB1, "num_class": 4, "base_score": 0.0, "disable_default_eval_metric": 1}
    dm = xgb.DMatrix(X, y, base_margin=init)
    a = xgb.train(xparams, dm, 30, obj=xgb_objective(obj)).predict(dm, output_margin=True)
    b = xgb.train(xparams, dm, 30, obj=_weighted_softmax(w)).predict(dm, output_margin=True)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_balanced_focal_gamma0_is_native_multiclass_with_balanced_weights():
    # LightGBM's multiclass Hessian is K/(K-1) p(1-p): without an L2 penalty and a
    # minimum leaf Hessian, native training at rate eta is this objective at
    # eta (K-1)/K (same splits, leaf values scaled).
    X, y, w = _skewed_4class(seed=1)
    k, eta = 4, 0.1
    params = {**_LGB1, "num_class": k, "lambda_l2": 0.0,
              "min_sum_hessian_in_leaf": 0.0}
    native = lgb.train({**params, "objective": "multiclass"}, lgb.Dataset(X, y, weight=w), 100)
    obj = FocalLoss(num_class=k, **_EXACT_BALANCED)
    start = obj.init_score(y)
    ours = lgb.train({**params, "objective": obj, "learning_rate": eta * (k - 1) / k},
                     lgb.Dataset(X, y, init_score=np.tile(start, (y.size, 1))), 100)
    np.testing.assert_allclose(predict_proba(ours.predict(X, raw_score=True) + start),
                               native.predict(X), rtol=0, atol=1e-6)
    # XGBoost's multi:softprob Hessian is 2 p(1-p): eta / 2. Its float32 sums make the
    # two trainings pick different near-tied splits after some tens of rounds, and its
    # hist bins are weighted by the sample weights (exact split search here).
    xparams = {**_XGB1, "num_class": k, "reg_lambda": 0.0, "min_child_weight": 0.0,
               "tree_method": "exact", "base_score": 0.0}
    xnative = xgb.train({**xparams, "objective": "multi:softprob"},
                        xgb.DMatrix(X, y, weight=w), 10)
    dm = xgb.DMatrix(X, y, base_margin=np.tile(start, (y.size, 1)))
    xours = xgb.train({**xparams, "eta": XGB["eta"] / 2}, dm, 10, obj=xgb_objective(obj))
    np.testing.assert_allclose(predict_proba(xours.predict(dm, output_margin=True)),
                               xnative.predict(xgb.DMatrix(X)), rtol=0, atol=1e-6)
