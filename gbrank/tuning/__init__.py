"""Optuna studies that tune gbrank objectives against the boosters' own objectives.

Needs the ``tune`` extra (Optuna, matplotlib, pandas): ``pip install 'gbrank[tune]'``.
The command line is ``gbrank tune`` (:mod:`gbrank.tuning.cli`); the pieces, one idea per module:

* :mod:`~gbrank.tuning.tasks` — data with a held-out test split (LETOR folders with the
  benchmark's own), the metrics that may judge them, the embedded defaults;
* :mod:`~gbrank.tuning.folds` — the shared cross-validation folds;
* :mod:`~gbrank.tuning.spaces` — search spaces and candidate objectives;
* :mod:`~gbrank.tuning.gate` — the gradient-check gate;
* :mod:`~gbrank.tuning.cv` — per-fold binned data built once, one trial's CV;
* :mod:`~gbrank.tuning.storage` — RDB storage with heartbeats, study names;
* :mod:`~gbrank.tuning.config` — ``TuneConfig``, the settings of a run;
* :mod:`~gbrank.tuning.sampler` — TPE seeded per trial;
* :mod:`~gbrank.tuning.budget` — the trial budget shared by every process on a storage;
* :mod:`~gbrank.tuning.study` — one study: gate, trials, pick, refit, held-out scores;
* :mod:`~gbrank.tuning.pick` — the recommended configuration: finalists rescored on fresh
  folds (the winner's curse of the best CV trial);
* :mod:`~gbrank.tuning.export` — the best model saved for the booster alone;
* :mod:`~gbrank.tuning.results` — ``StudyResult``; :mod:`~gbrank.tuning.progress` — progress lines;
* :mod:`~gbrank.tuning.anchor` — Optuna's ``LightGBMTunerCV`` beside the studies;
* :mod:`~gbrank.tuning.runner` — every study of every task (``tune``, ``tune_task``);
* :mod:`~gbrank.tuning.verdict` — what to use for the metric, and whether its lead over
  the native objectives exceeds the fold noise; :mod:`~gbrank.tuning.recipe` — the code
  that trains it;
* :mod:`~gbrank.tuning.report` — ``SUMMARY.md``; :mod:`~gbrank.tuning.plots` — PNGs;
* :mod:`~gbrank.tuning.throughput` — trials per minute with and without Dataset reuse.
"""

from gbrank.tuning.config import TuneConfig
from gbrank.tuning.results import StudyResult
from gbrank.tuning.runner import tune, tune_task
from gbrank.tuning.tasks import Task, default_tasks, task_from_arrays

__all__ = ["StudyResult", "Task", "TuneConfig", "default_tasks", "task_from_arrays", "tune",
           "tune_task"]
