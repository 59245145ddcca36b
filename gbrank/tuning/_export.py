"""Export of a study's best model: the refit booster saved so that the booster alone
serves it, with ``params.json`` (parameters, scores, how to serve it) beside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from gbrank.tuning._config import TuneConfig
from gbrank.tuning._cv import save_native
from gbrank.tuning._results import StudyResult
from gbrank.tuning._tasks import Task

__all__ = ["export_model"]


# How a saved best model is served: the booster alone, the start and the link inside.
_SERVING_USAGE = {
    "lightgbm": {
        "binary": "probability = lightgbm.Booster(model_file='model.txt').predict(X); the "
                  "start (init_score) is in the trees; positive when probability > "
                  "threshold['probability']",
        "ranking": "score = lightgbm.Booster(model_file='model.txt').predict(X)",
        "multiclass": "probabilities = lightgbm.Booster(model_file='model.txt').predict(X), "
                      "shape (n, K) (softmax); class = probabilities.argmax(axis=1); the "
                      "start (init_score) is in the trees",
    },
    "xgboost": {
        "binary": "probability = xgboost.Booster(model_file='model.json')"
                  ".predict(xgboost.DMatrix(X)); the start (init_score) is in the trees; "
                  "positive when probability > threshold['probability']",
        "ranking": "score = xgboost.Booster(model_file='model.json')"
                   ".predict(xgboost.DMatrix(X))",
        "multiclass": "probabilities = xgboost.Booster(model_file='model.json')"
                      ".predict(xgboost.DMatrix(X)), shape (n, K) (multi:softprob); class = "
                      "probabilities.argmax(axis=1); the start (init_score) is in the trees",
    },
}


def _jsonable(x: Any) -> Any:
    """``x`` with every value JSON can hold as it is; NumPy values as Python ones,
    callables dropped from dicts, anything else as its ``repr``."""
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


def _code(res: StudyResult, task: Task, booster: str) -> list[str] | None:
    from gbrank.tuning._recipe import training_code

    try:
        return training_code(res, task.kind, booster, groupless=task.groupless)
    except ValueError:  # a custom objective instance: no registry name to show
        return None


def _threshold(res: StudyResult, task: Task) -> dict[str, Any] | None:
    """The binary decision: the probability threshold the code decides at and the
    metric it is best for (None for other tasks, or no threshold metric recorded)."""
    from gbrank.tuning._cut import decision_metric

    m = decision_metric(tuple(res.cuts), res.target) if task.kind == "binary" else None
    return None if m is None else {"probability": res.cuts[m], "best_for": m,
                                   "all": res.cuts}


def export_model(res: StudyResult, task: Task, cfg: TuneConfig, model: Any, obj: Any,
                 init: Any, s_test: np.ndarray, booster_params: dict) -> str:
    """Save the refit best model of study ``res.study`` and its ``params.json``; return
    the model file's path.

    The model goes to ``<out_dir>/tune/models/<study>/model.txt`` (LightGBM) or
    ``model.json`` (XGBoost), written by :func:`~gbrank.tuning._cv.save_native` so that
    the booster alone serves it (checked on the test split, whose raw scores are
    ``s_test``). ``params.json`` beside it records the objective and booster
    parameters, the rounds, the start ``init``, the pick (its trial, rescored scores and
    the finalists), the best trial's CV scores, the test scores, a binary model's
    decision ``threshold`` or a multiclass model's ``class_offsets``
    (:attr:`StudyResult.cuts`), the ``gbrank.sklearn``
    code that trains the same model, how to serve the model and the largest served
    difference.
    """
    mdir = Path(cfg.out_dir) / "tune" / "models" / res.study.replace(":", "_")
    mdir.mkdir(parents=True, exist_ok=True)
    mpath = mdir / ("model.txt" if cfg.booster == "lightgbm" else "model.json")
    threshold = _threshold(res, task)
    offsets = res.cuts.get(res.target) if task.kind == "multiclass" else None
    usage = _SERVING_USAGE[cfg.booster][task.kind]
    if threshold is None:
        # No threshold metric was judged: the study decided at probability 0.5.
        usage = usage.replace("threshold['probability']", "0.5")
    if offsets is not None:  # decided at the class offsets the test split was judged at
        usage = usage.replace("class = probabilities.argmax(axis=1)",
                              "class = (numpy.log(probabilities) + class_offsets['offsets'])"
                              ".argmax(axis=1)")
    served = save_native(model, cfg.booster, obj, init, mpath, task.X_test,
                         s_test, task.kind, task.feature_names)
    meta = {
        "study": res.study, "task": task.name, "objective": res.key,
        "objective_class": None if obj is None else type(obj).__name__,
        "objective_params": None if obj is None else obj.get_params(),
        "booster": cfg.booster, "booster_params": booster_params,
        "num_boost_round": res.rounds, "init_score": init, "metric": res.target,
        "pick": {"trial": res.pick_trial, "estimate": res.estimate, "units": res.units,
                 "finalists": res.finalists},
        "cv_best_trial": {"trial": res.best_trial, "mean": res.best_value,
                          "folds": res.folds},
        "test": res.test, "threshold": threshold,
        "class_offsets": None if offsets is None else {"offsets": offsets,
                                                       "best_for": res.target},
        "train_with": _code(res, task, cfg.booster),
        "usage": usage,
        "served_max_abs_diff": served,
    }
    (mdir / "params.json").write_text(json.dumps(_jsonable(meta), indent=2))
    return str(mpath)
