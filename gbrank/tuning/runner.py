"""The tuner: for every task and candidate objective, a gradient gate, then a resumable
Optuna study on shared cross-validation folds, then a refit of the best parameters and
a score on the held-out test split."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank._validation import check_bool, check_choice, check_integer, check_number
from gbrank.tuning.cv import (
    FoldData,
    check_feature_names,
    fit_full,
    run_cv,
    save_native,
    score,
)
from gbrank.tuning.folds import make_folds
from gbrank.tuning.gate import gate
from gbrank.tuning.spaces import (
    Candidate,
    build_objective,
    candidates_for,
    kernel_variants,
    suggest_params,
)
from gbrank.tuning.storage import default_storage_url, open_storage, study_lock, study_name
from gbrank.tuning.tasks import Task

__all__ = ["TuneConfig", "StudyResult", "run_budget", "tune", "tune_task"]


# How a saved best model is served: the booster alone, the start and the link inside.
_SERVING_USAGE = {
    "lightgbm": {
        "binary": "probability = lightgbm.Booster(model_file='model.txt').predict(X); the "
                  "start (init_score) is in the trees",
        "ranking": "score = lightgbm.Booster(model_file='model.txt').predict(X)",
    },
    "xgboost": {
        "binary": "probability = xgboost.Booster(model_file='model.json')"
                  ".predict(xgboost.DMatrix(X)); the start (init_score) is in the trees",
        "ranking": "score = xgboost.Booster(model_file='model.json')"
                   ".predict(xgboost.DMatrix(X))",
    },
}


@dataclass
class TuneConfig:
    """Settings of one tuning run (the command line's flags).

    ``trials`` is the total per study, counting trials already in the storage (complete
    or pruned), so re-running resumes and stops at the total. ``timeout`` (seconds) caps
    each study of this run. ``objectives``: keys (``"lambdarank:err"``,
    ``"native:binary"``); ``None`` = the defaults of each task. ``custom``: extra
    objective instances by name (gated and tuned like the built-in ones).

    Many processes may run the same configuration on one ``storage`` (PostgreSQL, or
    SQLite on one machine): they share each study and its total exactly (see
    :func:`run_budget`). ``run_trials=False`` runs no trial (report from the stored
    studies); ``report=False`` skips the refit, test scores, models and plots (a worker
    that only adds trials). ``worker`` numbers a worker process in progress lines.
    """

    booster: str = "lightgbm"
    trials: int = 12
    timeout: float | None = None
    n_folds: int = 3
    max_rounds: int = 200
    patience: int = 20
    seed: int = 0
    storage: str | None = None
    out_dir: Path = Path("experiments/results")
    quick: bool = False
    n_jobs: int = 1
    objectives: list[str] | None = None
    custom: dict[str, Any] = field(default_factory=dict)
    heartbeat: int = 10
    grace: int | None = None
    anchor: bool = False
    save_models: bool = True
    plots: bool = True
    progress: bool = True
    run_trials: bool = True
    report: bool = True
    worker: int | None = None

    def __post_init__(self) -> None:
        # Checked here, once, for the CLI and the importable engine alike.
        check_choice(self.booster, "booster", ("lightgbm", "xgboost"))
        require(self.booster)  # before any work: an ImportError naming the extra
        for name, low in (("trials", 1), ("n_folds", 2), ("max_rounds", 1), ("patience", 1),
                          ("n_jobs", 1), ("heartbeat", 1)):
            check_integer(getattr(self, name), name, low)
        check_integer(self.grace, "grace", 1, allow_none=True)
        check_integer(self.worker, "worker", 0, allow_none=True)
        if not (check_bool(self.run_trials, "run_trials") or check_bool(self.report, "report")):
            raise ValueError("run_trials and report are both False: nothing to do")
        if self.timeout is not None:
            check_number(self.timeout, "timeout", 0.0, low_open=True)


@dataclass
class StudyResult:
    task: str
    key: str
    target: str
    native: bool
    status: str  # "done", "rejected", "no trials"
    message: str = ""
    study: str = ""
    n_complete: int = 0
    n_pruned: int = 0
    n_fail: int = 0
    seconds: float = 0.0
    n_here: int = 0  # trials this process ran (admitted into the budget)
    best_value: float | None = None
    folds: dict[str, list[float]] = field(default_factory=dict)
    best_params: dict[str, Any] = field(default_factory=dict)
    rounds: int = 0
    test: dict[str, float] = field(default_factory=dict)
    model_path: str = ""
    plots: list[str] = field(default_factory=list)

    @property
    def trials_per_minute(self) -> float:
        n = self.n_complete + self.n_pruned
        return 60.0 * n / self.seconds if self.seconds > 0 else float("nan")


class _Progress:
    """One updating line on a terminal; a quiet line every few trials elsewhere (CI)."""

    def __init__(self, enabled: bool, worker: int | None = None) -> None:
        self.enabled = enabled
        # Workers share the parent's terminal: plain lines, each naming its worker.
        self.tty = enabled and worker is None and sys.stdout.isatty()
        self.tag = "[tune]" if worker is None else f"[tune w{worker}]"
        self.t0 = time.perf_counter()

    def _fmt(self, sec: float) -> str:
        sec = max(0, int(sec))
        return f"{sec // 60}:{sec % 60:02d}"

    def trial(self, label: str, done: int, total: int, best: float | None, per_trial: float):
        if not self.enabled:
            return
        best_s = "—" if best is None else f"{best:.4f}"
        line = (f"{self.tag} {label}: {done}/{total} trials, best {best_s}, elapsed "
                f"{self._fmt(time.perf_counter() - self.t0)}, study remaining "
                f"~{self._fmt((total - done) * per_trial)}")
        if self.tty:
            print("\r" + line.ljust(110), end="", flush=True)
        elif done == total or done % 5 == 0:
            print(line, flush=True)

    def line(self, text: str) -> None:
        if self.enabled:
            print(("\n" if self.tty else "") + self.tag + " " + text, flush=True)


# Trial user attributes of the shared budget (see run_budget).
ADMITTED = "gbrank_admitted"  # the trial's own number: it holds a slot of the total
SURPLUS = "gbrank_surplus"  # asked when the total was already taken; failed unrun
WORKER = "gbrank_worker"  # "<host>:<pid>" of the process that ran the trial


def _is_surplus(t: Any) -> bool:
    return bool(t.user_attrs.get(SURPLUS))


def _state_counts(study: Any) -> tuple[int, int, int]:
    """Trials complete, pruned and failed (surplus trials, failed unrun, not counted)."""
    optuna = require("optuna")
    S = optuna.trial.TrialState
    c = [t.state for t in study.get_trials(deepcopy=False)
         if not (t.state == S.FAIL and _is_surplus(t))]
    return c.count(S.COMPLETE), c.count(S.PRUNED), c.count(S.FAIL)


def _seeded_tpe(seed: int, **tpe_kwargs: Any) -> Any:
    """A TPE sampler whose random state is ``seed`` combined with the trial's number.

    One seeded TPESampler per process would hand every worker the same random stream:
    workers that start together would run the same parameters. Seeding each trial from
    its number keeps a single process exactly reproducible and gives concurrent trials
    different draws (TPE keeps no other state between trials)."""
    optuna = require("optuna")

    class TrialSeededTPE(optuna.samplers.BaseSampler):
        def __init__(self) -> None:
            self._number: int | None = None
            self._tpe: Any = None

        def _at(self, trial: Any) -> Any:
            if trial.number != self._number:
                self._number = trial.number
                self._tpe = optuna.samplers.TPESampler(
                    seed=(seed + 1_000_003 * trial.number) % 2**32, **tpe_kwargs)
            return self._tpe

        def infer_relative_search_space(self, study, trial):
            return self._at(trial).infer_relative_search_space(study, trial)

        def sample_relative(self, study, trial, search_space):
            return self._at(trial).sample_relative(study, trial, search_space)

        def sample_independent(self, study, trial, param_name, param_distribution):
            return self._at(trial).sample_independent(study, trial, param_name,
                                                      param_distribution)

        def before_trial(self, study, trial):
            self._at(trial).before_trial(study, trial)

        def after_trial(self, study, trial, state, values):
            self._at(trial).after_trial(study, trial, state, values)

        def reseed_rng(self) -> None:  # the seed is the trial's number by design
            pass

    return TrialSeededTPE()


class _BudgetFull(Exception):
    """The trial was asked after the study's total had been taken by other workers."""


class _QuietSurplus(logging.Filter):
    """Drop Optuna's "Trial n failed" warnings (with traceback) for surplus trials."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: set[int] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        return not any(msg.startswith(f"Trial {n} failed") for n in self.numbers)


def run_budget(study: Any, objective: Callable[[Any], float], total: int, *,
               storage: Any = None, timeout: float | None = None,
               max_trials: int | None = None, catch: Sequence[type[Exception]] = (),
               callbacks: Sequence[Callable[[Any, Any], None]] = (),
               poll: float = 0.5) -> int:
    """Run ``objective`` trials of ``study`` until ``total`` of them are COMPLETE or
    PRUNED, counting every process that works on the same study; returns the number of
    trials this process ran.

    The budget scheme (race-free with any number of processes on one storage):

    * A slot of the total is *claimed* by a COMPLETE or PRUNED trial, or by a RUNNING
      trial marked admitted (user attribute ``gbrank_admitted`` = its own number; a
      retried copy of a killed trial inherits the attribute with the old number, so it
      does not count until it is admitted itself).
    * A new trial is asked as usual (Optuna creates it, or pops a WAITING retry of a
      killed trial) and, before any parameter is drawn, the worker takes the study's
      lock (:func:`~gbrank.tuning.storage.study_lock`), counts the claimed slots and,
      if one is free, records the trial's heartbeat and marks it admitted, then
      releases the lock. The count and the mark are one atomic step, so no two trials
      take the last slot. A trial that finds no free slot (two workers asked at once)
      is failed unrun with ``gbrank_surplus``; it has no parameters, the sampler skips
      it and the report does not count it as a failure. After each trial the worker
      stops if every slot is claimed, so surplus trials are rare.
    * A slot comes back when its trial FAILS: the worker that caught the error asks
      again; a killed worker's trial has a heartbeat (recorded at admission), so after
      the grace period any worker fails it and Optuna re-queues its parameters.
      Therefore a worker with nothing to start does not leave while admitted trials
      still run elsewhere: it polls (failing stale trials) and takes a freed slot.
      Trials killed before admission claim nothing and are simply never counted.

    ``timeout`` (seconds) stops starting new trials; the wait for other workers' running
    trials continues past it (each ends, or is failed after the grace period).
    ``max_trials`` caps the trials this process starts (a run where every trial fails
    must end).
    """
    optuna = require("optuna")
    S = optuna.trial.TrialState
    host = f"{socket.gethostname()}:{os.getpid()}"
    deadline = None if timeout is None else time.monotonic() + timeout
    started = 0
    quiet = _QuietSurplus()
    heartbeats = bool(getattr(storage, "get_heartbeat_interval", lambda: None)())

    def fail_stale() -> None:
        if heartbeats:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                optuna.storages.fail_stale_trials(study)

    def trials() -> list[Any]:
        return study.get_trials(deepcopy=False)

    def admitted_running(t: Any) -> bool:
        return t.state == S.RUNNING and t.user_attrs.get(ADMITTED) == t.number

    def claimed() -> int:
        return sum(t.state in (S.COMPLETE, S.PRUNED) or admitted_running(t)
                   for t in trials())

    def gated(trial: Any) -> float:
        nonlocal started
        with (study_lock(storage, study.study_name) if storage is not None
              else contextlib.nullcontext()):
            free = claimed() < total  # this trial is RUNNING but not admitted yet
            if free:
                tid = getattr(trial, "_trial_id", None)
                if heartbeats and tid is not None:
                    storage.record_heartbeat(tid)
                trial.set_user_attr(WORKER, host)
                trial.set_user_attr(ADMITTED, trial.number)
        if not free:
            quiet.numbers.add(trial.number)
            trial.set_user_attr(SURPLUS, True)
            study.stop()
            raise _BudgetFull(f"the total of {total} trials is taken")
        started += 1
        return objective(trial)

    def stop_when_full(study_: Any, trial_: Any) -> None:
        if claimed() >= total:
            study_.stop()

    log = logging.getLogger("optuna.study._optimize")
    log.addFilter(quiet)
    try:
        fail_stale()
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            can_start = ((left is None or left > 0)
                         and (max_trials is None or started < max_trials))
            if can_start and claimed() < total:
                study.optimize(
                    gated, n_trials=None if max_trials is None else max_trials - started,
                    timeout=left, catch=(*catch, _BudgetFull), gc_after_trial=False,
                    callbacks=[stop_when_full, *callbacks])
                continue
            # Nothing to start here; stay while admitted trials run elsewhere, since
            # one may die and free its slot (see above).
            if not heartbeats or not any(admitted_running(t) for t in trials()):
                break
            time.sleep(poll)
            fail_stale()
    finally:
        log.removeFilter(quiet)
    return started


def _trial_seconds(study: Any) -> float:
    optuna = require("optuna")
    S = optuna.trial.TrialState
    total = 0.0
    for t in study.get_trials(deepcopy=False, states=(S.COMPLETE, S.PRUNED)):
        if t.datetime_start and t.datetime_complete:
            total += (t.datetime_complete - t.datetime_start).total_seconds()
    return total


def _stable_seed(text: str, seed: int) -> int:
    import zlib

    return (zlib.crc32(text.encode()) + seed) % (2**31)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items() if not callable(v)}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return repr(x)


def tune_task(task: Task, cfg: TuneConfig, progress: _Progress | None = None,
              storage: Any = None) -> list[StudyResult]:
    """Run every candidate study of one task (gate, study, refit, test score, plots).

    The task's ``feature_names`` must suit ``cfg.booster`` (see
    :func:`~gbrank.tuning.cv.check_feature_names`): checked before any trial."""
    check_feature_names(task.feature_names, cfg.booster)
    optuna = require("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    progress = progress or _Progress(cfg.progress, cfg.worker)
    if storage is None:
        storage = open_storage(cfg.storage or default_storage_url(cfg.out_dir),
                               cfg.heartbeat, cfg.grace)
    cands = candidates_for(task.name, task.kind, cfg.booster, cfg.objectives, cfg.custom,
                           cfg.quick)
    folds = make_folds(task, cfg.n_folds, cfg.seed)
    data = FoldData(task, folds, cfg.booster, reuse=True, n_jobs=cfg.n_jobs)
    fp = task.fingerprint()
    results = []
    for cand in cands:
        results.append(_one_study(task, cand, cfg, data, storage, fp, progress))
    if cfg.anchor and cfg.report and task.kind == "ranking" and cfg.booster == "lightgbm":
        from gbrank.tuning.anchor import run_anchor

        budget = next((r.seconds for r in results if r.key == "native:lambdarank"), 60.0)
        progress.line(f"{task.name} / anchor: LightGBMTunerCV on native lambdarank, "
                      f"{budget:.0f} s budget")
        results.append(run_anchor(task, folds, budget, max_rounds=cfg.max_rounds,
                                  patience=cfg.patience, n_jobs=cfg.n_jobs, seed=cfg.seed))
    return results


def _objective_fn(cand: Candidate, cfg: TuneConfig, data: FoldData):
    optuna = require("optuna")
    y_train = data.task.y

    def fn(trial):
        bp, op = suggest_params(trial, cand, cfg.booster, y_train)
        obj = None if cand.is_native else build_objective(cand, op, cfg.seed)

        def report(step, value):
            trial.report(float(value), step)
            if trial.should_prune():
                raise optuna.TrialPruned()

        res = run_cv(data, bp, obj, cand.target, max_rounds=cfg.max_rounds,
                     patience=cfg.patience, report=report)
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
    for params in kernel_variants(cand):
        obj = build_objective(cand, params, seed)
        obj.booster_grad_hess(y, rng.standard_normal(y.size), group)
    sv = rng.standard_normal(yv.size)
    for name in task.metrics:
        score(name, yv, sv, gv)


def _one_study(task: Task, cand: Candidate, cfg: TuneConfig, data: FoldData, storage: Any,
               fp: str, progress: _Progress) -> StudyResult:
    optuna = require("optuna")
    label = f"{task.name} / {cand.key}"
    res = StudyResult(task.name, cand.key, cand.target, cand.is_native, "done")
    if not cand.is_native:
        g = gate(cand.base, task, cand.key, seed=cfg.seed)
        if not g.ok:
            progress.line(g.message)
            res.status, res.message = "rejected", g.message
            return res
    name = study_name(task.name, fp, cfg.booster, cand.key)
    res.study = name
    S = optuna.trial.TrialState
    if cfg.run_trials:
        study = optuna.create_study(
            study_name=name, storage=storage, direction="maximize", load_if_exists=True,
            sampler=_seeded_tpe(_stable_seed(name, cfg.seed),
                                n_startup_trials=min(5, max(2, cfg.trials // 3))),
            pruner=optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=20))
        study.set_user_attr("task", task.name)
        study.set_user_attr("objective", cand.key)
        study.set_user_attr("metric", cand.target)
        done0 = sum(_state_counts(study)[:2])
        if done0 < cfg.trials:
            _warm_kernels(task, cand, data, cfg.seed)
        t_start = time.perf_counter()
        n_here = 0

        def cb(study_, trial_):
            nonlocal n_here
            n_here += trial_.user_attrs.get(ADMITTED) == trial_.number
            done = sum(_state_counts(study_)[:2])
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
            res.status, res.message = "no trials", "no study in the storage"
            progress.line(f"{label}: no study in the storage")
            return res
    res.n_complete, res.n_pruned, res.n_fail = _state_counts(study)
    res.seconds = _trial_seconds(study)
    complete = study.get_trials(deepcopy=False, states=(S.COMPLETE,))
    if not complete:
        res.status, res.message = "no trials", "no trial completed"
        progress.line(f"{label}: no trial completed")
        return res
    best = study.best_trial
    res.best_value = float(best.value)
    res.folds = {k: list(map(float, v)) for k, v in best.user_attrs["folds"].items()}
    res.best_params = dict(best.params)
    res.rounds = max(1, int(round(float(np.mean(best.user_attrs["best_iters"])))))
    here = f"; {res.n_here} run by this process" if cfg.run_trials else ""
    progress.line(f"{label}: best CV {cand.target} {res.best_value:.4f} "
                  f"({res.n_complete} complete, {res.n_pruned} pruned, {res.n_fail} failed"
                  f"{here})")
    if not cfg.report:
        return res
    # Refit the best parameters on the whole tuning part; score the held-out test split.
    bp, op = suggest_params(optuna.trial.FixedTrial(best.params), cand, cfg.booster, task.y)
    obj = None if cand.is_native else build_objective(cand, op, cfg.seed)
    model, init, s_test = fit_full(task, cfg.booster, bp, obj, res.rounds, cfg.n_jobs)
    gte = task.group_test
    for m in dict.fromkeys((*task.metrics, cand.target)):
        res.test[m] = score(m, task.y_test, s_test, gte)
    slug = cand.key.replace(":", "_")
    if cfg.save_models:
        mdir = Path(cfg.out_dir) / "tune" / "models" / name.replace(":", "_")
        mdir.mkdir(parents=True, exist_ok=True)
        mpath = mdir / ("model.txt" if cfg.booster == "lightgbm" else "model.json")
        served = save_native(model, cfg.booster, obj, init, mpath, task.X_test,
                             s_test, task.kind, task.feature_names)
        meta = {
            "study": name, "task": task.name, "objective": cand.key,
            "objective_class": None if obj is None else type(obj).__name__,
            "objective_params": None if obj is None else obj.get_params(),
            "booster": cfg.booster, "booster_params": bp, "num_boost_round": res.rounds,
            "init_score": init, "metric": cand.target,
            "cv": {"mean": res.best_value, "folds": res.folds}, "test": res.test,
            "usage": _SERVING_USAGE[cfg.booster][task.kind],
            "served_max_abs_diff": served,
        }
        (mdir / "params.json").write_text(json.dumps(_jsonable(meta), indent=2))
        res.model_path = str(mpath)
    if cfg.plots:
        from gbrank.tuning.plots import study_plots

        res.plots = [str(p) for p in study_plots(
            study, Path(cfg.out_dir) / "tune" / task.name, slug, cand.target,
            title=f"{task.name} / {cand.key}")]
    return res


def tune(tasks: list[Task], cfg: TuneConfig) -> list[StudyResult]:
    """Tune every task; return one :class:`StudyResult` per (task, candidate)."""
    progress = _Progress(cfg.progress, cfg.worker)
    storage = open_storage(cfg.storage or default_storage_url(cfg.out_dir), cfg.heartbeat,
                           cfg.grace)
    out = []
    for task in tasks:
        progress.line(f"task {task.name}: {task.description or task.kind} "
                      f"({task.y.size} tuning rows, {task.y_test.size} test rows)")
        out += tune_task(task, cfg, progress, storage)
    return out
