"""``--baselines catboost``: CatBoost's own ranking objectives (``YetiRank``,
``LambdaMart``, ``QueryRMSE``) tuned beside the tuner's studies, on the same folds and
metric, picked, rescored on the same fresh folds and refit like them, so the verdict can
name CatBoost with the paired interval when it leads.

gbrank's objectives cannot run inside CatBoost: a Python custom objective there
(``calc_ders_range``) receives blocks of rows with no query ids, cut through queries
(experiments/results/learner_attribution.md), so a pairwise or listwise objective cannot
know which rows to compare. CatBoost is a baseline here, never a host.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank.metrics import get_metric
from gbrank.tuning._booster_spaces import Param
from gbrank.tuning._budget import run_budget, state_counts
from gbrank.tuning._config import TuneConfig
from gbrank.tuning._cv import score
from gbrank.tuning._folds import Fold
from gbrank.tuning._pick import DIGITS, RESCORED, RepeatFolds, finalists
from gbrank.tuning._progress import Progress
from gbrank.tuning._results import StudyResult
from gbrank.tuning._sampler import seeded_tpe, stable_seed
from gbrank.tuning._storage import NO_STUDY, study_lock, study_name
from gbrank.tuning._tasks import Task
from gbrank.tuning._verdict import CATBOOST as PREFIX

__all__ = ["CATBOOST_LOSSES", "DEFAULTS", "SPACE", "run_catboost"]


#: CatBoost's ranking objectives the baseline tunes: the two that led on LETOR data in
#: issue 35 and its pointwise-per-query one.
CATBOOST_LOSSES = ("YetiRank", "LambdaMart", "QueryRMSE")

# A small space around CatBoost's defaults for its ranking losses: its symmetric trees
# and random split scores are what made it lead on a small set, so depth and randomness
# are searched, not switched off. Its CPU default bootstrap is MVS (``subsample`` 0.8),
# and YetiRank and LambdaMart default to no L2 penalty on leaf values (QueryRMSE to 3):
# the range reaches down to a penalty of 1e-3, which is none for practical purposes.
SPACE = (
    Param("depth", "int", 4, 8),
    Param("learning_rate", "float", 0.01, 0.3, log=True),
    Param("l2_leaf_reg", "float", 1e-3, 30.0, log=True),
    Param("random_strength", "float", 0.1, 10.0, log=True),
    Param("subsample", "float", 0.5, 1.0),
)
FIXED = {"bootstrap_type": "MVS", "verbose": 0, "allow_writing_files": False}

#: CatBoost's own defaults for each loss (version 1.2, CPU), within :data:`SPACE`: every
#: study's first trial, so the tuned pick is never a configuration worse on the folds
#: than the library untouched (its learning rate 0.03; its ranking losses' L2 penalty
#: of 0 stands as the space's lowest, 1e-3).
DEFAULTS = {loss: {"depth": 6, "learning_rate": 0.03,
                   "l2_leaf_reg": 3.0 if loss == "QueryRMSE" else 1e-3,
                   "random_strength": 1.0, "subsample": 0.8}
            for loss in CATBOOST_LOSSES}


class _EvalMetric:
    """gbrank's metric ``name`` on one validation set, as a CatBoost eval metric.
    CatBoost hands an eval metric whole data sets in row order, the learning set too:
    a set other than this one (by its labels) scores 0 and is not watched."""

    def __init__(self, name: str, y: np.ndarray, group: np.ndarray) -> None:
        self.name, self.y, self.group = name, y, group
        self.higher = get_metric(name).higher_is_better

    def is_max_optimal(self) -> bool:
        return self.higher

    def evaluate(self, approxes, target, weight):
        if len(target) != self.y.size or not np.array_equal(
                np.asarray(target, dtype=np.float64), self.y):
            return 0.0, 1.0
        return score(self.name, self.y, np.asarray(approxes[0], np.float64), self.group), 1.0

    def get_final_error(self, error, weight):
        return error


def _matrix(X: Any) -> Any:
    """``X`` as CatBoost takes it: a SciPy sparse matrix (a LETOR/SVMlight file's) as
    CSR with 32-bit indices, which CatBoost requires (SciPy may use 64-bit ones)."""
    import scipy.sparse as sp

    if not sp.issparse(X):
        return X
    X = sp.csr_matrix(X, copy=True)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X


def _pool(X: np.ndarray, y: np.ndarray, group: np.ndarray) -> Any:
    cb = require("catboost")
    return cb.Pool(_matrix(X), y, group_id=np.repeat(np.arange(group.size), group))


def _params(loss: str, drawn: dict, seed: int, n_jobs: int) -> dict:
    return {"loss_function": loss, **FIXED, **drawn, "random_seed": seed,
            "thread_count": n_jobs}


def _fit(params: dict, train: Any, valid: Any = None, eval_metric: Any = None) -> Any:
    cb = require("catboost")
    model = cb.CatBoost(dict(params) if eval_metric is None else
                        dict(params, eval_metric=eval_metric, use_best_model=True))
    with warnings.catch_warnings():  # CatBoost tries (and fails) to numba-compile it
        warnings.simplefilter("ignore")
        model.fit(train, eval_set=valid)
    return model


def _predict(model: Any, X: np.ndarray) -> np.ndarray:
    return np.asarray(model.predict(_matrix(X), prediction_type="RawFormulaVal"),
                      np.float64)


def _fold_scores(task: Task, folds: list[Fold], loss: str, drawn: dict, target: str,
        cfg: TuneConfig) -> tuple[dict[str, list[float]], list[int]]:
    """Every task metric on each fold's validation rows at the round early stopping on
    ``target`` chose (the task's patience and most rounds, :meth:`TuneConfig.rounds`)."""
    out: dict[str, list[float]] = {m: [] for m in dict.fromkeys((target, *task.metrics))}
    iters = []
    max_rounds, patience = cfg.rounds(task.clicks)
    params = dict(_params(loss, drawn, cfg.seed, cfg.n_jobs), iterations=max_rounds,
                  od_type="Iter", od_wait=patience)
    for f in folds:
        yv = task.y[f.valid]
        model = _fit(params, _pool(task.X[f.train], task.y[f.train], f.group_train),
                     _pool(task.X[f.valid], yv, f.group_valid),
                     _EvalMetric(target, yv, f.group_valid))
        iters.append(int(model.get_best_iteration()) + 1)
        s = _predict(model, task.X[f.valid])
        for m in out:
            out[m].append(score(m, yv, s, f.group_valid))
    return out, iters


def _rescore(task: Task, repeats: RepeatFolds, loss: str, drawn: dict, rounds: int,
             metrics: tuple[str, ...], seed: int, n_jobs: int) -> dict[str, list[float]]:
    """The tuner's rescoring for CatBoost: every repeat's folds trained for exactly
    ``rounds`` rounds, with random seed ``seed + r`` on repeat ``r``."""
    units: dict[str, list[float]] = {m: [] for m in metrics}
    for r, data in enumerate(repeats.data):
        params = dict(_params(loss, drawn, seed + r, n_jobs), iterations=rounds)
        for f in data.folds:
            model = _fit(params, _pool(task.X[f.train], task.y[f.train], f.group_train))
            s = _predict(model, task.X[f.valid])
            for m in metrics:
                units[m].append(score(m, task.y[f.valid], s, f.group_valid))
    return units


def _round(v: Any) -> Any:
    return float(f"{v:.{DIGITS}g}") if isinstance(v, float) and v != 0.0 else v


def run_catboost(task: Task, folds: list[Fold], cfg: TuneConfig, storage: Any, fp: str,
                 progress: Progress, repeats: RepeatFolds | None = None) -> list[StudyResult]:
    """Tune, pick, rescore and refit each of CatBoost's :data:`CATBOOST_LOSSES` on ``task``.

    Each loss is one resumable Optuna study in ``storage`` (named like the tuner's, with
    booster ``catboost``), ``cfg.trials`` trials of :data:`SPACE` on ``folds``, each
    fold early-stopped on its validation rows by the task's first metric (``cfg.metric``
    when given). Its ``cfg.finalists`` best trials are rescored on ``repeats`` (each
    repeat another random seed), the best is refit on the whole tuning part and
    scored on the held-out split.

    Parameters
    ----------
    task : Task
        A ranking task with queries (not a click log).
    folds : list of Fold
        The tuner's folds of the task.
    cfg : TuneConfig
    storage : optuna storage
    fp : str
        The task's data fingerprint.
    progress : Progress
    repeats : RepeatFolds, optional
        The tuner's fresh folds (made here when None).

    Returns
    -------
    list of StudyResult
        Keys ``"catboost:YetiRank"``, ``"catboost:LambdaMart"``, ``"catboost:QueryRMSE"``.

    Examples
    --------
    ``gbrank tune --baselines catboost`` runs it beside the studies (it trains, so not
    here):

    >>> res = run_catboost(task, make_folds(task, 3), TuneConfig(trials=6), storage,
    ...                    task.fingerprint(), Progress(False))  # doctest: +SKIP
    >>> [r.key for r in res]  # doctest: +SKIP
    ['catboost:YetiRank', 'catboost:LambdaMart', 'catboost:QueryRMSE']
    """
    require("catboost")
    optuna = require("optuna")
    target = task.metrics[0]
    hib = get_metric(target).higher_is_better
    if repeats is None:
        repeats = RepeatFolds(task, cfg.n_folds, cfg.repeats, cfg.seed, "lightgbm", cfg.n_jobs)
    metrics = tuple(dict.fromkeys((target, *task.metrics)))
    out = []
    for loss in CATBOOST_LOSSES:
        key = PREFIX + loss
        name = study_name(task.name, fp, "catboost", loss, target, cfg.budget(task.clicks))
        res = StudyResult(task.name, key, target, True, "done", study=name,
                          higher_is_better=hib)

        def fn(trial, loss=loss):
            drawn = {p.name: p.suggest(trial, "", {}) for p in SPACE}
            fold_scores, iters = _fold_scores(task, folds, loss, drawn, target, cfg)
            trial.set_user_attr("folds", fold_scores)
            trial.set_user_attr("best_iters", iters)
            return float(np.mean(fold_scores[target]))

        if cfg.run_trials:
            study = optuna.create_study(
                study_name=name, storage=storage, load_if_exists=True,
                direction="maximize" if hib else "minimize",
                sampler=seeded_tpe(stable_seed(name, cfg.seed),
                                   n_startup_trials=min(5, max(2, cfg.trials // 3))))
            with study_lock(storage, name):  # a new study starts at CatBoost's defaults
                if not study.get_trials(deepcopy=False):
                    study.enqueue_trial(DEFAULTS[loss], skip_if_exists=True)
            done0 = sum(state_counts(study)[:2])
            remaining = max(0, cfg.trials - done0)
            res.n_here = run_budget(study, fn, cfg.trials, storage=storage,
                                    timeout=cfg.timeout,
                                    max_trials=remaining + max(3, remaining),
                                    catch=(ValueError, FloatingPointError))
        else:
            try:
                study = optuna.load_study(study_name=name, storage=storage)
            except KeyError:
                res.status, res.message = "no trials", NO_STUDY.format(name)
                out.append(res)
                continue
        res.n_complete, res.n_pruned, res.n_fail = state_counts(study)
        S = optuna.trial.TrialState
        complete = study.get_trials(deepcopy=False, states=(S.COMPLETE,))
        res.seconds = sum((t.datetime_complete - t.datetime_start).total_seconds()
                          for t in complete if t.datetime_start and t.datetime_complete)
        if not complete:
            res.status, res.message = "no trials", "no trial completed"
            out.append(res)
            continue
        res.values = [float(t.value) for t in complete]
        res.best_trial, res.best_value = study.best_trial.number, float(study.best_value)
        res.folds = {k: list(map(float, v))
                     for k, v in study.best_trial.user_attrs["folds"].items()}
        if not cfg.report:
            out.append(res)
            continue
        t0 = time.perf_counter()
        sign = 1.0 if hib else -1.0
        fins = finalists(study, cfg.finalists)
        for f in fins:
            # Stored in the study as the tuner's picks are, so a report from the stored
            # study (--report-only) trains no finalist again.
            key_f = f"{RESCORED}:{f.number}"
            spec = f"{repeats.spec}:rounds{f.rounds}:seed{cfg.seed}"
            stored = study.user_attrs.get(key_f)
            if stored and stored.get("spec") == spec and all(
                    m in stored["units"] for m in metrics):
                f.units = {m: list(map(float, stored["units"][m])) for m in metrics}
                continue
            drawn = {k: _round(v) for k, v in f.params.items()}
            f.units = _rescore(task, repeats, loss, drawn, f.rounds, metrics, cfg.seed,
                               cfg.n_jobs)
            study.set_user_attr(key_f, {"spec": spec, "units": f.units})
        fins.sort(key=lambda f: -sign * f.estimate(target))
        res.rescore_seconds = time.perf_counter() - t0
        chosen = fins[0]
        res.pick_trial, res.rounds, res.best_params = (chosen.number, chosen.rounds,
                                                       dict(chosen.params))
        res.units = chosen.units
        res.finalists = [{"trial": f.number, "cv": f.cv, "rescored": f.estimate(target),
                          "rounds": f.rounds} for f in fins]
        drawn = {k: _round(v) for k, v in chosen.params.items()}
        res.booster_params = dict(_params(loss, drawn, cfg.seed, cfg.n_jobs),
                                  iterations=chosen.rounds)
        model = _fit(res.booster_params, _pool(task.X, task.y, task.group))
        s_test = _predict(model, task.X_test)
        res.test = {m: score(m, task.y_test, s_test, task.group_test) for m in metrics}
        if cfg.save_models:
            from pathlib import Path

            path = Path(cfg.out_dir) / "tune" / "models" / name
            path.mkdir(parents=True, exist_ok=True)
            model.save_model(str(path / "model.cbm"))
            res.model_path = str(path / "model.cbm")
        res.message = f"CatBoost {loss}"
        progress.line(f"{task.name} / {key}: pick: trial {chosen.number}; {target} "
                      f"{res.estimate:.4f} over {repeats.n_units} units, test "
                      f"{res.test[target]:.4f} ({res.n_complete} trials, "
                      f"{res.seconds + res.rescore_seconds:.0f} s)")
        out.append(res)
    return out
