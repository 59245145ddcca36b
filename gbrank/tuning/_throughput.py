"""Trials per minute with per-fold binned data built once and reused across trials,
against a plain Optuna loop that rebuilds the booster's data in every trial."""

from __future__ import annotations

import time

from gbrank._deps import require
from gbrank.tuning._cv import FoldData, run_cv
from gbrank.tuning._folds import make_folds
from gbrank.tuning._spaces import build_objective, candidate, suggest_params
from gbrank.tuning._tasks import Task

__all__ = ["measure_reuse"]


def measure_reuse(task: Task, key: str = "lambdarank:ndcg", booster: str = "lightgbm",
                  n_trials: int = 6, n_folds: int = 3, max_rounds: int = 100,
                  patience: int = 20, n_jobs: int = 1, seed: int = 0) -> dict[str, float]:
    """Run the same seeded study (in memory, no pruning, so every run does the same
    trials) reusing each fold's binned data and rebuilding it per trial, in the order
    reuse, rebuild, rebuild, reuse after one untimed warm-up trial (compilation and
    cache loads stay out of the figure, and a drift of the machine's load hits both
    modes alike). Returns trials per minute of each mode and the number of data builds
    per study."""
    optuna = require("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    cand = candidate(key, booster,
                     num_class=task.num_class if task.kind == "multiclass" else None)
    folds = make_folds(task, n_folds, seed)

    def trial_fn(data: FoldData):
        def fn(trial):
            bp, op = suggest_params(trial, cand, booster, task.y)
            obj = None if cand.is_native else build_objective(cand, op, seed)
            return run_cv(data, bp, obj, cand.target, max_rounds=max_rounds,
                          patience=patience).value

        return fn

    def study_seconds(reuse: bool) -> tuple[float, int]:
        data = FoldData(task, folds, booster, reuse=reuse, n_jobs=n_jobs)
        study = optuna.create_study(direction="maximize",
                                    sampler=optuna.samplers.TPESampler(seed=seed))
        t0 = time.perf_counter()
        study.optimize(trial_fn(data), n_trials=n_trials)
        return time.perf_counter() - t0, data.builds

    warm = optuna.create_study(direction="maximize",
                               sampler=optuna.samplers.TPESampler(seed=seed))
    warm.optimize(trial_fn(FoldData(task, folds, booster, reuse=True, n_jobs=n_jobs)),
                  n_trials=1)
    secs = {"reuse": 0.0, "rebuild": 0.0}
    builds = {"reuse": 0, "rebuild": 0}
    for mode in ("reuse", "rebuild", "rebuild", "reuse"):
        sec, b = study_seconds(mode == "reuse")
        secs[mode] += sec
        builds[mode] = b
    out: dict[str, float] = {}
    for mode in ("reuse", "rebuild"):
        out[f"{mode}_trials_per_min"] = 60.0 * 2 * n_trials / secs[mode]
        out[f"{mode}_builds"] = float(builds[mode])
        out[f"{mode}_seconds"] = secs[mode] / 2
    return out


def throughput_lines(task: Task, res: dict[str, float], key: str, n_trials: int) -> list[str]:
    r, b = res["reuse_trials_per_min"], res["rebuild_trials_per_min"]
    return [
        "## Throughput: binned data reused vs rebuilt", "",
        f"The same seeded study ({key} on {task.name}, {n_trials} trials, no pruning) run "
        "with each fold's LightGBM `Dataset` built once and reused by every trial (what "
        "the tuner does) and as a plain Optuna loop that builds the `Dataset`s inside "
        "every trial; after one untimed warm-up trial, in the order reuse, rebuild, "
        "rebuild, reuse (time = mean of the two runs of each mode).", "",
        "| mode | data builds per study | time per study | trials/min |",
        "|---|---|---|---|",
        f"| reuse (tuner) | {res['reuse_builds']:.0f} | {res['reuse_seconds']:.1f} s "
        f"| {r:.1f} |",
        f"| rebuild per trial (plain loop) | {res['rebuild_builds']:.0f} "
        f"| {res['rebuild_seconds']:.1f} s | {b:.1f} |", "",
        f"Reuse runs {r / b:.2f}× as many trials per minute here.",
    ]
