"""gbrank.lightgbm.refit: LightGBM's refit rule for models trained with custom objectives.

Checked against LightGBM's own ``Booster.refit`` on native objectives whose gradients a
gbrank objective or a NumPy function reproduces (binary, multiclass), against a slow
pure-NumPy implementation of the rule for ranking objectives, and against the
rule's limits (decay 1 keeps the model, decay 0 forgets the old leaf values).
"""

from __future__ import annotations

import numpy as np
import pytest

from gbrank.lightgbm import refit
from gbrank.objectives import FocalLoss, LambdaRank, RankNet

lgb = pytest.importorskip("lightgbm")

BASE = {"verbose": -1, "num_threads": 1, "deterministic": True, "num_leaves": 15,
        "learning_rate": 0.2, "boost_from_average": False}


def _logistic_focal():
    """FocalLoss(gamma=0): the logistic loss, with the Hessian unmodified."""
    return FocalLoss(gamma=0.0, max_step=None)


def _leaf_values(booster):
    return [[booster.get_leaf_output(t, j) for j in range(info["num_leaves"])]
            for t, info in enumerate(booster.dump_model(num_iteration=-1)["tree_info"])]


# -- binary: LightGBM's own refit on its `binary` objective --------------------------------


@pytest.mark.parametrize("reg", [{}, {"lambda_l1": 0.5, "lambda_l2": 2.0,
                                      "max_delta_step": 0.3}], ids=["plain", "regularised"])
@pytest.mark.parametrize("decay_rate", [0.9, 0.0])
def test_binary_focal_gamma0_equals_native_binary_refit(binary_data, reg, decay_rate):
    d = binary_data
    booster = lgb.train({**BASE, **reg, "objective": "binary"},
                        lgb.Dataset(d["X_train"], d["y_train"]), 20)
    X, y = d["X_test"], d["y_test"]
    native = booster.refit(X, y, decay_rate=decay_rate).predict(X, raw_score=True)
    ours = refit(booster, X, y, _logistic_focal(), decay_rate=decay_rate)
    pred = ours.predict(X, raw_score=True)
    assert np.abs(pred - native).max() <= 1e-6
    # the refit moved the model (the comparison is not between two unchanged models)
    assert np.abs(pred - booster.predict(X, raw_score=True)).max() > 0.05


def test_binary_weights_and_start_score_equal_native(binary_data):
    d = binary_data
    booster = lgb.train({**BASE, "objective": "binary"},
                        lgb.Dataset(d["X_train"], d["y_train"]), 15)
    X, y = d["X_test"], d["y_test"]
    w = np.random.default_rng(1).uniform(0.2, 3.0, y.size)
    native = booster.refit(X, y, weight=w, init_score=np.full(y.size, -0.4),
                           decay_rate=0.3).predict(X, raw_score=True)
    pred = refit(booster, X, y, _logistic_focal(), weight=w, init_score=-0.4,
                 decay_rate=0.3).predict(X, raw_score=True)
    # LightGBM holds weights as float32, gbrank as float64
    assert np.abs(pred - native).max() <= 1e-6


# -- multiclass -----------------------------------------------------------------------------

K = 3


def _multiclass_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 6))
    y = np.argmax(X[:, :K] + rng.normal(size=(1200, K)), axis=1).astype(float)
    return X[:800], y[:800], X[800:], y[800:]


def _softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _lightgbm_softmax(y, s):
    """LightGBM's `multiclass` gradients: p − 1[y = k] and K/(K − 1) · p(1 − p)."""
    p = _softmax(s)
    g = p.copy()
    g[np.arange(y.size), y.astype(int)] -= 1.0
    return g, K / (K - 1.0) * p * (1.0 - p)


def test_multiclass_equals_native_multiclass_refit():
    Xt, yt, X, y = _multiclass_data()
    booster = lgb.train({**BASE, "objective": "multiclass", "num_class": K, "num_leaves": 7},
                        lgb.Dataset(Xt, yt), 10)
    start = np.array([0.3, -0.2, 0.1])
    for decay_rate in (0.9, 0.0):
        native = booster.refit(X, y, decay_rate=decay_rate, init_score=np.tile(start, (y.size, 1)))
        ours = refit(booster, X, y, _lightgbm_softmax, decay_rate=decay_rate, init_score=start)
        a, b = native.predict(X, raw_score=True), ours.predict(X, raw_score=True)
        assert a.shape == b.shape == (y.size, K)
        assert np.abs(a - b).max() <= 1e-6
        assert np.abs(b - booster.predict(X, raw_score=True) - start).max() > 0.05


