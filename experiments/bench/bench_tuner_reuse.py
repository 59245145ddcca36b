"""The tuner's trials per minute with each fold's binned data built once and reused across
trials (what ``gbrank tune`` does), against a plain Optuna loop that rebuilds the booster's
data in every trial. A check of the tuner's own speed, so it lives here, not in the
command line (``--quick``: smaller, 2 trials per mode; also a section of bench.md).

It reads the tuner's private pieces (``FoldData(reuse=...)``, the folds, the search
space): the measurement is of them.
"""

from __future__ import annotations

import argparse
import time

from gbrank.tuning import Task, TuneConfig, default_tasks
from gbrank.tuning._cv import FoldData, run_cv
from gbrank.tuning._folds import make_folds
from gbrank.tuning._spaces import build_objective, candidate, suggest_params


def measure_reuse(task: Task, key: str, n_trials: int, cfg: TuneConfig) -> dict[str, float]:
    """The same seeded study (in memory, no pruning, so every run does the same trials)
    reusing each fold's binned data and rebuilding it per trial, in the order reuse,
    rebuild, rebuild, reuse after one untimed warm-up trial (compilation and cache loads
    stay out of the figure; a drift of the machine's load hits both modes alike)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    cand = candidate(key, cfg.booster)
    folds = make_folds(task, cfg.n_folds, cfg.seed)

    def study(reuse: bool, trials: int) -> tuple[float, int]:
        data = FoldData(task, folds, cfg.booster, reuse=reuse, n_jobs=cfg.n_jobs)

        def trial_fn(trial):
            bp, op = suggest_params(trial, cand, cfg.booster, task.y)
            obj = None if cand.is_native else build_objective(cand, op, cfg.seed)
            max_rounds, patience = cfg.rounds(task.clicks)
            return run_cv(data, bp, obj, cand.target, max_rounds=max_rounds,
                          patience=patience).value

        s = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=cfg.seed))
        t0 = time.perf_counter()
        s.optimize(trial_fn, n_trials=trials)
        return time.perf_counter() - t0, data.builds

    study(True, 1)  # warm-up
    out = {"reuse_seconds": 0.0, "rebuild_seconds": 0.0}
    for mode in ("reuse", "rebuild", "rebuild", "reuse"):
        sec, builds = study(mode == "reuse", n_trials)
        out[f"{mode}_seconds"] += sec / 2
        out[f"{mode}_builds"] = builds
    for mode in ("reuse", "rebuild"):
        out[f"{mode}_trials_per_min"] = 60.0 * n_trials / out[f"{mode}_seconds"]
    return out


def run(quick: bool = False) -> str:
    task = default_tasks(quick=quick)[0]
    key, n = "lambdarank:ndcg", (2 if quick else 4)
    res = measure_reuse(task, key, n, TuneConfig(plots=False, save_models=False))
    r, b = res["reuse_trials_per_min"], res["rebuild_trials_per_min"]
    return "\n".join([
        "## The tuner's binned data: reused vs rebuilt", "",
        f"The same seeded study ({key} on the embedded {task.name} task, {n} trials, no "
        "pruning) run with each fold's LightGBM `Dataset` built once and reused by every "
        "trial (what the tuner does) and as a plain Optuna loop that builds the `Dataset`s "
        "inside every trial; after one untimed warm-up trial, in the order reuse, rebuild, "
        "rebuild, reuse (time = mean of the two runs of each mode).", "",
        "| mode | data builds per study | time per study | trials/min |",
        "|---|---|---|---|",
        f"| reuse (tuner) | {res['reuse_builds']:.0f} | {res['reuse_seconds']:.1f} s "
        f"| {r:.1f} |",
        f"| rebuild per trial (plain loop) | {res['rebuild_builds']:.0f} "
        f"| {res['rebuild_seconds']:.1f} s | {b:.1f} |", "",
        f"Reuse runs {r / b:.2f}× as many trials per minute here."])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    print(run(parser.parse_args().quick))
