"""The pick: which configuration of a study the tuner recommends, and the honest
cross-validated estimate of it.

The best trial of a study is the maximum of many noisy cross-validation scores, each
also early-stopped on the very folds it is scored on; on small data it is often the
luckiest trial rather than the best configuration (the winner's curse). So the tuner
takes the study's ``finalists`` best complete trials and scores each again on
``repeats`` fresh shuffles of the cross-validation folds (the same folds for every
study of a task, so studies pair unit by unit), training each fold for exactly the
rounds its refit will use, with nothing chosen on the rows it is scored on. Each repeat
also trains with another booster seed (``seed + r`` on repeat r: the bagging, feature
subsets and extra-trees splits change), so a configuration that won by a lucky seed
is not picked for it. The pick is the finalist with the best mean there; that mean,
over folds × repeats, is its estimate.
The rescored values are kept in the study (user attribute), so a report from the
stored study (``--report-only``) repeats none of this work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gbrank._deps import require
from gbrank.metrics import get_metric
from gbrank.tuning._cut import best_cut, best_offsets, decides_by_offsets, reads_cut
from gbrank.tuning._cv import FoldData, run_fixed
from gbrank.tuning._folds import make_folds
from gbrank.tuning._spaces import Candidate, build_objective, suggest_params
from gbrank.tuning._tasks import Task

__all__ = ["Finalist", "RepeatFolds", "configuration", "finalists", "pick", "rescore",
           "rescore_params"]

# Study user attribute prefix of a trial's rescored values.
RESCORED = "gbrank_rescored"
# Significant digits of a recommended float parameter: the refit, the saved model, the
# rescored estimate and the code in SUMMARY.md all use the rounded value.
DIGITS = 4


class RepeatFolds:
    """The fresh fold shuffles of one task that finalists are rescored on: ``repeats``
    sets of ``n_folds`` folds (seeds ``seed + 1`` …), their binned data built on first
    use and shared by every study of the task. Repeat ``r`` trains with booster seed
    ``seed + r`` (:func:`rescore_params`)."""

    def __init__(self, task: Task, n_folds: int, repeats: int, seed: int, booster: str,
                 n_jobs: int = 1) -> None:
        self.task = task
        self.n_folds = n_folds
        self.repeats = repeats
        self.seed = seed
        self.data = [FoldData(task, make_folds(task, n_folds, seed + 1 + r), booster,
                              reuse=True, n_jobs=n_jobs) for r in range(repeats)]

    @property
    def spec(self) -> str:
        """What the rescored values depend on besides the configuration."""
        return f"{self.repeats}x{self.n_folds}:seed{self.seed}:booster-seed+r"

    @property
    def n_units(self) -> int:
        return self.repeats * self.n_folds


def _round(v: Any) -> Any:
    if isinstance(v, float) and not isinstance(v, bool) and np.isfinite(v) and v != 0.0:
        return float(f"{v:.{DIGITS}g}")
    return v


def configuration(params: dict, cand: Candidate, booster: str, y: np.ndarray,
                  seed: int) -> tuple[dict, dict]:
    """The booster and objective parameters a trial's ``params`` stand for, floats
    rounded to 4 significant digits and the booster's ``seed`` set: the configuration
    the tuner rescores, refits, saves and shows as code."""
    optuna = require("optuna")
    bp, op = suggest_params(optuna.trial.FixedTrial(params), cand, booster, y)
    bp = {k: _round(v) for k, v in bp.items()}
    bp["seed"] = seed
    op = {k: _round(v) for k, v in op.items()}
    if cand.base is not None and cand.base.get_params().get("random_state", 0) is None:
        op["random_state"] = seed  # the objective's own randomness, in the code too
    return bp, op


@dataclass
class Finalist:
    """One finalist trial: its number, its CV value as tuned, its rounds, its
    rescored values per metric over the folds × repeats units and, for each threshold
    metric, the margin cut best on its out-of-fold predictions."""

    number: int
    cv: float
    rounds: int
    params: dict
    units: dict[str, list[float]] = field(default_factory=dict)
    cuts: dict[str, float] = field(default_factory=dict)

    def estimate(self, metric: str) -> float:
        return float(np.mean(self.units[metric]))


def decided(metrics: tuple[str, ...]) -> list[str]:
    """The metrics (``metrics[0]`` the study's target) whose decision rule the pick's
    out-of-fold predictions choose: each binary threshold metric (a margin cut), or a
    multiclass target that is a macro F_β (class offsets)."""
    return ([m for m in metrics if reads_cut(m)]
            or [m for m in metrics[:1] if decides_by_offsets(m)])


def _decision(m: str, y: np.ndarray, s: np.ndarray) -> float | list[float]:
    return best_cut(m, y, s) if reads_cut(m) else best_offsets(m, y, s).tolist()


def _stored_decision(v: Any) -> float | list[float]:
    return [float(b) for b in v] if isinstance(v, list) else float(v)


def rescore_params(repeats: RepeatFolds, booster_params: dict, obj: Any, rounds: int,
                   metrics: tuple[str, ...], cuts: dict[str, Any] | None = None,
                   ) -> dict[str, list[float]]:
    """Every metric of one fixed configuration over ``repeats``' units (judged as a
    study on ``metrics[0]`` judges them); repeat ``r`` trains with booster seed
    ``booster_params["seed"] + r`` (LightGBM's ``seed`` derives its bagging,
    feature-fraction and extra-trees seeds; XGBoost's its sampling seed). ``cuts`` (a
    dict) receives, for each metric of :func:`decided`, the decision rule best on the
    out-of-fold predictions of every unit pooled — a margin cut, or K class offsets:
    where the refit model decides (:mod:`gbrank.tuning._cut`)."""
    units: dict[str, list[float]] = {m: [] for m in metrics}
    base = int(booster_params.get("seed", 0))
    wanted = decided(metrics)
    oof: list | None = [] if cuts is not None and wanted else None
    for r, data in enumerate(repeats.data):
        params = dict(booster_params, seed=base + r)
        for m, values in run_fixed(data, params, obj, rounds, metrics, oof=oof).items():
            units[m] += values
    if oof:
        y = np.concatenate([o[0] for o in oof])
        s = np.concatenate([o[1] for o in oof])
        cuts.update({m: _decision(m, y, s) for m in wanted})
    return units


def _rounds(trial: Any) -> int:
    return max(1, int(round(float(np.mean(trial.user_attrs["best_iters"])))))


def finalists(study: Any, k: int) -> list[Finalist]:
    """The ``k`` complete trials with the best CV values, best first (in the study's
    direction)."""
    optuna = require("optuna")
    S = optuna.trial.TrialState
    done = [t for t in study.get_trials(deepcopy=False, states=(S.COMPLETE,))
            if "best_iters" in t.user_attrs]
    sign = -1.0 if study.direction == optuna.study.StudyDirection.MINIMIZE else 1.0
    done.sort(key=lambda t: (-sign * float(t.value), t.number))
    return [Finalist(t.number, float(t.value), _rounds(t), dict(t.params)) for t in done[:k]]


def rescore(study: Any, fin: Finalist, cand: Candidate, repeats: RepeatFolds,
            metrics: tuple[str, ...], booster: str, seed: int) -> float:
    """Fill ``fin.units`` with every metric of ``metrics`` over ``repeats``' units:
    from the study's stored values when they cover them, else trained now (and stored
    in the study with the time it took). Returns the seconds the rescoring took."""
    key = f"{RESCORED}:{fin.number}"
    spec = f"{repeats.spec}:rounds{fin.rounds}:seed{seed}"
    stored = study.user_attrs.get(key)
    wanted = decided(metrics)
    if (stored and stored.get("spec") == spec and all(m in stored["units"] for m in metrics)
            and all(m in stored.get("cuts", {}) for m in wanted)):
        fin.units = {m: list(map(float, stored["units"][m])) for m in metrics}
        fin.cuts = {m: _stored_decision(stored["cuts"][m]) for m in wanted}
        return float(stored.get("seconds", 0.0))
    t0 = time.perf_counter()
    bp, op = configuration(fin.params, cand, booster, repeats.task.y, seed)
    obj = None if cand.is_native else build_objective(cand, op, seed)
    cuts: dict[str, Any] = {}
    units = rescore_params(repeats, bp, obj, fin.rounds, metrics, cuts)
    fin.units, fin.cuts = units, cuts
    seconds = time.perf_counter() - t0
    study.set_user_attr(key, {"spec": spec, "units": units, "cuts": cuts,
                              "seconds": seconds})
    return seconds


def pick(study: Any, cand: Candidate, repeats: RepeatFolds, metrics: tuple[str, ...],
         booster: str, seed: int, k: int = 3) -> tuple[list[Finalist], float]:
    """Rescore the study's ``k`` finalists; return them with the pick first (the best
    rescored mean of ``cand.target``; ties: the better CV value) and the seconds the
    rescoring took.

    Examples
    --------
    Trains boosters, so not run here (see :func:`gbrank.tuning._study.run_study`):

    >>> fins, seconds = pick(study, cand, repeats, task.metrics, "lightgbm", 0)  # doctest: +SKIP
    >>> fins[0].estimate(cand.target)  # doctest: +SKIP
    0.7412
    """
    metrics = tuple(dict.fromkeys((cand.target, *metrics)))
    fins = finalists(study, k)
    seconds = sum(rescore(study, f, cand, repeats, metrics, booster, seed) for f in fins)
    sign = 1.0 if get_metric(cand.target).higher_is_better else -1.0
    order = sorted(range(len(fins)), key=lambda i: (-sign * fins[i].estimate(cand.target), i))
    return [fins[i] for i in order], seconds