def test_multiclass_focal_gamma0_equals_the_softmax_loss_in_numpy():
    # LightGBM's multiclass Hessian carries the factor K/(K − 1); FocalLoss has the true
    # diagonal p(1 − p), so its refit equals that of a NumPy softmax with p(1 − p).
    Xt, yt, X, y = _multiclass_data()
    obj = FocalLoss(gamma=0.0, num_class=K, max_step=None)
    booster = lgb.train({**BASE, "objective": obj, "num_class": K, "num_leaves": 7},
                        lgb.Dataset(Xt, yt), 10)

    def softmax_logloss(y, s):
        g, h = _lightgbm_softmax(y, s)
        return g, h * (K - 1.0) / K

    start = obj.init_score(y)
    a = refit(booster, X, y, obj, init_score=start, decay_rate=0.5).predict(X, raw_score=True)
    b = refit(booster, X, y, softmax_logloss, init_score=start,
              decay_rate=0.5).predict(X, raw_score=True)
    assert np.abs(a - b).max() <= 1e-6
    assert np.abs(a - booster.predict(X, raw_score=True)).max() > 0.05
    with pytest.raises(ValueError, match=r"3 trees per round .* FocalLoss\(.*\) is binary"):
        refit(booster, X, y, FocalLoss())
    with pytest.raises(ValueError, match="num_class=4"):
        refit(booster, X, y, FocalLoss(num_class=4))


# -- ranking: a slow NumPy implementation of the rule ---------------------------------------


def _reference_refit(booster, X, y, group, obj, decay_rate):
    """LightGBM's rule (GBDT::RefitTree, FitByExistingTree) row by row: per round,
    gradients at the current scores rounded to float32; per leaf G and H = kEpsilon + ΣH
    in row order; new value decay · old + (1 − decay) · shrinkage · (−G / H)."""
    dump = booster.dump_model(num_iteration=-1)
    leaves = booster.predict(X, pred_leaf=True, num_iteration=-1)

    def leaf_values(node, out):
        if "leaf_index" in node:
            out[node["leaf_index"]] = node["leaf_value"]
        else:
            leaf_values(node["left_child"], out)
            leaf_values(node["right_child"], out)
        return out

    scores = np.zeros(y.size)
    new_values = []
    for t, info in enumerate(dump["tree_info"]):
        old = leaf_values(info["tree_structure"], {})
        g, h = obj.grad_hess(y, scores, group)
        G = dict.fromkeys(old, 0.0)
        H = dict.fromkeys(old, float(np.float32(1e-15)))
        for i in range(y.size):
            G[leaves[i, t]] += float(np.float32(g[i]))
            H[leaves[i, t]] += float(np.float32(h[i]))
        new = {j: decay_rate * old[j] + (1.0 - decay_rate) * info["shrinkage"] * (-G[j] / H[j])
               for j in old}
        for i in range(y.size):
            scores[i] += new[leaves[i, t]]
        new_values.append([new[j] for j in sorted(new)])
    return new_values, scores


@pytest.mark.parametrize("obj", [RankNet(), LambdaRank(metric="err")], ids=repr)
def test_ranking_refit_equals_numpy_reference(rank_data, obj):
    d = rank_data
    booster = lgb.train({**BASE, "objective": obj, "learning_rate": 0.1,
                         "min_data_in_leaf": 20},
                        lgb.Dataset(d["X_train"], d["y_train"], group=d["g_train"]), 6)
    # LightGBM itself cannot refit a model trained with a custom objective
    with pytest.raises(lgb.basic.LightGBMError, match="null objective"):
        booster.refit(d["X_test"], d["y_test"], group=d["g_test"])
    X, y, g = d["X_test"], d["y_test"], d["g_test"]
    for decay_rate in (0.7, 0.0):
        ours = refit(booster, X, y, obj, group=g, decay_rate=decay_rate)
        values, scores = _reference_refit(booster, X, y, g, obj, decay_rate)
        np.testing.assert_allclose(np.concatenate(_leaf_values(ours)),
                                   np.concatenate(values), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ours.predict(X, raw_score=True), scores,
                                   rtol=1e-12, atol=1e-12)
        assert np.abs(scores - booster.predict(X, raw_score=True)).max() > 0.01


