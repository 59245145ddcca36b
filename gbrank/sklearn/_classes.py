"""What GBClassifier makes of its classes: the objective for K classes (a booster's own
softmax, or a gbrank objective with ``num_class`` set), the validation loss of the
boosters' own objectives, the warning on weights that re-balance the classes, class
offsets given as the decision, and labels as JSON holds them."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import clone

from gbrank.objectives import FocalLoss, Objective, get_objective
from gbrank.sklearn._base import _NATIVE_PREFIX, _resolve_objective

# The boosters' own objectives whose K raw scores become probabilities by the softmax.
_NATIVE_SOFTMAX = {"lightgbm": ("multiclass", "softmax"),
                   "xgboost": ("multi:softprob", "multi:softmax")}
# The boosters' two-class objectives whose raw score is a log-odds, so that
# predict_proba = σ(raw score) is a probability (not regression, hinge or Poisson).
_NATIVE_LOGISTIC = {"lightgbm": ("binary", "cross_entropy", "xentropy"),
                    "xgboost": ("binary:logistic", "binary:logitraw", "reg:logistic")}


def _warn_if_class_balancing(y: np.ndarray, w: np.ndarray, multiclass: bool) -> None:
    """Warn when ``sample_weight`` is one value per class, different between classes:
    the decision rule would maximise the re-balanced F_β, usually not what is wanted.
    Rows of weight 0 are left out: a class they alone hold is no class of the model."""
    keep = w > 0
    y, w = y[keep], w[keep]
    values, codes = np.unique(y, return_inverse=True)
    lo = np.full(values.size, np.inf)
    hi = np.full(values.size, -np.inf)
    np.minimum.at(lo, codes, w)
    np.maximum.at(hi, codes, w)
    per_class = np.allclose(lo, hi, rtol=1e-12, atol=0.0)
    if per_class and not np.allclose(lo, lo[0], rtol=1e-9, atol=0.0):
        fix = ('FocalLoss(alpha="balanced") (softmax cross-entropy with balanced class '
               "weights when gamma=0)" if multiclass else
               "FocalLoss(alpha=a) (the positive class's weight)")
        what = "offsets (decision='auto')" if multiclass else "threshold (threshold='auto')"
        warnings.warn(
            f"sample_weight is one value per class: the {what} will maximise the F_β of "
            "the re-weighted classes, not the F_β of the data as it comes. To "
            f"re-weight the classes in training only, fit without sample_weight and use "
            f"objective={fix}", UserWarning, stacklevel=3)


def _refuse_threshold_without_both(ys: np.ndarray, pos_label: Any, where: str) -> None:
    """A threshold chosen on rows without both classes would be chosen blind."""
    if not np.any(ys == 1.0) or np.all(ys == 1.0):
        raise ValueError(
            f"threshold='auto' chooses the F_beta-best threshold on {where}, which "
            f"holds {int(np.sum(ys == 1.0))} of {ys.size} rows of the positive class "
            f"{np.asarray(pos_label).tolist()!r}: no threshold can be chosen "
            "there. Give more rows of each class (or an eval_set holding both), or "
            "a threshold in (0, 1)")


def _refuse_offsets_without_classes(codes: np.ndarray, classes: np.ndarray) -> None:
    """Offsets searched on an eval_set without a class's rows push that class below the
    others (``best_class_offsets`` leaves it at 0 while theirs rise)."""
    absent = np.setdiff1d(np.arange(classes.size), codes.astype(np.int64))
    if absent.size:
        raise ValueError(
            f"decision='auto' with decision_cv=None chooses the class offsets on "
            f"eval_set, which holds no rows of class(es) {classes[absent].tolist()!r}: no "
            "offsets can be chosen for them there (the other classes' would rise above "
            "them). Give an eval_set holding every class, leave decision_cv at its "
            "default (offsets from out-of-fold scores), or decision='argmax'")


def _classifier_objective(objective: Any, k: int, booster: str) -> tuple[Any, bool]:
    """The objective for ``k`` classes, and whether the model is multiclass (K trees per
    round, softmax): a booster objective name, or a fresh gbrank objective."""
    if isinstance(objective, str) and objective.startswith(_NATIVE_PREFIX) \
            and len(objective) > len(_NATIVE_PREFIX):
        name = objective[len(_NATIVE_PREFIX):]
        softmax = name in _NATIVE_SOFTMAX.get(booster, ())
        if k > 2 and not softmax:
            raise ValueError(
                f"objective={objective!r} is not {booster}'s softmax objective, and y has "
                f"{k} classes: predict_proba is the softmax of K raw scores; use "
                + " or ".join(f"'native:{x}'" for x in _NATIVE_SOFTMAX.get(booster, ())))
        if not softmax and name not in _NATIVE_LOGISTIC.get(booster, ()):
            raise ValueError(
                f"objective={objective!r} is not a logistic objective of {booster}: "
                "predict_proba is σ(raw score), a probability only when the raw score is "
                "a log-odds; use "
                + " or ".join(f"'native:{x}'" for x in _NATIVE_LOGISTIC.get(booster, ()))
                + " (for a regression or ranking objective, a regressor or GBRanker)")
        return name, softmax
    if isinstance(objective, Objective) and objective.task == "multiclass":
        obj = clone(objective)
        declared = obj._params().num_class
        if declared != k:
            raise ValueError(f"objective {objective!r} has num_class={declared}, but y has {k} "
                             "classes; leave num_class None (GBClassifier sets it from y)")
        return obj, True
    if k == 2:
        return _resolve_objective(objective, "binary", "GBClassifier"), False
    obj = get_objective(objective) if isinstance(objective, str) else objective
    if not isinstance(obj, FocalLoss):
        raise ValueError(
            f"objective {objective!r} is a {getattr(obj, 'task', 'non-gbrank')} objective; "
            f"for {k} classes GBClassifier takes 'focal' or a FocalLoss (num_class is set "
            "from y), or the booster's softmax objective ('native:multiclass' for LightGBM, "
            "'native:multi:softprob' for XGBoost)")
    obj = clone(obj).set_params(num_class=k)
    obj._params()  # validate now: a bad parameter for K classes fails at fit, named
    return obj, True


class _LogLoss:
    """Validation loss for the boosters' own objectives, on the raw margins the training
    loop hands over: binary, the logistic loss; multiclass ((n, K) margins), the softmax
    cross-entropy; each summed over the rows (weighted), as every gbrank objective's
    ``loss`` is, so ``evals_result_`` curves of both kinds share their units."""

    def loss(self, y: Any, s: Any, weight: Any = None) -> float:
        from gbrank.objectives import FocalLoss

        # Focal loss at gamma=0 is the log loss, of two classes or (n, K) margins.
        k = np.shape(s)[1] if np.ndim(s) == 2 else None
        return FocalLoss(gamma=0.0, num_class=k).loss(y, s, weight=weight)


def _given_offsets(decision: Any) -> np.ndarray | None:
    """``decision`` as K class offsets (float64), or None for a rule's name."""
    if isinstance(decision, str):
        return None
    try:
        b = np.asarray(decision, dtype=np.float64)
    except (TypeError, ValueError):
        b = None
    if b is None or b.ndim != 1 or b.size < 2 or not np.all(np.isfinite(b)):
        raise ValueError(f"decision={decision!r}: expected 'auto', 'argmax' or one finite "
                         "offset per class (K numbers, in the order of classes_)")
    return b


def _json_label(label: Any) -> Any:
    """A label as JSON can hold it (NumPy scalars as Python ones; others as text)."""
    import json

    label = label.item() if isinstance(label, np.generic) else label
    try:
        json.dumps(label)
    except TypeError:
        return str(label)
    return label


def _refuse_missing_labels(y: np.ndarray) -> None:
    """Labels of object dtype holding None/NaN (np.unique would raise a TypeError)."""
    if y.dtype.kind != "O":
        return
    import pandas as pd

    gone = np.flatnonzero(pd.isna(y))
    if gone.size:
        raise ValueError(f"y has {gone.size} missing labels (None/NaN; first at row "
                         f"{gone[0]}): leave those rows out")
