"""XGBoost adapter: translate XGBoost's calling conventions to gbrank objects.

``xgb.train(..., obj=objective(o))`` passes ``(preds, dtrain)``; labels, weights and
query boundaries (``group_ptr``) are read from the ``DMatrix`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["objective"]


def _dmatrix_fields(dmat: Any) -> tuple[np.ndarray, Any, Any]:
    """Labels, weights (per query for ranking data) and query sizes of a ``DMatrix``."""
    y = dmat.get_label()
    w = dmat.get_weight()
    w = None if w.size == 0 else w
    ptr = dmat.get_uint_info("group_ptr")
    group = np.diff(ptr.astype(np.int64)) if ptr.size >= 2 else None
    return y, w, group


def objective(obj: Any) -> Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray]]:
    """Wrap a gbrank objective for ``xgb.train(obj=...)``.

    Parameters
    ----------
    obj : gbrank objective
        For example ``LambdaRank(metric="ndcg")`` or ``FocalLoss(gamma=2)``.

    Returns
    -------
    callable
        ``f(preds, dtrain) -> (grad, hess)``.
    """

    def _xgb_objective(preds: np.ndarray, dtrain: Any) -> tuple[np.ndarray, np.ndarray]:
        y, w, group = _dmatrix_fields(dtrain)
        if obj.loss_blocks == "row":
            group = None
        return obj.grad_hess(y, preds, group, weight=w)

    _xgb_objective.__name__ = type(obj).__name__
    _xgb_objective.gbrank_objective = obj  # type: ignore[attr-defined]
    return _xgb_objective
