"""One study: the gradient gate, kernels compiled before the clock starts, the resumable
Optuna study on the shared folds within the trial budget, then the pick of the
recommended configuration (finalists rescored on fresh folds), its refit, held-out test
scores, the exported model and the plots."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._fields import LIGHTGBM_MAX_QUERY
from gbrank.metrics import get_metric
from gbrank.tuning._booster_spaces import starting_points
from gbrank.tuning._budget import ADMITTED, run_budget, state_counts
from gbrank.tuning._config import TuneConfig
from gbrank.tuning._cut import (
    as_offsets,
    as_probability,
    decides_by_offsets,
    margin_of,
    reads_cut,
)
from gbrank.tuning._cv import FoldData, fit_full, run_cv, score, score_all
from gbrank.tuning._export import export_model
from gbrank.tuning._gate import gate
from gbrank.tuning._pick import RepeatFolds, configuration, pick
from gbrank.tuning._progress import Progress
from gbrank.tuning._results import StudyResult
from gbrank.tuning._sampler import seeded_tpe, stable_seed
from gbrank.tuning._spaces import Candidate, build_objective, kernel_variants, suggest_params
from gbrank.tuning._storage import NO_STUDY, study_lock, study_name
from gbrank.tuning._tasks import Task

__all__ = ["run_study"]


def _objective_fn(cand: Candidate, cfg: TuneConfig, data: FoldData):
    """The Optuna objective of ``cand``'s study: a trial's parameters, its CV on the
    shared folds (reported for pruning), the fold scores kept as user attributes."""
    optuna = require("optuna")
    y_train = data.task.y

    def fn(trial):
        bp, op = suggest_params(trial, cand, cfg.booster, y_train)
        obj = None if cand.is_native else build_objective(cand, op, cfg.seed)

        def report(step, value):
            trial.report(float(value), step)
            if trial.should_prune():
                raise optuna.TrialPruned()

        max_rounds, patience = cfg.rounds(data.task.clicks)
        try:
            res = run_cv(data, bp, obj, cand.target, max_rounds=max_rounds,
                         patience=patience, report=report)
        except Exception as exc:
            # A failed trial, and why (for the report). A booster's own error
            # (LightGBMError, XGBoostError) fails the trial like a ValueError, instead of
            # ending the whole run; any other error ends it.
            own = isinstance(exc, (ValueError, FloatingPointError))
            if not own and type(exc).__module__.split(".")[0] not in ("lightgbm", "xgboost"):
                raise
            why = f"{type(exc).__name__}: {exc}"
            trial.set_user_attr("error", why[:500])
            if own:
                raise
            raise ValueError(why) from exc
        trial.set_user_attr("folds", res.folds)
        trial.set_user_attr("best_iters", res.best_iters)
        return res.value

    return fn


def _warm_kernels(task: Task, cand: Candidate, data: FoldData, seed: int) -> None:
    """Compile, before the study's clock starts, every kernel its trials can run: each
    kernel-selecting variant of the objective on the first fold's training rows (the
    serial or threaded form their size selects) and the task's metrics on its
    validation rows. On an empty numba cache this is most of a first study's time,
    which would otherwise come out of its ``timeout``."""
    _, y, group, _, yv, gv = data.fold_arrays(0)
    rng = np.random.default_rng(seed)
    k = task.num_class  # K scores per row for multiclass, else 1

    def scores(n: int) -> np.ndarray:
        return rng.standard_normal(n) if k == 1 else rng.standard_normal((n, k))

    pt, pv = data.fold_positions(0)
    for params in kernel_variants(cand):
        obj = build_objective(cand, params, seed)
        if obj._uses_positions():  # a click log's position-bias variants
            obj.grad_hess(y, scores(y.size), group, position=pt)
        else:
            obj.booster_grad_hess(y, scores(y.size), group)
    sv = scores(yv.size)
    for name in task.metrics:
        score(name, yv, sv, gv, pv, task.propensity)


def run_study(task: Task, cand: Candidate, cfg: TuneConfig, data: FoldData, storage: Any,
              fp: str, progress: Progress, repeats: RepeatFolds | None = None
              ) -> StudyResult:
    """Gate, tune, pick, refit and report one candidate objective of one task.

    A gbrank objective that fails the gradient gate is not tuned (status
    ``"rejected"``). Otherwise the study named by the task, its data fingerprint ``fp``,
    the booster, the candidate and (when it is not the objective's own) the metric it
    is judged on is created or resumed in ``storage`` and run within the shared budget
    of ``cfg.trials`` (``cfg.run_trials=False``: only loaded), in the metric's
    direction. With ``cfg.report``, the study's ``cfg.finalists`` best trials are
    rescored on ``repeats`` (made here when None) and the pick
    (:func:`~gbrank.tuning._pick.pick`) is refit on the whole tuning part and scored on
    the held-out test split; the model is exported and the plots drawn as ``cfg``
    asks.

    Parameters
    ----------
    task : Task
    cand : Candidate
    cfg : TuneConfig
    data : FoldData
        The task's tuning folds (every study of the task shares them).
    storage : optuna storage
    fp : str
        The task's data fingerprint (:meth:`Task.fingerprint`).
    progress : Progress
    repeats : RepeatFolds, optional
        The fresh folds finalists are rescored on (shared by the task's studies).

    Returns
    -------
    StudyResult

    Examples
    --------
    :func:`~gbrank.tuning.tune_task` runs it for every candidate of a task:

    >>> res = run_study(task, cand, cfg, data, storage, task.fingerprint(),
    ...                 Progress(False))  # doctest: +SKIP
    """
    optuna = require("optuna")
    label = f"{task.name} / {cand.key}"
    hib = get_metric(cand.target).higher_is_better
    res = StudyResult(task.name, cand.key, cand.target, cand.is_native, "done",
                      own_target=cand.own_target, higher_is_better=hib)
    too_long = _list_too_long(task, cand, cfg.booster)
    if too_long:
        progress.line(f"{label}: {too_long}")
        res.status, res.message = "no trials", too_long
        return res
    if not cand.is_native:
        g = gate(cand.base, task, cand.key, seed=cfg.seed)
        if not g.ok:
            progress.line(g.message)
            res.status, res.message = "rejected", g.message
            return res
    name = study_name(task.name, fp, cfg.booster, cand.key,
                      None if cand.target == cand.own_target else cand.target,
                      cfg.budget(task.clicks), held_out_cut=reads_cut(cand.target)
                      or decides_by_offsets(cand.target))
    res.study = name
    S = optuna.trial.TrialState
    if cfg.run_trials:
        study = optuna.create_study(
            study_name=name, storage=storage, direction="maximize" if hib else "minimize",
            load_if_exists=True,
            sampler=seeded_tpe(stable_seed(name, cfg.seed),
                               n_startup_trials=min(5, max(2, cfg.trials // 3))),
            pruner=optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=20))
        study.set_user_attr("task", task.name)
        study.set_user_attr("objective", cand.key)
        study.set_user_attr("metric", cand.target)
        done0 = sum(state_counts(study)[:2])
        # A new study: the starting points first, queued once however many workers
        # open it at the same moment.
        with study_lock(storage, name):
            if not study.get_trials(deepcopy=False):
                for point in starting_points(cfg.booster, cand.kind, cand.groupless):
                    study.enqueue_trial(point, skip_if_exists=True)
        if done0 < cfg.trials:
            _warm_kernels(task, cand, data, cfg.seed)
        t_start = time.perf_counter()
        n_here = 0

        def cb(study_, trial_):
            nonlocal n_here
            n_here += trial_.user_attrs.get(ADMITTED) == trial_.number
            done = sum(state_counts(study_)[:2])
            try:
                best = study_.best_value
            except ValueError:
                best = None
            progress.trial(label, min(done, cfg.trials), cfg.trials, best,
                           (time.perf_counter() - t_start) / max(1, n_here))

        # This process starts at most twice the trials missing when it began (failed
        # trials are retried, but a study whose every trial fails must end).
        remaining = max(0, cfg.trials - done0)
        res.n_here = run_budget(
            study, _objective_fn(cand, cfg, data), cfg.trials, storage=storage,
            timeout=cfg.timeout, max_trials=remaining + max(3, remaining),
            catch=(ValueError, FloatingPointError), callbacks=[cb])
    else:
        try:
            study = optuna.load_study(study_name=name, storage=storage)
        except KeyError:
            res.status, res.message = "no trials", NO_STUDY.format(name)
            progress.line(f"{label}: {res.message}")
            return res
    res.n_complete, res.n_pruned, res.n_fail = state_counts(study)
    res.seconds = _trial_seconds(study)
    complete = study.get_trials(deepcopy=False, states=(S.COMPLETE,))
    if not complete:
        errors = [t.user_attrs["error"] for t in study.get_trials(
            deepcopy=False, states=(S.FAIL,)) if "error" in t.user_attrs]
        res.status, res.message = "no trials", "no trial completed" + (
            f"; every trial failed, the first with {errors[0]}" if errors else "")
        progress.line(f"{label}: {res.message}")
        return res
    res.values = [float(t.value) for t in complete]
    best = study.best_trial
    res.best_trial = best.number
    res.best_value = float(best.value)
    res.folds = {k: list(map(float, v)) for k, v in best.user_attrs["folds"].items()}
    here = f"; {res.n_here} run by this process" if cfg.run_trials else ""
    progress.line(f"{label}: best CV {cand.target} {res.best_value:.4f} "
                  f"({res.n_complete} complete, {res.n_pruned} pruned, {res.n_fail} failed"
                  f"{here})")
    if not cfg.report:
        return res
    # The pick: the finalists rescored on fresh folds with their refit's rounds.
    if repeats is None:
        repeats = RepeatFolds(task, cfg.n_folds, cfg.repeats, cfg.seed, cfg.booster, cfg.n_jobs)
    fins, res.rescore_seconds = pick(study, cand, repeats, task.metrics, cfg.booster,
                                     cfg.seed, cfg.finalists)
    chosen = fins[0]
    res.pick_trial, res.rounds, res.best_params = chosen.number, chosen.rounds, chosen.params
    res.units = chosen.units
    res.cuts = {m: as_probability(c) if reads_cut(m) else as_offsets(c)
                for m, c in chosen.cuts.items()}
    res.finalists = [{"trial": f.number, "cv": f.cv, "rescored": f.estimate(cand.target),
                      "rounds": f.rounds} for f in fins]
    progress.line(f"{label}: pick: trial {chosen.number}, the best of {len(fins)} "
                  f"finalists rescored; {cand.target} {res.estimate:.4f} over "
                  f"{repeats.n_units} units (as tuned {chosen.cv:.4f}; "
                  f"{res.rescore_seconds:.0f} s)")
    # Refit the pick on the whole tuning part; score the held-out test split.
    bp, op = configuration(chosen.params, cand, cfg.booster, task.y, cfg.seed)
    res.booster_params, res.objective_params = bp, op
    if op.get("position_bias") == "ipw":  # the click log's propensities, in the code too
        rho = cand.propensity
        rho = dict(rho) if isinstance(rho, dict) else [float(r) for r in np.atleast_1d(rho)]
        res.objective_params = {**op, "propensity": rho}
    obj = None if cand.is_native else build_objective(cand, op, cfg.seed, whole_log=True)
    model, init, s_test = fit_full(task, cfg.booster, bp, obj, res.rounds, cfg.n_jobs)
    gte = task.group_test
    # A click log's held-out part of true grades is judged by the ranking metrics on
    # them; held-out clicks by the click metric.
    names = task.test_metrics if task.graded_test else (*task.metrics, cand.target)
    # Judged where the code decides: the printed thresholds (as margins) or offsets.
    at = {m: margin_of(c) if reads_cut(m) else c for m, c in res.cuts.items()}
    res.test.update(score_all(names, cand.target, task.y_test, s_test, gte,
                              task.position_test, task.propensity, cuts=at))
    slug = cand.key.replace(":", "_")
    if cfg.save_models:
        res.model_path = export_model(res, task, cfg, model, obj, init, s_test, bp)
    if cfg.plots:
        from gbrank.tuning._plots import study_plots

        res.plots = [str(p) for p in study_plots(
            study, Path(cfg.out_dir) / "tune" / task.name, slug, cand.target,
            title=f"{task.name} / {cand.key}", finalists=res.finalists)]
    return res


def _list_too_long(task: Task, cand: Candidate, booster: str) -> str:
    """Why LightGBM's own lambdarank cannot train on ``task`` (a list, or the one list of
    group-less ranking, over its limit), or "" when it can."""
    if not (booster == "lightgbm" and cand.key == "native:lambdarank"):
        return ""
    longest = int(task.y.size if task.group is None else np.max(task.group))
    if longest <= LIGHTGBM_MAX_QUERY:
        return ""
    return (f"LightGBM's lambdarank refuses a query of more than {LIGHTGBM_MAX_QUERY:,} "
            f"rows, and this task's {'one list' if task.group is None else 'longest'} "
            f"holds {longest:,}: not tuned (gbrank's objectives and native:rank_xendcg "
            "have no such limit)")


def _trial_seconds(study: Any) -> float:
    """Seconds spent in the study's complete and pruned trials, by every process."""
    optuna = require("optuna")
    S = optuna.trial.TrialState
    total = 0.0
    for t in study.get_trials(deepcopy=False, states=(S.COMPLETE, S.PRUNED)):
        if t.datetime_start and t.datetime_complete:
            total += (t.datetime_complete - t.datetime_start).total_seconds()
    return total
