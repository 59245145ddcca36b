"""Optuna studies that tune gbrank objectives against the boosters' own objectives.

Needs the ``tune`` extra (Optuna, matplotlib, pandas): ``pip install 'gbrank[tune]'``.
The command line is ``gbrank tune`` (also ``python -m gbrank.tuning``); its flags are
the fields of :class:`TuneConfig`, which holds every default.

The public surface is the names below; every module of this package is private. A run
takes :class:`Task` objects (data with a held-out test split: :func:`task_from_arrays`,
:func:`default_tasks`) and a :class:`TuneConfig`, and :func:`tune` (or
:func:`tune_task`) returns one :class:`StudyResult` per study: the candidate objectives
are gated by gradient checks, tuned by cross-validation on shared folds, the best trials
rescored on fresh folds, the pick refit and scored on the held-out part, and the
verdict says whether a gbrank objective beats the boosters' own beyond the fold noise.
"""

from gbrank.tuning._config import TuneConfig
from gbrank.tuning._results import StudyResult
from gbrank.tuning._runner import tune, tune_task
from gbrank.tuning._sources import default_tasks, task_from_arrays
from gbrank.tuning._tasks import Task

__all__ = ["StudyResult", "Task", "TuneConfig", "default_tasks", "task_from_arrays", "tune",
           "tune_task"]
