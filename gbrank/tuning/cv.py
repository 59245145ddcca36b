"""Cross-validated training of one trial: per-fold binned data built once and reused,
early stopping and pruning on the study's metric, every task metric recorded per fold."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank.tuning.folds import Fold
from gbrank.tuning.tasks import Task

__all__ = ["FoldData", "TrialResult", "check_feature_names", "score", "run_cv", "fit_full",
           "save_native"]

# Binning is fixed for every trial (the Datasets are built once); feature_pre_filter is
# off so trials may change min_data_in_leaf on an already constructed Dataset.
LGB_DATASET_PARAMS = {"max_bin": 255, "min_data_in_bin": 3, "feature_pre_filter": False,
                      "verbose": -1}


# Characters in a feature name that each booster refuses, or that do not survive its
# model file (LightGBM: JSON's punctuation; a line break splits its feature_names line).
_REFUSED = {"lightgbm": '",:[]{}\n\r', "xgboost": "[]<"}


def check_feature_names(names: list[str] | None, booster: str) -> None:
    """Refuse feature names ``booster`` would reject, or change in its saved model, with
    a ValueError naming the feature, so that a run fails before its first trial rather
    than at the refit. LightGBM also writes spaces as ``_`` and cannot store an empty
    name."""
    for name in names or ():
        bad = sorted(set(name) & set(_REFUSED[booster]))
        if bad:
            why = (f"contains {''.join(bad)!r}, which {booster} does not accept in a feature "
                   "name")
        elif booster == "lightgbm" and " " in name:
            why = "contains a space, which LightGBM changes to '_' in the saved model"
        elif booster == "lightgbm" and not name:
            why = "is empty, which LightGBM does not accept"
        else:
            continue
        raise ValueError(f"feature name {name!r} {why}; rename the column, or leave it out "
                         "of the features")


def score(name: str, y: np.ndarray, s: np.ndarray, group: np.ndarray | None) -> float:
    """Metric ``name`` of raw scores ``s`` (``"ap"``: scikit-learn's average precision;
    any other name: ``gbrank.get_metric``; ``"f1"`` judges the margin > 0)."""
    if name == "ap":
        from sklearn.metrics import average_precision_score

        return float(average_precision_score(y, s))
    import gbrank

    return float(gbrank.get_metric(name)(y, s, group))


def _rows(X: Any, idx: np.ndarray) -> Any:
    return X[idx]


class FoldData:
    """Each fold's training and validation sets in the booster's binned form, built on
    first use and kept for every later trial (``reuse=False`` rebuilds them each time,
    the plain Optuna loop the throughput figure compares with).

    Natives and gbrank objectives get separate sets ("variants"): a gbrank binary
    objective starts from its own constant (``init_score``/``base_margin``, set per
    trial), a native one from the booster's own start.
    """

    def __init__(self, task: Task, folds: list[Fold], booster: str = "lightgbm",
                 reuse: bool = True, n_jobs: int = 2) -> None:
        self.task = task
        self.folds = folds
        self.booster = booster
        self.reuse = reuse
        self.n_jobs = n_jobs
        self._cache: dict[tuple[int, str], tuple[Any, Any]] = {}
        self.builds = 0

    def fold_arrays(self, f: int):
        fold = self.folds[f]
        t = self.task
        return (_rows(t.X, fold.train), t.y[fold.train],
                t.lgb_group(fold.group_train, fold.train.size),
                _rows(t.X, fold.valid), t.y[fold.valid],
                t.lgb_group(fold.group_valid, fold.valid.size))

    def get(self, f: int, variant: str):
        key = (f, variant)
        if self.reuse and key in self._cache:
            return self._cache[key]
        Xt, yt, gt, Xv, yv, gv = self.fold_arrays(f)
        sets = make_sets(self.booster, Xt, yt, gt, Xv, yv, gv, self.n_jobs,
                         self.task.feature_names)
        self.builds += 1
        if self.reuse:
            self._cache[key] = sets
        return sets


def make_sets(booster: str, Xt, yt, gt, Xv, yv, gv, n_jobs: int = 2,
              feature_names: list[str] | None = None):
    """Binned training set and validation set (LightGBM ``Dataset`` pair sharing bins, or
    XGBoost ``DMatrix`` pair), constructed now; ``feature_names`` (optional) name the
    columns."""
    if booster == "lightgbm":
        lgb = require("lightgbm")

        params = dict(LGB_DATASET_PARAMS, num_threads=n_jobs)
        names = feature_names or "auto"
        dt = lgb.Dataset(Xt, yt, group=gt, params=params, feature_name=names,
                         free_raw_data=False).construct()
        dv = lgb.Dataset(Xv, yv, group=gv, reference=dt, params=params, feature_name=names,
                         free_raw_data=False).construct()
        return dt, dv
    xgb = require("xgboost")

    dt = xgb.DMatrix(Xt, yt, group=gt, nthread=n_jobs, feature_names=feature_names)
    dv = xgb.DMatrix(Xv, yv, group=gv, nthread=n_jobs, feature_names=feature_names)
    return dt, dv


@dataclass
class TrialResult:
    value: float
    folds: dict[str, list[float]]
    best_iters: list[int]
    seconds: float


def _train_lgb(params, obj, dt, dv, yv, gv, init, target, max_rounds, patience, on_iter):
    lgb = require("lightgbm")

    p = dict(params)
    if obj is not None:
        p["objective"] = obj
        dt.set_init_score(np.full(dt.num_data(), init) if init is not None else None)
        dv.set_init_score(np.full(dv.num_data(), init) if init is not None else None)

    def feval(preds, data):
        return target, score(target, yv, preds, gv), True

    def cb(env):
        for _, name, value, _ in env.evaluation_result_list:
            if name == target:
                on_iter(env.iteration, value)

    booster = lgb.train(p, dt, num_boost_round=max_rounds, valid_sets=[dv],
                        valid_names=["valid"], feval=feval,
                        callbacks=[lgb.early_stopping(patience, first_metric_only=True,
                                                      verbose=False), cb])
    best = booster.best_iteration or booster.current_iteration()
    return booster, int(best)


def _predict_lgb(booster, X, best, init):
    s = booster.predict(X, num_iteration=best, raw_score=True)
    return s + (init if init is not None else 0.0)


def _train_xgb(params, obj, dt, dv, yv, gv, init, target, max_rounds, patience, on_iter):
    xgb = require("xgboost")

    p = dict(params)
    fobj = None
    if obj is not None:
        from gbrank.xgboost import objective as xgb_objective

        fobj = xgb_objective(obj)
        p.pop("objective", None)
        if init is not None:
            dt.set_base_margin(np.full(dt.num_row(), init))
            dv.set_base_margin(np.full(dv.num_row(), init))

    def metric(preds, data):
        return target, score(target, yv, preds, gv)

    class _CB(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            on_iter(epoch, evals_log["valid"][target][-1])
            return False

    booster = xgb.train(p, dt, num_boost_round=max_rounds, evals=[(dv, "valid")], obj=fobj,
                        custom_metric=metric, verbose_eval=False,
                        callbacks=[xgb.callback.EarlyStopping(
                            rounds=patience, metric_name=target, data_name="valid",
                            maximize=True, save_best=False), _CB()])
    best = getattr(booster, "best_iteration", None)
    best = booster.num_boosted_rounds() - 1 if best is None else int(best)
    return booster, best + 1


def _predict_xgb(booster, dmat, best):
    return booster.predict(dmat, output_margin=True, iteration_range=(0, best))


def run_cv(data: FoldData, booster_params: dict, obj: Any, target: str, *,
           max_rounds: int, patience: int, report=None) -> TrialResult:
    """Train on every fold with early stopping on ``target``; return the fold-mean of
    ``target`` and every task metric per fold at the best iteration.

    ``report(step, value)`` (optional) receives the validation score every 10
    iterations at ``step = fold · max_rounds + iteration`` (the same step means the same
    fold and round in every trial, so a pruner compares like with like); it may raise
    to stop the trial (Optuna's ``TrialPruned``).
    """
    t0 = time.perf_counter()
    task = data.task
    variant = "native" if obj is None else "custom"
    folds: dict[str, list[float]] = {m: [] for m in task.metrics}
    iters = []
    for f in range(len(data.folds)):
        dt, dv = data.get(f, variant)
        fold = data.folds[f]
        yt, yv = task.y[fold.train], task.y[fold.valid]
        gv = fold.group_valid
        init = None
        if obj is not None and task.kind == "binary":
            init = float(obj.init_score(yt))

        def on_iter(it, value, f=f):
            if report is not None and ((it + 1) % 10 == 0):
                report(f * max_rounds + it, value)

        params = dict(booster_params)
        if data.booster == "lightgbm":
            params["num_threads"] = data.n_jobs
            bst, best = _train_lgb(params, obj, dt, dv, yv, gv, init, target, max_rounds,
                                   patience, on_iter)
            s = _predict_lgb(bst, _rows(task.X, fold.valid), best, init)
        else:
            params["nthread"] = data.n_jobs
            bst, best = _train_xgb(params, obj, dt, dv, yv, gv, init, target, max_rounds,
                                   patience, on_iter)
            s = _predict_xgb(bst, dv, best)
        iters.append(best)
        for m in task.metrics:
            folds[m].append(score(m, yv, s, gv))
        if target not in folds:
            folds.setdefault(target, []).append(score(target, yv, s, gv))
    value = float(np.mean(folds[target]))
    return TrialResult(value, folds, iters, time.perf_counter() - t0)


def fit_full(task: Task, booster: str, booster_params: dict, obj: Any, rounds: int,
             n_jobs: int = 2):
    """Refit on the whole tuning part with ``rounds`` rounds; return the model, the
    starting constant (binary gbrank objectives) and the held-out test raw scores."""
    init = float(obj.init_score(task.y)) if (obj is not None and task.kind == "binary") else None
    g = task.lgb_group(task.group, task.y.size)
    gte = task.lgb_group(task.group_test, task.y_test.size)
    params = dict(booster_params)
    if booster == "lightgbm":
        lgb = require("lightgbm")

        ds = lgb.Dataset(task.X, task.y, group=g, params=dict(LGB_DATASET_PARAMS),
                         init_score=None if init is None else np.full(task.y.size, init),
                         feature_name=task.feature_names or "auto")
        params["num_threads"] = n_jobs
        if obj is not None:
            params["objective"] = obj
        model = lgb.train(params, ds, num_boost_round=rounds)
        s_test = model.predict(task.X_test, raw_score=True) + (init or 0.0)
        return model, init, s_test
    xgb = require("xgboost")

    names = task.feature_names
    dt = xgb.DMatrix(task.X, task.y, group=g, nthread=n_jobs, feature_names=names)
    dte = xgb.DMatrix(task.X_test, task.y_test, group=gte, nthread=n_jobs, feature_names=names)
    if init is not None:
        dt.set_base_margin(np.full(task.y.size, init))
        dte.set_base_margin(np.full(task.y_test.size, init))
    params["nthread"] = n_jobs
    fobj = None
    if obj is not None:
        from gbrank.xgboost import objective as xgb_objective

        fobj = xgb_objective(obj)
        params.pop("objective", None)
    model = xgb.train(params, dt, num_boost_round=rounds, obj=fobj)
    return model, init, model.predict(dte, output_margin=True)


def save_native(model: Any, booster: str, obj: Any, init: float | None, path: Any,
                X_test: Any, s_test: np.ndarray, kind: str,
                feature_names: list[str] | None = None) -> float:
    """Write a model from :func:`fit_full` so that the booster alone predicts with it, and
    prove it on the test split.

    A gbrank objective's model is exported (:func:`gbrank.lightgbm.to_native`,
    :func:`gbrank.xgboost.to_native`: the start ``init`` and the link inside); a native
    one is written as it is. The file is loaded back by the plain booster, and its
    test predictions are compared with the tuner's raw test scores ``s_test`` through
    the link (sigmoid for binary tasks, none for ranking). Returns the largest
    absolute difference; a difference beyond float32 precision raises ``RuntimeError``.
    """
    from gbrank import predict_proba

    if obj is not None:
        if booster == "lightgbm":
            from gbrank.lightgbm import to_native
        else:
            from gbrank.xgboost import to_native
        model = to_native(model, obj, init_score=init)
    model.save_model(str(path))
    if booster == "lightgbm":
        lgb = require("lightgbm")
        served = lgb.Booster(model_file=str(path)).predict(X_test)
    else:
        xgb = require("xgboost")
        served = xgb.Booster(model_file=str(path)).predict(
            xgb.DMatrix(X_test, feature_names=feature_names))
    expected = predict_proba(s_test) if kind == "binary" else np.asarray(s_test, np.float64)
    diff = float(np.max(np.abs(np.asarray(served, np.float64) - expected), initial=0.0))
    if not diff <= 1e-5 * max(1.0, float(np.max(np.abs(expected), initial=0.0))):
        raise RuntimeError(f"the saved model {path} predicts up to {diff:g} away from the "
                           "tuner's scores on the test split")
    return diff
