"""The tuner: for every task and candidate objective, a study (gate, resumable Optuna
study on shared cross-validation folds, refit of the best parameters, score on the
held-out test split); and the anchor study beside them when asked.

The pieces live in their own modules (:mod:`~gbrank.tuning._config`,
:mod:`~gbrank.tuning._study`, :mod:`~gbrank.tuning._budget`, ...); ``TuneConfig``,
``StudyResult`` and ``run_budget`` are importable from here as well."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from gbrank._deps import require
from gbrank.tuning._anchor import run_anchor
from gbrank.tuning._budget import run_budget
from gbrank.tuning._config import ANCHOR_MIN_SECONDS, TuneConfig
from gbrank.tuning._cv import FoldData, check_feature_names
from gbrank.tuning._folds import make_folds
from gbrank.tuning._pick import RepeatFolds
from gbrank.tuning._progress import Progress
from gbrank.tuning._results import StudyResult
from gbrank.tuning._spaces import candidates_for, click_candidates
from gbrank.tuning._storage import default_storage_url, open_storage
from gbrank.tuning._study import run_study
from gbrank.tuning._tasks import Task, with_metric
from gbrank.tuning._verdict import CATBOOST_NOT_RUN, catboost_applies

__all__ = ["TuneConfig", "StudyResult", "run_budget", "tune", "tune_task"]


def tune_task(task: Task, cfg: TuneConfig, progress: Progress | None = None,
              storage: Any = None) -> list[StudyResult]:
    """Run every candidate study of one task (gate, study, refit, test score, plots).

    The task's ``feature_names`` must suit ``cfg.booster``: a name the booster would
    refuse, or change in its saved model (LightGBM: a space, an empty name), is a
    ValueError naming it, before any trial.

    Parameters
    ----------
    task : Task
    cfg : TuneConfig
    progress : Progress, optional
        Where progress lines go (default: a new one from ``cfg``).
    storage : optuna storage, optional
        Default: ``cfg.storage``, else SQLite in ``cfg.out_dir``.

    Returns
    -------
    list of StudyResult
        One per candidate objective (the gbrank ones and the booster's own), the
        anchor's when ``cfg.anchor`` is set, and one per CatBoost objective with
        ``cfg.baselines=["catboost"]``.

    Examples
    --------
    Studies train boosters (seconds to minutes), so this example is not run here:

    >>> from pathlib import Path
    >>> from gbrank.datasets import make_ranking
    >>> from gbrank.tuning import TuneConfig, task_from_arrays, tune_task
    >>> X, y, group = make_ranking(n_queries=200, rows_per_query=20, n_features=10)
    >>> task = task_from_arrays("my_ranking", X, y, group)
    >>> cfg = TuneConfig(trials=12, objectives=["lambdarank:ndcg", "ranknet"],
    ...                  out_dir=Path("studies"))
    >>> results = tune_task(task, cfg)  # doctest: +SKIP
    >>> [r.key for r in results if r.status == "done"]  # doctest: +SKIP
    ['lambdarank:ndcg', 'ranknet', 'native:lambdarank', 'native:rank_xendcg']
    """
    check_feature_names(task.feature_names, cfg.booster)
    if cfg.metric is not None:  # the task is judged first by it (checked for its kind)
        task.metrics = with_metric(task, cfg.metric).metrics
    optuna = require("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    progress = progress or Progress(cfg.progress, cfg.worker)
    if storage is None:
        storage = open_storage(cfg.storage or default_storage_url(cfg.out_dir),
                               cfg.heartbeat, cfg.grace)
    if task.clicks:
        cands = _click_candidates(task, cfg, progress)
    else:
        cands = candidates_for(task.name, task.kind, cfg.booster, cfg.objectives,
                               cfg.custom, cfg.quick, cfg.metric,
                               num_class=task.num_class if task.kind == "multiclass" else None,
                               groupless_headline=task.metrics[0] if task.groupless else None)
    folds = make_folds(task, cfg.n_folds, cfg.seed)
    data = FoldData(task, folds, cfg.booster, reuse=True, n_jobs=cfg.n_jobs)
    repeats = RepeatFolds(task, cfg.n_folds, cfg.repeats, cfg.seed, cfg.booster, cfg.n_jobs)
    fp = task.fingerprint()
    results = []
    t0 = time.perf_counter()
    for cand in cands:
        results.append(run_study(task, cand, cfg, data, storage, fp, progress, repeats))
    if cfg.anchor and task.clicks:
        progress.line(f"{task.name} / anchor: not run on a click log (LightGBMTunerCV "
                      "judges true labels)")
    elif cfg.anchor and cfg.report and task.kind == "ranking" and cfg.booster == "lightgbm":
        # The same wall time as the tuner's work on the task: this process's (gates,
        # trials, rescoring, refits), or, when the studies were run elsewhere, their
        # trials and rescoring, whichever is longer.
        # (At least ANCHOR_MIN_SECONDS: LightGBMTunerCV's steps need some time.)
        budget = max(time.perf_counter() - t0,
                     sum(r.seconds + r.rescore_seconds for r in results)) or 60.0
        budget = float(max(ANCHOR_MIN_SECONDS, int(budget)))
        progress.line(f"{task.name} / anchor: LightGBMTunerCV on native lambdarank, "
                      f"{budget:.0f} s budget (the tuner's time on this task, at least "
                      f"{ANCHOR_MIN_SECONDS} s)")
        max_rounds, patience = cfg.rounds(task.clicks)
        results.append(run_anchor(task, folds, budget, repeats, max_rounds=max_rounds,
                                  patience=patience, n_jobs=cfg.n_jobs, seed=cfg.seed))
    if "catboost" in (cfg.baselines or ()):
        if not catboost_applies(task):
            progress.line(f"{task.name} / catboost: {CATBOOST_NOT_RUN}")
        else:
            from gbrank.tuning._catboost import run_catboost

            results += run_catboost(task, folds, cfg, storage, fp, progress, repeats)
    return results


def _click_candidates(task: Task, cfg: TuneConfig, progress: Progress) -> list:
    """A click log's candidates, all judged on its click metric. XGBoost's Unbiased
    LambdaMART reads a row's place within its query as its position, so it is left out,
    with a line saying why, unless every query of the tuning part lists its rows at
    positions 1, 2, … in that order (on a cascade-like log the natives read no
    positions, and it stays)."""
    cands = click_candidates(cfg.booster, task.propensity, cfg.objectives, cfg.custom,
                             cfg.quick, task.metrics[0])
    ident = _identifiability(task)
    if ident is not None and ident.n_identifying == 0:
        _note(task, progress, "position_bias 'unbiased' and 'additive' left out of "
              f"gbrank's studies: this log cannot identify position effects ({ident}); "
              "searched: no correction and 'ipw' with the given propensities. The "
              "booster's own corrections learn from the same log")
        cands = [c if c.is_native else replace(c, identifiable=False) for c in cands]
    users = _users(task)
    if users is not None and users.cascade_like:
        from gbrank.tuning._spaces import NATIVE

        _note(task, progress, "no position-bias correction searched: this log's "
              f"sessions look like cascade users' ({users}), and every correction, "
              "gbrank's and the booster's own, assumes the position-based model (on "
              "such a log LightGBM's lambdarank with positions lost 0.013 NDCG@10 to the "
              "same without; docs/evidence.md, 'Click corrections'): gbrank's studies "
              "train without position_bias, the booster's own objective without "
              "positions")
        cands = [replace(c, native=replace(NATIVE[cfg.booster][c.native.objective],
                                           target=c.target))
                 if c.is_native else replace(c, cascade_like=True) for c in cands]
    if cfg.booster == "xgboost" and any(c.is_native and c.native.fixed.get(
            "lambdarank_unbiased") for c in cands) and not in_display_order(
            task.position, task.group, task.y.size):
        progress.line(f"{task.name} / native:rank:ndcg: left out: XGBoost's "
                      "lambdarank_unbiased takes a row's place within its query for its "
                      "position, and this log's rows are not at positions 1, 2, … in order")
        cands = [c for c in cands if not c.is_native]
    return cands


def _note(task: Task, progress: Progress, text: str) -> None:
    """Say what the data changed in the search, now and in SUMMARY.md (once a task)."""
    progress.line(f"{task.name}: {text}")
    if text not in task.notes:
        task.notes.append(text)


def _users(task: Task):
    """Whether the click log's sessions look like cascade users'
    (:func:`gbrank.datasets.multi_click_sessions`); ``None`` when its rows cannot be read
    as sessions of 0/1 clicks."""
    from gbrank.datasets import multi_click_sessions

    if task.group is None:
        return None
    try:
        return multi_click_sessions(task.y, task.group, task.position)
    except ValueError:  # click counts, not sessions of clicks
        return None


# Beyond this many feature cells the rows are too many to copy and sort for the check
# (the same figure as the click simulator's densifying cap, for another reason).
_MAX_COMPARED_CELLS = 50_000_000


def _identifiability(task: Task):
    """How much the click log identifies position effects (a document is a distinct
    feature row: query–document features, so the groups, which may be sessions of one
    query, are not needed; see :func:`gbrank.datasets.position_identifiability`);
    ``None`` when the rows cannot be compared (too many cells, or features that are not
    numbers): then nothing is left out of the search."""
    from gbrank.datasets import position_identifiability

    if task.X.shape[0] * task.X.shape[1] > _MAX_COMPARED_CELLS:
        return None
    try:
        return position_identifiability(task.position, X=task.X)
    except (TypeError, ValueError):  # features that are not numbers (categories, text)
        return None


def in_display_order(position: Any, group: Any, n: int) -> bool:
    """Whether every query's rows are at positions 1, 2, … in row order (group-less:
    the rows are one query).

    Examples
    --------
    >>> from gbrank.tuning._runner import in_display_order
    >>> in_display_order([1, 2, 3, 1, 2], [3, 2], 5), in_display_order([2, 1], [2], 2)
    (True, False)
    """
    import numpy as np

    sizes = np.asarray([n] if group is None else group, dtype=np.int64)
    start = np.repeat(np.cumsum(sizes) - sizes, sizes)
    return bool(np.array_equal(np.asarray(position), np.arange(n) - start + 1))


def tune(tasks: list[Task], cfg: TuneConfig) -> list[StudyResult]:
    """Tune every task; return one :class:`StudyResult` per (task, candidate).

    What ``gbrank tune`` runs: every task through :func:`tune_task`, with one storage
    and one progress display for all of them.

    Parameters
    ----------
    tasks : list of Task
    cfg : TuneConfig

    Returns
    -------
    list of StudyResult

    Examples
    --------
    The embedded default tasks, as ``gbrank tune --quick`` runs them (this trains many
    boosters, so it is not run here):

    >>> from pathlib import Path
    >>> from gbrank.tuning import TuneConfig, default_tasks, tune
    >>> cfg = TuneConfig(quick=True, trials=3, out_dir=Path("studies"))
    >>> results = tune(default_tasks(quick=True), cfg)  # doctest: +SKIP
    >>> sorted({r.task for r in results})  # doctest: +SKIP
    ['binary', 'demand_levels', 'multiclass', 'ranking']
    """
    progress = Progress(cfg.progress, cfg.worker)
    storage = open_storage(cfg.storage or default_storage_url(cfg.out_dir), cfg.heartbeat,
                           cfg.grace)
    out = []
    for task in tasks:
        progress.line(f"task {task.name}: {task.description or task.kind} "
                      f"({task.y.size} tuning rows, {task.y_test.size} test rows)")
        out += tune_task(task, cfg, progress, storage)
    return out
