"""The tuner's multiclass task: the kind inferred from the labels, stratified splits and
folds, the candidates (softmax focal loss, the booster's softmax with and without
balanced class weights), and a tiny run whose saved model the plain booster serves."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

from gbrank.objectives import FocalLoss  # noqa: E402
from gbrank.tuning import task_from_arrays  # noqa: E402
from gbrank.tuning._folds import make_folds  # noqa: E402
from gbrank.tuning._sources import infer_kind  # noqa: E402
from gbrank.tuning._spaces import candidates_for, suggest_params  # noqa: E402


def _labels(counts, seed=0):
    """Labels with ``counts[c]`` rows of class c, shuffled."""
    y = np.repeat(np.arange(len(counts)), counts).astype(np.float64)
    return np.random.default_rng(seed).permutation(y)


@pytest.mark.parametrize("y, group, kind", [
    ([0, 1, 2, 1, 0], None, "multiclass"),
    ([3, 0, 1, 2, 2], None, "multiclass"),
    ([0, 1, 1, 0], None, "binary"),
    ([0, 1, 2, 1, 0], [3, 2], "ranking"),      # queries: graded relevance
    ([0, 2, 3, 1, 2], None, "multiclass"),
    ([1, 2, 3, 2], None, "ranking"),           # not 0 … K-1: grades, not classes
    ([0, 2, 2, 0], None, "ranking"),           # class 1 absent
    ([0.0, 0.5, 1.0, 2.0], None, "ranking"),
])
def test_infer_kind_multiclass_for_the_classes_0_to_k_without_queries(y, group, kind):
    assert infer_kind(np.asarray(y, float), group) == kind


def test_task_from_arrays_holds_out_a_stratified_share_of_each_class():
    counts = [400, 60, 20, 12, 8]
    y = _labels(counts)
    X = np.arange(y.size, dtype=float)[:, None]
    task = task_from_arrays("m", X, y)
    assert task.kind == "multiclass" and task.num_class == 5
    assert task.metrics[0] == "macro_f1"
    held = np.bincount(task.y_test.astype(int), minlength=5)
    np.testing.assert_array_equal(held, [80, 12, 4, 2, 2])  # round(0.2 · count)
    # the parts are the rows, each exactly once
    rows = np.sort(np.concatenate([task.X[:, 0], task.X_test[:, 0]]))
    np.testing.assert_array_equal(rows, np.arange(y.size))


def test_multiclass_folds_are_stratified_by_class():
    counts = [300, 45, 15, 9]
    y = _labels(counts, seed=1)
    task = task_from_arrays("m", np.zeros((y.size, 1)), y, kind="multiclass",
                            test_size=0.1)
    tuned = np.bincount(task.y.astype(int), minlength=4)
    folds = make_folds(task, n_folds=3, seed=0)
    for fold in folds:
        got = np.bincount(task.y[fold.valid].astype(int), minlength=4)
        assert np.all(np.abs(got - tuned / 3) <= 1), (got, tuned)
    assert sorted(np.concatenate([f.valid for f in folds]).tolist()) == list(range(task.y.size))


def test_multiclass_task_refuses_labels_that_are_not_classes():
    X = np.zeros((6, 1))
    with pytest.raises(ValueError, match="integers"):
        task_from_arrays("m", X, [0, 1, 2, 0.5, 1, 2], kind="multiclass")


@pytest.mark.parametrize("booster, native", [("lightgbm", "multiclass"),
                                             ("xgboost", "multi:softprob")])
def test_multiclass_candidates_and_their_spaces(booster, native):
    pytest.importorskip(booster)
    cands = candidates_for("m", "multiclass", booster, num_class=4)
    assert [(c.key, c.kind, c.target) for c in cands] == [
        ("focal", "multiclass", "macro_f1"), (f"native:{native}", "multiclass", "macro_f1")]
    focal, nat = cands
    assert isinstance(focal.base, FocalLoss) and focal.base.num_class == 4
    y = _labels([30, 6, 3, 1]).astype(float)
    bp, op = suggest_params(optuna.trial.FixedTrial(
        {"learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5,
         "feature_fraction": 1.0, "bagging_fraction": 1.0, "lambda_l1": 1e-8,
         "lambda_l2": 1e-8, "eta": 0.1, "max_depth": 3, "min_child_weight": 1.0,
         "subsample": 1.0, "colsample_bytree": 1.0, "reg_alpha": 1e-8, "reg_lambda": 1e-8,
         "obj_gamma": 2.0, "obj_alpha": "balanced", "obj_max_step": 8.0,
         "class_weight_on": True}), focal, booster, y)
    assert op == {"gamma": 2.0, "alpha": "balanced", "max_step": 8.0}
    assert bp["num_class"] == 4
    bp, op = suggest_params(optuna.trial.FixedTrial(
        {"learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5,
         "feature_fraction": 1.0, "bagging_fraction": 1.0, "lambda_l1": 1e-8,
         "lambda_l2": 1e-8, "eta": 0.1, "max_depth": 3, "min_child_weight": 1.0,
         "subsample": 1.0, "colsample_bytree": 1.0, "reg_alpha": 1e-8, "reg_lambda": 1e-8,
         "class_weight_on": True}), nat, booster, y)
    assert op == {} and bp["objective"] == native and bp["num_class"] == 4
    assert bp["class_weight"] == "balanced"
    # the binary focal candidate is not offered to a multiclass task, nor the reverse
    assert [c.key for c in candidates_for("b", "binary", booster)][0] == "focal"
    assert candidates_for("b", "binary", booster)[0].base.num_class is None


def test_balanced_weights_are_scikit_learns():
    from sklearn.utils.class_weight import compute_sample_weight

    from gbrank.tuning._cv import balanced_weights

    y = _labels([50, 7, 3]).astype(float)
    np.testing.assert_allclose(balanced_weights(y, 3), compute_sample_weight("balanced", y),
                               rtol=1e-15)


def _write_csv(path: Path, n=700, seed=0) -> tuple[Path, np.ndarray, np.ndarray]:
    import pandas as pd
    from sklearn.datasets import make_classification

    X, y = make_classification(n, 8, n_informative=5, n_classes=4, n_clusters_per_class=1,
                               weights=[0.7, 0.15, 0.1, 0.05], random_state=seed)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["label"] = y
    df.to_csv(path, index=False)
    return path, df[[f"f{i}" for i in range(X.shape[1])]].to_numpy(), y


def test_tiny_multiclass_run_end_to_end(tmp_path):
    """`gbrank tune` on a CSV whose label column holds 4 classes: inferred multiclass,
    judged on macro-F1 at held-out class offsets; the pick's reported test macro-F1 is the
    macro-F1 of the saved model's predictions (plain LightGBM) on the held-out rows at
    the printed offsets; those are the softmax of the tuner's refit scores; the code
    shown trains the same model and decides at those offsets."""
    import lightgbm as lgb
    from sklearn.metrics import balanced_accuracy_score, f1_score

    from gbrank import predict_proba
    from gbrank.metrics import get_metric
    from gbrank.tuning import _cli as cli
    from gbrank.tuning._cv import fit_full

    csv, X, y = _write_csv(tmp_path / "d.csv")
    out = tmp_path / "out"
    code = cli.main(["--data", str(csv), "--label-col", "label", "--trials", "2",
                     "--max-rounds", "10", "--folds", "2", "--finalists", "1",
                     "--repeats", "1", "--quiet", "--out", str(out)])
    assert code == 0
    summary = (out / "SUMMARY.md").read_text()
    assert "### d.csv: macro_f1" in summary
    assert "| focal | macro_f1 |" in summary and "| native:multiclass | macro_f1 |" in summary
    assert "decision=[" in summary and "Multiclass decisions are judged" in summary
    assert ("Judged on macro_f1, the task's headline metric, which every study was tuned "
            "for" in summary)
    # the held-out rows: the tuner's stratified split of the same rows (seed 0)
    task = task_from_arrays("d.csv", X, y, seed=0)
    assert task.kind == "multiclass"
    metas = {}
    for p in (out / "tune" / "models").rglob("params.json"):
        meta = json.loads(p.read_text())
        metas[meta["objective"]] = meta, p.parent / "model.txt"
    assert sorted(metas) == ["focal", "native:multiclass"]
    for key, (meta, model) in metas.items():
        proba = lgb.Booster(model_file=str(model)).predict(task.X_test)
        assert proba.shape == (task.y_test.size, 4)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
        b = np.asarray(meta["class_offsets"]["offsets"])
        assert b.shape == (4,) and meta["class_offsets"]["best_for"] == "macro_f1"
        decided = np.argmax(np.log(proba) + b, axis=1)
        sk = f1_score(task.y_test, decided, average="macro")
        assert meta["test"]["macro_f1"] == pytest.approx(sk, abs=1e-12)
        assert meta["test"]["balanced_accuracy"] == pytest.approx(
            balanced_accuracy_score(task.y_test, decided), abs=1e-12)
        assert meta["test"]["mlogloss"] == pytest.approx(
            get_metric("mlogloss")(task.y_test, proba), abs=1e-9)
        assert f"{sk:.4f}" in summary
        assert meta["booster_params"]["num_class"] == 4
        # the code shown trains the saved model again (GBClassifier, argmax decision)
        scope = {"X": task.X, "y": task.y}
        exec("\n".join(meta["train_with"]), scope)
        clf = scope["model"]
        np.testing.assert_allclose(clf.predict_proba(task.X_test), proba, rtol=0, atol=1e-9)
        np.testing.assert_array_equal(clf.predict(task.X_test), decided)
        if key == "focal":  # exported: the start and the softmax inside the trees
            assert meta["booster_params"].get("class_weight") is None
            obj = FocalLoss(num_class=4).set_params(**meta["objective_params"])
            _, init, s_test = fit_full(task, "lightgbm", meta["booster_params"], obj,
                                       meta["num_boost_round"])
            assert np.shape(init) == (4,)
            np.testing.assert_allclose(proba, predict_proba(s_test), rtol=0, atol=1e-6)
            assert re.search(r"objective=multiclass num_class:4", model.read_text())
        else:
            assert "objective=multiclass num_class:4" in model.read_text()


def test_xgboost_multiclass_model_is_saved_as_multi_softprob(tmp_path):
    """XGBoost: both candidates of a tiny multiclass task are saved so that the plain
    booster predicts K probabilities per row, which decided at the printed class offsets
    give the reported test macro-F1."""
    xgb = pytest.importorskip("xgboost")
    from sklearn.datasets import make_classification
    from sklearn.metrics import f1_score

    from gbrank.tuning import TuneConfig, tune_task

    X, y = make_classification(500, 6, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               weights=[0.7, 0.2, 0.1], random_state=1)
    task = task_from_arrays("tiny_mc", X, y, seed=0)
    cfg = TuneConfig(booster="xgboost", trials=1, max_rounds=6, patience=3, n_folds=2,
                     finalists=1, repeats=1, out_dir=tmp_path, plots=False, progress=False)
    results = {r.key: r for r in tune_task(task, cfg)}
    assert sorted(results) == ["focal", "native:multi:softprob"]
    for res in results.values():
        model = xgb.Booster(model_file=res.model_path)
        assert json.loads(model.save_config())["learner"]["objective"]["name"] == \
            "multi:softprob"
        proba = model.predict(xgb.DMatrix(task.X_test))
        assert proba.shape == (task.y_test.size, 3)
        decided = np.log(proba) + np.asarray(res.cuts["macro_f1"])  # the printed offsets
        sk = f1_score(task.y_test, decided.argmax(axis=1), average="macro")
        assert res.test["macro_f1"] == pytest.approx(sk, abs=1e-12)
