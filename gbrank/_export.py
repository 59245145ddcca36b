"""What a model trained with a gbrank objective needs to predict on its own, without
gbrank: the objective's link and its constant start.

A booster trained with a custom objective holds raw scores that start at 0 (LightGBM)
or at its ``base_score`` (XGBoost), and records no link. gbrank's predictions are

- ranking (RankNet, LambdaRank): the raw score, plus the start (0 by default);
  calibrated (``calibration`` > 0): :math:`\\sigma(z)`, served as a binary model;
- binary (FocalLoss, FBetaSurrogate): :math:`\\sigma(z)`, ``z`` = raw score + start;
- multiclass (``FocalLoss(num_class=K)``): the softmax of the K raw scores + starts.

The adapters (:func:`gbrank.lightgbm.to_native`, :func:`gbrank.xgboost.to_native`)
write that into each booster's own format. This module is booster-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gbrank._validation import check_start_score
from gbrank.objectives import Objective, get_objective

__all__ = ["NativePrediction", "native_prediction"]


@dataclass(frozen=True)
class NativePrediction:
    """The link (``task``) and start of an exported model."""

    objective: Objective
    #: "ranking" (identity), "binary" (sigmoid) or "multiclass" (softmax).
    task: str
    #: Trees per boosting round: 1, or K for multiclass.
    num_class: int
    #: The raw score training started from, one per class (shape (num_class,)); ``None``:
    #: the booster's own start (LightGBM: 0; XGBoost: the model's ``base_score``).
    start: np.ndarray | None


def native_prediction(objective: Any, init_score: Any, hint: str | None) -> NativePrediction:
    """The link and start for ``objective`` trained from ``init_score``.

    ``objective`` is the gbrank objective the model was trained with (an instance, a
    registry name, or a :func:`gbrank.xgboost.objective` wrapper). ``init_score`` is
    the constant start given to training (a number, or one per class); ``None`` means
    none was given, which for binary and multiclass objectives (whose start the caller
    chooses, usually ``objective.init_score(y_train)``) is refused with ``hint`` (how to
    pass it) unless ``hint`` is ``None``.
    """
    obj = getattr(objective, "gbrank_objective", objective)  # xgboost.objective(obj)
    if isinstance(obj, str):
        if obj.startswith("native:"):
            raise ValueError(
                f"objective={objective!r} is the booster's own objective: such a model is "
                "native already; save it as it is (booster.save_model)")
        obj = get_objective(obj)
    if not isinstance(obj, Objective):
        raise ValueError(
            "objective must be the gbrank objective the model was trained with (an "
            "instance such as FocalLoss(gamma=2), or a registry name such as 'focal'); "
            f"got {objective!r}. A plain gradient function does not say how its scores "
            "become predictions, so its model cannot be exported")
    task = obj.task
    if task == "ranking" and getattr(obj, "probability", False):
        # A calibrated ranker's σ(score) is a probability (and ranks as the score does):
        # it is served as a binary model.
        task = "binary"
    k = int(obj._params().num_class) if task == "multiclass" else 1
    if init_score is None:
        if task != "ranking" and hint is not None:
            raise ValueError(f"init_score is required to export a model trained with "
                             f"{obj!r}, the raw score its training started from: {hint}")
        return NativePrediction(obj, task, k, None)
    return NativePrediction(obj, task, k, check_start_score(init_score, k))
