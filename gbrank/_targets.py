"""Labels as targets in [0, 1]: clicks and rates as they are, grades through a mapping.
One rule for the calibration term of the ranking objectives, ``CrossEntropy`` and the
calibration metrics."""

from __future__ import annotations

import numpy as np

from gbrank._validation import MAX_EXACT_GRADE

__all__ = ["TARGET_MAPPINGS", "relevance_targets"]


#: The mappings from labels to targets (``CrossEntropy(target=...)``, the ranking
#: objectives' ``calibration_target``, the calibration metrics' ``target``).
TARGET_MAPPINGS = ("auto", "identity", "exponential", "linear", "binary")


def relevance_targets(y: np.ndarray, target: str, max_grade: float | None,
                      threshold: float) -> np.ndarray:
    """Labels as probabilities of relevance in [0, 1] (see
    :class:`gbrank.objectives.CrossEntropy`)."""
    if target == "auto" and max_grade is None and y.size and not (
            y.min() >= 0.0 and y.max() <= 1.0):
        values = np.unique(y)
        if values[0] == -1.0 and set(values.tolist()) <= {-1.0, 1.0}:
            # binary labels ±1, as the binary metrics read them (all −1 too: a batch
            # of one class)
            return (y == 1.0).astype(np.float64)
        if values.size == 2 and values[0] >= 1.0:
            import warnings

            shown = np.expm1(values * np.log(2.0)) / np.expm1(values[1] * np.log(2.0))
            warnings.warn(
                f"labels take only the values {values.tolist()}: read as grades (targets "
                f"{shown.round(3).tolist()}). If they are two classes, pass 0/1 labels "
                "(y == the positive class); if grades, pass max_grade= to say so",
                UserWarning, stacklevel=4)
    if target == "auto":  # a max_grade says the labels are grades, whatever their range
        target = "identity" if max_grade is None and (
            y.size == 0 or (y.min() >= 0.0 and y.max() <= 1.0)) else "exponential"
    if target == "identity":
        bad = np.flatnonzero((y < 0.0) | (y > 1.0))
        if bad.size:
            raise ValueError(
                f"labels must lie in [0, 1] to be targets as they are (clicks, rates); "
                f"{bad.size} do not (first at index {bad[0]}: {y[bad[0]]!r}). Map grades "
                "with target='exponential', 'linear' or 'binary'")
        return y
    if target == "binary":
        return (y >= threshold).astype(np.float64)
    bad = np.flatnonzero(y < 0.0)
    if bad.size:
        raise ValueError(f"grades must be non-negative; {bad.size} are not (first at index "
                         f"{bad[0]}: {y[bad[0]]!r})")
    top = (float(y.max()) if y.size else 0.0) if max_grade is None else float(max_grade)
    if y.size and float(y.max()) > top:
        raise ValueError(f"max_grade={max_grade} is below the largest label {y.max()!r}")
    if top == 0.0:
        return np.zeros_like(y)
    if target == "linear":
        return y / top
    if top > MAX_EXACT_GRADE:
        raise ValueError(f"exponential targets need grades up to {MAX_EXACT_GRADE}, got "
                         f"{top!r}; use target='linear'")
    return np.expm1(y * np.log(2.0)) / np.expm1(top * np.log(2.0))
