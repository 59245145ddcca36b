"""feval reads what LightGBM hands it: raw margins of a custom objective, probabilities
of a native one (lgb.train: from the objective in the Dataset's parameters; the
scikit-learn API: from the values, refusing the ambiguous case), and query structure
or an explicit groupless=True for ranking metrics."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.metrics import f1_score
from sklearn.metrics import log_loss as sk_log_loss

from gbrank import metrics
from gbrank.lightgbm import feval
from gbrank.objectives import FocalLoss

lgb = pytest.importorskip("lightgbm")

PARAMS = {"metric": "None", "verbosity": -1, "num_threads": 1, "seed": 0}


def _binary(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = (X[:, 0] - 0.5 * X[:, 1] + rng.standard_normal(n) > 0.3).astype(float)
    return X, y


def _last(log, name):
    return log["valid_0"]["gbrank_" + name][-1]


@pytest.mark.parametrize("native", [True, False])
def test_lgb_train_binary_custom_and_native(native):
    X, y = _binary()
    Xv, yv = _binary(300, seed=1)
    objective = "binary" if native else FocalLoss(gamma=0.0)
    dtr = lgb.Dataset(X, y)
    dva = lgb.Dataset(Xv, yv, reference=dtr)
    log: dict = {}
    booster = lgb.train({**PARAMS, "objective": objective}, dtr, 15, valid_sets=[dva],
                        feval=feval("f1", "fbeta:2", "logloss", "ece"),
                        callbacks=[lgb.record_evaluation(log)])
    z = booster.predict(Xv, raw_score=True)
    p = 1.0 / (1.0 + np.exp(-z))
    if native:  # feval saw probabilities: the plain functions' default
        handed = booster.predict(Xv)
        assert _last(log, "f1") == metrics.f1(yv, handed)
        assert _last(log, "logloss") == metrics.log_loss(yv, handed)
        assert _last(log, "ece") == metrics.expected_calibration_error(yv, handed)
    else:  # feval saw raw margins
        assert _last(log, "f1") == metrics.f1(yv, z, margin=True)
        assert _last(log, "logloss") == metrics.log_loss(yv, z, margin=True)
        assert _last(log, "ece") == metrics.expected_calibration_error(yv, z, margin=True)
    # Either way, the values scikit-learn gives on the model's probabilities.
    assert _last(log, "f1") == pytest.approx(f1_score(yv, p > 0.5), rel=1e-12)
    assert _last(log, "logloss") == pytest.approx(sk_log_loss(yv, p), rel=1e-9)


@pytest.mark.parametrize("native", [True, False])
def test_lgb_train_multiclass_custom_and_native(native):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((600, 4))
    y = np.argmax(X[:, :3] + rng.standard_normal((600, 3)), axis=1).astype(float)
    objective = "multiclass" if native else FocalLoss(gamma=0.0, num_class=3)
    data = lgb.Dataset(X, y)
    log: dict = {}
    booster = lgb.train({**PARAMS, "objective": objective, "num_class": 3}, data, 10,
                        valid_sets=[data], valid_names=["valid_0"],
                        feval=feval("mlogloss", "macro_f1"),
                        callbacks=[lgb.record_evaluation(log)])
    z = booster.predict(X, raw_score=True)
    P = np.exp(z - z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    assert _last(log, "mlogloss") == pytest.approx(sk_log_loss(y, P), rel=1e-9)
    assert _last(log, "macro_f1") == metrics.fbeta_multiclass(y, z)


def test_sklearn_api_infers_margins_from_values_and_refuses_the_ambiguous_case():
    X, y = _binary()
    Xv, yv = _binary(300, seed=1)
    if "eval_X" in inspect.signature(lgb.LGBMClassifier.fit).parameters:
        fit = {"eval_X": (Xv,), "eval_y": (yv,)}
    else:
        fit = {"eval_set": [(Xv, yv)]}
    # A custom objective hands raw margins: some lie outside [0, 1].
    model = lgb.LGBMClassifier(objective=FocalLoss(gamma=0.0), n_estimators=10, verbose=-1,
                               n_jobs=1, metric="None")
    model.fit(X, y, eval_metric=feval("f1", "logloss"), **fit)
    z = model.predict(Xv, raw_score=True)
    assert model.evals_result_["valid_0"]["gbrank_f1"][-1] == metrics.f1(yv, z, margin=True)
    assert model.evals_result_["valid_0"]["gbrank_logloss"][-1] == metrics.log_loss(
        yv, z, margin=True)
    # The native binary objective hands probabilities, which are all in [0, 1]:
    # without the Dataset that could be either scale, so it is refused, naming the fix.
    native = lgb.LGBMClassifier(n_estimators=10, verbose=-1, n_jobs=1, metric="None")
    with pytest.raises(ValueError, match=r"feval\(\.\.\., margin=False\) for probabilities "
                                         r"or feval\(\.\.\., margin=True\)"):
        native.fit(X, y, eval_metric=feval("f1"), **fit)
    native.fit(X, y, eval_metric=feval("f1", "logloss", margin=False), **fit)
    p = native.predict_proba(Xv)[:, 1]
    assert native.evals_result_["valid_0"]["gbrank_f1"][-1] == metrics.f1(yv, p)
    assert native.evals_result_["valid_0"]["gbrank_logloss"][-1] == pytest.approx(
        sk_log_loss(yv, p), rel=1e-12)
    # Ranking metrics do not read the scale: nothing to infer.
    assert feval("ndcg@5")(yv, p, None, [yv.size])[0][1] == metrics.ndcg(yv, p, None, 5)


def test_an_explicit_margin_is_never_second_guessed():
    X, y = _binary()
    data = lgb.Dataset(X, y)
    log: dict = {}
    booster = lgb.train({**PARAMS, "objective": "binary"}, data, 5, valid_sets=[data],
                        valid_names=["valid_0"], feval=feval("logloss", margin=True),
                        callbacks=[lgb.record_evaluation(log)])
    handed = booster.predict(X)  # probabilities, read as margins because it was asked
    assert _last(log, "logloss") == metrics.log_loss(y, handed, margin=True)


def test_dataset_objectives_decide_the_scale():
    X, y = _binary(200)
    rng = np.random.default_rng(0)
    p = rng.random(y.size)
    for objective, margin in (("none", True), ("lambdarank", True), ("binary", False),
                              ("xentropy", False)):
        ds = lgb.Dataset(X, y, params={"objective": objective, "verbosity": -1}).construct()
        (_, value, _), = feval("f1")(p, ds)
        assert value == metrics.f1(y, p, margin=margin)
    ds = lgb.Dataset(X, y, params={"objective": "poisson", "verbosity": -1}).construct()
    with pytest.raises(ValueError, match="'poisson'.*'log' link.*margin=True.*margin=False"):
        feval("f1")(p, ds)
    assert feval("f1", margin=False)(p, ds)[0][1] == metrics.f1(y, p)
    # A Dataset no training has parameterised: the values decide, or the call is refused.
    bare = lgb.Dataset(X, y).construct()
    assert feval("f1")(p * 4 - 2, bare)[0][1] == metrics.f1(y, p * 4 - 2, margin=True)
    with pytest.raises(ValueError, match="margin=True"):
        feval("f1")(p, bare)
    with pytest.raises(ValueError, match="margin must be True or False"):
        feval("f1", margin="yes")


# --- query structure -------------------------------------------------------------------


def test_ranking_metrics_refuse_data_without_queries_unless_groupless():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 3))
    y = rng.integers(0, 3, 60).astype(float)
    s = rng.standard_normal(60)
    flat = lgb.Dataset(X, y).construct()
    for name in ("ndcg@10", "pair_accuracy"):
        with pytest.raises(ValueError, match=rf"{name} judges rankings per query, and this "
                                             r"evaluation data has no query structure: .*"
                                             r"group=sizes.*feval\(\.\.\., groupless=True\)"):
            feval(name)(s, flat)
        with pytest.raises(ValueError, match=r"eval_group=.*groupless=True"):
            feval(name)(y, s, None, None)  # the scikit-learn API's call
    (_, value, _), = feval("ndcg@10", groupless=True)(s, flat)
    assert value == metrics.ndcg(y, s, None, 10)  # all 60 rows one query
    assert feval("ndcg@10", groupless=True)(y, s, None, [60])[0][1] == value
    grouped = lgb.Dataset(X, y, group=[20, 40]).construct()
    assert feval("ndcg@10")(s, grouped)[0][1] == metrics.ndcg(y, s, [20, 40], 10)
    with pytest.raises(ValueError, match=r"groupless=True\) declares all rows one query, "
                                         r"but this evaluation data has 2 queries"):
        feval("ndcg@10", groupless=True)(s, grouped)
    # Binary metrics never read query structure.
    flat01 = lgb.Dataset(X, (y > 0).astype(float)).construct()
    assert feval("f1", margin=True)(s, flat01)[0][1] == metrics.f1(y > 0, s, margin=True)
    with pytest.raises(ValueError, match="groupless must be True or False"):
        feval("ndcg", groupless=None)


@pytest.mark.parametrize("metric,per_row", [("logloss", False), ("f1", False),
                                            ("ndcg@5", True)])
def test_an_evaluation_dataset_without_the_trainings_start_is_refused(metric, per_row):
    """LightGBM adds each Dataset's own init_score to the raw scores it hands feval: a
    validation Dataset without the training's start would be judged on other scores
    than the model gives (focal logloss 0.570 logged against a true 0.145)."""
    X, y = _binary()
    Xv, yv = _binary(300, seed=1)
    group, group_v = np.full(60, 10), np.full(30, 10)
    obj = FocalLoss(gamma=0.0)
    start = (np.linspace(-1, 1, y.size) if per_row else np.full(y.size, obj.init_score(y)))
    dtr = lgb.Dataset(X, y, init_score=start, group=group)
    bare = lgb.Dataset(Xv, yv, reference=dtr, group=group_v)
    with pytest.raises(ValueError, match=(
            f"this evaluation Dataset has no init_score and the training Dataset starts "
            f"from one \\({'per row' if per_row else 'constant'}\\): LightGBM adds a "
            f"Dataset's own start to the model's raw scores, so {metric} would judge")):
        lgb.train({**PARAMS, "objective": obj}, dtr, 3, valid_sets=[bare],
                  feval=feval(metric))
    # Given the start, the logged value is the model's: the metric of its raw scores.
    vstart = np.full(yv.size, obj.init_score(y))
    dva = lgb.Dataset(Xv, yv, reference=dtr, init_score=vstart, group=group_v)
    log: dict = {}
    booster = lgb.train({**PARAMS, "objective": obj}, dtr, 3, valid_sets=[dtr, dva],
                        feval=feval(metric), callbacks=[lgb.record_evaluation(log)])
    if not per_row:
        z = booster.predict(Xv, raw_score=True) + vstart
        m = metrics.get_metric(metric).with_margin(True)
        expected = m(yv, z, group_v if m.kind == "ranking" else None, None)
        assert log["valid_1"]["gbrank_" + metric][-1] == pytest.approx(expected, rel=1e-12)


def test_a_constant_start_does_not_matter_to_ranking_metrics():
    X, y = _binary()
    Xv, yv = _binary(300, seed=1)
    dtr = lgb.Dataset(X, y, init_score=np.full(y.size, -0.5), group=np.full(60, 10))
    dva = lgb.Dataset(Xv, yv, reference=dtr, group=np.full(30, 10))
    log: dict = {}
    lgb.train({**PARAMS, "objective": FocalLoss(gamma=0.0)}, dtr, 3, valid_sets=[dva],
              feval=feval("ndcg@5"), callbacks=[lgb.record_evaluation(log)])
    assert len(log["valid_0"]["gbrank_ndcg@5"]) == 3


def test_logloss_on_a_validation_part_maps_grades_as_the_training_did():
    """CrossEntropy() trained on grades 0-4 learns ERR's targets with g_max = 4; a
    validation part whose grades are all 0 or 1 is judged against those targets, not
    read as clicks (the newcomer's 0.5917 logged against 0.3112)."""
    from gbrank.objectives import CrossEntropy

    rng = np.random.default_rng(3)
    X = rng.standard_normal((500, 4))
    y = np.clip(np.round(X[:, 0] + rng.standard_normal(500)), 0, 4)
    Xv = rng.standard_normal((200, 4))
    yv = (Xv[:, 0] > 0.5).astype(float)  # grades 0 and 1 of the same scale
    assert y.max() == 4
    dtr = lgb.Dataset(X, y)
    dva = lgb.Dataset(Xv, yv, reference=dtr)
    log: dict = {}
    booster = lgb.train({**PARAMS, "objective": CrossEntropy()}, dtr, 10,
                        valid_sets=[dtr, dva], feval=feval("logloss", "ece"),
                        callbacks=[lgb.record_evaluation(log)])
    for name, part, X_, y_ in (("training", "training", X, y), ("valid", "valid_1", Xv, yv)):
        z = booster.predict(X_, raw_score=True)
        p = 1.0 / (1.0 + np.exp(-z))
        t = (2.0 ** y_ - 1) / 15.0  # by hand: ERR's targets, g_max = 4
        expected = float(np.mean(-t * np.log(p) - (1 - t) * np.log(1 - p)))
        assert log[part]["gbrank_logloss"][-1] == pytest.approx(expected, rel=1e-9), name
    assert log["valid_1"]["gbrank_ece"][-1] == metrics.expected_calibration_error(
        yv, booster.predict(Xv, raw_score=True), margin=True, max_grade=4)


def test_datasets_reused_by_another_training_do_not_set_the_scale_silently():
    """LightGBM keeps the objective of a Dataset's first lgb.train in its parameters when
    another training reuses it: after FocalLoss, a native 'binary' training's
    probabilities were read as margins (log loss 0.7225 against 0.4522; ninth probe);
    after 'binary', FocalLoss's margins were refused as out-of-range probabilities
    without saying why. Both are refused naming the reuse and both fixes; with the
    scale given, the values are the direct functions'."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 5))
    y = (X[:, 0] + rng.standard_normal(2000) > 1).astype(float)
    params = {"verbose": -1, "num_threads": 1, "metric": "None"}

    def datasets() -> tuple[lgb.Dataset, lgb.Dataset]:
        tr = lgb.Dataset(X[:1500], y[:1500], free_raw_data=False)
        return tr, lgb.Dataset(X[1500:], y[1500:], reference=tr, free_raw_data=False)

    tr, va = datasets()
    fe = feval("logloss", "f1")
    lgb.train({**params, "objective": FocalLoss(gamma=0.0)}, tr, 3, valid_sets=[va],
              feval=fe)
    with pytest.raises(ValueError, match=r"parameters say objective 'none'.*keeps the "
                       r"objective of the first lgb.train.*margin=False.*margin=True"):
        lgb.train({**params, "objective": "binary"}, tr, 3, valid_sets=[va], feval=fe)
    ev: dict = {}
    booster = lgb.train({**params, "objective": "binary"}, tr, 3, valid_sets=[va],
                        valid_names=["v"], feval=feval("logloss", margin=False),
                        callbacks=[lgb.record_evaluation(ev)])
    p = booster.predict(X[1500:])
    assert ev["v"]["gbrank_logloss"][-1] == pytest.approx(
        float(np.mean(-(y[1500:] * np.log(p) + (1 - y[1500:]) * np.log(1 - p)))), rel=1e-6)

    tr, va = datasets()
    lgb.train({**params, "objective": "binary"}, tr, 3, valid_sets=[va], feval=fe)
    with pytest.raises(ValueError, match=r"parameters say objective 'binary'.*outside "
                       r"\[0, 1\].*margin=True"):
        lgb.train({**params, "objective": FocalLoss(gamma=0.0)}, tr, 3, valid_sets=[va],
                  feval=fe)


def test_a_gbrank_objective_whose_margins_lie_in_0_1_is_not_taken_for_a_reused_dataset():
    """A FocalLoss start above 0 (most rows positive) keeps every margin in [0, 1] for
    the first rounds; evaluated every round beside its training (two fevals), it is read
    as margins, as the training's own objective says."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 5))
    y = (X[:, 0] + rng.standard_normal(2000) > -0.5).astype(float)
    obj = FocalLoss(gamma=0.0)
    start = obj.init_score(y[:1500])
    assert 0.3 < start < 1.0
    tr = lgb.Dataset(X[:1500], y[:1500], init_score=np.full(1500, start))
    va = lgb.Dataset(X[1500:], y[1500:], reference=tr, init_score=np.full(500, start))
    ev: dict = {}
    booster = lgb.train({"objective": obj, "verbose": -1, "num_threads": 1,
                         "learning_rate": 0.01, "metric": "None"}, tr, 5,
                        valid_sets=[va], valid_names=["v"],
                        feval=[feval("logloss"), feval("f1")],
                        callbacks=[lgb.record_evaluation(ev)])
    margins = booster.predict(X[1500:], raw_score=True) + start
    assert margins.min() >= 0.0 and margins.max() <= 1.0
    assert ev["v"]["gbrank_logloss"][-1] == pytest.approx(
        float(np.mean(np.logaddexp(0.0, margins) - y[1500:] * margins)), rel=1e-6)
