"""``--anchor``: Optuna's own ``LightGBMTunerCV`` (optuna-integration, stepwise search of
LightGBM parameters) on native ``lambdarank``, on the same folds and with the same time
budget as the tuner's work on the task; its best configuration is rescored on the same
fresh folds as the tuner's picks and refit like them, so the report compares it with
the tuner's recommendation unit by unit and on the held-out split."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._train import train
from gbrank.tuning._cv import LGB_DATASET_PARAMS, score
from gbrank.tuning._folds import Fold
from gbrank.tuning._pick import RepeatFolds, rescore_params
from gbrank.tuning._results import StudyResult
from gbrank.tuning._tasks import Task

__all__ = ["run_anchor"]

KEY = "anchor:LightGBMTunerCV"


def run_anchor(task: Task, folds: list[Fold], time_budget: float,
               repeats: RepeatFolds | None = None, *, max_rounds: int, patience: int,
               n_jobs: int = 1, seed: int = 0) -> StudyResult:
    """Tune native ``lambdarank`` with ``LightGBMTunerCV`` for ``time_budget`` seconds on
    ``folds``; score each fold's booster with gbrank's metrics (its CV as tuned), rescore
    the best configuration on ``repeats`` with its rounds fixed (as the tuner's picks
    are), refit on the tuning part and score the test split.

    Parameters
    ----------
    task : Task
    folds : list of Fold
        The tuner's folds of the task.
    time_budget : float
        Seconds (``LightGBMTunerCV``'s ``time_budget``; its step in progress finishes).
    repeats : RepeatFolds, optional
        The fresh folds the tuner's finalists were rescored on; None: no rescoring.
    max_rounds, patience : int
        The rounds cap and early-stopping patience of the tuner's studies.
    n_jobs, seed : int

    Returns
    -------
    StudyResult
        Key ``"anchor:LightGBMTunerCV"``.

    Examples
    --------
    ``gbrank tune --anchor`` runs it beside the studies (it trains, so not here):

    >>> res = run_anchor(task, make_folds(task, 3), 60.0, max_rounds=100,
    ...                  patience=15)  # doctest: +SKIP
    """
    lgb = require("lightgbm")

    oi = require("optuna_integration")
    optuna = require("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    res = StudyResult(task.name, KEY, "ndcg@10", True, "done", best_trial=0, pick_trial=0)
    n = task.y.size
    ds = lgb.Dataset(task.X, task.y, group=task.lgb_group(task.group, n),
                     params=dict(LGB_DATASET_PARAMS), feature_name=task.feature_names or "auto",
                     free_raw_data=False)
    params: dict[str, Any] = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10],
                              "verbose": -1, "num_threads": n_jobs, "seed": seed}
    t0 = time.perf_counter()
    tuner = oi.lightgbm.LightGBMTunerCV(
        params, ds, folds=[(f.train, f.valid) for f in folds], num_boost_round=max_rounds,
        callbacks=[lgb.early_stopping(patience, verbose=False)],
        time_budget=int(time_budget), optuna_seed=seed, return_cvbooster=True,
        show_progress_bar=False)
    tuner.run()
    res.seconds = time.perf_counter() - t0
    S = optuna.trial.TrialState
    res.n_complete = sum(t.state == S.COMPLETE for t in tuner.study.trials)
    res.n_pruned = sum(t.state == S.PRUNED for t in tuner.study.trials)
    res.n_fail = sum(t.state == S.FAIL for t in tuner.study.trials)
    cvb = tuner.get_best_booster()
    best_it = int(cvb.best_iteration) or max_rounds
    res.rounds = best_it
    res.folds = {m: [] for m in task.metrics}
    for f, bst in zip(folds, cvb.boosters, strict=True):
        s = bst.predict(task.X[f.valid], num_iteration=best_it)
        for m in task.metrics:
            res.folds[m].append(score(m, task.y[f.valid], s, f.group_valid))
    res.best_value = float(np.mean(res.folds["ndcg@10"]))
    res.best_params = dict(tuner.best_params)
    # The configuration without its validation metric: trained for best_it rounds.
    bp = {k: v for k, v in tuner.best_params.items() if k not in ("metric", "eval_at")}
    bp.update(metric="None", verbose=-1, seed=seed)
    res.booster_params = bp
    if repeats is not None:
        t1 = time.perf_counter()
        res.units = rescore_params(repeats, bp, None, best_it,
                                   tuple(dict.fromkeys(("ndcg@10", *task.metrics))))
        res.rescore_seconds = time.perf_counter() - t1
    model = train("lightgbm", dict(bp, num_threads=n_jobs), None, ds, rounds=best_it).model
    s_test = model.predict(task.X_test)
    res.test = {m: score(m, task.y_test, s_test, task.group_test) for m in task.metrics}
    res.message = (f"LightGBMTunerCV, {res.n_complete} trials in {res.seconds:.0f} s "
                   f"(budget {int(time_budget)} s)")
    return res
