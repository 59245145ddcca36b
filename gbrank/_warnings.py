"""Warnings that point at the user's line: a warning raised inside a training round sits
under gbrank's, the booster's and scikit-learn's frames, whose depth differs by entry
point (LightGBM, XGBoost, ``GBRanker``), so no fixed ``stacklevel`` is right. (In a
Dask worker the walk ends at the worker's own frames.)"""

from __future__ import annotations

import sys
import warnings

__all__ = ["warn_user"]

# Packages whose frames lie between the user's call and a training round's check.
_LIBRARIES = frozenset({"gbrank", "lightgbm", "xgboost", "sklearn", "dask", "distributed",
                        "numba", "joblib", "optuna", "catboost"})


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the first calling frame
    outside the libraries above (the user's code; the outermost frame if there is
    none)."""
    frame = sys._getframe(1)  # the caller of warn_user
    level = 2
    while frame.f_back is not None and (
            frame.f_globals.get("__name__", "").partition(".")[0] in _LIBRARIES):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