def test_ranking_refit_takes_per_row_query_ids_in_any_order(rank_data):
    """refit's query error advised qid=, which it did not take (eighth probe): per-row
    ids in any row order refit the leaves exactly as sizes of the sorted rows do."""
    d = rank_data
    obj = LambdaRank()
    booster = lgb.train({**BASE, "objective": obj, "learning_rate": 0.1},
                        lgb.Dataset(d["X_train"], d["y_train"], group=d["g_train"]), 4)
    X, y, g = d["X_test"], d["y_test"], d["g_test"]
    qid = np.repeat(np.arange(g.size), g)
    # Queries interleaved, each query's rows in their order (which breaks score ties).
    perm = np.random.default_rng(0).permutation(y.size)
    for q in range(g.size):
        at = np.flatnonzero(qid[perm] == q)
        perm[at] = np.sort(perm[at])
    by_sizes = refit(booster, X, y, obj, group=g)
    by_ids = refit(booster, X[perm], y[perm], obj, qid=qid[perm])
    np.testing.assert_allclose(np.concatenate(_leaf_values(by_ids)),
                               np.concatenate(_leaf_values(by_sizes)), rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="pass the queries once"):
        refit(booster, X, y, obj, group=g, qid=qid)
    with pytest.raises(ValueError, match=r"LambdaRank ranks within queries, and refit got "
                       r"none: pass the new data's queries, refit\(\.\.\., group=sizes\)"):
        refit(booster, X, y, obj)


def test_lambdarank_norm_near_native_lambdarank_refit(rank_data):
    # LambdaRank(norm=True) has native lambdarank's gradients, up to LightGBM's tabulated
    # sigmoid: the refits agree to that precision, not exactly.
    d = rank_data
    booster = lgb.train({**BASE, "objective": "lambdarank", "learning_rate": 0.1,
                         "min_data_in_leaf": 20},
                        lgb.Dataset(d["X_train"], d["y_train"], group=d["g_train"]), 10)
    X, y, g = d["X_test"], d["y_test"], d["g_test"]
    for decay_rate in (0.9, 0.0):
        native = booster.refit(X, y, group=g, decay_rate=decay_rate).predict(X, raw_score=True)
        ours = refit(booster, X, y, LambdaRank(norm=True), group=g,
                     decay_rate=decay_rate).predict(X, raw_score=True)
        assert np.abs(ours - native).max() <= 1e-4


# -- the rule's limits and the contract -------------------------------------------------------


def test_decay_one_keeps_the_model_and_decay_zero_forgets_old_values(binary_data):
    d = binary_data
    obj = _logistic_focal()
    booster = lgb.train({**BASE, "objective": obj},
                        lgb.Dataset(d["X_train"][:3000], d["y_train"][:3000]), 10)
    before = booster.model_to_string()
    X, y = d["X_test"], d["y_test"]
    kept = refit(booster, X, y, obj, decay_rate=1.0)
    assert _leaf_values(kept) == _leaf_values(booster)
    np.testing.assert_array_equal(kept.predict(X), booster.predict(X))
    # decay 0: the old leaf values do not matter — scramble them, same refit
    fresh = refit(booster, X, y, obj, decay_rate=0.0)
    scrambled = lgb.Booster(model_str=booster.model_to_string())
    rng = np.random.default_rng(3)
    for t, values in enumerate(_leaf_values(booster)):
        for j in range(len(values)):
            scrambled.set_leaf_output(t, j, rng.normal())
    again = refit(scrambled, X, y, obj, decay_rate=0.0)
    assert _leaf_values(again) == _leaf_values(fresh)
    assert _leaf_values(fresh) != _leaf_values(booster)
    # the input is untouched, the result is a new booster
    assert booster.model_to_string() == before
    assert fresh is not booster


def test_all_trees_refitted_and_best_iteration_kept(binary_data):
    d = binary_data
    obj = _logistic_focal()
    booster = lgb.train({**BASE, "objective": obj},
                        lgb.Dataset(d["X_train"][:3000], d["y_train"][:3000]), 8)
    booster.best_iteration = 5
    out = refit(booster, d["X_test"], d["y_test"], obj, decay_rate=0.0)
    assert out.num_trees() == 8 and out.best_iteration == 5
    assert all(a != b for a, b in zip(_leaf_values(out), _leaf_values(booster), strict=True))


