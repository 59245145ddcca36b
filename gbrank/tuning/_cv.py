"""Cross-validated training of one trial: per-fold binned data built once and reused,
early stopping and pruning on the study's metric, every task metric recorded per fold."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._train import Validation, start_data, start_rows, train
from gbrank.metrics import get_metric
from gbrank.tuning._cut import (
    best_offsets,
    cross_fitted,
    cross_fitted_decisions,
    decides_by_offsets,
    reads_cut,
    reads_decision,
    score_at,
)
from gbrank.tuning._folds import Fold
from gbrank.tuning._tasks import Task, native_learns_positions

__all__ = ["FoldData", "TrialResult", "balanced_weights", "booster_only",
           "check_feature_names", "score", "run_cv", "run_fixed",
           "fit_full", "save_native"]

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


def score(name: str, y: np.ndarray, s: np.ndarray, group: np.ndarray | None,
          position: np.ndarray | None = None, propensity: Any = None,
          cut: float | None = None) -> float:
    """Metric ``name`` (:func:`gbrank.metrics.get_metric`) of raw scores ``s``, read as
    margins: ``"logloss"`` the sigmoid of the margin, ``"ap"`` and the ranking metrics
    the order. A threshold metric (``"f1"``, ``"fbeta:2"``, ``"balanced"``) judges
    ``s > cut`` (a margin); without ``cut``, each half of the rows at the cut best on the
    other half (:func:`gbrank.tuning._cut.cross_fitted`), never at a cut chosen on the
    rows judged. A click metric (``ips_dcg@10``) also takes the rows' logged
    ``position`` and the ``propensity`` of the positions."""
    if reads_cut(name):
        return cross_fitted(name, y, s) if cut is None else score_at(name, y, s, cut)
    metric = get_metric(name).with_margin(True)
    if metric.kind == "clicks":
        if position is None or propensity is None:
            raise ValueError(f"{name} judges a click log: it needs the rows' logged "
                             "positions and their propensities (gbrank tune --position-col "
                             "... --propensity ...)")
        return float(metric.with_propensity(propensity)(y, s, group, position=position))
    return float(metric(y, s, group))


def score_all(names: Any, target: str, y: np.ndarray, s: np.ndarray,
              group: np.ndarray | None, position: np.ndarray | None = None,
              propensity: Any = None, cuts: dict[str, Any] | None = None,
              ) -> dict[str, float]:
    """Every metric of ``names`` of raw scores ``s``, as a study judged on ``target``
    reads them (:func:`score`). K classes of a study deciding at class offsets
    (``target`` a macro F_β): every metric that reads the decided class reads ``s`` plus
    the offsets ``cuts[target]``, or without them each half of the rows at the offsets
    best on the other half (:func:`gbrank.tuning._cut.cross_fitted_decisions`). Binary
    threshold metrics: at their margin cut in ``cuts``, else cross-fitted."""
    cuts = cuts or {}
    decided = None
    if np.ndim(s) == 2 and decides_by_offsets(target):
        decided = (s + np.asarray(cuts[target], np.float64) if target in cuts
                   else cross_fitted_decisions(target, y, s))
    out = {}
    for m in dict.fromkeys(names):
        if decided is not None and reads_decision(m):
            out[m] = float(get_metric(m).with_margin(True)(y, decided))
        else:
            out[m] = score(m, y, s, group, position, propensity,
                           cut=None if np.ndim(s) == 2 else cuts.get(m))
    return out


def score_folds(names: Any, target: str, folds: list[tuple], propensity: Any = None,
                ) -> dict[str, list[float]]:
    """:func:`score_all` of each fold's ``(labels, raw scores, group, positions)``, per
    metric a list over the folds. K classes of a study deciding at class offsets: fold
    k's decisions at the offsets best on the other folds' rows pooled (cross-fold, as
    ``GBClassifier`` chooses them from out-of-fold predictions; never on the rows
    judged), which is more rows to choose on than half of one fold."""
    cuts: list[dict | None] = [None] * len(folds)
    if len(folds) > 1 and np.ndim(folds[0][1]) == 2 and decides_by_offsets(target):
        for k in range(len(folds)):
            rest = [f for j, f in enumerate(folds) if j != k]
            cuts[k] = {target: best_offsets(target, np.concatenate([f[0] for f in rest]),
                                            np.concatenate([f[1] for f in rest]))}
    out: dict[str, list[float]] = {}
    for (y, s, group, position), at in zip(folds, cuts, strict=True):
        for m, v in score_all(names, target, y, s, group, position, propensity,
                              cuts=at).items():
            out.setdefault(m, []).append(v)
    return out


class FoldData:
    """Each fold's training and validation sets in the booster's binned form, built on
    first use and kept for every later trial (``reuse=False`` rebuilds them each time,
    the plain Optuna loop the throughput figure compares with).

    Natives and gbrank objectives get separate sets ("variants"): a gbrank binary or
    multiclass objective starts from its own constant (``init_score``/``base_margin``,
    set per trial), a native one from the booster's own start; a native multiclass
    trial with ``class_weight="balanced"`` trains on a variant whose training rows carry
    the balanced class weights (:func:`balanced_weights`).
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
        return (t.X[fold.train], t.y[fold.train],
                t.lgb_group(fold.group_train, fold.train.size),
                t.X[fold.valid], t.y[fold.valid],
                t.lgb_group(fold.group_valid, fold.valid.size))

    def fold_positions(self, f: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The logged positions of fold ``f``'s training and validation rows (``None``
        for a task without positions)."""
        fold = self.folds[f]
        return self.task.positions(fold.train), self.task.positions(fold.valid)

    def get(self, f: int, variant: str):
        key = (f, variant)
        if self.reuse and key in self._cache:
            return self._cache[key]
        Xt, yt, gt, Xv, yv, gv = self.fold_arrays(f)
        wt = balanced_weights(yt, self.task.num_class) if variant == "balanced" else None
        # LightGBM's own lambdarank reads positions from its Dataset ("positions"); a
        # gbrank objective gets them through the training loop (and would be warned
        # about them).
        sets = make_sets(self.booster, Xt, yt, gt, Xv, yv, gv, self.n_jobs,
                         self.task.feature_names, weight=wt,
                         position=self.fold_positions(f)[0] if variant == "positions"
                         else None)
        self.builds += 1
        if self.reuse:
            self._cache[key] = sets
        return sets


def balanced_weights(y: np.ndarray, num_class: int) -> np.ndarray:
    """Each row's "balanced" class weight n / (K n_c) (scikit-learn's
    ``compute_sample_weight("balanced", y)`` over the K classes present in ``y``).

    Examples
    --------
    >>> import numpy as np
    >>> from gbrank.tuning._cv import balanced_weights
    >>> balanced_weights(np.array([0.0, 0.0, 0.0, 1.0]), 2).tolist()
    [0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 2.0]
    """
    codes = np.asarray(y).astype(np.int64)
    counts = np.bincount(codes, minlength=num_class).astype(np.float64)
    present = np.count_nonzero(counts)
    return codes.size / (present * counts[codes])


def make_sets(booster: str, Xt, yt, gt, Xv, yv, gv, n_jobs: int = 2,
              feature_names: list[str] | None = None, weight: np.ndarray | None = None,
              position: np.ndarray | None = None):
    """Binned training set and validation set (LightGBM ``Dataset`` pair sharing bins, or
    XGBoost ``DMatrix`` pair), constructed now; ``feature_names`` (optional) name the
    columns; ``weight`` (optional) weighs the training rows; ``position`` (optional, a
    click log) the training rows' logged positions, which a LightGBM ``Dataset``
    carries for LightGBM's own ``lambdarank`` (gbrank's position-bias objectives get
    them through the training loop)."""
    if booster == "lightgbm":
        lgb = require("lightgbm")

        params = dict(LGB_DATASET_PARAMS, num_threads=n_jobs)
        names = feature_names or "auto"
        with_position = {} if position is None else {"position": position}
        dt = lgb.Dataset(Xt, yt, group=gt, weight=weight, params=params, feature_name=names,
                         free_raw_data=False, **with_position).construct()
        dv = lgb.Dataset(Xv, yv, group=gv, reference=dt, params=params, feature_name=names,
                         free_raw_data=False).construct()
        return dt, dv
    xgb = require("xgboost")

    dt = xgb.DMatrix(Xt, yt, group=gt, weight=weight, nthread=n_jobs,
                     feature_names=feature_names)
    dv = xgb.DMatrix(Xv, yv, group=gv, nthread=n_jobs, feature_names=feature_names)
    return dt, dv


@dataclass
class TrialResult:
    value: float
    folds: dict[str, list[float]]
    best_iters: list[int]
    seconds: float


def _fold_validation(target: str, yv: np.ndarray, gv: Any, pv: Any = None,
                     propensity: Any = None) -> Validation:
    """The study's metric on a fold's validation rows (their labels, queries and, for a
    click log, logged positions, in the order the validation set holds them)."""
    return Validation(target, lambda preds, data: score(target, yv, preds, gv, pv,
                                                         propensity),
                      get_metric(target).higher_is_better)


def _predict(booster: str, model: Any, X: Any, dv: Any, best: int, init: Any) -> np.ndarray:
    """Raw scores of the first ``best`` rounds plus the start: LightGBM from ``X``,
    XGBoost from the validation ``DMatrix`` (which carries the start as its margin)."""
    if booster == "lightgbm":
        s = model.predict(X, num_iteration=best, raw_score=True)
        return s + (init if init is not None else 0.0)
    return model.predict(dv, output_margin=True, iteration_range=(0, best))


def run_cv(data: FoldData, booster_params: dict, obj: Any, target: str, *,
           max_rounds: int, patience: int, report=None) -> TrialResult:
    """Train on every fold with early stopping on ``target`` (in its direction); return
    the fold-mean of ``target`` and every task metric per fold at the best iteration.

    ``report(step, value)`` (optional) receives the validation score every 10
    iterations at ``step = fold · max_rounds + iteration`` (the same step means the same
    fold and round in every trial, so a pruner compares like with like); it may raise
    to stop the trial (Optuna's ``TrialPruned``).
    """
    t0 = time.perf_counter()
    task = data.task
    held: list[tuple] = []  # each fold's validation labels, scores, queries, positions
    iters = []
    for f in range(len(data.folds)):
        dt, dv, init, params = _fold_setup(data, f, booster_params, obj)
        fold = data.folds[f]
        yv, gv = task.y[fold.valid], fold.group_valid
        pt, pv = data.fold_positions(f)
        rho = task.propensity

        def on_iter(it, value, f=f):
            if report is not None and ((it + 1) % 10 == 0):
                report(f * max_rounds + it, value)

        trained = train(data.booster, params, obj, dt, dv, rounds=max_rounds,
                        validation=_fold_validation(target, yv, gv, pv, rho),
                        early_stopping=patience, on_iteration=on_iter,
                        position=_objective_positions(obj, pt))
        best = trained.best_iteration
        s = _predict(data.booster, trained.model, task.X[fold.valid], dv, best, init)
        iters.append(best)
        held.append((yv, s, gv, pv))
    folds = score_folds((*task.metrics, target), target, held, task.propensity)
    value = float(np.mean(folds[target]))
    return TrialResult(value, folds, iters, time.perf_counter() - t0)


def _objective_positions(obj: Any, position: np.ndarray | None) -> np.ndarray | None:
    """The training rows' positions for the training loop (which hands them to the
    objective's adapter): only a gbrank objective with ``position_bias`` takes them."""
    uses = obj is not None and bool(getattr(obj, "_uses_positions", lambda: False)())
    return position if uses else None


def _start(obj: Any, kind: str, y: np.ndarray) -> Any:
    """A gbrank classification objective's constant start on labels ``y``: a number
    (binary), K numbers (multiclass); None for ranking objectives and natives."""
    if obj is None or kind == "ranking":
        return None
    if kind == "multiclass":
        return np.asarray(obj.init_score(y), dtype=np.float64)
    return float(obj.init_score(y))


def booster_only(booster_params: dict) -> tuple[dict, bool]:
    """The booster's own parameters and whether the training rows are weighted by class
    (``class_weight="balanced"``, the tuner's setting, not the booster's)."""
    params = dict(booster_params)
    return params, params.pop("class_weight", None) == "balanced"


def _fold_setup(data: FoldData, f: int, booster_params: dict, obj: Any):
    """Fold ``f``'s binned sets carrying the objective's start, the start itself (a gbrank
    classification objective's constant, else None) and the booster parameters with
    threads."""
    params, balanced = booster_only(booster_params)
    variant = ("custom" if obj is not None else "balanced" if balanced
               else "positions" if native_learns_positions(params) else "native")
    dt, dv = data.get(f, variant)
    init = _start(obj, data.task.kind, data.task.y[data.folds[f].train])
    if obj is not None:
        start_data(data.booster, dt, init)
        start_data(data.booster, dv, init)
    params["num_threads" if data.booster == "lightgbm" else "nthread"] = data.n_jobs
    return dt, dv, init, params


def run_fixed(data: FoldData, booster_params: dict, obj: Any, rounds: int,
              metrics: tuple[str, ...] | list[str], oof: list | None = None,
              target: str | None = None) -> dict[str, list[float]]:
    """Train every fold for exactly ``rounds`` rounds (no early stopping: nothing is
    chosen on the validation rows) and score ``metrics`` on each fold's validation
    rows, as a study judged on ``target`` (default: the first metric) reads them
    (:func:`scores`): an estimate of what a refit with ``rounds`` rounds does on unseen
    queries. ``oof`` (a list) receives each fold's ``(labels, raw scores)`` of its
    validation rows: the out-of-fold predictions a decision cut is chosen on."""
    target = target or metrics[0]
    task = data.task
    held: list[tuple] = []
    for f in range(len(data.folds)):
        dt, dv, init, params = _fold_setup(data, f, booster_params, obj)
        fold = data.folds[f]
        pt, pv = data.fold_positions(f)
        model = train(data.booster, params, obj, dt, rounds=rounds,
                      position=_objective_positions(obj, pt)).model
        s = _predict(data.booster, model, task.X[fold.valid], dv, rounds, init)
        if oof is not None:
            oof.append((task.y[fold.valid], s))
        held.append((task.y[fold.valid], s, fold.group_valid, pv))
    return score_folds(metrics, target, held, task.propensity)


def fit_full(task: Task, booster: str, booster_params: dict, obj: Any, rounds: int,
             n_jobs: int = 2):
    """Refit on the whole tuning part with ``rounds`` rounds; return the model, the
    starting constant (gbrank classification objectives: a number, or K for
    multiclass) and the held-out test raw scores (``(n, K)`` for multiclass)."""
    init = _start(obj, task.kind, task.y)
    g = task.lgb_group(task.group, task.y.size)
    gte = task.lgb_group(task.group_test, task.y_test.size)
    params, balanced = booster_only(booster_params)
    w = balanced_weights(task.y, task.num_class) if balanced else None
    params["num_threads" if booster == "lightgbm" else "nthread"] = n_jobs
    if booster == "lightgbm":
        lgb = require("lightgbm")

        with_position = ({"position": task.position} if task.position is not None
                         and obj is None and native_learns_positions(params) else {})
        ds = lgb.Dataset(task.X, task.y, group=g, weight=w, params=dict(LGB_DATASET_PARAMS),
                         init_score=None if init is None else start_rows(init, task.y.size),
                         feature_name=task.feature_names or "auto", **with_position)
        model = train(booster, params, obj, ds, rounds=rounds,
                      position=_objective_positions(obj, task.position)).model
        s_test = model.predict(task.X_test, raw_score=True)
        return model, init, s_test + (0.0 if init is None else init)
    xgb = require("xgboost")

    names = task.feature_names
    dt = xgb.DMatrix(task.X, task.y, group=g, weight=w, nthread=n_jobs, feature_names=names)
    dte = xgb.DMatrix(task.X_test, task.y_test, group=gte, nthread=n_jobs, feature_names=names)
    if init is not None:
        start_data(booster, dt, init)
        start_data(booster, dte, init)
    model = train(booster, params, obj, dt, rounds=rounds,
                  position=_objective_positions(obj, task.position)).model
    return model, init, model.predict(dte, output_margin=True)


def save_native(model: Any, booster: str, obj: Any, init: Any, path: Any,
                X_test: Any, s_test: np.ndarray, kind: str,
                feature_names: list[str] | None = None) -> float:
    """Write a model from :func:`fit_full` so that the booster alone predicts with it, and
    prove it on the test split.

    A gbrank objective's model is exported (:func:`gbrank.lightgbm.to_native`,
    :func:`gbrank.xgboost.to_native`: the start ``init`` and the link inside); a native
    one is written as it is. The file is loaded back by the plain booster, and its
    test predictions are compared with the tuner's raw test scores ``s_test`` through
    the link (sigmoid for binary tasks, softmax over the K scores for multiclass, none
    for ranking). Returns the largest
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
    expected = (predict_proba(s_test) if kind in ("binary", "multiclass")
                else np.asarray(s_test, np.float64))
    diff = float(np.max(np.abs(np.asarray(served, np.float64) - expected), initial=0.0))
    if not diff <= 1e-5 * max(1.0, float(np.max(np.abs(expected), initial=0.0))):
        raise RuntimeError(f"the saved model {path} predicts up to {diff:g} away from the "
                           "tuner's scores on the test split")
    return diff