def test_path_smooth_refused_and_override_equals_native_without_it(binary_data):
    d = binary_data
    booster = lgb.train({**BASE, "objective": "binary", "path_smooth": 2.0},
                        lgb.Dataset(d["X_train"], d["y_train"]), 10)
    X, y = d["X_test"], d["y_test"]
    with pytest.raises(ValueError, match=r"path_smooth=2.*params=\{'path_smooth': 0\}"):
        refit(booster, X, y, _logistic_focal())
    ours = refit(booster, X, y, _logistic_focal(), params={"path_smooth": 0, "lambda_l2": 1.0},
                 decay_rate=0.5)
    booster.params.update(path_smooth=0.0, lambda_l2=1.0)  # what LightGBM's refit reads
    native = booster.refit(X, y, decay_rate=0.5)
    assert np.abs(ours.predict(X, raw_score=True) - native.predict(X, raw_score=True)).max() \
        <= 1e-6


def test_bad_input_is_named(binary_data):
    d = binary_data
    obj = _logistic_focal()
    X, y = d["X_test"], d["y_test"]
    booster = lgb.train({**BASE, "objective": obj}, lgb.Dataset(d["X_train"][:2000],
                                                                d["y_train"][:2000]), 3)
    with pytest.raises(ValueError, match=r"decay_rate must be a finite number in \[0, 1\], "
                                         r"got 1.5"):
        refit(booster, X, y, obj, decay_rate=1.5)
    with pytest.raises(ValueError, match="X has 500 rows but y has 499"):
        refit(booster, X, y[:-1], obj)
    with pytest.raises(ValueError, match="booster must be a lightgbm.Booster, got str"):
        refit("model.txt", X, y, obj)
    with pytest.raises(ValueError, match="objective must be a gbrank objective or a function"):
        refit(booster, X, y, "binary")
    with pytest.raises(ValueError, match="weight= is for gbrank objectives"):
        refit(booster, X, y, lambda y, s: (s - y, np.ones_like(s)), weight=np.ones(y.size))
    with pytest.raises(ValueError, match=r"returned a gradient of shape \(3,\)"):
        refit(booster, X, y, lambda y, s: (s[:3], s))
    with pytest.raises(ValueError, match=r"init_score must be a number, or one per row "
                                         r"\(500,\); got shape \(3,\)"):
        refit(booster, X, y, obj, init_score=[0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="init_score must be a finite number"):
        refit(booster, X, y, obj, init_score=np.nan)
    with pytest.raises(ValueError, match=r"params may set .*got \['lambda'\]"):
        refit(booster, X, y, obj, params={"lambda": 1.0})
    with pytest.raises(ValueError, match=r"params\['lambda_l2'\] must be a finite number in "
                                         r"\[0, inf\), got -1"):
        refit(booster, X, y, obj, params={"lambda_l2": -1})
    with pytest.raises(ValueError, match="group sizes sum to 10 but there are 500 rows"):
        refit(booster, X, y, lambda y, s, g: (s - y, np.ones_like(s)), group=[10])
    with pytest.raises(ValueError, match="binary labels must be"):
        refit(booster, X, y + 2, obj)
    rf = lgb.train({**BASE, "objective": "binary", "boosting": "rf", "bagging_freq": 1,
                    "bagging_fraction": 0.5}, lgb.Dataset(d["X_train"][:2000],
                                                          d["y_train"][:2000]), 2)
    with pytest.raises(ValueError, match="random forest"):
        refit(rf, X, y, obj)
    linear = lgb.train({**BASE, "objective": "binary", "linear_tree": True},
                       lgb.Dataset(d["X_train"][:2000], d["y_train"][:2000]), 2)
    with pytest.raises(ValueError, match="linear trees"):
        refit(linear, X, y, obj)


def test_a_refit_without_the_start_names_refits_init_score():
    """The objective's warning named lgb.Dataset(init_score=), not refit's own argument
    (eighth probe: the refitted raw scores' mean -1.87 against -1.08 with the start)."""
    from gbrank.datasets import make_imbalanced
    from gbrank.objectives import FocalLoss

    X, y = make_imbalanced(n_rows=2000, positive_rate=0.1, seed=0)
    obj = FocalLoss(gamma=2.0)
    start = obj.init_score(y[:1000])
    booster = lgb.train({**BASE, "objective": obj},
                        lgb.Dataset(X[:1000], y[:1000], init_score=np.full(1000, start)), 5)
    d = {"X_test": X[1000:], "y_test": y[1000:]}
    with pytest.warns(UserWarning, match=r"pass refit\(\.\.\., init_score=\.\.\.\) with the "
                      "start the model was trained from") as seen:
        refit(booster, d["X_test"], d["y_test"], obj)
    assert "boosters" not in str(seen[0].message)  # the boosters' fix is not refit's
    assert seen[0].filename == __file__  # attributed to the line that called refit
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        refit(booster, d["X_test"], d["y_test"], obj, init_score=start)
